"""Quantized tensors' operators, computed in integers as torch's qnnpack engine computes them.

Each result is what torch gives on the CPU with ``torch.backends.quantized.engine = "qnnpack"``:
quint8 activations take qnnpack's kernels (integer accumulation, a float32 rescale rounded half to
even as its ``_mm_cvtps_epi32`` rounds, the zero point added, a clamp), other cases torch's generic
quantized kernels (dequantize, compute in float32, quantize). Convolution and linear layers are in
quantized_conv.py, the pooling and shape operators' quantized kernels in quantized_shape.py.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from bundle_format.ptmf import QUANTIZED_DTYPES, ScalarType
from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import QUANTIZED_AWARE, op, register_schema
from runtime_py.quantized_tensor import QUANTIZED_TYPE_NAMES, QuantizedTensor, qrange

F32 = np.float32


def quantized(x: Any, what: str) -> QuantizedTensor:
    """``x`` as a per-tensor quantized operand of ``what`` (an ExecutionError naming it otherwise)."""
    if not isinstance(x, QuantizedTensor):
        raise ExecutionError(f"{what} expects a quantized tensor, got "
                             f"{'a float tensor' if isinstance(x, np.ndarray) else type(x).__name__}")
    if x.per_channel:
        raise ExecutionError(f"{what}: per-channel quantized activations are not supported (only per-tensor "
                             "affine ones, as torch's quantized operators take)")
    return x


def output_params(what: str, scale: float, zero_point: int, scalar_type: int) -> None:
    """Refuse an output scale or zero point the result cannot have (torch checks them too)."""
    qmin, qmax = qrange(scalar_type)
    if not (np.isfinite(scale) and scale > 0 and qmin <= zero_point <= qmax):
        raise ExecutionError(f"{what}: output scale {scale} and zero point {zero_point} are not those of a "
                             f"{QUANTIZED_TYPE_NAMES[scalar_type]} tensor (a positive scale, a zero point in "
                             f"[{qmin}, {qmax}])")


def requantize(acc: np.ndarray, multiplier: Any, scale: float, zero_point: int, scalar_type: int,
               relu: bool = False) -> QuantizedTensor:
    """qnnpack's fp32 requantization of integer accumulators: ``clamp(rint(float32(acc) * multiplier)
    + zero_point)``, the multiplier float32 (per output channel: broadcast against ``acc``); a fused
    ReLU clamps at the zero point."""
    qmin, qmax = qrange(scalar_type)
    scaled = np.rint(acc.astype(F32) * np.asarray(multiplier, dtype=F32))
    out = np.clip(scaled + F32(zero_point), max(qmin, zero_point) if relu else qmin, qmax)
    return QuantizedTensor(out.astype(QUANTIZED_DTYPES[scalar_type]), scalar_type, float(scale), int(zero_point))


def quantize_values(x: np.ndarray, scale: Any, zero_point: Any, scalar_type: int, fused: bool = False) -> np.ndarray:
    """torch's (fbgemm's) float -> quantized: ``clamp(zero_point + nearbyint(x * float32(1 / float32(scale))))``,
    NaN to the top of the range as its AVX2 kernel gives; ``scale`` and ``zero_point`` may be per-channel
    arrays. ``fused``: aten::quantize_per_tensor's kernel, which adds the zero point before rounding, in
    one fused multiply-add (so ``x / scale`` on a tie rounds with the zero point added: half to even
    of the sum), emulated exactly in float64 (the float32 product is exact there)."""
    qmin, qmax = qrange(scalar_type)
    inverse = F32(1) / np.asarray(scale, dtype=F32)
    zero = np.asarray(zero_point, np.float64)
    if fused:
        product = np.asarray(x, dtype=F32).astype(np.float64) * inverse.astype(np.float64)
        values = np.rint((product + zero).astype(F32)).astype(np.float64)
    else:
        values = np.rint(np.asarray(x, dtype=F32) * inverse).astype(np.float64) + zero
    values = np.clip(np.nan_to_num(values, nan=qmax, posinf=qmax, neginf=qmin), qmin, qmax)
    return values.astype(QUANTIZED_DTYPES[scalar_type])


def quantize(x: np.ndarray, scale: float, zero_point: int, scalar_type: int, what: str,
             fused: bool = False) -> QuantizedTensor:
    """A float tensor quantized (``fused``: as aten::quantize_per_tensor, see quantize_values)."""
    if scalar_type not in QUANTIZED_DTYPES:
        raise ExecutionError(f"{what}: dtype {scalar_type} is not a quantized type (QInt8 = 12, QUInt8 = 13, "
                             "QInt32 = 14)")
    output_params(what, scale, zero_point, scalar_type)
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f":
        raise ExecutionError(f"{what} expects a float tensor")
    return QuantizedTensor(quantize_values(x, scale, zero_point, scalar_type, fused), scalar_type, float(scale),
                           int(zero_point))


def float_result(what: str, x: QuantizedTensor, fn: Callable[[np.ndarray], np.ndarray], scale: float,
                 zero_point: int, fused: bool = False) -> QuantizedTensor:
    """torch's generic quantized kernel: dequantize, ``fn`` in float32, quantize to (scale, zero_point)
    (``fused``: by aten::quantize_per_tensor, see quantize_values)."""
    return quantize(fn(x.dequantize()).astype(F32), scale, zero_point, x.scalar_type, what, fused)


# ---- quantize / dequantize and the parameters --------------------------------------------------

@op("aten::quantize_per_tensor(Tensor self, float scale, int zero_point, ScalarType dtype) -> Tensor")
def quantize_per_tensor(x: np.ndarray, scale: float, zero_point: int, dtype: int) -> QuantizedTensor:
    return quantize(x, scale, zero_point, dtype, "aten::quantize_per_tensor", fused=True)


@op("aten::quantize_per_tensor.tensor_qparams(Tensor self, Tensor scale, Tensor zero_point, ScalarType dtype) "
    "-> Tensor")
def quantize_per_tensor_tensors(x: np.ndarray, scale: np.ndarray, zero_point: np.ndarray,
                                dtype: int) -> QuantizedTensor:
    if np.size(scale) != 1 or np.size(zero_point) != 1:
        raise ExecutionError("aten::quantize_per_tensor: scale and zero_point must hold one value each")
    return quantize(x, float(np.asarray(scale).item()), int(np.asarray(zero_point).item()), dtype,
                    "aten::quantize_per_tensor", fused=True)


@op("aten::quantize_per_channel(Tensor self, Tensor scales, Tensor zero_points, int axis, ScalarType dtype) "
    "-> Tensor")
def quantize_per_channel(x: np.ndarray, scales: np.ndarray, zero_points: np.ndarray, axis: int,
                         dtype: int) -> QuantizedTensor:
    what = "aten::quantize_per_channel"
    if dtype not in QUANTIZED_DTYPES or not 0 <= axis < x.ndim:
        raise ExecutionError(f"{what}: dtype {dtype} and axis {axis} of a {x.ndim}-d tensor")
    if np.shape(scales) != (x.shape[axis],) or np.shape(zero_points) != (x.shape[axis],):
        raise ExecutionError(f"{what}: {x.shape[axis]} channels need as many scales and zero points")
    shape = [1] * x.ndim
    shape[axis] = -1
    values = quantize_values(x, np.asarray(scales, np.float64).reshape(shape),
                             np.asarray(zero_points, np.int64).reshape(shape), dtype)
    return QuantizedTensor(values, dtype, scales=np.asarray(scales, np.float64),
                           zero_points=np.asarray(zero_points, np.int64), axis=axis)


def dequantize(x: Any) -> np.ndarray:
    if isinstance(x, QuantizedTensor):
        return x.dequantize()
    return np.asarray(x, dtype=F32)  # torch's dequantize of a float tensor is a float copy of it


def dequantize_list(xs: list[Any]) -> list[np.ndarray]:
    return [dequantize(x) for x in xs]


for _schema, _impl in (("aten::dequantize.self(Tensor self) -> Tensor", dequantize),
                       ("aten::dequantize.tensor(Tensor qtensor) -> Tensor", dequantize),
                       ("aten::dequantize.tensors(Tensor[] tensors) -> Tensor[]", dequantize_list),
                       ("aten::dequantize.list(Tensor[] qtensors) -> Tensor[]", dequantize_list)):
    op(_schema)(_impl)
QUANTIZED_AWARE.update(("aten::dequantize.self", "aten::dequantize.tensor", "aten::dequantize.tensors",
                        "aten::dequantize.list"))


@op("aten::q_scale(Tensor self) -> float")
def q_scale(x: Any) -> float:
    return quantized(x, "aten::q_scale").scale


@op("aten::q_zero_point(Tensor self) -> int")
def q_zero_point(x: Any) -> int:
    return quantized(x, "aten::q_zero_point").zero_point


@op("aten::int_repr(Tensor self) -> Tensor")
def int_repr(x: Any) -> np.ndarray:
    if not isinstance(x, QuantizedTensor):
        raise ExecutionError("aten::int_repr expects a quantized tensor")
    return x.int_repr.copy()


QUANTIZED_AWARE.update(("aten::q_scale", "aten::q_zero_point", "aten::int_repr"))


# ---- elementwise ----------------------------------------------------------------------------------

def _pair(a: Any, b: Any, what: str) -> tuple[QuantizedTensor, QuantizedTensor]:
    qa, qb = quantized(a, what), quantized(b, what)
    if qa.scalar_type != qb.scalar_type:
        raise ExecutionError(f"{what}: both inputs must have the same quantized type, got {qa.type_name} and "
                             f"{qb.type_name}")
    return qa, qb


def _bits(value: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", value))[0])


def _qnnpack_add(qa: QuantizedTensor, qb: QuantizedTensor, scale: float, zero_point: int, relu: bool,
                 what: str) -> QuantizedTensor:
    """qnnpack's q8vadd: each input's scale over the output's as a fixed-point multiplier (21 bits
    for the larger), a rounding right shift (ties away from zero), then the zero point and clamp."""
    a_ratio, b_ratio = F32(F32(qa.scale) / F32(scale)), F32(F32(qb.scale) / F32(scale))
    if not (2.0 ** -14 <= a_ratio < 256 and 2.0 ** -14 <= b_ratio < 256):
        raise ExecutionError(f"{what}: input over output scale ratios {a_ratio} and {b_ratio} are outside "
                             "qnnpack's range [2**-14, 256)")
    exponent = ((_bits(float(max(a_ratio, b_ratio))) >> 23) & 0xFF) - 127
    shift = 21 - exponent
    a_mult, b_mult = (int(np.rint(ratio * F32(2.0 ** shift))) for ratio in (a_ratio, b_ratio))
    acc = ((qa.int_repr.astype(np.int64) - qa.zero_point) * a_mult
           + (qb.int_repr.astype(np.int64) - qb.zero_point) * b_mult)
    mask = (1 << shift) - 1
    acc = (acc >> shift) + (((acc & mask) - (acc < 0)) > (mask >> 1))
    out = np.clip(acc + zero_point, zero_point if relu else 0, 255)
    return QuantizedTensor(out.astype(np.uint8), ScalarType.QUINT8, float(scale), int(zero_point))


def _add(a: Any, b: Any, scale: float, zero_point: int, relu: bool) -> QuantizedTensor:
    """torch's quantized add with the qnnpack engine: quint8 of one shape is qnnpack's q8vadd; other
    cases (qint8, broadcasting) torch's generic kernel, the float sum quantized (its SIMD and scalar
    loops round a near-tie differently: within one quantum)."""
    what = "quantized::add_relu" if relu else "quantized::add"
    qa, qb = _pair(a, b, what)
    output_params(what, scale, zero_point, qa.scalar_type)
    if qa.scalar_type == ScalarType.QUINT8 and qa.shape == qb.shape:
        return _qnnpack_add(qa, qb, scale, zero_point, relu, what)
    total = qa.dequantize() + qb.dequantize()
    return quantize(np.maximum(total, F32(0)) if relu else total, scale, zero_point, qa.scalar_type, what,
                    fused=True)


for _suffix in ("", "_relu"):
    register_schema(f"quantized::add{_suffix}(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc",
                    partial(_add, relu=bool(_suffix)))


def _mul(a: Any, b: Any, scale: float, zero_point: int, relu: bool) -> QuantizedTensor:
    """torch's qmul kernel: the product of the zero-point-free integers, times the float32
    multiplier ``a_scale * b_scale * (1 / scale)``, rounded half to even (broadcasting as torch does)."""
    what = "quantized::mul_relu" if relu else "quantized::mul"
    qa, qb = _pair(a, b, what)
    output_params(what, scale, zero_point, qa.scalar_type)
    product = (qa.int_repr.astype(np.int64) - qa.zero_point) * (qb.int_repr.astype(np.int64) - qb.zero_point)
    multiplier = F32(F32(qa.scale) * F32(qb.scale)) * (F32(1) / F32(scale))
    return requantize(product, multiplier, scale, zero_point, qa.scalar_type, relu)


for _suffix in ("", "_relu"):
    register_schema(f"quantized::mul{_suffix}(Tensor qa, Tensor qb, float scale, int zero_point) -> Tensor qc",
                    partial(_mul, relu=bool(_suffix)))


def _cat(xs: Any, dim: int, scale: float | None, zero_point: int | None, relu: bool) -> QuantizedTensor:
    """torch's quantized_cat_impl: the inputs dequantized, concatenated and quantized to the output
    parameters (the first input's when not given) by aten::quantize_per_tensor."""
    what = "quantized::cat_relu" if relu else "quantized::cat"
    if not isinstance(xs, list) or not xs:
        raise ExecutionError(f"{what} expects a non-empty list of quantized tensors")
    qs = [quantized(x, what) for x in xs]
    if len({q.scalar_type for q in qs}) != 1:
        raise ExecutionError(f"{what}: all inputs must have the same quantized type")
    scale = qs[0].scale if scale is None else scale
    zero_point = qs[0].zero_point if zero_point is None else zero_point
    output_params(what, scale, zero_point, qs[0].scalar_type)
    joined = np.concatenate([q.dequantize() for q in qs], axis=dim)
    return quantize(np.maximum(joined, F32(0)) if relu else joined, scale, zero_point, qs[0].scalar_type, what,
                    fused=True)


for _suffix in ("", "_relu"):
    register_schema(f"quantized::cat{_suffix}(Tensor[] qx, int dim, float? scale, int? zero_point) -> Tensor",
                    partial(_cat, relu=bool(_suffix)))


# ---- activations ----------------------------------------------------------------------------------

def _lookup(x: QuantizedTensor, fn: Callable[[np.ndarray], np.ndarray], scale: float,
            zero_point: int) -> QuantizedTensor:
    """qnnpack's 256-entry lookup table of a quint8 activation: ``fn`` of each input value as float32,
    scaled by ``1 / scale``, the zero point added, clamped, rounded half to even."""
    levels = F32(x.scale) * (np.arange(256, dtype=F32) - F32(x.zero_point))
    scaled = (F32(1) / F32(scale)) * fn(levels).astype(F32) + F32(zero_point)
    table = np.rint(np.clip(scaled, F32(0), F32(255))).astype(np.uint8)
    return QuantizedTensor(table[x.int_repr], ScalarType.QUINT8, float(scale), int(zero_point))


def _hardswish(v: np.ndarray) -> np.ndarray:
    return (v * np.clip(v + F32(3), F32(0), F32(6)) / F32(6)).astype(F32)


def _hardsigmoid(v: np.ndarray) -> np.ndarray:
    return (np.clip(v + F32(3), F32(0), F32(6)) / F32(6)).astype(F32)


@op("quantized::hardswish(Tensor input, float output_scale, int output_zero_point) -> Tensor")
def hardswish(x: Any, scale: float, zero_point: int) -> QuantizedTensor:
    q = quantized(x, "quantized::hardswish")
    output_params("quantized::hardswish", scale, zero_point, q.scalar_type)
    if q.scalar_type == ScalarType.QUINT8:
        return _lookup(q, _hardswish, scale, zero_point)
    return float_result("quantized::hardswish", q, _hardswish, scale, zero_point)


def _sigmoid(v: np.ndarray) -> np.ndarray:
    return (F32(1) / (F32(1) + np.exp(-v.astype(F32)))).astype(F32)


def _fixed_range_activation(x: Any, fn: Callable[[np.ndarray], np.ndarray], what: str,
                            params: tuple[float, int] | None = None) -> QuantizedTensor:
    """An activation with outputs in [0, 1]: qnnpack's lookup table for quint8, torch's generic kernel
    otherwise; by default the output parameters torch fixes for them (scale 1/256, zero point the
    type's lowest value: 0 for quint8, -128 for qint8)."""
    q = quantized(x, what)
    if q.scalar_type == ScalarType.QINT32:
        raise ExecutionError(f"{what} of a qint32 tensor is not supported by runtime_py")
    scale, zero_point = params if params is not None else (1.0 / 256, qrange(q.scalar_type)[0])
    output_params(what, scale, zero_point, q.scalar_type)
    if q.scalar_type == ScalarType.QUINT8:
        return _lookup(q, fn, scale, zero_point)
    return float_result(what, q, fn, scale, zero_point)


def sigmoid(x: QuantizedTensor) -> QuantizedTensor:
    return _fixed_range_activation(x, _sigmoid, "aten::sigmoid")


@op("quantized::sigmoid(Tensor qx, float output_scale, int output_zero_point) -> Tensor")
def sigmoid_with_params(x: Any, scale: float, zero_point: int) -> QuantizedTensor:
    if isinstance(x, QuantizedTensor) and x.scalar_type == ScalarType.QUINT8 and (F32(scale), zero_point) != (
            F32(1.0 / 256), 0):
        raise ExecutionError(f"quantized::sigmoid: qnnpack takes the output scale 1/256 and zero point 0 only "
                             f"(as in torch), got {scale} and {zero_point}")
    return _fixed_range_activation(x, _sigmoid, "quantized::sigmoid", (scale, zero_point))


def hardsigmoid(x: QuantizedTensor) -> QuantizedTensor:
    return _fixed_range_activation(x, _hardsigmoid, "aten::hardsigmoid")


def relu(x: QuantizedTensor) -> QuantizedTensor:
    """A quantized ReLU: every value below the zero point (a negative real) becomes it."""
    q = quantized(x, "aten::relu")
    return q.with_values(np.maximum(q.int_repr, q.int_repr.dtype.type(q.zero_point)))


@op("quantized::relu6(Tensor qx, bool inplace=False) -> Tensor")
def relu6(x: Any, inplace: bool) -> QuantizedTensor:
    """Clamp between the zero point (0.0) and 6.0 quantized with the input's parameters."""
    q = quantized(x, "quantized::relu6")
    six = int(quantize_values(np.array(6.0, F32), q.scale, q.zero_point, q.scalar_type))
    return q.with_values(np.clip(q.int_repr, q.zero_point, six).astype(q.int_repr.dtype))


# ---- normalization --------------------------------------------------------------------------------

def _batch_norm(x: Any, weight: np.ndarray | None, bias: np.ndarray | None, mean: np.ndarray, var: np.ndarray,
                eps: float, scale: float, zero_point: int, relu: bool, what: str) -> QuantizedTensor:
    """torch's quantized batch norm (qbatch_norm kernel): per channel (dim 1) ``alpha = weight /
    sqrt(var + eps) * (input_scale / output_scale)`` and ``beta = (bias - mean * weight / sqrt(var + eps))
    / output_scale`` as float32, then ``rint(alpha * (q - zero_point) + beta)`` (one fused multiply-add,
    emulated in float64) plus the output zero point, clamped."""
    q = quantized(x, what)
    output_params(what, scale, zero_point, q.scalar_type)
    channels = q.shape[1] if q.ndim >= 2 else -1
    for name, t in (("weight", weight), ("bias", bias), ("mean", mean), ("var", var)):
        if t is not None and (not isinstance(t, np.ndarray) or t.shape != (channels,)):
            raise ExecutionError(f"{what}: {name} must hold one value per channel ({channels}) of the input")
    inv_sigma = (F32(1) / np.sqrt(var.astype(F32) + F32(eps))).astype(F32)
    gain = inv_sigma * (weight.astype(F32) if weight is not None else F32(1))
    alpha = (gain.astype(np.float64) * (q.scale / scale)).astype(F32)
    shift = (bias.astype(F32) if bias is not None else F32(0)) - mean.astype(F32) * gain
    beta = (shift.astype(np.float64) / scale).astype(F32)
    shape = (1, channels) + (1,) * (q.ndim - 2)
    centered = (q.int_repr.astype(np.int64) - q.zero_point).astype(np.float64)
    fused = (alpha.reshape(shape).astype(np.float64) * centered + beta.reshape(shape)).astype(F32)
    qmin, qmax = qrange(q.scalar_type)
    out = np.clip(np.rint(fused).astype(np.float64) + zero_point, max(qmin, zero_point) if relu else qmin, qmax)
    return QuantizedTensor(out.astype(q.int_repr.dtype), q.scalar_type, float(scale), int(zero_point))


for _name in ("batch_norm", "batch_norm2d"):
    for _suffix in ("", "_relu"):
        register_schema(f"quantized::{_name}{_suffix}(Tensor qx, Tensor? weight, Tensor? bias, Tensor mean, "
                        "Tensor var, float eps, float output_scale, int output_zero_point) -> Tensor",
                        partial(_batch_norm, relu=bool(_suffix), what=f"quantized::{_name}{_suffix}"))
