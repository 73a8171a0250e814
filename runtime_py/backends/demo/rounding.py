"""Rounded division (issue 20): floor_divide / div(rounding_mode='floor'), div(rounding_mode='trunc')
and remainder, on float32, int64 and int32 values, with torch's (and Python's) sign rules: the
quotient rounds down (or toward zero), the remainder takes the divisor's sign.

Floats follow ATen's formulas step for step (c10::div_floor_floating, remainder_kernel), which the
native core and the torch backend compute too, so the engines agree bit for bit: a zero divisor
gives inf or NaN, as torch. An integer divided by zero is an error, as in torch and Python, and not
numpy's silent 0.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bundle_format.program import BinaryAttrs, OpCode
from runtime_py.backends.demo.arrays import Array, Kernel

ZERO_DIVISOR = "integer division or modulo by zero"  # Python's words, in every engine
_F_ZERO, _F_ONE, _F_HALF = np.float32(0), np.float32(1), np.float32(0.5)

# Temporaries the float formulas hold at once, each of the result's size (runtime_py's memory bound)
TEMPORARIES = 4


def _float_floor_div(a: Array, b: Array) -> Array:
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        div = (a - mod) / b
        div = np.where((mod != _F_ZERO) & ((b < _F_ZERO) != (mod < _F_ZERO)), div - _F_ONE, div)
        floored = np.floor(div)
        floored = np.where(div - floored > _F_HALF, floored + _F_ONE, floored)
        quotient = a / b
        floored = np.where(div == _F_ZERO, np.copysign(_F_ZERO, quotient), floored)
        out: Array = np.where(b == _F_ZERO, quotient, floored)
    return out


def _float_trunc_div(a: Array, b: Array) -> Array:
    with np.errstate(all="ignore"):
        out: Array = np.trunc(np.true_divide(a, b))
    return out


def _float_remainder(a: Array, b: Array) -> Array:
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        out: Array = np.where((mod != _F_ZERO) & ((b < _F_ZERO) != (mod < _F_ZERO)), mod + b, mod)
    return out


def _int_floor_div(a: Array, b: Array) -> Array:
    with np.errstate(over="ignore"):  # min // -1 wraps to min, as two's complement
        out: Array = np.floor_divide(a, b)
    return out


def _int_trunc_div(a: Array, b: Array) -> Array:
    with np.errstate(over="ignore"):
        floored = np.floor_divide(a, b)
        inexact = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        out: Array = np.where(inexact, floored + 1, floored).astype(floored.dtype, copy=False)
    return out


def _int_remainder(a: Array, b: Array) -> Array:
    out: Array = np.remainder(a, b)  # numpy's integer remainder takes the divisor's sign, as Python's
    return out


_KERNELS: dict[OpCode, tuple[Callable[[Array, Array], Array], Callable[[Array, Array], Array]]] = {
    OpCode.FLOOR_DIV: (_float_floor_div, _int_floor_div),
    OpCode.TRUNC_DIV: (_float_trunc_div, _int_trunc_div),
    OpCode.REMAINDER: (_float_remainder, _int_remainder),
}


def make_rounding(op: OpCode) -> Callable[[BinaryAttrs, int], Kernel]:
    floats, ints = _KERNELS[op]

    def apply(a: Array, b: Array) -> Array:
        if np.asarray(a).dtype == np.float32:
            return floats(a, b)
        if np.any(np.asarray(b) == 0):
            raise ValueError(ZERO_DIVISOR)
        return ints(a, b)

    def factory(attrs: BinaryAttrs, n_inputs: int) -> Kernel:
        if attrs.alpha != 1.0:
            raise ValueError(f"alpha={attrs.alpha} is only allowed for ADD and SUB")
        if (n_inputs == 1) != (attrs.scalar is not None):
            raise ValueError("a scalar operand is needed with exactly one input, and only then")
        if attrs.scalar is not None:
            scalar = attrs.scalar

            def with_scalar(x: Array) -> Array:
                # the scalar in the operand's dtype: float32, or a whole number for integers (the
                # compiler converts integer operands to float32 first otherwise), as torch's x // 2
                s = np.float32(scalar) if x.dtype == np.float32 else x.dtype.type(int(scalar))
                out = apply(np.asarray(s), x) if attrs.reverse else apply(x, np.asarray(s))
                return np.asarray(out, dtype=x.dtype)

            return with_scalar
        if attrs.reverse:
            return lambda a, b: apply(b, a)
        return apply

    return factory
