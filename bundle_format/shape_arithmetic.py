"""The shape arithmetic of demo instructions that depends on their attributes alone: one copy for
the compiler (which infers result shapes before anything runs) and runtime_py's kernels and memory
bounds (which compute them at run time). The C++ engines have theirs in native_format/decoder and
the kernels."""

from __future__ import annotations

from bundle_format.program import FillAttrs

__all__ = ["expanded_shape", "fill_sizes", "output_size"]


def output_size(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """Torch's output length of a sliding window (conv and pooling).

    With ``ceil_mode`` a last, partial window is kept only if it starts inside the input or
    the left padding, never entirely in the right padding.
    """
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    if ceil_mode:
        out = -(-span // stride) + 1
        if (out - 1) * stride >= size + padding:
            out -= 1
    else:
        out = span // stride + 1
    return out


def expanded_shape(shape: tuple[int, ...], dims: tuple[int, ...]) -> tuple[int, ...]:
    """torch.Tensor.expand's result shape: -1 keeps a size, a size-1 dim may grow, and new
    dims may be added in front."""
    lead = len(dims) - len(shape)
    if lead < 0:
        raise ValueError(f"cannot expand shape {shape} to {dims}: fewer dims")
    out = []
    for i, size in enumerate(dims):
        if i < lead:
            if size < 0:
                raise ValueError(f"cannot expand shape {shape} to {dims}: -1 in a new leading dim")
            out.append(size)
            continue
        have = shape[i - lead]
        if size == -1 or size == have:
            out.append(have)
        elif have == 1 and size >= 0:
            out.append(size)
        else:
            raise ValueError(f"cannot expand shape {shape} to {dims}")
    return tuple(out)


def fill_sizes(attrs: FillAttrs, reference_shape: tuple[int, ...]) -> tuple[int, ...]:
    """FULL's result shape: the static sizes, and the reference's sizes (plus offsets) where an axis
    is given (the memory bound reads it too, before the kernel runs)."""
    sizes = []
    for dim, (offset, axis) in enumerate(zip(attrs.dims, attrs.axes, strict=True)):
        if axis < 0:
            sizes.append(offset)
            continue
        if axis >= len(reference_shape):
            raise ValueError(f"axis {axis} is out of range for a reference of shape {reference_shape}")
        size = reference_shape[axis] + offset
        if size < 0:  # as torch.full's refusal of a negative size
            raise ValueError(f"dim {dim} has the negative size {size} (size {reference_shape[axis]} of axis {axis} "
                             f"{offset:+d})")
        sizes.append(size)
    return tuple(sizes)
