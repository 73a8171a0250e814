"""Reductions over several axes: mean and sum (torch.mean / torch.sum with a dim list)."""

from __future__ import annotations

import math

import numpy as np

from bundle_format.program import ReduceAttrs
from runtime_py.backends.demo.arrays import Array, Kernel


def _axes(attrs: ReduceAttrs) -> tuple[int, ...]:
    axes = tuple(attrs.axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"axes {axes} repeat an axis")
    return axes


def _normalized(axes: tuple[int, ...], x: Array) -> tuple[int, ...]:
    """The axes as non-negative indexes of ``x`` (empty: every axis)."""
    rank = max(x.ndim, 1)  # torch reduces a 0-d tensor over dim 0 or -1
    if not axes:
        return tuple(range(x.ndim))
    for axis in axes:
        if not -rank <= axis < rank:
            raise ValueError(f"axis {axis} is out of range for an input of shape {x.shape}")
    normalized = tuple(sorted({a % rank for a in axes}))
    if len(normalized) != len(axes):
        raise ValueError(f"axes {axes} name an axis twice for an input of shape {x.shape}")
    return normalized if x.ndim else ()


def make_mean(attrs: ReduceAttrs, n_inputs: int) -> Kernel:
    """The mean over ``axes``: the float32 sum (numpy's pairwise summation) over the count, as
    np.mean computes it; an empty reduction gives NaN like torch, without numpy's warning."""
    axes, keepdim = _axes(attrs), attrs.keepdim

    def mean(x: Array) -> Array:
        reduced = _normalized(axes, x)
        total = np.asarray(np.sum(x, axis=reduced, keepdims=keepdim, dtype=np.float32))
        count = math.prod(x.shape[a] for a in reduced)
        if count == 0:
            return np.full(total.shape, np.nan, dtype=np.float32)
        if total.ndim == 0:  # a 0-d ufunc result is a numpy scalar
            return np.asarray(total / np.float32(count))
        return np.divide(total, np.float32(count), out=total)

    return mean


def make_sum(attrs: ReduceAttrs, n_inputs: int) -> Kernel:
    """The sum over ``axes``."""
    axes, keepdim = _axes(attrs), attrs.keepdim

    def total(x: Array) -> Array:
        return np.asarray(np.sum(x, axis=_normalized(axes, x), keepdims=keepdim, dtype=np.float32))

    return total
