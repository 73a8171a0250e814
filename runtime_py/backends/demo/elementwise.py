"""Elementwise and per-axis kernels: binary arithmetic, activations, softmax.

Every kernel keeps float32: scalars are bound as ``np.float32`` so numpy never upcasts
to float64, and intermediates are updated in place where the array is our own.
"""

from __future__ import annotations

import math

import numpy as np

from runtime_py.backends.demo.arrays import ONE, ZERO, Array, Kernel
from runtime_py.format.program import AxisAttrs, BinaryAttrs, GeluAttrs, OpCode

_UFUNCS = {OpCode.ADD: np.add, OpCode.SUB: np.subtract, OpCode.MUL: np.multiply, OpCode.DIV: np.divide}


def make_binary(op: OpCode, attrs: BinaryAttrs, n_inputs: int) -> Kernel:
    """``a OP alpha*b`` (operands swapped when ``reverse``), with ``b`` a scalar for one input."""
    ufunc = _UFUNCS[op]
    if op in (OpCode.MUL, OpCode.DIV) and attrs.alpha != 1.0:
        raise ValueError(f"alpha={attrs.alpha} is only allowed for ADD and SUB")
    if (n_inputs == 1) != (attrs.scalar is not None):
        raise ValueError("a scalar operand is needed with exactly one input, and only then")
    alpha = np.float32(attrs.alpha)
    if attrs.scalar is not None:
        scalar = np.float32(attrs.scalar)
        if attrs.reverse:
            # scalar OP alpha*x, e.g. rsub(x, s, alpha) = s - alpha*x
            if attrs.alpha == 1.0:
                return lambda x: ufunc(scalar, x)
            return lambda x: ufunc(scalar, alpha * x)
        # torch folds alpha into the scalar operand: add(x, s, alpha) = x + alpha*s
        operand = np.float32(attrs.alpha * attrs.scalar)
        return lambda x: ufunc(x, operand)
    if attrs.alpha == 1.0:
        if attrs.reverse:
            return lambda a, b: ufunc(b, a)
        return ufunc
    if attrs.reverse:
        return lambda a, b: ufunc(b, alpha * a)
    return lambda a, b: ufunc(a, alpha * b)


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


def relu(x: Array) -> Array:
    """max(x, 0); NaN stays NaN, as in torch."""
    return np.maximum(x, ZERO)


def relu_inplace(y: Array) -> Array:
    """Applies a fused ReLU to ``y``, an array the kernel allocated itself."""
    return np.maximum(y, ZERO, out=y)


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


# Numerical Recipes' erfc Chebyshev fit: fractional error below 1.2e-7 everywhere, so even
# the tails (where 1 - erf(x) would cancel catastrophically) keep their relative accuracy;
# evaluated in float32 it stays within 5e-6 relative (the rounding of -x*x dominates).
_ERFC_COEFFS = tuple(
    np.float32(c)
    for c in (
        0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807,
        -0.18628806, 0.09678418, 0.37409196, 1.00002368, -1.26551223,
    )
)
_HALF = np.float32(0.5)
_TWO = np.float32(2.0)
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))
_SQRT_2_OVER_PI = np.float32(math.sqrt(2.0 / math.pi))
_GELU_CUBIC = np.float32(0.044715)


def erfc(x: Array) -> Array:
    """The complementary error function in float32 (numpy has none)."""
    z = np.abs(x)
    t = z * _HALF
    t += ONE
    np.reciprocal(t, out=t)
    poly = np.full_like(t, _ERFC_COEFFS[0])
    for c in _ERFC_COEFFS[1:]:
        poly *= t
        poly += c
    z *= z
    poly -= z
    np.exp(poly, out=poly)
    poly *= t
    # erfc(-z) = 2 - erfc(z)
    return np.where(x < 0, _TWO - poly, poly)


def make_gelu(attrs: GeluAttrs, n_inputs: int) -> Kernel:
    """GELU, exact (erf) or with torch's tanh approximation."""
    return _gelu_tanh if attrs.tanh_approximation else _gelu_erf


@_rank0_safe
def _gelu_erf(x: Array) -> Array:
    # x * Phi(x) = 0.5 * x * erfc(-x / sqrt(2)): accurate for large negative x too
    y = erfc(x * -_INV_SQRT2)
    y *= x
    y *= _HALF
    return y


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
        y: Array = x - x.max(axis=axis, keepdims=True)
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
        y: Array = x - x.max(axis=axis, keepdims=True)
        y -= np.log(np.exp(y).sum(axis=axis, keepdims=True))
        return y

    return log_softmax
