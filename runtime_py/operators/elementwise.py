"""Elementwise tensor operators: arithmetic, comparisons, math functions, activations,
clamp/where/masked_fill; each in-place ``op_`` is its out-of-place twin written back."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from bundle_format.program import AxisAttrs, GeluAttrs
from runtime_py.backends.demo.activations import silu as demo_silu
from runtime_py.backends.demo.elementwise import make_gelu, make_log_softmax, make_softmax, relu_inplace
from runtime_py.backends.demo.elementwise import sigmoid as demo_sigmoid
from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op, register_schema
from runtime_py.operators.tensors import (
    BOOL,
    DEFAULT_FLOAT,
    FLOAT32,
    as_dtype,
    dim,
    float_dtype,
    is_floating,
    numpy_dtype,
    result_type,
    shape_dim,
    write,
)

Fn = Callable[..., Any]


def inplace(fn: Fn) -> Fn:
    """The in-place twin of an out-of-place implementation: compute, then write into self."""

    def impl(self: np.ndarray, *args: Any) -> np.ndarray:
        return write(self, fn(self, *args))

    return impl


def register_pair(schema: str, fn: Fn, fn_: Fn | None = None) -> None:
    """Register ``aten::name...`` and its in-place ``aten::name_...`` (self annotated ``(a!)``):
    ``fn_`` when given (one that writes into self without a temporary), else ``inplace(fn)``."""
    register_schema(schema, fn)
    head, _, rest = schema.partition("(")
    name, dot, overload = head.partition(".")
    rest = rest.replace("Tensor self", "Tensor(a!) self", 1).replace("-> Tensor", "-> Tensor(a!)")
    register_schema(f"{name}_{dot}{overload}({rest}", fn_ or inplace(fn))


# ---- arithmetic -----------------------------------------------------------------------------

def _binary(fn: Fn, floating: bool = False) -> Fn:
    def impl(a: Any, b: Any) -> np.ndarray:
        # the usual call, two tensors of one floating dtype: no promotion to work out (inline, and
        # dtype identity first: this runs on every add and mul)
        if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype is b.dtype and a.dtype.kind == "f":
            y = fn(a, b)
        else:
            dtype = result_type(a, b)
            if floating and not is_floating(dtype):
                dtype = DEFAULT_FLOAT
            y = fn(as_dtype(a, dtype), as_dtype(b, dtype))
        return y if type(y) is np.ndarray else np.asarray(y)

    return impl


_add = _binary(np.add)


def add(a: Any, b: Any, alpha: Any = 1) -> np.ndarray:
    if alpha == 1:
        return _add(a, b)
    dtype = result_type(a, b)
    return np.asarray(np.add(as_dtype(a, dtype), as_dtype(alpha, dtype) * as_dtype(b, dtype)))


def sub(a: Any, b: Any, alpha: Any = 1) -> np.ndarray:
    return add(a, b, -alpha)


def rsub(a: Any, b: Any, alpha: Any = 1) -> np.ndarray:
    return sub(b, a, alpha)


mul = _binary(np.multiply)
true_divide = _binary(np.true_divide, floating=True)


def _trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if is_floating(a.dtype):
        return np.trunc(a / b)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


floor_divide = _binary(np.floor_divide)


def div_mode(a: Any, b: Any, rounding_mode: str | None) -> np.ndarray:
    if rounding_mode is None:
        return true_divide(a, b)
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        return _binary(_trunc_divide)(a, b)
    raise ExecutionError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                         f"'{rounding_mode}'")


register_pair("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", add)  # a + alpha*b
register_pair("aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", add)
register_pair("aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", sub)  # a - alpha*b
register_pair("aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", sub)
register_schema("aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", rsub)  # b - alpha*a
register_schema("aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", rsub)
register_pair("aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", mul)
register_pair("aten::mul.Scalar(Tensor self, Scalar other) -> Tensor", mul)
register_pair("aten::div.Tensor(Tensor self, Tensor other) -> Tensor", true_divide)  # ints divide to float
register_pair("aten::div.Scalar(Tensor self, Scalar other) -> Tensor", true_divide)
register_pair("aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", div_mode)
register_pair("aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor", div_mode)
register_schema("aten::floor_divide(Tensor self, Tensor other) -> Tensor", floor_divide)
register_schema("aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor", floor_divide)
register_pair("aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor", _binary(np.mod))  # Python's %
register_pair("aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor", _binary(np.mod))
register_pair("aten::fmod.Tensor(Tensor self, Tensor other) -> Tensor", _binary(np.fmod))  # C's fmod
register_pair("aten::fmod.Scalar(Tensor self, Scalar other) -> Tensor", _binary(np.fmod))
register_schema("aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", _binary(np.power))
register_schema("aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", _binary(np.power))
register_schema("aten::pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)", inplace(_binary(np.power)))
register_schema("aten::pow_.Scalar(Tensor(a!) self, Scalar exponent) -> Tensor(a!)", inplace(_binary(np.power)))
register_schema("aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor", _binary(np.power))
register_schema("aten::maximum(Tensor self, Tensor other) -> Tensor", _binary(np.maximum))
register_schema("aten::minimum(Tensor self, Tensor other) -> Tensor", _binary(np.minimum))
register_schema("aten::max.other(Tensor self, Tensor other) -> Tensor", _binary(np.maximum))
register_schema("aten::min.other(Tensor self, Tensor other) -> Tensor", _binary(np.minimum))
register_schema("aten::atan2(Tensor self, Tensor other) -> Tensor", _binary(np.arctan2, floating=True))
# bitwise ops on bool/int tensors (`&`, `|`, `^`)
for _name, _fn in (("__and__", np.bitwise_and), ("__or__", np.bitwise_or), ("__xor__", np.bitwise_xor),
                   ("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                   ("bitwise_xor", np.bitwise_xor)):
    register_schema(f"aten::{_name}.Tensor(Tensor self, Tensor other) -> Tensor", _binary(_fn))
    register_schema(f"aten::{_name}.Scalar(Tensor self, Scalar other) -> Tensor", _binary(_fn))


def _logical(fn: Fn) -> Fn:
    return lambda a, b: np.asarray(fn(a, b))


# logical ops: any dtype in, bool out
register_schema("aten::logical_and(Tensor self, Tensor other) -> Tensor", _logical(np.logical_and))
register_schema("aten::logical_or(Tensor self, Tensor other) -> Tensor", _logical(np.logical_or))
register_schema("aten::logical_xor(Tensor self, Tensor other) -> Tensor", _logical(np.logical_xor))
register_schema("aten::logical_not(Tensor self) -> Tensor", lambda a: np.logical_not(a))


@op("aten::bitwise_not(Tensor self) -> Tensor")  # `~x`: logical not for bool
def bitwise_not(a: np.ndarray) -> np.ndarray:
    return np.logical_not(a) if a.dtype == BOOL else np.invert(a)


# ---- comparisons: compare in the promoted dtype, bool result --------------------------------

def _compare(fn: Fn) -> Fn:
    def impl(a: Any, b: Any) -> np.ndarray:
        dtype = result_type(a, b)
        return np.asarray(fn(as_dtype(a, dtype), as_dtype(b, dtype)))

    return impl


for _name, _fn in (("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                   ("gt", np.greater), ("ge", np.greater_equal)):
    register_schema(f"aten::{_name}.Tensor(Tensor self, Tensor other) -> Tensor", _compare(_fn))
    register_schema(f"aten::{_name}.Scalar(Tensor self, Scalar other) -> Tensor", _compare(_fn))


@op("aten::equal(Tensor self, Tensor other) -> bool")  # same shape and values
def equal(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a, b))


@op("aten::allclose(Tensor self, Tensor other, float rtol=1.0000000000000001e-05, float atol=1e-08, "
    "bool equal_nan=False) -> bool")
def allclose(a: np.ndarray, b: np.ndarray, rtol: float, atol: float, equal_nan: bool) -> bool:
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))


register_schema("aten::isnan(Tensor self) -> Tensor", lambda a: np.isnan(a))
register_schema("aten::isinf(Tensor self) -> Tensor", lambda a: np.isinf(a))
register_schema("aten::isfinite(Tensor self) -> Tensor", lambda a: np.isfinite(a))


# ---- unary math ------------------------------------------------------------------------------

def floating(fn: Fn) -> Fn:
    """A float-valued function: ints and bools are computed (and returned) as the default float."""
    return lambda a: np.asarray(fn(as_dtype(a, float_dtype(a))))


def same_dtype(fn: Fn) -> Fn:
    """A function that keeps the input dtype (abs, neg, floor on ints...)."""
    return lambda a: np.asarray(fn(a)).astype(a.dtype, copy=False)


_erf64 = np.vectorize(math.erf, otypes=[np.float64])


def erf(x: np.ndarray) -> np.ndarray:
    return _erf64(x.astype(np.float64)).astype(x.dtype)


def sigmoid(x: np.ndarray) -> np.ndarray:
    """The demo backend's kernel, for any floating dtype (integers compute in the default float)."""
    return demo_sigmoid(x if is_floating(x.dtype) else x.astype(DEFAULT_FLOAT))


