"""The quantized kernels of aten operators that take any tensor: shape operators, pooling, means,
ReLU, sigmoid and hardsigmoid on a quantized tensor (torch's QuantizedCPU dispatch of the same
operator).

Shape operators and max pooling only move or select values: they run the float implementation
on the integers and keep the input's scale and zero point. Average pooling and means accumulate
the integers and rescale them as qnnpack does (quint8) or as torch's generic kernels do. The
float operators' modules are imported first, whatever the package's order: their definitions are
the ones these kernels are added to.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bundle_format.ptmf import ScalarType
from bundle_format.shape_arithmetic import output_size
from runtime_py.backends.demo.pooling import adaptive_bounds
from runtime_py.backends.demo.windows import padded_windows
from runtime_py.errors import ExecutionError
from runtime_py.operators import elementwise, nn, reductions, shape, upsample  # noqa: F401  (registered first)
from runtime_py.operators.quantized import F32, float_result, hardsigmoid, quantize_values, quantized, relu, sigmoid
from runtime_py.operators.registry import QUANTIZED_AWARE, op, quantized_kernel
from runtime_py.quantized_tensor import QuantizedTensor, qrange

# operators that only move, select or describe values: the float implementation runs on the integers
_VALUE_PRESERVING = (
    "aten::flatten.using_ints", "aten::view", "aten::reshape", "aten::transpose.int", "aten::contiguous",
    "aten::chunk", "aten::split.Tensor", "aten::permute", "aten::squeeze.dim", "aten::unsqueeze",
    "aten::select.int", "aten::slice.Tensor", "aten::clone", "aten::size", "aten::size.int",
    "aten::dim", "aten::numel", "aten::len.Tensor", "aten::max_pool2d", "aten::upsample_nearest2d.vec",
)


def _rewrap(q: QuantizedTensor, result: Any) -> Any:
    """The float implementation's result with the input's quantization: arrays (and lists of
    them) become quantized tensors; ints and shapes stay what they are."""
    if isinstance(result, np.ndarray):
        return q.with_values(result.astype(q.int_repr.dtype, copy=False))
    if isinstance(result, list | tuple) and result and isinstance(result[0], np.ndarray):
        return type(result)(_rewrap(q, r) for r in result)
    return result


def _on_integers(float_impl: Callable[..., Any], x: QuantizedTensor, *args: Any) -> Any:
    """A per-channel tensor's shape is read, but moving its values is refused (QuantizedTensor.with_values:
    the integers alone do not say which scale goes with which value once moved)."""
    return _rewrap(x, float_impl(x.int_repr, *args))


for _key in _VALUE_PRESERVING:
    quantized_kernel(_key)(_on_integers)


@quantized_kernel("aten::relu")
def _relu(float_impl: Callable[..., Any], x: QuantizedTensor) -> QuantizedTensor:
    return relu(x)


@quantized_kernel("aten::hardsigmoid")
def _hardsigmoid(float_impl: Callable[..., Any], x: QuantizedTensor) -> QuantizedTensor:
    return hardsigmoid(x)


@quantized_kernel("aten::sigmoid")
def _sigmoid(float_impl: Callable[..., Any], x: QuantizedTensor) -> QuantizedTensor:
    return sigmoid(x)


def _rescaled_sums(sums: np.ndarray, count: int, q: QuantizedTensor, window: int) -> QuantizedTensor:
    """qnnpack's average pooling requantization: ``clamp(rint(float32(sum - zero_point * count) *
    scale) + zero_point)``, the output keeping the input's parameters; ``scale`` is qnnpack's
    ``input_scale / (output_scale * window)`` in float32, not ``1 / window`` (a tie like -93 / 6
    rounds the other way). ``count`` 0: sums of integers already centered on the zero point."""
    scale = F32(q.scale) / (F32(q.scale) * F32(window))
    acc = (sums - q.zero_point * count).astype(F32)
    out = np.clip(np.rint(acc * scale) + F32(q.zero_point), 0, 255)
    return q.with_values(out.astype(np.uint8))


def _box_sums(x: np.ndarray, rows: tuple[np.ndarray, np.ndarray], cols: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The integer sums of an (N, C, H, W) array over the boxes rows[0][i]:rows[1][i] x cols[0][j]:cols[1][j]
    (bounds inside the array), from a summed-area table."""
    n, c, h, w = x.shape
    table = np.zeros((n, c, h + 1, w + 1), dtype=np.int64)
    table[:, :, 1:, 1:] = x.astype(np.int64).cumsum(axis=2).cumsum(axis=3)
    (hs, he), (ws, we) = rows, cols
    return (table[:, :, he[:, None], we[None, :]] - table[:, :, hs[:, None], we[None, :]]
            - table[:, :, he[:, None], ws[None, :]] + table[:, :, hs[:, None], ws[None, :]])


