"""Slicing and broadcasting kernels: slice one axis (a view), expand to a shape."""

from __future__ import annotations

import numpy as np

from bundle_format.program import ShapeAttrs, SliceAttrs
from bundle_format.shape_arithmetic import expanded_shape
from runtime_py.backends.demo.arrays import Array, Kernel


def make_slice(attrs: SliceAttrs, n_inputs: int) -> Kernel:
    """``x[..., start:end:step, ...]`` on ``axis``, with Python's clamping of the bounds."""
    axis, window = attrs.axis, slice(attrs.start, attrs.end, attrs.step)
    if attrs.step < 1:
        raise ValueError(f"step must be positive, got {attrs.step}")

    def sliced(x: Array) -> Array:
        if not -x.ndim <= axis < x.ndim:
            raise ValueError(f"axis {axis} is out of range for an input of shape {x.shape}")
        return x[(slice(None),) * (axis % x.ndim) + (window,)]

    return sliced


def make_expand(attrs: ShapeAttrs, n_inputs: int) -> Kernel:
    """Broadcast to ``dims`` (a fresh contiguous array)."""
    dims = tuple(attrs.dims)
    if any(d < -1 for d in dims):
        raise ValueError(f"shape {dims} may hold -1 and otherwise sizes >= 0")

    def expand(x: Array) -> Array:
        return np.array(np.broadcast_to(x, expanded_shape(x.shape, dims)))

    return expand
