"""Selection kernels (issue 20): triu and tril (causal masks), argmax, argmin and topk's indices. max
and min over a dim and topk's values are a GATHER of the input at these indices (the compiler emits it), so every
engine picks the same element, NaN and ties included: a NaN counts as the largest value, as in
torch (the smallest for argmin, as torch.argmin), and equal values come in index order.
"""

from __future__ import annotations

import numpy as np

from bundle_format.program import ArgReduceAttrs, DiagonalAttrs, OpCode, TopKAttrs
from runtime_py.backends.demo.arrays import Array, Kernel
from runtime_py.backends.demo.typed import checked_axis

# each family's members by name (a KeyError for any other op, never the last member by default)
_TRIANGLES = {OpCode.TRIU: ("triu", np.triu), OpCode.TRIL: ("tril", np.tril)}
_ARG_REDUCES = {OpCode.ARGMAX: ("argmax", np.argmax), OpCode.ARGMIN: ("argmin", np.argmin)}


def _triangle(op: OpCode, attrs: DiagonalAttrs) -> Kernel:
    name, keep = _TRIANGLES[op]

    def triangle(x: Array) -> Array:
        if x.ndim < 2:
            raise ValueError(f"{name} needs an input of at least 2 dims, got shape {x.shape}")
        # numpy's triu/tril work on the last two dims of a stack of matrices, as torch's
        out: Array = keep(x, attrs.diagonal)
        return out

    return triangle


def make_triu(attrs: DiagonalAttrs, n_inputs: int) -> Kernel:
    return _triangle(OpCode.TRIU, attrs)


def make_tril(attrs: DiagonalAttrs, n_inputs: int) -> Kernel:
    return _triangle(OpCode.TRIL, attrs)


def _arg_reduce(op: OpCode, attrs: ArgReduceAttrs) -> Kernel:
    name, pick = _ARG_REDUCES[op]

    def arg_reduce(x: Array) -> Array:
        axis = checked_axis(attrs.axis, x)
        if x.ndim == 0:  # torch's argmax/argmin of a 0-d tensor over dim 0 is 0
            return np.zeros((), dtype=np.int64)
        if x.shape[axis] == 0:
            raise ValueError(f"{name} of the empty axis {axis} of an input of shape {x.shape}")
        # numpy's argmax/argmin, like torch's, return the first extreme and take a NaN as it
        out: Array = pick(x, axis=axis, keepdims=attrs.keepdim).astype(np.int64, copy=False)
        return out

    return arg_reduce


def make_argmax(attrs: ArgReduceAttrs, n_inputs: int) -> Kernel:
    return _arg_reduce(OpCode.ARGMAX, attrs)


def make_argmin(attrs: ArgReduceAttrs, n_inputs: int) -> Kernel:
    return _arg_reduce(OpCode.ARGMIN, attrs)


def make_topk(attrs: TopKAttrs, n_inputs: int) -> Kernel:
    def topk(x: Array) -> Array:
        axis = checked_axis(attrs.axis, x)
        view = x.reshape(1) if x.ndim == 0 else x
        size = view.shape[axis]
        if attrs.k > size:
            raise ValueError(f"k={attrs.k} is larger than the size {size} of axis {axis} (input of shape {x.shape})")
        if attrs.largest:
            # a stable ascending sort of the reversed axis, reversed: values descending, equal ones in
            # index order, NaN (sorted last by numpy) first, as the largest
            flipped = np.argsort(np.flip(view, axis), axis=axis, kind="stable")
            order = (size - 1) - np.flip(flipped, axis)
        else:
            order = np.argsort(view, axis=axis, kind="stable")  # NaN last: the largest
        picked = np.take(order, np.arange(attrs.k), axis=axis).astype(np.int64, copy=False)
        return picked.reshape(()) if x.ndim == 0 and attrs.k == 1 else picked

    return topk
