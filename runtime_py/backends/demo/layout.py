"""Layout kernels: transpose, reshape, flatten, cat.

Transpose, reshape and flatten return views when numpy can; the plan knows they may alias
their input (see ``KernelSpec.may_alias_input``).
"""

from __future__ import annotations

import math

import numpy as np

from bundle_format.program import AxisAttrs, FlattenAttrs, PermuteAttrs, ShapeAttrs
from runtime_py.backends.demo.arrays import Array, Kernel


def make_transpose(attrs: PermuteAttrs, n_inputs: int) -> Kernel:
    """A full permutation of the axes (a view; later kernels accept any strides)."""
    perm = tuple(attrs.perm)
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"{perm} is not a permutation of the axes 0..{len(perm) - 1}")

    def transpose(x: Array) -> Array:
        if x.ndim != len(perm):
            raise ValueError(f"permutation {perm} does not fit an input of shape {x.shape}")
        return np.transpose(x, perm)

    return transpose


def make_reshape(attrs: ShapeAttrs, n_inputs: int) -> Kernel:
    """Reshape to ``dims`` (one may be -1); copies only when the input's strides require it."""
    dims = tuple(attrs.dims)
    if dims.count(-1) > 1 or any(d < -1 for d in dims):
        raise ValueError(f"shape {dims} may hold one -1 and otherwise sizes >= 0")

    def reshape(x: Array) -> Array:
        try:
            return x.reshape(dims)
        except ValueError:
            raise ValueError(f"shape {dims} is invalid for an input of shape {x.shape}") from None

    return reshape


def make_flatten(attrs: FlattenAttrs, n_inputs: int) -> Kernel:
    """Flatten the dims start_dim..end_dim (inclusive; negative counts from the end)."""
    start, end = attrs.start_dim, attrs.end_dim

    def flatten(x: Array) -> Array:
        rank = max(x.ndim, 1)  # torch treats a 0-d input as 1-D
        if not (-rank <= start < rank and -rank <= end < rank):
            raise ValueError(f"flatten dims ({start}, {end}) are out of range for shape {x.shape}")
        first, last = start % rank, end % rank
        if first > last:
            raise ValueError(f"flatten start_dim {start} comes after end_dim {end} for shape {x.shape}")
        shape = x.shape
        return x.reshape(shape[:first] + (math.prod(shape[first : last + 1]),) + shape[last + 1 :])

    return flatten


def make_cat(attrs: AxisAttrs, n_inputs: int) -> Kernel:
    """Concatenate all inputs along ``axis``."""
    axis = attrs.axis

    def cat(*xs: Array) -> Array:
        return np.concatenate(xs, axis=axis)

    return cat
