"""Kernels over typed values (issue 20): embedding and indexing, casts, comparisons, bitwise
logic, where, cumsum, sin and cos. Each keeps torch's result dtype (schema/demo_ops.toml's
``result`` rule); indices out of range are errors, as in torch, never wrapped around.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from bundle_format.program import ArangeLikeAttrs, AxisAttrs, BinaryAttrs, CastAttrs, DType, FillAttrs, OpCode
from bundle_format.shape_arithmetic import fill_sizes
from runtime_py.backends.demo.arrays import Array, Kernel

_NUMPY: dict[DType, np.dtype[Any]] = {
    DType.FLOAT32: np.dtype(np.float32), DType.INT64: np.dtype(np.int64), DType.INT32: np.dtype(np.int32),
    DType.BOOL: np.dtype(np.bool_)}


def _check_indices(index: Array, size: int, what: str) -> None:
    if index.size and (int(index.min()) < 0 or int(index.max()) >= size):
        bad = int(index.min()) if int(index.min()) < 0 else int(index.max())
        raise ValueError(f"{what} {bad} is out of range [0, {size})")


def checked_axis(axis: int, x: Array) -> int:
    """``axis`` of ``x`` from 0 (a 0-d input has one axis), or the error every engine gives."""
    rank, shape = x.ndim, x.shape
    if not -max(rank, 1) <= axis < max(rank, 1):
        raise ValueError(f"axis {axis} is out of range for an input of shape {shape}")
    return axis % max(rank, 1)


def embedding(weight: Array, indices: Array) -> Array:
    """weight[indices]: rows of a [N, D] table."""
    if weight.ndim != 2:
        raise ValueError(f"the embedding table must be 2-D [N, D], got shape {weight.shape}")
    _check_indices(indices, weight.shape[0], "index")
    return weight[indices]


def make_cast(attrs: CastAttrs, n_inputs: int) -> Kernel:
    target: np.dtype[Any] = _NUMPY[DType(attrs.dtype)]  # the plan checked it is known (rule known_dtype)

    def cast(x: Array) -> Array:
        # numpy's astype truncates floats toward zero and maps nonzero to True, as torch's .to
        out: Array = x.astype(target, copy=True)
        return out

    return cast


def make_gather(attrs: AxisAttrs, n_inputs: int) -> Kernel:
    def gather(x: Array, index: Array) -> Array:
        axis = checked_axis(attrs.axis, x)
        if index.ndim != x.ndim:
            raise ValueError(f"index of shape {index.shape} must have the rank of the input {x.shape}")
        if any(i > s for d, (i, s) in enumerate(zip(index.shape, x.shape, strict=True)) if d != axis):
            raise ValueError(f"index of shape {index.shape} is larger than the input {x.shape} off axis {axis}")
        _check_indices(index, x.shape[axis], "index")
        # torch.gather reads x only within index's extent on the other axes
        region = x[tuple(slice(0, i) if d != axis else slice(None) for d, i in enumerate(index.shape))]
        return np.take_along_axis(region, index.astype(np.intp, copy=False), axis=axis)

    return gather


def make_index_select(attrs: AxisAttrs, n_inputs: int) -> Kernel:
    def index_select(x: Array, index: Array) -> Array:
        axis = checked_axis(attrs.axis, x)
        if index.ndim > 1:
            raise ValueError(f"index_select takes a 1-D index, got shape {index.shape}")
        size = x.shape[axis] if x.ndim else 1
        _check_indices(index, size, "index")
        return np.take(x, index.reshape(-1), axis=axis) if x.ndim else x.reshape(1)[index.reshape(-1)]

    return index_select


_COMPARE: dict[OpCode, Callable[..., Array]] = {
    OpCode.EQ: np.equal, OpCode.NE: np.not_equal, OpCode.LT: np.less, OpCode.LE: np.less_equal,
    OpCode.GT: np.greater, OpCode.GE: np.greater_equal}


def make_compare(op: OpCode) -> Callable[[BinaryAttrs, int], Kernel]:
    ufunc = _COMPARE[op]

    def factory(attrs: BinaryAttrs, n_inputs: int) -> Kernel:
        if (n_inputs == 1) != (attrs.scalar is not None):
            raise ValueError("a scalar operand is needed with exactly one input, and only then")
        if attrs.scalar is not None:
            # a Python float is a "weak" scalar (NEP 50): a float32 operand compares in float32, as
            # torch does, and an integer one exactly as a float
            scalar = float(attrs.scalar)
            if attrs.reverse:
                return lambda x: ufunc(scalar, x)
            return lambda x: ufunc(x, scalar)
        if attrs.reverse:
            return lambda a, b: ufunc(b, a)
        return lambda a, b: ufunc(a, b)

    return factory


def bitwise_not(x: Array) -> Array:
    return np.invert(x)  # logical not for bool


def bitwise_and(a: Array, b: Array) -> Array:
    return np.bitwise_and(a, b)


def bitwise_or(a: Array, b: Array) -> Array:
    return np.bitwise_or(a, b)


def where(condition: Array, a: Array, b: Array) -> Array:
    return np.where(condition, a, b)


_WIDEN = {np.dtype(np.bool_): np.dtype(np.int64), np.dtype(np.int32): np.dtype(np.int64)}


def make_cumsum(attrs: AxisAttrs, n_inputs: int) -> Kernel:
    def cumsum(x: Array) -> Array:
        axis = checked_axis(attrs.axis, x)
        dtype = _WIDEN.get(x.dtype, x.dtype)
        if x.ndim == 0:
            return x.astype(dtype)
        return np.cumsum(x, axis=axis, dtype=dtype)

    return cumsum


def make_arange_like(attrs: ArangeLikeAttrs, n_inputs: int) -> Kernel:
    """start, start + 1, ... up to the reference's size along axis plus end_offset: a range over a
    sequence length known only at run time (the reference's values are not read)."""
    def arange_like(reference: Array) -> Array:
        if not -reference.ndim <= attrs.axis < reference.ndim:
            raise ValueError(f"axis {attrs.axis} is out of range for a reference of shape {reference.shape}")
        end = reference.shape[attrs.axis] + attrs.end_offset
        if end < attrs.start:  # as torch.arange's
            raise ValueError(f"the range's end {end} (size {reference.shape[attrs.axis]} of axis {attrs.axis} "
                             f"{attrs.end_offset:+d}) is before its start {attrs.start}")
        return np.arange(attrs.start, end, dtype=np.int64)

    return arange_like


def make_full(attrs: FillAttrs, n_inputs: int) -> Kernel:
    """torch.full(sizes, value) with sizes read from the reference operand's shape (its values are not
    read): a causal mask over a sequence length known only at run time."""
    def full(value: Array, reference: Array) -> Array:
        if value.size != 1:
            raise ValueError(f"the fill value must have one element, got shape {value.shape}")
        return np.full(fill_sizes(attrs, reference.shape), value.reshape(()), dtype=value.dtype)

    return full


def sin(x: Array) -> Array:
    return np.sin(x)


def cos(x: Array) -> Array:
    return np.cos(x)
