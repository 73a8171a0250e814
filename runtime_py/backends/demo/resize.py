"""RESIZE2D: nearest and bilinear resizing of NCHW float32 tensors, as ATen's CPU kernels
(aten/src/ATen/native/UpSample.h and UpSampleKernel.cpp) compute them.

Every axis is resized on its own: a source index (nearest) or two source indices and a weight
(bilinear) per output index, computed once per call in float32 as ATen does (its scale and
source index are float for a float tensor, so a float64 index could land on the other side of
a floor), then gathered with numpy fancy indexing.
"""

from __future__ import annotations

import numpy as np

from bundle_format.program import ResizeAttrs
from runtime_py.backends.demo.arrays import Array, Kernel

_F32 = np.float32


def _scale(size_in: int, size_out: int, given: float | None) -> np.float32:
    """compute_scales_value: 1 / the model's scale factor when it gave one, else in / out."""
    if given is not None and given > 0:
        return _F32(1.0 / given)
    return _F32(size_in) / _F32(size_out)


def nearest_indices(size_in: int, size_out: int, given: float | None) -> Array:
    """ATen's nearest_idx: min(floor(dst * scale), in - 1), with its exact shortcuts for the
    same size and for twice the size (they win even over a given scale)."""
    dst = np.arange(size_out)
    if size_out == size_in:
        return dst
    if size_out == 2 * size_in:
        return dst >> 1
    src = np.floor(dst.astype(_F32) * _scale(size_in, size_out, given)).astype(np.int64)
    clamped: Array = np.minimum(src, size_in - 1)
    return clamped


def linear_weights(size_in: int, size_out: int, align_corners: bool,
                   given: float | None) -> tuple[Array, Array, Array]:
    """(i0, i1, lambda) per output index: out = (1 - lambda) * x[i0] + lambda * x[i1], as
    area_pixel_compute_source_index and guard_index_and_lambda compute them."""
    dst = np.arange(size_out)
    if size_out == size_in:
        # ATen's separable kernel leaves an axis of unchanged size alone, whatever the scale
        return dst, dst, np.zeros(size_out, _F32)
    if align_corners:
        scale = _F32(size_in - 1) / _F32(size_out - 1) if size_out > 1 else _F32(0)
        src = dst.astype(_F32) * scale
    else:
        scale = _scale(size_in, size_out, given)
        src = np.maximum(scale * (dst.astype(_F32) + _F32(0.5)) - _F32(0.5), _F32(0))
    i0 = np.minimum(np.floor(src).astype(np.int64), size_in - 1)
    lam = np.clip(src - i0.astype(_F32), _F32(0), _F32(1)).astype(_F32)
    i1 = np.minimum(i0 + 1, size_in - 1)
    return i0, i1, lam


def make_resize2d(attrs: ResizeAttrs, n_inputs: int) -> Kernel:
    if min(attrs.size) < 1:
        raise ValueError(f"output size must be positive, got {attrs.size}")
    out_h, out_w = attrs.size
    bilinear = attrs.bilinear

    def resize2d(x: Array) -> Array:
        if x.ndim != 4:
            raise ValueError(f"resize2d expects a 4-D (NCHW) input, got shape {x.shape}")
        h, w = x.shape[2], x.shape[3]
        if not h or not w:
            raise ValueError(f"resize2d of an empty plane, input shape {x.shape}")
        if not bilinear:
            rows = nearest_indices(h, out_h, attrs.scale_h)
            cols = nearest_indices(w, out_w, attrs.scale_w)
            return x[:, :, rows[:, None], cols[None, :]]
        r0, r1, lh = linear_weights(h, out_h, attrs.align_corners, attrs.scale_h)
        c0, c1, lw = linear_weights(w, out_w, attrs.align_corners, attrs.scale_w)
        # the width first, on the input's rows only, then the height: the same weights ATen
        # applies, in float32
        lw_row = lw[None, None, None, :]
        across: Array = x[:, :, :, c0] * (_F32(1) - lw_row) + x[:, :, :, c1] * lw_row
        lh_col = lh[None, None, :, None]
        out: Array = across[:, :, r0, :] * (_F32(1) - lh_col) + across[:, :, r1, :] * lh_col
        return out.astype(x.dtype, copy=False)

    return resize2d
