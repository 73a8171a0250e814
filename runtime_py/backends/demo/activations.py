"""Clamping activations, SiLU and elementwise math: clamp (hardtanh, relu6), hardsigmoid,
hardswish, silu, log, sqrt, rsqrt, abs, exp.

Each follows torch's CPU formula in float32 (hardswish is ``x * clamp(x + 3, 0, 6) / 6``,
multiplied before divided), so results match torch's to the last bit or two.
"""

from __future__ import annotations

import numpy as np

from bundle_format.program import ClampAttrs
from runtime_py.backends.demo.arrays import ONE, Array, Kernel

_THREE = np.float32(3.0)
_SIX = np.float32(6.0)
_ZERO = np.float32(0.0)


def make_clamp(attrs: ClampAttrs, n_inputs: int) -> Kernel:
    """min(max(x, min), max) with either bound optional; NaN stays NaN, as in torch."""
    if attrs.min is None and attrs.max is None:
        raise ValueError("clamp needs at least one of min and max")
    if attrs.min is None:
        high = np.float32(attrs.max)
        return lambda x: np.minimum(x, high)
    low = np.float32(attrs.min)
    if attrs.max is None:
        return lambda x: np.maximum(x, low)
    high = np.float32(attrs.max)
    # min > max gives max everywhere, as in torch: maximum first, then minimum
    return lambda x: np.minimum(np.maximum(x, low), high)


def _relu6_of_x_plus_3(x: Array) -> Array:
    y = np.add(x, _THREE)
    np.maximum(y, _ZERO, out=y)
    return np.minimum(y, _SIX, out=y)


def hardsigmoid(x: Array) -> Array:
    """min(max(x + 3, 0), 6) / 6."""
    y = _relu6_of_x_plus_3(x)
    return np.divide(y, _SIX, out=y)


def hardswish(x: Array) -> Array:
    """x * min(max(x + 3, 0), 6) / 6."""
    y = _relu6_of_x_plus_3(x)
    np.multiply(x, y, out=y)
    return np.divide(y, _SIX, out=y)


def silu(x: Array) -> Array:
    """x / (1 + exp(-x)), as torch computes it; exp overflowing to inf gives -0 or 0."""
    y = np.negative(x)
    np.exp(y, out=y)
    np.add(y, ONE, out=y)
    return np.divide(x, y, out=y)


def log(x: Array) -> Array:
    """Natural log; -inf at 0 and NaN below, as torch (numpy's warnings silenced)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x)


def log1p(x: Array) -> Array:
    """log(1 + x), exact for small x; -inf at -1 and NaN below, as torch."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log1p(x)


def expm1(x: Array) -> Array:
    """e ** x - 1, exact for small x; inf past float32's range, as torch."""
    with np.errstate(over="ignore"):
        return np.expm1(x)


# erf as x * P(x^2) / Q(x^2) on x clamped to [-4, 4] (erf is +-1 there in float32): the rational
# minimax fit Eigen and XLA use for float erf, within 4.2e-7 of math.erf (numpy has no erf);
# np.clip keeps a NaN, so erf(NaN) is NaN, as torch
_ERF_P = tuple(np.float32(c) for c in (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                                       -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                                       -1.60960333262415e-02))
_ERF_Q = tuple(np.float32(c) for c in (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                                       -7.37332916720468e-03, -1.42647390514189e-02))
_ERF_LIMIT = np.float32(4.0)


def erf(x: Array) -> Array:
    """torch.erf, within 4.2e-7 absolute."""
    clipped = np.clip(x, -_ERF_LIMIT, _ERF_LIMIT)
    x2 = np.square(clipped)
    p = np.full_like(x2, _ERF_P[0])
    for c in _ERF_P[1:]:
        p = p * x2 + c
    q = np.full_like(x2, _ERF_Q[0])
    for c in _ERF_Q[1:]:
        q = q * x2 + c
    return np.asarray(clipped * p / q, dtype=np.float32)


def floor(x: Array) -> Array:
    return np.floor(x)


def ceil(x: Array) -> Array:
    return np.ceil(x)


def trunc(x: Array) -> Array:
    return np.trunc(x)


def round_half_even(x: Array) -> Array:
    """torch.round: the nearest whole number, halves to even (numpy's rint)."""
    return np.rint(x)


def sign(x: Array) -> Array:
    """-1, 0 or 1; torch gives 0 (not NaN, as numpy's sign) for NaN, and +0 for -0."""
    return np.subtract(x > _ZERO, x < _ZERO, dtype=np.float32)


def sqrt(x: Array) -> Array:
    with np.errstate(invalid="ignore"):
        return np.sqrt(x)


def rsqrt(x: Array) -> Array:
    """1 / sqrt(x); inf at 0, as torch."""
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.sqrt(x)
        return np.divide(ONE, y, out=y) if y.ndim else np.asarray(ONE / y)


def absolute(x: Array) -> Array:
    return np.abs(x)


def exp(x: Array) -> Array:
    """e ** x; inf past float32's range, as torch."""
    with np.errstate(over="ignore"):
        return np.exp(x)
