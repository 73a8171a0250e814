"""Elementwise and per-axis kernels: binary arithmetic, activations, softmax.

Every kernel keeps its operands' dtype: scalars are bound as ``np.float32`` for float32 operands
(and in the operand's own dtype for integers) so numpy never upcasts to float64, and
intermediates are updated in place where the array is our own.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from bundle_format.program import AxisAttrs, BinaryAttrs, GeluAttrs, OpCode
from runtime_py.backends.demo.arrays import ONE, ZERO, Array, Kernel

_UFUNCS = {OpCode.ADD: np.add, OpCode.SUB: np.subtract, OpCode.MUL: np.multiply, OpCode.DIV: np.divide,
           OpCode.POW: np.power}


def make_binary(op: OpCode, attrs: BinaryAttrs, n_inputs: int) -> Kernel:
    """``a OP alpha*b`` (operands swapped when ``reverse``), with ``b`` a scalar for one input.

    Integer operands stay integers (ADD, SUB, MUL take int64 and int32): the scalar and alpha,
    whole numbers then (the compiler casts to float32 first otherwise), take the operand's dtype,
    as torch's int64 + int does.
    """
    ufunc = _UFUNCS[op]
    if op in (OpCode.MUL, OpCode.DIV, OpCode.POW) and attrs.alpha != 1.0:
        raise ValueError(f"alpha={attrs.alpha} is only allowed for ADD and SUB")
    if (n_inputs == 1) != (attrs.scalar is not None):
        raise ValueError("a scalar operand is needed with exactly one input, and only then")
    alpha = np.float32(attrs.alpha)
    if attrs.scalar is not None:
        scalar = np.float32(attrs.scalar)
        if attrs.reverse:
            # scalar OP alpha*x, e.g. rsub(x, s, alpha) = s - alpha*x
            if attrs.alpha == 1.0:
                return _typed_scalar(lambda x, s, a: ufunc(s, x), scalar, attrs.scalar, attrs.alpha)
            return _typed_scalar(lambda x, s, a: ufunc(s, a * x), scalar, attrs.scalar, attrs.alpha)
        # torch folds alpha into the scalar operand: add(x, s, alpha) = x + alpha*s
        operand = np.float32(attrs.alpha * attrs.scalar)
        return _typed_scalar(lambda x, s, a: ufunc(x, s), operand, attrs.alpha * attrs.scalar, 1.0)
    if attrs.alpha == 1.0:
        if attrs.reverse:
            return lambda a, b: ufunc(b, a)
        return ufunc
    whole = int(attrs.alpha) if attrs.alpha == int(attrs.alpha) else None

    def scaled(x: Array) -> Array:
        if x.dtype == np.float32 or whole is None:
            out: Array = np.multiply(alpha, x)
            return out
        scaled_int: Array = np.multiply(x, x.dtype.type(whole))
        return scaled_int

    if attrs.reverse:
        return lambda a, b: ufunc(b, scaled(a))
    return lambda a, b: ufunc(a, scaled(b))


def _typed_scalar(apply: Callable[[Array, Any, Any], Array], f32_scalar: np.float32, scalar: float,
                  alpha: float) -> Kernel:
    """``apply(x, scalar, alpha)`` with the scalars in float32 for a float32 ``x`` and in ``x``'s own
    dtype for an integer one (numpy would compute int64 with a float32 scalar in float64)."""
    f32_alpha = np.float32(alpha)

    def kernel(x: Array) -> Array:
        if x.dtype == np.float32:
            return apply(x, f32_scalar, f32_alpha)
        return apply(x, x.dtype.type(int(scalar)), x.dtype.type(int(alpha)))

    return kernel


def _rank0_safe(kernel: Kernel) -> Kernel:
    """Lets a kernel that computes in place with ``out=`` accept 0-d arrays: numpy turns
    0-d ufunc results into scalars, which cannot be written to."""

    def wrapper(x: Array) -> Array:
        if x.ndim == 0:
            return kernel(x.reshape(1)).reshape(())
        return kernel(x)

    wrapper.__name__ = wrapper.__qualname__ = kernel.__name__
    return wrapper


def neg(x: Array) -> Array:
    """-x."""
    return np.negative(x)


# ReLU as a clip to [0, inf]: numpy's clip loop is vectorized where np.maximum's (which must
# propagate NaN) is not, ~4x faster on a large activation; NaN stays NaN and -0.0 stays -0.0,
# as in torch.
_INF = np.float32(np.inf)


def relu(x: Array) -> Array:
    """max(x, 0); NaN stays NaN, as in torch."""
    return np.clip(x, ZERO, _INF)


def relu_inplace(y: Array) -> Array:
    """Applies a fused ReLU to ``y``, an array the kernel allocated itself."""
    if y.ndim == 0:
        return np.clip(y, ZERO, _INF)
    return np.clip(y, ZERO, _INF, out=y)


@_rank0_safe
def sigmoid(x: Array) -> Array:
    """1 / (1 + exp(-x)); exp overflows to inf for very negative x, giving exactly 0."""
    y = np.negative(x)
    np.exp(y, out=y)
    y += ONE
    return np.reciprocal(y, out=y)


def tanh(x: Array) -> Array:
    """tanh(x)."""
    return np.tanh(x)


# Exact GELU(x) = x * Phi(x) = x * (0.5 + sign(x) * (0.5 - h)), h = erfc(|x| / sqrt(2)) / 2, with
# erfc(z) = t * P(t) * exp(-z*z), t = 1 / (1 + p*z) (Abramowitz & Stegun 7.1.26: absolute error
# below 1.5e-7; in float32 GELU stays within 5e-7 of torch, far inside the 1e-5 parity bound).
# 20 in-place array passes and one exp, against ~30 passes and 7 temporaries for a tail-accurate
# erfc: GELU was the encoder's largest kernel. copysign keeps the sign of -0.0 and -inf, so
# GELU(-inf) = -inf * 0 = NaN and GELU(-0.0) = -0.0, as in torch.
_AS_P = np.float32(0.3275911 / math.sqrt(2.0))  # p, applied to |x| instead of |x| / sqrt(2)
_AS_HALF_COEFFS = tuple(  # A&S's a5..a1, halved (h is erfc / 2)
    np.float32(c / 2) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)
_HALF = np.float32(0.5)
_SQRT_2_OVER_PI = np.float32(math.sqrt(2.0 / math.pi))
_GELU_CUBIC = np.float32(0.044715)


def make_gelu(attrs: GeluAttrs, n_inputs: int, reuse_output: bool = False) -> Kernel:
    """GELU, exact (erf) or with torch's tanh approximation.

    With ``reuse_output`` the exact one keeps its scratch and result per input shape, so a call
    allocates nothing (such an instance serves one call at a time: the executor pools it).
    """
    if attrs.tanh_approximation:
        return _gelu_tanh
    buffers: dict[tuple[int, ...], tuple[Array, Array]] = {}

    def gelu(x: Array) -> Array:
        pair = buffers.get(x.shape) if reuse_output else None
        if pair is None:
            pair = (np.empty_like(x), np.empty_like(x))
            if reuse_output:
                if len(buffers) >= 4:
                    buffers.clear()
                buffers[x.shape] = pair
        t, y = pair
        np.abs(x, out=t)
        t *= _AS_P
        t += ONE
        np.reciprocal(t, out=t)  # t = 1 / (1 + p*z), z = |x| / sqrt(2)
        coeffs = iter(_AS_HALF_COEFFS)
        np.multiply(t, next(coeffs), out=y)
        for c in coeffs:  # Horner: y = t * P(t) / 2
            y += c
            y *= t
        np.square(x, out=t)
        t *= -_HALF
        np.exp(t, out=t)  # exp(-z*z)
        y *= t  # h
        np.subtract(_HALF, y, out=y)
        np.copysign(y, x, out=y)
        y += _HALF  # Phi(x)
        y *= x
        return y

    return gelu


@_rank0_safe
def _gelu_tanh(x: Array) -> Array:
    inner = x * x
    inner *= _GELU_CUBIC
    inner += ONE
    inner *= x
    inner *= _SQRT_2_OVER_PI
    np.tanh(inner, out=inner)
    inner += ONE
    inner *= x
    inner *= _HALF
    return inner


def make_softmax(attrs: AxisAttrs, n_inputs: int) -> Kernel:
    """Softmax along one axis, shifted by the maximum so exp cannot overflow."""
    axis = attrs.axis

    def softmax(x: Array) -> Array:
        if x.size == 0:
            return x.copy()
        # asarray: of a 0-d x (axis 0 or -1, as torch allows) numpy's difference is a scalar, which
        # no ufunc takes as out=; softmax of a scalar is 1.0, as torch's
        y: Array = np.asarray(x - x.max(axis=axis, keepdims=True))
        np.exp(y, out=y)
        y /= y.sum(axis=axis, keepdims=True)
        return y

    return softmax


def make_log_softmax(attrs: AxisAttrs, n_inputs: int) -> Kernel:
    """log(softmax(x)) along one axis, computed as (x - max) - log(sum(exp(x - max)))."""
    axis = attrs.axis

    def log_softmax(x: Array) -> Array:
        if x.size == 0:
            return x.copy()
        y: Array = np.asarray(x - x.max(axis=axis, keepdims=True))  # 0-d: as softmax's
        y -= np.log(np.exp(y).sum(axis=axis, keepdims=True))
        return y

    return log_softmax