_FLOAT_UNARY: dict[str, Fn] = {  # name -> numpy function (float result)
    "exp": np.exp, "log": np.log, "log2": np.log2, "log10": np.log10, "log1p": np.log1p,
    "expm1": np.expm1, "sqrt": np.sqrt, "rsqrt": lambda x: (1 / np.sqrt(x)).astype(x.dtype),
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "sigmoid": sigmoid,
    "erf": erf, "reciprocal": lambda x: (1 / x).astype(x.dtype),
}
for _name, _fn in _FLOAT_UNARY.items():
    register_pair(f"aten::{_name}(Tensor self) -> Tensor", floating(_fn))

_SAME_UNARY: dict[str, Fn] = {  # name -> numpy function (dtype kept)
    "abs": np.abs, "neg": np.negative, "floor": np.floor, "ceil": np.ceil, "round": np.round,
    "trunc": np.trunc, "sign": np.sign, "square": np.square,
}
for _name, _fn in _SAME_UNARY.items():
    register_pair(f"aten::{_name}(Tensor self) -> Tensor", same_dtype(_fn))


@op("aten::round.decimals(Tensor self, *, int decimals) -> Tensor")
def round_decimals(x: np.ndarray, decimals: int) -> np.ndarray:
    return np.round(x, decimals)


