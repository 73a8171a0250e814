"""Interpolation (nn.Upsample / F.interpolate): nearest, nearest-exact, (bi/tri)linear, bicubic
and the antialiased variants; separable, one spatial axis at a time, in float64."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import register_schema
from runtime_py.operators.tensors import float_dtype

Weights = Callable[[int, int, float, bool], np.ndarray]  # (in, out, scale, align_corners) -> (out, in) matrix


def _sizes(x: np.ndarray, nd: int, output_size: list[int] | None, scale_factors: list[float] | None,
           name: str) -> tuple[list[int], list[float | None]]:
    if x.ndim != nd + 2:
        raise ExecutionError(f"{name} expects a {nd + 2}-D input, got shape {list(x.shape)}")
    spatial = x.shape[2:]
    if output_size is not None:
        if len(output_size) != nd:
            raise ExecutionError(f"{name}: output_size must have {nd} values, got {output_size}")
        return list(output_size), [None] * nd
    if scale_factors is None or len(scale_factors) != nd:
        raise ExecutionError(f"{name}: expected {nd} scale factors or an output size")
    return [int(math.floor(n * s)) for n, s in zip(spatial, scale_factors, strict=True)], list(scale_factors)


def _scale(size_in: int, size_out: int, align_corners: bool, scale: float | None) -> float:
    """area_pixel_compute_scale: how far apart output pixels are, in input pixels."""
    if align_corners:
        return (size_in - 1) / (size_out - 1) if size_out > 1 else 0.0
    return 1.0 / scale if scale is not None and scale > 0 else size_in / size_out


def _source(dst: np.ndarray, scale: float, align_corners: bool, cubic: bool = False) -> np.ndarray:
    if align_corners:
        return dst * scale
    src = scale * (dst + 0.5) - 0.5
    return src if cubic else np.maximum(src, 0.0)


def _nearest(exact: bool) -> Weights:
    def weights(size_in: int, size_out: int, scale: float, align_corners: bool) -> np.ndarray:
        dst = np.arange(size_out, dtype=np.float64)
        src = np.floor((dst + 0.5) * scale) if exact else np.floor(dst * scale)
        matrix = np.zeros((size_out, size_in))
        matrix[np.arange(size_out), np.minimum(src.astype(np.int64), size_in - 1)] = 1.0
        return matrix

    return weights


def _linear(size_in: int, size_out: int, scale: float, align_corners: bool) -> np.ndarray:
    src = _source(np.arange(size_out, dtype=np.float64), scale, align_corners)
    i0 = np.minimum(src.astype(np.int64), size_in - 1)
    i1 = np.minimum(i0 + 1, size_in - 1)
    lam = src - i0
    matrix = np.zeros((size_out, size_in))
    rows = np.arange(size_out)
    np.add.at(matrix, (rows, i0), 1.0 - lam)
    np.add.at(matrix, (rows, i1), lam)
    return matrix


def _cubic_weights(t: np.ndarray, a: float) -> list[np.ndarray]:
    def near(x: np.ndarray) -> np.ndarray:
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: np.ndarray) -> np.ndarray:
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _cubic(size_in: int, size_out: int, scale: float, align_corners: bool) -> np.ndarray:
    src = _source(np.arange(size_out, dtype=np.float64), scale, align_corners, cubic=True)
    base = np.floor(src).astype(np.int64)
    matrix = np.zeros((size_out, size_in))
    rows = np.arange(size_out)
    for k, w in enumerate(_cubic_weights(src - base, -0.75)):
        np.add.at(matrix, (rows, np.clip(base - 1 + k, 0, size_in - 1)), w)
    return matrix


def _triangle(x: np.ndarray) -> np.ndarray:
    return np.maximum(1.0 - np.abs(x), 0.0)


def _keys_cubic(x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    a = -0.5
    return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))


def _lanczos(x: np.ndarray) -> np.ndarray:
    return np.where(np.abs(x) < 3, np.sinc(x) * np.sinc(x / 3), 0.0)


def _antialiased(filter_fn: Callable[[np.ndarray], np.ndarray], interp_size: int) -> Weights:
    """torch's separable antialiasing filter: widened by the downscale factor, normalized per row."""

    def weights(size_in: int, size_out: int, scale: float, align_corners: bool) -> np.ndarray:
        support = interp_size * 0.5 * scale if scale >= 1.0 else interp_size * 0.5
        invscale = 1.0 / scale if scale >= 1.0 else 1.0
        matrix = np.zeros((size_out, size_in))
        for i in range(size_out):
            center = scale * (i + 0.5)
            lo = max(int(center - support + 0.5), 0)
            hi = min(int(center - (-support) + 0.5), size_in)
            w = filter_fn((np.arange(lo, hi) - center + 0.5) * invscale)
            total = w.sum()
            matrix[i, lo:hi] = w / total if total != 0 else w
        return matrix

    return weights


def interpolate(x: np.ndarray, nd: int, output_size: list[int] | None, align_corners: bool,
                scale_factors: list[float] | None, weights: Weights, name: str) -> np.ndarray:
    sizes, scales = _sizes(x, nd, output_size, scale_factors, name)
    y = x.astype(np.float64)
    for i in range(nd):
        axis = 2 + i
        matrix = weights(x.shape[axis], sizes[i], _scale(x.shape[axis], sizes[i], align_corners, scales[i]),
                         align_corners)
        y = np.moveaxis(np.tensordot(y, matrix, axes=([axis], [1])), -1, axis)
    if x.dtype.kind != "f":  # integer images: round the interpolated values
        return np.clip(np.round(y), np.iinfo(x.dtype).min, np.iinfo(x.dtype).max).astype(x.dtype)
    return y.astype(float_dtype(x))


def _register_nearest(name: str, nd: int, exact: bool) -> None:
    register_schema(f"aten::{name}.vec(Tensor input, SymInt[]? output_size, float[]? scale_factors) -> Tensor",
                    lambda x, size, scales: interpolate(x, nd, size, False, scales, _nearest(exact), name))


def _register_interp(name: str, nd: int, weights: Weights) -> None:
    register_schema(f"aten::{name}.vec(Tensor input, SymInt[]? output_size, bool align_corners, "
                    "float[]? scale_factors) -> Tensor",
                    lambda x, size, ac, scales: interpolate(x, nd, size, ac, scales, weights, name))


# nearest (floor(dst * scale)) and nearest-exact (floor((dst + 0.5) * scale))
for _nd in (1, 2, 3):
    _register_nearest(f"upsample_nearest{_nd}d", _nd, exact=False)
    _register_nearest(f"_upsample_nearest_exact{_nd}d", _nd, exact=True)
# (bi/tri)linear, bicubic (A = -0.75) and the antialiased filters
_register_interp("upsample_linear1d", 1, _linear)
_register_interp("upsample_bilinear2d", 2, _linear)
_register_interp("upsample_trilinear3d", 3, _linear)
_register_interp("upsample_bicubic2d", 2, _cubic)
_register_interp("_upsample_bilinear2d_aa", 2, _antialiased(_triangle, 2))
_register_interp("_upsample_bicubic2d_aa", 2, _antialiased(_keys_cubic, 4))
_register_interp("_upsample_lanczos2d_aa", 2, _antialiased(_lanczos, 6))