@quantized_kernel("aten::adaptive_avg_pool2d")
def _adaptive_avg_pool2d(float_impl: Callable[..., Any], x: QuantizedTensor, output_size: list[int]) -> Any:
    """torch's adaptive_avg_pool2d_quantized_cpu: quint8 with bins that tile the input (and are not
    1x1) is qnnpack's average pooling; otherwise the generic kernel, whose multiplier
    ``input_scale / output_scale / count`` is inverted twice as torch's quantize_val does."""
    q = quantized(x, "aten::adaptive_avg_pool2d")
    if q.ndim != 4 or len(output_size) != 2 or min(output_size) < 1:
        raise ExecutionError(f"aten::adaptive_avg_pool2d of a quantized tensor: a 4-D input and 2 positive output "
                             f"sizes, got shape {list(q.shape)} and {output_size}")
    h, w = q.shape[2:]
    oh, ow = output_size
    rows, cols = adaptive_bounds(h, oh), adaptive_bounds(w, ow)  # torch's bins: [floor(i*h/oh), ceil((i+1)*h/oh))
    sums, counts = _box_sums(q.int_repr, rows, cols), np.outer(rows[1] - rows[0], cols[1] - cols[0])
    if q.scalar_type == ScalarType.QUINT8 and h % oh == 0 and w % ow == 0 and (h, w) != (oh, ow):
        return _rescaled_sums(sums, int(counts[0, 0]), q, int(counts[0, 0]))
    multiplier = F32(F32(q.scale) / F32(q.scale)) / counts.astype(F32)
    values = quantize_values((sums - q.zero_point * counts).astype(F32), F32(1) / multiplier, q.zero_point,
                             q.scalar_type)
    return q.with_values(values)