# ---- activations -----------------------------------------------------------------------------

def relu(x: np.ndarray) -> np.ndarray:
    if is_floating(x.dtype):  # a clip: vectorized, unlike np.maximum (see the demo backend's relu)
        return np.clip(x, x.dtype.type(0), x.dtype.type(np.inf))
    return np.maximum(x, np.zeros((), x.dtype))


def relu_(x: np.ndarray) -> np.ndarray:
    if x.dtype == FLOAT32 and x.flags.writeable:
        return relu_inplace(x)  # no temporary: ResNets call relu_ after every conv
    return write(x, relu(x))


def hardtanh(x: np.ndarray, min_val: Any = -1, max_val: Any = 1) -> np.ndarray:
    # np.clip is min(max(x, lo), hi) as torch computes it (NaN stays NaN), in one vectorized pass
    return np.clip(x, as_dtype(min_val, x.dtype)[()], as_dtype(max_val, x.dtype)[()])


def hardtanh_(x: np.ndarray, min_val: Any = -1, max_val: Any = 1) -> np.ndarray:
    if x.ndim and is_floating(x.dtype) and x.flags.writeable:  # MobileNetV2's ReLU6(inplace=True)
        return np.clip(x, as_dtype(min_val, x.dtype)[()], as_dtype(max_val, x.dtype)[()], out=x)
    return write(x, hardtanh(x, min_val, max_val))


def leaky_relu(x: np.ndarray, negative_slope: Any = 0.01) -> np.ndarray:
    return np.where(x > 0, x, x * as_dtype(negative_slope, x.dtype))


def elu(x: np.ndarray, alpha: Any = 1, scale: Any = 1, input_scale: Any = 1) -> np.ndarray:
    neg = (alpha * scale) * np.expm1(x * as_dtype(input_scale, x.dtype))
    return np.where(x > 0, x * as_dtype(scale, x.dtype), neg).astype(x.dtype)


_GELU = {"none": make_gelu(GeluAttrs(False), 1), "tanh": make_gelu(GeluAttrs(True), 1)}  # float32: demo kernels


def gelu(x: np.ndarray, approximate: str = "none") -> np.ndarray:
    if x.dtype == FLOAT32 and approximate in _GELU:
        return _GELU[approximate](x)
    x64 = x.astype(np.float64)
    if approximate == "tanh":
        y = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) * (x64 + 0.044715 * x64 ** 3)))
    elif approximate == "none":
        y = 0.5 * x64 * (1 + _erf64(x64 / math.sqrt(2)))
    else:
        raise ExecutionError(f"approximate argument must be either none or tanh, got '{approximate}'")
    return y.astype(x.dtype)


