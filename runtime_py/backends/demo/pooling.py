"""2-D max, average and adaptive average pooling, with torch's window rules.

The one pooling of runtime_py: the demo backend's programs call these kernels on float32, the
TorchScript operator table (runtime_py/operators/nn.py) on other dtypes and, through unit and
depth dims, for 1-D and 3-D pooling too."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from bundle_format.program import Pool2dAttrs, ShapeAttrs
from bundle_format.shape_arithmetic import output_size
from runtime_py.backends.demo.arrays import Array, Kernel, empty
from runtime_py.backends.demo.windows import (
    as_batched,
    check_output_size,
    check_window_attrs,
    padded_windows,
)


def _check_pool_attrs(
    kernel: tuple[int, int], stride: tuple[int, int], padding: tuple[int, int], dilation: tuple[int, int]
) -> None:
    check_window_attrs(stride, padding, dilation, kernel)
    # torch's rule, on the kernel size even when dilated
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        raise ValueError(f"padding {padding} should be at most half of the kernel size {kernel}")


def make_max_pool2d(attrs: Pool2dAttrs, n_inputs: int, reuse_output: bool = False) -> Kernel:
    """max_pool2d: padding counts as -inf (an integer dtype's least value), so it never wins; NaN
    propagates like torch.

    Non-overlapping windows without padding (kernel == stride, the common 2x2 pool) reduce
    rows first, then columns, into buffers kept per input shape when ``reuse_output``.
    """
    kernel, stride, padding, dilation, ceil_mode = (
        attrs.kernel, attrs.stride, attrs.padding, attrs.dilation, attrs.ceil_mode,
    )
    _check_pool_attrs(kernel, stride, padding, dilation)
    tiled = kernel == stride and padding == (0, 0) and dilation == (1, 1)
    buffers: dict[tuple[int, ...], tuple[Array, Array]] = {}

    def max_pool2d(x: Array) -> Array:
        x4, unbatched = as_batched(x, "max_pool2d")
        h, w = x4.shape[2:]
        out_hw = (
            output_size(h, kernel[0], stride[0], padding[0], dilation[0], ceil_mode),
            output_size(w, kernel[1], stride[1], padding[1], dilation[1], ceil_mode),
        )
        check_output_size("max_pool2d", (h, w), out_hw)
        oh, ow = out_hw
        if tiled and oh * kernel[0] <= h and ow * kernel[1] <= w:
            kh, kw = kernel
            pair = buffers.get(x4.shape) if reuse_output else None
            if pair is None:
                pair = (empty((*x4.shape[:2], oh, w), x4.dtype), empty((*x4.shape[:2], oh, ow), x4.dtype))
                if reuse_output:
                    if len(buffers) >= 4:
                        buffers.clear()
                    buffers[x4.shape] = pair
            rows, y = pair
            np.maximum(x4[:, :, 0 : oh * kh : kh], x4[:, :, 1 : oh * kh : kh], out=rows) if kh > 1 \
                else np.copyto(rows, x4[:, :, :oh])
            for i in range(2, kh):
                np.maximum(rows, x4[:, :, i : oh * kh : kh], out=rows)
            np.maximum(rows[..., 0 : ow * kw : kw], rows[..., 1 : ow * kw : kw], out=y) if kw > 1 \
                else np.copyto(y, rows[..., :ow])
            for j in range(2, kw):
                np.maximum(y, rows[..., j : ow * kw : kw], out=y)
            return y[0] if unbatched else y
        windows = padded_windows(x4, kernel, stride, padding, dilation, out_hw, lowest(x4.dtype))
        # one vectorized maximum per kernel tap beats a reduction over two tiny strided axes
        y = empty(windows.shape[:4], x4.dtype)
        np.copyto(y, windows[:, :, :, :, 0, 0])
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                if i or j:
                    np.maximum(y, windows[:, :, :, :, i, j], out=y)
        return y[0] if unbatched else y

    return max_pool2d


def lowest(dtype: np.dtype[Any]) -> Any:
    """What padding holds in a max pool of ``dtype``: a value no element is below."""
    if dtype.kind == "f":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def max_pool2d_with_indices(attrs: Pool2dAttrs, x: Array) -> tuple[Array, Array]:
    """max_pool2d and, per output, the flat index (h * W + w) of the input element that won: the
    first maximum of its window, as torch picks it."""
    kernel, stride, padding, dilation = attrs.kernel, attrs.stride, attrs.padding, attrs.dilation
    _check_pool_attrs(kernel, stride, padding, dilation)
    x4, unbatched = as_batched(x, "max_pool2d_with_indices")
    h, w = x4.shape[2:]
    out_hw = (
        output_size(h, kernel[0], stride[0], padding[0], dilation[0], attrs.ceil_mode),
        output_size(w, kernel[1], stride[1], padding[1], dilation[1], attrs.ceil_mode),
    )
    check_output_size("max_pool2d_with_indices", (h, w), out_hw)
    windows = padded_windows(x4, kernel, stride, padding, dilation, out_hw, lowest(x4.dtype))
    flat = windows.reshape(windows.shape[:4] + (-1,))
    which = np.argmax(flat, axis=-1)  # a NaN is the maximum: argmax finds the first, as torch
    values = np.take_along_axis(flat, which[..., None], -1)[..., 0]
    i, j = np.divmod(which, kernel[1])
    rows = np.arange(out_hw[0]).reshape(-1, 1) * stride[0] - padding[0] + i * dilation[0]
    cols = np.arange(out_hw[1]) * stride[1] - padding[1] + j * dilation[1]
    indices = (rows * w + cols).astype(np.int64)
    return (values[0], indices[0]) if unbatched else (values, indices)


def make_avg_pool2d(attrs: Pool2dAttrs, n_inputs: int) -> Kernel:
    """avg_pool2d with ceil_mode, count_include_pad and divisor_override."""
    kernel, stride, padding, ceil_mode = attrs.kernel, attrs.stride, attrs.padding, attrs.ceil_mode
    _check_pool_attrs(kernel, stride, padding, attrs.dilation)
    if attrs.dilation != (1, 1):
        raise ValueError(f"avg_pool2d has no dilation, got {attrs.dilation}")
    divisor_override = attrs.divisor_override or None
    if divisor_override is not None and divisor_override < 0:
        raise ValueError(f"divisor_override must be positive, got {divisor_override}")
    include_pad = attrs.count_include_pad
    override = np.float32(divisor_override) if divisor_override is not None else None
    divisors: dict[tuple[int, int], Array] = {}  # per input (H, W); models see few sizes

    def avg_pool2d(x: Array) -> Array:
        x4, unbatched = as_batched(x, "avg_pool2d")
        h, w = x4.shape[2:]
        out_hw = (
            output_size(h, kernel[0], stride[0], padding[0], 1, ceil_mode),
            output_size(w, kernel[1], stride[1], padding[1], 1, ceil_mode),
        )
        check_output_size("avg_pool2d", (h, w), out_hw)
        windows = padded_windows(x4, kernel, stride, padding, (1, 1), out_hw, 0.0)
        y = windows[:, :, :, :, 0, 0].copy()
        for i in range(kernel[0]):
            for j in range(kernel[1]):
                if i or j:
                    y += windows[:, :, :, :, i, j]
        if override is not None:
            y /= override
        else:
            divisor = divisors.get((h, w))
            if divisor is None:
                counts_h = window_counts(h, kernel[0], stride[0], padding[0], out_hw[0], include_pad)
                counts_w = window_counts(w, kernel[1], stride[1], padding[1], out_hw[1], include_pad)
                divisor = divisors[(h, w)] = np.outer(counts_h, counts_w).astype(np.float32)
            y /= divisor
        return y[0] if unbatched else y

    return avg_pool2d


def window_counts(size: int, kernel: int, stride: int, padding: int, out: int, include_pad: bool) -> Array:
    """How many elements each window along one axis averages over, as torch counts them:
    windows are clipped to input+padding (ceil mode's overhang never counts), and to the
    input alone without ``count_include_pad``."""
    starts = np.arange(out) * stride - padding
    ends = np.minimum(starts + kernel, size + padding)
    if include_pad:
        return ends - starts
    return np.minimum(ends, size) - np.maximum(starts, 0)


def make_adaptive_avg_pool2d(attrs: ShapeAttrs, n_inputs: int) -> Kernel:
    """adaptive_avg_pool2d to ``dims`` (2 entries; -1 keeps that input size, like torch's None).

    Bin i of an axis covers [floor(i*in/out), ceil((i+1)*in/out)).
    """
    if len(attrs.dims) != 2 or any(d < 1 and d != -1 for d in attrs.dims):
        raise ValueError(f"output size must be 2 positive sizes (or -1), got {attrs.dims}")
    dims = attrs.dims

    def adaptive_avg_pool2d(x: Array) -> Array:
        x4, unbatched = as_batched(x, "adaptive_avg_pool2d")
        n, c, h, w = x4.shape
        oh = h if dims[0] == -1 else dims[0]
        ow = w if dims[1] == -1 else dims[1]
        if oh == ow == 1 and h * w:
            # global pooling, the common case: the sums as one matrix-vector product, then a
            # division; np.mean's wrapper and a reduction over short rows (7x7) cost several times more
            y: Array = (x4.reshape(n * c, h * w) @ _ones_column(h * w, x4.dtype)).reshape(n, c, 1, 1)
            y /= y.dtype.type(h * w)
        elif h % oh == 0 and w % ow == 0:
            # equal bins: a reshape and one mean
            y = x4.reshape(n, c, oh, h // oh, ow, w // ow).mean(axis=(3, 5))
        else:
            y = _adaptive_bins_mean(x4, oh, ow)
        return y[0] if unbatched else y

    return adaptive_avg_pool2d


@functools.lru_cache(maxsize=16)
def _ones_column(size: int, dtype: np.dtype[Any]) -> Array:
    ones = np.ones((size, 1), dtype=dtype)
    ones.flags.writeable = False
    return ones


def _adaptive_bins_mean(x: Array, oh: int, ow: int) -> Array:
    """Unequal (overlapping) bins through a float64 summed-area table, so differences of large
    prefix sums do not lose float32 precision."""
    n, c, h, w = x.shape
    table = np.zeros((n, c, h + 1, w + 1), dtype=np.float64)
    np.cumsum(x, axis=2, dtype=np.float64, out=table[:, :, 1:, 1:])
    np.cumsum(table[:, :, 1:, 1:], axis=3, out=table[:, :, 1:, 1:])
    hs, he = adaptive_bounds(h, oh)
    ws, we = adaptive_bounds(w, ow)
    sums = (
        table[:, :, he[:, None], we[None, :]]
        - table[:, :, hs[:, None], we[None, :]]
        - table[:, :, he[:, None], ws[None, :]]
        + table[:, :, hs[:, None], ws[None, :]]
    )
    counts = np.outer(he - hs, we - ws)
    return (sums / counts).astype(x.dtype)


def adaptive_bounds(size: int, out: int) -> tuple[Array, Array]:
    """Starts and ends of the ``out`` adaptive-pooling bins over ``size``: bin i covers
    [floor(i*size/out), ceil((i+1)*size/out))."""
    index = np.arange(out)
    return (index * size) // out, -((-(index + 1) * size) // out)
