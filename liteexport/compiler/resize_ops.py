"""Lowering of 2-D upsampling (issue 20; see ops.py for the conventions): F.interpolate's
nearest and bilinear modes on NCHW tensors, as one RESIZE2D instruction.

F.interpolate scripts and traces to ``aten::upsample_{nearest,bilinear}2d.vec`` (output size or
scale factors); modules and older traces call the plain overloads (output size and optional
per-axis scales). Both end as RESIZE2D with a static output size. Other modes (bicubic,
nearest-exact, area, antialias) and 3-D/5-D inputs are other aten ops with no lowering here:
the walk reports them as unsupported nodes with their source line.
"""

from __future__ import annotations

from typing import Any

from bundle_format.program import OpCode, ResizeAttrs
from liteexport.compiler.ops import SHAPES_HINT, Emitter, Lowering, rank_of, shape_of, tensor
from liteexport.compiler.values import Unsupported


def _ints(value: Any, what: str) -> tuple[int, int]:
    if not isinstance(value, list | tuple) or len(value) != 2 or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise Unsupported(f"the {what} must be 2 sizes known at compile time, got {value!r}")
    return int(value[0]), int(value[1])


def _scale(value: Any) -> float | None:
    """A per-axis scale as ATen's kernels read it: None or <= 0 means "in / out" (its
    compute_scales_value treats a non-positive scale as absent)."""
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise Unsupported(f"a scale factor must be a number known at compile time, got {value!r}")
    return float(value) if value > 0 else None


def _resize(b: Emitter, x_arg: Any, bilinear: bool, align_corners: bool, output_size: Any,
            scales: tuple[Any, Any] | None, from_vec: bool) -> Any:
    x = tensor(x_arg)
    if rank_of(x) != 4:
        raise Unsupported(f"2-D upsampling of a {rank_of(x)}-D tensor: only NCHW (4-D) inputs are compiled")
    if output_size is not None:
        size = _ints(output_size, "output size")
    elif from_vec and scales is not None:
        # upsample::compute_output_size: static_cast<int64_t>(double(in) * scale), per axis
        shape = shape_of(x)
        if shape is None or not all(isinstance(d, int) for d in shape[2:]):
            raise Unsupported(f"scale factors need the input's static height and width: {SHAPES_HINT}")
        factors = [_scale(s) for s in scales]
        if None in factors:
            raise Unsupported(f"scale factors must be positive, got {list(scales)}")
        size = (int(shape[2] * factors[0]), int(shape[3] * factors[1]))  # type: ignore[operator]
    else:
        raise Unsupported("upsampling needs an output size or scale factors")
    if min(size) < 1:
        raise Unsupported(f"the output size {list(size)} must be positive")
    scale_h, scale_w = (None, None) if scales is None else (_scale(scales[0]), _scale(scales[1]))
    attrs = ResizeAttrs(bilinear=bilinear, size=size, align_corners=bool(align_corners) and bilinear,
                        scale_h=scale_h, scale_w=scale_w)
    return b.emit(OpCode.RESIZE2D, [x], attrs)


def _vec_scales(value: Any) -> tuple[Any, Any] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple) or len(value) != 2:
        raise Unsupported(f"2-D upsampling takes 2 scale factors, got {value!r}")
    return value[0], value[1]


def _upsample_bilinear2d(b: Emitter, args: list[Any]) -> Any:
    """(self, output_size, align_corners, scales_h, scales_w) or .vec (input, output_size?,
    align_corners, scale_factors?): TorchScript passes every schema argument, so the count tells."""
    if len(args) == 4:
        return _resize(b, args[0], True, args[2], args[1], _vec_scales(args[3]), True)
    return _resize(b, args[0], True, args[2], args[1], (args[3], args[4]), False)


def _upsample_nearest2d(b: Emitter, args: list[Any]) -> Any:
    """(self, output_size, scales_h, scales_w) or .vec (input, output_size?, scale_factors?)."""
    if len(args) == 3:
        return _resize(b, args[0], False, False, args[1], _vec_scales(args[2]), True)
    return _resize(b, args[0], False, False, args[1], (args[2], args[3]), False)


LOWERINGS: dict[str, Lowering] = {
    "aten::upsample_bilinear2d": _upsample_bilinear2d,
    "aten::upsample_nearest2d": _upsample_nearest2d,
}