def silu(x: np.ndarray) -> np.ndarray:
    if x.ndim and x.dtype.kind == "f":  # is_floating, inline
        return demo_silu(x)  # x / (1 + exp(-x)): torch's formula, one numpy call fewer than x * sigmoid(x)
    y = sigmoid(x)
    y *= x
    return y


def silu_(x: np.ndarray) -> np.ndarray:
    if x.ndim and is_floating(x.dtype) and x.flags.writeable:  # no copy back (SiLU(inplace=True))
        return np.multiply(x, sigmoid(x), out=x)
    return write(x, silu(x))


def hardsigmoid(x: np.ndarray) -> np.ndarray:
    """min(max(x + 3, 0), 6) / 6, in one temporary for floating x."""
    if not (x.ndim and is_floating(x.dtype)):
        return (np.clip(x + 3, 0, 6) / 6).astype(x.dtype)
    y = np.add(x, x.dtype.type(3))
    np.clip(y, x.dtype.type(0), x.dtype.type(6), out=y)
    y /= x.dtype.type(6)
    return y


def hardswish(x: np.ndarray) -> np.ndarray:
    """x * hardsigmoid(x); torch divides the product by 6, as done here."""
    if not (x.ndim and is_floating(x.dtype)):
        return (x * np.clip(x + 3, 0, 6) / 6).astype(x.dtype)
    y = np.add(x, x.dtype.type(3))
    np.clip(y, x.dtype.type(0), x.dtype.type(6), out=y)
    y *= x
    y /= x.dtype.type(6)
    return y


def hardswish_(x: np.ndarray) -> np.ndarray:
    """In place for a writable floating x (MobileNetV3's Hardswish(inplace=True)): no copy back."""
    if not (x.ndim and is_floating(x.dtype) and x.flags.writeable):
        return write(x, hardswish(x))
    y = np.add(x, x.dtype.type(3))
    np.clip(y, x.dtype.type(0), x.dtype.type(6), out=y)
    np.multiply(x, y, out=x)
    return np.divide(x, x.dtype.type(6), out=x)


def softplus(x: np.ndarray, beta: Any = 1, threshold: Any = 20) -> np.ndarray:
    bx = x * beta
    return np.where(bx > threshold, x, np.log1p(np.exp(bx)) / beta).astype(x.dtype)


register_schema("aten::relu(Tensor self) -> Tensor", relu)
register_schema("aten::relu_(Tensor(a!) self) -> Tensor(a!)", relu_)
register_schema("aten::relu6(Tensor self) -> Tensor", lambda x: hardtanh(x, 0, 6))
register_pair("aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", hardtanh, hardtanh_)
register_pair("aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", leaky_relu)
register_pair("aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor", elu)
register_pair('aten::gelu(Tensor self, *, str approximate="none") -> Tensor', gelu)
register_pair("aten::silu(Tensor self) -> Tensor", silu, silu_)
register_pair("aten::hardswish(Tensor self) -> Tensor", hardswish, hardswish_)
register_pair("aten::hardsigmoid(Tensor self) -> Tensor", hardsigmoid)
register_schema("aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", softplus)
register_schema("aten::mish(Tensor self) -> Tensor", lambda x: x * np.tanh(softplus(x)))
register_schema("aten::selu(Tensor self) -> Tensor",
                lambda x: elu(x, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946))
register_schema("aten::celu(Tensor self, Scalar alpha=1.) -> Tensor", lambda x, a: elu(x, a, 1, 1 / a))
register_schema("aten::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor",
                lambda x, t, v: np.where(x > t, x, as_dtype(v, x.dtype)))


@op("aten::prelu(Tensor self, Tensor weight) -> Tensor")  # one slope per channel (dim 1) or shared
def prelu(x: np.ndarray, weight: np.ndarray) -> np.ndarray:
    w = weight.reshape(-1)
    if w.size > 1:
        if x.ndim < 2 or x.shape[1] != w.size:
            raise ExecutionError(f"mismatch of parameter numbers and input channel size: {w.size} "
                                 f"parameters, input of shape {x.shape}")
        w = w.reshape((-1,) + (1,) * (x.ndim - 2))
    return np.where(x > 0, x, x * w).astype(result_type(x, weight))


