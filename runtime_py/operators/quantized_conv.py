"""Quantized convolution and linear layers, as torch's qnnpack engine computes them.

qnnpack takes quint8 activations and qint8 weights (per tensor or per output channel). It
quantizes the float bias to int32 at scale ``weight_scale * input_scale``, accumulates
``sum((x - x_zero_point) * (w - w_zero_point)) + bias`` in int32, and requantizes with the float32
multiplier ``weight_scale * input_scale * (1 / output_scale)``. The products are integers below
2**53 in magnitude, so they are summed exactly by float64 matrix products (numpy has no fast
integer ones).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

from bundle_format.ptmf import ScalarType
from bundle_format.shape_arithmetic import output_size
from runtime_py.backends.demo.windows import padded_windows
from runtime_py.errors import ExecutionError
from runtime_py.operators.packed_params import CONV2D_PARAMS, LINEAR_PARAMS, ConvPackedParams, LinearPackedParams
from runtime_py.operators.quantized import F32, output_params, quantize, quantize_values, quantized, requantize
from runtime_py.operators.registry import op, register_schema
from runtime_py.quantized_tensor import QuantizedTensor


def _activation(x: Any, what: str) -> QuantizedTensor:
    q = quantized(x, what)
    if q.scalar_type != ScalarType.QUINT8:
        raise ExecutionError(f"{what}: qnnpack takes quint8 activations, got {q.type_name}")
    return q


def _centered_weight(w: QuantizedTensor) -> tuple[np.ndarray, np.ndarray]:
    """The weight minus its zero points (float64, exact) and its scales as float32 per output channel."""
    scales, zero_points = w.channel_params()
    out = w.shape[0]
    return (w.int_repr.astype(np.float64) - zero_points,
            np.broadcast_to(np.asarray(scales, dtype=F32).reshape(-1), (out,)))


def _bias_and_multiplier(bias: np.ndarray | None, weight_scales: np.ndarray, w: QuantizedTensor,
                         x: QuantizedTensor, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """The int32 bias (torch's QuantizeBias: scale ``weight_scale * input_scale`` in double, rounded
    to float32 as it is quantized) and qnnpack's float32 requantization multipliers."""
    out = w.shape[0]
    bias_q = np.zeros(out, dtype=np.int64)
    if bias is not None:
        double_scales = (w.scales if w.scales is not None else np.full(out, w.scale)) * float(x.scale)
        bias_q = quantize_values(bias, double_scales, 0, ScalarType.QINT32).astype(np.int64)
    multiplier = (weight_scales * F32(x.scale)).astype(F32) * (F32(1) / F32(scale))
    return bias_q, multiplier.astype(F32)


def _conv_sums(x: np.ndarray, w: np.ndarray, params: ConvPackedParams, out_hw: tuple[int, int]) -> np.ndarray:
    """sum((x - zp) * (w - w_zp)) of every output (N, O, OH, OW), exact in float64; ``x`` centered,
    padded with zeros (qnnpack pads with the input zero point)."""
    n, c = x.shape[:2]
    o, cg, kh, kw = w.shape
    groups = params.groups
    windows = padded_windows(x, (kh, kw), params.stride, params.padding, params.dilation, out_hw, 0.0)
    if cg == 1 and o == groups:  # depthwise: one multiply-add per tap, no matrix product
        acc = np.zeros((n, o, *out_hw), dtype=np.float64)
        for i in range(kh):
            for j in range(kw):
                acc += windows[..., i, j] * w[:, 0, i, j].reshape(1, o, 1, 1)
        return acc
    og = o // groups
    outs = []
    for g in range(groups):
        cols = windows[:, g * cg:(g + 1) * cg].transpose(0, 2, 3, 1, 4, 5).reshape(n * out_hw[0] * out_hw[1], -1)
        outs.append(cols @ w[g * og:(g + 1) * og].reshape(og, -1).T)
    acc = np.concatenate(outs, axis=1) if groups > 1 else outs[0]
    return np.ascontiguousarray(acc.reshape(n, out_hw[0], out_hw[1], o).transpose(0, 3, 1, 2))


def _conv2d(x: Any, params: Any, scale: float, zero_point: int, relu: bool) -> QuantizedTensor:
    what = "quantized::conv2d_relu" if relu else "quantized::conv2d"
    q = _activation(x, what)
    if not isinstance(params, ConvPackedParams):
        raise ExecutionError(f"{what} expects a {CONV2D_PARAMS}, got {type(params).__name__}")
    if q.ndim != 4:
        raise ExecutionError(f"{what} expects a 4-D (NCHW) input, got shape {list(q.shape)}")
    output_params(what, scale, zero_point, q.scalar_type)
    w = params.weight
    n, c, h, wd = q.shape
    if c != w.shape[1] * params.groups:
        raise ExecutionError(f"{what}: the input has {c} channels, the weight {list(w.shape)} in {params.groups} "
                             f"groups takes {w.shape[1] * params.groups}")
    out_hw = tuple(output_size(size, k, s, p, d, False) for size, k, s, p, d in zip(
        (h, wd), w.shape[2:], params.stride, params.padding, params.dilation, strict=True))
    if min(out_hw) < 1:
        raise ExecutionError(f"{what}: input of spatial size {(h, wd)} is too small: output size would be {out_hw}")
    centered, weight_scales = _centered_weight(w)
    sums = _conv_sums(q.int_repr.astype(np.float64) - q.zero_point, centered, params, (out_hw[0], out_hw[1]))
    bias_q, multiplier = _bias_and_multiplier(params.bias, weight_scales, w, q, scale)
    acc = np.rint(sums).astype(np.int64) + bias_q.reshape(1, -1, 1, 1)
    return requantize(acc, multiplier.reshape(1, -1, 1, 1), scale, zero_point, q.scalar_type, relu)