@quantized_kernel("aten::avg_pool2d")
def _avg_pool2d(float_impl: Callable[..., Any], x: QuantizedTensor, kernel: list[int], stride: list[int],
                padding: list[int], ceil_mode: bool, count_include_pad: bool,
                divisor_override: int | None) -> QuantizedTensor:
    """torch's avg_pool2d_quantized_cpu. quint8 without ceil mode is qnnpack's average pooling: the
    padding holds the zero point and counts in the divisor, whatever count_include_pad says, and
    divisor_override is ignored, as torch's qnnpack path does. Other cases are torch's generic kernel:
    ``nearbyint(float32(sum - zero_point * size) * float32(1 / divisor) + zero_point)``, the sum over
    the window's elements inside the input."""
    what = "aten::avg_pool2d"
    q = quantized(x, what)
    if q.ndim != 4:
        raise ExecutionError(f"{what} of a quantized tensor: runtime_py takes 4-D (NCHW) inputs, got shape "
                             f"{list(q.shape)}")
    (kh, kw), (ph, pw) = _two(kernel, what, "kernel_size"), _two(padding, what, "padding")
    sh, sw = _two(stride, what, "stride") if stride else (kh, kw)
    h, w = q.shape[2:]
    out_hw = (output_size(h, kh, sh, ph, 1, ceil_mode), output_size(w, kw, sw, pw, 1, ceil_mode))
    if min(out_hw) < 1 or min(kh, kw, sh, sw) < 1 or min(ph, pw) < 0 or divisor_override == 0:
        raise ExecutionError(f"{what}: window {kernel}, stride {stride}, padding {padding} (divisor override "
                             f"{divisor_override}) of a {list(q.shape)} input")
    if q.scalar_type == ScalarType.QUINT8 and not ceil_mode:
        if kh * kw == 1:
            raise ExecutionError(f"{what}: qnnpack refuses a 1x1 average pooling of a quint8 tensor, as in torch")
        centered = q.int_repr.astype(np.int64) - q.zero_point
        sums = padded_windows(centered, (kh, kw), (sh, sw), (ph, pw), (1, 1), out_hw, 0).sum(axis=(4, 5))
        return _rescaled_sums(sums, 0, q, kh * kw)
    starts_h, starts_w = np.arange(out_hw[0]) * sh - ph, np.arange(out_hw[1]) * sw - pw
    ends_h, ends_w = np.minimum(starts_h + kh, h + ph), np.minimum(starts_w + kw, w + pw)  # padding included
    rows = (np.maximum(starts_h, 0), np.minimum(ends_h, h))
    cols = (np.maximum(starts_w, 0), np.minimum(ends_w, w))
    size = np.outer(rows[1] - rows[0], cols[1] - cols[0])
    divisor = (np.full(size.shape, divisor_override) if divisor_override is not None
               else np.outer(ends_h - starts_h, ends_w - starts_w) if count_include_pad else size)
    acc = (_box_sums(q.int_repr, rows, cols) - size * q.zero_point).astype(F32)
    qmin, qmax = qrange(q.scalar_type)
    values = np.rint(acc * (1.0 / divisor).astype(F32) + F32(q.zero_point))
    return q.with_values(np.clip(values, qmin, qmax).astype(q.int_repr.dtype))


def _two(values: list[int], what: str, name: str) -> tuple[int, int]:
    if len(values) not in (1, 2):
        raise ExecutionError(f"{what}: {name} must hold 1 or 2 values, got {values}")
    return values[0], values[-1]


@quantized_kernel("aten::mean.dim")
def _mean_dim(float_impl: Callable[..., Any], x: QuantizedTensor, dims: list[int] | None, keepdim: bool,
              dtype: int | None) -> QuantizedTensor:
    """torch's mean_quantized_cpu: quint8 NCHW over (2, 3) is qnnpack's global average pooling (the
    output keeping the input's parameters); other cases the generic kernel: the float mean quantized
    with the input's parameters by aten::quantize_per_tensor."""
    q = quantized(x, "aten::mean.dim")
    if dtype is not None and dtype != q.scalar_type:
        raise ExecutionError("aten::mean.dim of a quantized tensor with another dtype is not supported")
    if q.scalar_type == ScalarType.QUINT8 and q.ndim == 4 and dims is not None and list(dims) == [2, 3]:
        count = q.shape[2] * q.shape[3]
        sums = q.int_repr.astype(np.int64).sum(axis=(2, 3), keepdims=keepdim)
        return _rescaled_sums(sums, count, q, count)
    axes = None if dims is None else tuple(dims)
    return float_result("aten::mean.dim", q, lambda v: v.mean(axis=axes, keepdims=keepdim, dtype=F32),
                        q.scale, q.zero_point, fused=True)


def _channel_shuffle(x: Any, groups: int) -> Any:
    """Channels (dim 1) regrouped: (N, g, C/g, ...) transposed to (N, C/g, g, ...)."""
    values = x.int_repr if isinstance(x, QuantizedTensor) else x
    if values.ndim < 3 or groups < 1 or values.shape[1] % groups:
        raise ExecutionError(f"aten::channel_shuffle: {groups} groups of a tensor of shape {list(values.shape)}")
    n, c = values.shape[:2]
    shuffled = values.reshape(n, groups, c // groups, *values.shape[2:]).swapaxes(1, 2).reshape(values.shape)
    return _rewrap(x, shuffled) if isinstance(x, QuantizedTensor) else shuffled


op("aten::channel_shuffle(Tensor self, SymInt groups) -> Tensor")(_channel_shuffle)
QUANTIZED_AWARE.add("aten::channel_shuffle")
