"""Lowering of the selection ops (issue 20; see ops.py for the conventions): triu and tril (causal
masks), argmax and argmin, max and min over a dim, and topk.

max(x, dim), min(x, dim) and topk return (values, indices); an instruction writes one result, so the
index instruction (ARGMAX, ARGMIN, TOPK) is emitted once and the values are a GATHER of the input at those
indices: one source of truth for which element was picked, NaN and ties included.
"""

from __future__ import annotations

import math
from typing import Any

from bundle_format.program import ArgReduceAttrs, AxisAttrs, DiagonalAttrs, OpCode, TopKAttrs
from liteexport.compiler.ops import Emitter, Lowering, tensor
from liteexport.compiler.shape_ops import axis_index, reshape_to, static_shape
from liteexport.compiler.values import TensorValue, Unsupported


def _int_arg(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise Unsupported(f"{what} must be an int known at compile time, got {value!r}")
    return value


def _triangle(op: OpCode) -> Lowering:
    """aten::triu/tril(x, diagonal=0)."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        x = tensor(args[0])
        if len(static_shape(x)) < 2:
            raise Unsupported(f"{op.name.lower()} needs an input of at least 2 dims, got shape {static_shape(x)}")
        diagonal = _int_arg(args[1], "diagonal") if len(args) > 1 else 0
        return b.emit(op, [x], DiagonalAttrs(diagonal=diagonal))
    return lower


def _flat_axis(b: Emitter, x: TensorValue, dim: Any) -> tuple[TensorValue, int]:
    """``x`` and the axis an arg-reduction runs along: dim None flattens ``x`` first, as torch."""
    if dim is None:
        shape = static_shape(x)
        if -1 in shape:
            raise Unsupported("argmax/argmin over all dims of a dynamic shape is not compiled; give a dim")
        return reshape_to(b, x, [math.prod(shape)]), 0
    return x, axis_index(_int_arg(dim, "dim"), max(len(static_shape(x)), 1))


def _arg_reduce(op: OpCode) -> Lowering:
    """aten::argmax/argmin(x, dim=None, keepdim=False); with dim None, keepdim keeps every dim as 1."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        x = tensor(args[0])
        dim = args[1] if len(args) > 1 else None
        keepdim = bool(args[2]) if len(args) > 2 else False
        flat, axis = _flat_axis(b, x, dim)
        indices = b.emit(op, [flat], ArgReduceAttrs(axis=axis, keepdim=keepdim and dim is not None))
        if dim is None and keepdim:
            return reshape_to(b, indices, [1] * len(static_shape(x)))
        return indices
    return lower


def extremum_dim(b: Emitter, args: list[Any], op: OpCode) -> Any:
    """aten::max.dim / min.dim(x, dim, keepdim) -> (values, indices), with ``op`` ARGMAX or ARGMIN:
    the first index of the largest (smallest) value, a NaN counting as both, as torch's, and the
    values read at those indices."""
    x = tensor(args[0])
    axis = axis_index(_int_arg(args[1], "dim"), max(len(static_shape(x)), 1))
    keepdim = bool(args[2]) if len(args) > 2 else False
    indices = b.emit(op, [x], ArgReduceAttrs(axis=axis, keepdim=True))
    values = b.emit(OpCode.GATHER, [x, indices], AxisAttrs(axis=axis))
    if keepdim or not static_shape(x):
        return values, indices
    reduced = [d for i, d in enumerate(static_shape(x)) if i != axis]
    return reshape_to(b, values, reduced), reshape_to(b, indices, reduced)


def _topk(b: Emitter, args: list[Any]) -> Any:
    """aten::topk(x, k, dim=-1, largest=True, sorted=True) -> (values, indices)."""
    x = tensor(args[0])
    k = _int_arg(args[1], "topk's k")
    dim = _int_arg(args[2], "dim") if len(args) > 2 else -1
    largest = bool(args[3]) if len(args) > 3 else True
    # sorted=False: torch leaves the order unspecified; the sorted order is one it may return, so
    # both compile to the same TOPK (schema/demo_ops.toml's TopK)
    axis = axis_index(dim, max(len(static_shape(x)), 1))
    indices = b.emit(OpCode.TOPK, [x], TopKAttrs(k=k, axis=axis, largest=largest))
    return b.emit(OpCode.GATHER, [x, indices], AxisAttrs(axis=axis)), indices


LOWERINGS: dict[str, Lowering] = {
    "aten::triu": _triangle(OpCode.TRIU),
    "aten::tril": _triangle(OpCode.TRIL),
    "aten::argmax": _arg_reduce(OpCode.ARGMAX),
    "aten::argmin": _arg_reduce(OpCode.ARGMIN),
    "aten::topk": _topk,
}