@op("aten::glu(Tensor self, int dim=-1) -> Tensor")  # first half * sigmoid(second half)
def glu(x: np.ndarray, d: int) -> np.ndarray:
    a, b = np.split(x, 2, axis=shape_dim(x, d))
    return a * sigmoid(b)


def _softmax(x: np.ndarray, d: int, dtype: int | None, log: bool) -> np.ndarray:
    out = numpy_dtype(dtype, float_dtype(x))
    if x.dtype == FLOAT32 and out == FLOAT32 and x.ndim:  # the demo kernel (made per call: a closure)
        return (make_log_softmax if log else make_softmax)(AxisAttrs(dim(d, x.ndim)), 1)(x)
    x64 = x.astype(np.float64)
    axis = dim(d, x.ndim)
    shifted = x64 - np.max(x64, axis=axis, keepdims=True) if x.ndim else x64 - x64
    lse = np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))
    y = shifted - lse if log else np.exp(shifted - lse)
    return y.astype(out)


register_schema("aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                lambda x, d, t: _softmax(x, d, t, log=False))
register_schema("aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor",
                lambda x, d, t: _softmax(x, d, t, log=True))


# ---- clamp / where / masked_fill ---------------------------------------------------------------

def clamp(x: np.ndarray, lo: Any = None, hi: Any = None) -> np.ndarray:
    if lo is None and hi is None:
        raise ExecutionError("at least one of 'min' or 'max' must not be None")
    dtype = result_type(x, lo, hi)
    y = as_dtype(x, dtype)
    if lo is not None:
        y = np.maximum(y, as_dtype(lo, dtype))
    if hi is not None:
        y = np.minimum(y, as_dtype(hi, dtype))
    return np.asarray(y)


register_pair("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", clamp)
register_pair("aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", clamp)
register_pair("aten::clamp_min(Tensor self, Scalar min) -> Tensor", lambda x, lo: clamp(x, lo, None))
register_pair("aten::clamp_max(Tensor self, Scalar max) -> Tensor", lambda x, hi: clamp(x, None, hi))
register_schema("aten::clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", lambda x, lo: clamp(x, lo, None))
register_schema("aten::clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", lambda x, hi: clamp(x, None, hi))


def where(condition: np.ndarray, a: Any, b: Any) -> np.ndarray:
    dtype = result_type(a, b)
    return np.asarray(np.where(condition.astype(bool), as_dtype(a, dtype), as_dtype(b, dtype)))


register_schema("aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor", where)
register_schema("aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor", where)
register_schema("aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor", where)
register_schema("aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor", where)
register_schema("aten::where(Tensor condition) -> Tensor[]", lambda c: [np.asarray(i) for i in np.nonzero(c)])


def _check_mask(mask: np.ndarray) -> np.ndarray:
    if mask.dtype != BOOL:
        raise ExecutionError(f"expected a bool mask, got {mask.dtype}")
    return mask


def masked_fill(x: np.ndarray, mask: np.ndarray, value: Any) -> np.ndarray:
    return np.where(_check_mask(mask), as_dtype(value, x.dtype), x)


def masked_fill_(x: np.ndarray, mask: np.ndarray, value: Any) -> np.ndarray:
    np.copyto(x, as_dtype(value, x.dtype), where=np.broadcast_to(_check_mask(mask), x.shape))
    return x


# masked_fill keeps self's dtype; the in-place one writes only the masked elements
for _ov, _vt in (("Scalar", "Scalar"), ("Tensor", "Tensor")):
    register_schema(f"aten::masked_fill.{_ov}(Tensor self, Tensor mask, {_vt} value) -> Tensor", masked_fill)
    register_schema(f"aten::masked_fill_.{_ov}(Tensor(a!) self, Tensor mask, {_vt} value) -> Tensor(a!)",
                    masked_fill_)


@op("aten::lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor")
def lerp(a: np.ndarray, b: np.ndarray, w: Any) -> np.ndarray:
    return (a + w * (b - a)).astype(result_type(a, b))


@op("aten::addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor")
def addcmul(x: np.ndarray, t1: np.ndarray, t2: np.ndarray, value: Any) -> np.ndarray:
    return (x + value * t1 * t2).astype(result_type(x, t1, t2))


@op("aten::addcdiv(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor")
def addcdiv(x: np.ndarray, t1: np.ndarray, t2: np.ndarray, value: Any) -> np.ndarray:
    return (x + value * t1 / t2).astype(result_type(x, t1, t2))