for _suffix in ("", "_relu"):
    register_schema(f"quantized::conv2d{_suffix}.new(Tensor qx, {CONV2D_PARAMS} packed_weight, "
                    "float output_scale, int output_zero_point) -> Tensor", partial(_conv2d, relu=bool(_suffix)))


def _conv2d_legacy(x: Any, params: Any, stride: Any, padding: Any, dilation: Any, groups: int, scale: float,
                   zero_point: int, relu: bool) -> QuantizedTensor:
    """The older overloads: torch warns that their window arguments were removed and uses the packed ones."""
    return _conv2d(x, params, scale, zero_point, relu)


for _suffix in ("", "_relu"):
    register_schema(f"quantized::conv2d{_suffix}(Tensor qx, {CONV2D_PARAMS} weight, int[] stride, "
                    "int[] padding, int[] dilation, int groups, float output_scale, int output_zero_point) -> Tensor",
                    partial(_conv2d_legacy, relu=bool(_suffix)))


def _linear_sums(x: np.ndarray, params: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The exact sums ``(x - zp) @ (w - w_zp).T`` of a centered input (..., in), and the weight's scales."""
    if not isinstance(params, LinearPackedParams):
        raise ExecutionError(f"{what} expects a {LINEAR_PARAMS}, got {type(params).__name__}")
    w = params.weight
    if x.ndim < 1 or x.shape[-1] != w.shape[1]:
        raise ExecutionError(f"{what}: input of shape {list(x.shape)} for a weight of shape {list(w.shape)}")
    centered, weight_scales = _centered_weight(w)
    return x @ centered.T, weight_scales


def _linear(x: Any, params: Any, scale: float, zero_point: int, relu: bool) -> QuantizedTensor:
    what = "quantized::linear_relu" if relu else "quantized::linear"
    q = _activation(x, what)
    output_params(what, scale, zero_point, q.scalar_type)
    sums, weight_scales = _linear_sums(q.int_repr.astype(np.float64) - q.zero_point, params, what)
    bias_q, multiplier = _bias_and_multiplier(params.bias, weight_scales, params.weight, q, scale)
    return requantize(np.rint(sums).astype(np.int64) + bias_q, multiplier, scale, zero_point, q.scalar_type, relu)


for _suffix in ("", "_relu"):
    register_schema(f"quantized::linear{_suffix}(Tensor X, {LINEAR_PARAMS} W_prepack, float Y_scale_i, "
                    "int Y_zero_point_i) -> Tensor Y", partial(_linear, relu=bool(_suffix)))


def choose_qparams(low: float, high: float, qmin: int = 0, qmax: int = 255) -> tuple[float, int]:
    """torch's ChooseQuantizationParams (quant_utils.h; no sparsity preservation nor reduced range):
    the range widened to hold 0 (float32 ends), its scale in double (0.1 when degenerate, at least
    6.1e-5 with the range widened to match), the zero point from the end with the smaller error,
    clamped and rounded to an integer; the scale is kept as a float32."""
    low, high = float(F32(min(low, 0.0))), float(F32(max(high, 0.0)))
    scale = (high - low) / (qmax - qmin)
    if F32(scale) == 0 or not np.isfinite(F32(1) / F32(scale)):
        scale = 0.1
    threshold = float(F32(6.1e-5))
    if scale < threshold:
        amplifier = F32(threshold) / F32(scale)
        if low == 0:
            high = float(F32(threshold * (qmax - qmin)))
        elif high == 0:
            low = float(F32(-threshold * (qmax - qmin)))
        else:
            low, high = float(F32(low) * amplifier), float(F32(high) * amplifier)
        scale = threshold
    from_min, from_max = qmin - low / scale, qmax - high / scale
    initial = from_min if abs(qmin) - abs(low / scale) < abs(qmax) - abs(high / scale) else from_max
    zero_point = qmin if initial < qmin else qmax if initial > qmax else int(np.rint(initial))
    return float(F32(scale)), zero_point


@op(f"quantized::linear_dynamic(Tensor X, {LINEAR_PARAMS} W_prepack, bool reduce_range=False) -> Tensor Y")
def linear_dynamic(x: Any, params: Any, reduce_range: bool) -> np.ndarray:
    """qnnpack's dynamic linear: the float input quantized to quint8 over its own range (qnnpack
    ignores reduce_range, as torch warns), the sums times ``input_scale * weight_scale`` in float32,
    plus the float bias."""
    what = "quantized::linear_dynamic"
    if not isinstance(x, np.ndarray) or x.dtype != np.float32 or x.size == 0:
        raise ExecutionError(f"{what} expects a non-empty float tensor")
    scale, zero_point = choose_qparams(float(x.min()), float(x.max()))
    q = quantize(x, scale, zero_point, ScalarType.QUINT8, what, fused=True)  # by aten::quantize_per_tensor
    sums, weight_scales = _linear_sums(q.int_repr.astype(np.float64) - q.zero_point, params, what)
    out = np.rint(sums).astype(np.int64).astype(F32) * (weight_scales * F32(scale)).astype(F32)
    if params.bias is not None:
        out = out + params.bias
    return out.astype(F32)
