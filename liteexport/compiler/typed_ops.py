"""Lowering of the typed ops (issue 20; see ops.py for the conventions): token embeddings,
indexing, casts' neighbours (comparisons, logic, where, masked_fill), cumsum, sin and cos.

These are what text models add to the vision ops: ids and masks are int64 or bool tensors, so
the ops here keep torch's dtypes (the op spec's ``result`` rules) and convert operands to the
dtype torch computes in (``ops.promoted``).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from bundle_format.program import AxisAttrs, BinaryAttrs, DType, OpCode, ShapeAttrs
from liteexport.compiler.constant_fold import fold_with_torch
from liteexport.compiler.dtypes import TORCH_DTYPES, dtype_of, torch_dtype_of
from liteexport.compiler.ops import (
    Emitter,
    Lowering,
    is_number,
    promoted,
    rank_of,
    shape_of,
    tensor,
)
from liteexport.compiler.selection_ops import extremum_dim
from liteexport.compiler.shape_ops import reshape_to
from liteexport.compiler.values import Sym, TensorConst, TensorValue, Unsupported


def _embedding(b: Emitter, args: list[Any]) -> Any:
    """aten::embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse): padding_idx and
    the rest only matter for training."""
    return b.emit(OpCode.EMBEDDING, [tensor(args[0]), tensor(args[1])], None)


def _compare(op: OpCode, reverse_op: OpCode) -> Lowering:
    """aten::eq/ne/lt/le/gt/ge, Tensor and Scalar forms (a number first swaps the comparison)."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        a, other = args[0], args[1]
        chosen = op
        if is_number(a) and not is_number(other):
            a, other, chosen = other, a, reverse_op
        operands = promoted(b, op, [a, other])
        if is_number(other):
            return b.emit(chosen, operands[:1], BinaryAttrs(scalar=float(other)))
        return b.emit(chosen, operands, BinaryAttrs())
    return lower


def _bitwise(op: OpCode) -> Lowering:
    """aten::__and__/__or__/bitwise_and/bitwise_or: bool or integer operands of one dtype."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        operands = [_as_tensor(b, v, args[0]) for v in args[:2]]
        target = torch.promote_types(torch_dtype_of(operands[0]), torch_dtype_of(operands[1]))
        if target.is_floating_point:
            raise Unsupported("bitwise operations take bool or integer tensors")
        dtype = dtype_of(TensorConst(torch.empty(0, dtype=target)))
        return b.emit(op, [b.cast(v, dtype) for v in operands], None)
    return lower


def _as_tensor(b: Emitter, value: Any, like: Any) -> TensorValue:
    """A number operand as a 0-d constant of the other operand's dtype."""
    if is_number(value):
        return TensorConst(torch.tensor(value, dtype=torch_dtype_of(tensor(like))))
    return tensor(value)


def _bitwise_not(b: Emitter, args: list[Any]) -> Any:
    return b.emit(OpCode.BITWISE_NOT, [tensor(args[0])], None)


def _logical(op: OpCode) -> Lowering:
    """aten::logical_and/or: truth values of any dtype -> bool."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        return b.emit(op, [b.cast(tensor(v), DType.BOOL) for v in args[:2]], None)
    return lower


def _logical_not(b: Emitter, args: list[Any]) -> Any:
    return b.emit(OpCode.BITWISE_NOT, [b.cast(tensor(args[0]), DType.BOOL)], None)


def _where(b: Emitter, args: list[Any]) -> Any:
    """aten::where(condition, a, b) with tensors or numbers for a and b (promoted as torch)."""
    if len(args) < 3:
        raise Unsupported("where(condition) (the indices of True) has a data-dependent shape")
    condition = tensor(args[0])
    if dtype_of(condition) != DType.BOOL:
        raise Unsupported("where's condition must be a bool tensor")
    a, other = args[1], args[2]
    if is_number(a) and is_number(other):
        a = TensorConst(torch.tensor(a))
    target = torch.result_type(*[v if is_number(v) else torch.empty(
        () if shape_of(tensor(v)) == () else (1,), dtype=torch_dtype_of(tensor(v)), device="meta") for v in (a, other)])
    dtype = dtype_of(TensorConst(torch.empty(0, dtype=target)))
    values = [TensorConst(torch.tensor(v, dtype=target)) if is_number(v) else b.cast(tensor(v), dtype)
              for v in (a, other)]
    return b.emit(OpCode.WHERE, [condition, *values], None)


def _masked_fill(b: Emitter, args: list[Any]) -> Any:
    """aten::masked_fill(x, mask, value): where(mask, value, x), keeping x's dtype."""
    x, mask, value = tensor(args[0]), tensor(args[1]), args[2]
    if dtype_of(mask) != DType.BOOL:
        raise Unsupported("masked_fill's mask must be a bool tensor")
    if is_number(value):
        fill: TensorValue = TensorConst(torch.tensor(value, dtype=torch_dtype_of(x)))
    else:
        fill = b.cast(tensor(value), dtype_of(x))
    return b.emit(OpCode.WHERE, [mask, fill, x], None)


def _index(b: Emitter, args: list[Any]) -> Any:
    """aten::index(x, indices) with constant index tensors (a mask built from aranges, a row pick):
    the positions the indexing reads are computed now, so it runs as one INDEX_SELECT of the
    flattened input."""
    x, indices = tensor(args[0]), list(args[1])
    shape = shape_of(x)
    if shape is None or -1 in shape:
        raise Unsupported("indexing needs a static input shape")
    if not all(i is None or isinstance(i, TensorConst) for i in indices):
        raise Unsupported("only indexing with constant index tensors is compiled")
    positions = torch.arange(math.prod(shape), dtype=torch.int64).reshape(shape)
    try:
        picked = positions[tuple(None if i is None else i.tensor for i in indices)]
    except (IndexError, RuntimeError) as exc:
        raise Unsupported(f"cannot index shape {shape}: {str(exc).splitlines()[0]}") from exc
    flat = b.emit(OpCode.RESHAPE, [x], ShapeAttrs(dims=(-1,)))
    selected = b.emit(OpCode.INDEX_SELECT, [flat, TensorConst(picked.reshape(-1).contiguous())], AxisAttrs(axis=0))
    return b.emit(OpCode.RESHAPE, [selected], ShapeAttrs(dims=tuple(picked.shape)))


def _extremum(kind: str, pick_first_when: OpCode) -> Lowering:
    """aten::min/max(a, b) and minimum/maximum of integer or bool tensors: where(a < b, a, b) (or >), exact.
    Floats are not compiled this way: torch propagates a NaN from either side, the comparison would not.
    max/min(x, dim, keepdim) -> (values, indices) is selection_ops.extremum_dim."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        if kind in ("aten::max", "aten::min") and len(args) == 3 and isinstance(args[1], int) \
                and isinstance(args[0], Sym):
            return extremum_dim(b, args, OpCode.ARGMAX if kind == "aten::max" else OpCode.ARGMIN)
        if all(isinstance(v, TensorConst) for v in args if isinstance(v, (Sym, TensorConst))):
            return fold_with_torch(kind, args)  # float32 constants, every overload (others folded already)
        if len(args) != 2 or not all(isinstance(v, (Sym, TensorConst)) for v in args):
            raise Unsupported("only the elementwise min/max of two tensors is compiled")
        a, other = promoted(b, pick_first_when, list(args))
        if dtype_of(a) == DType.FLOAT32:
            raise Unsupported("the elementwise min/max of float tensors is not compiled (NaN propagation)")
        return b.emit(OpCode.WHERE, [b.emit(pick_first_when, [a, other], BinaryAttrs()), a, other], None)
    return lower


def _gather(b: Emitter, args: list[Any]) -> Any:
    """aten::gather(x, dim, index, sparse_grad)."""
    return b.emit(OpCode.GATHER, [tensor(args[0]), tensor(args[2])], AxisAttrs(axis=int(args[1])))


def _index_select(b: Emitter, args: list[Any]) -> Any:
    """aten::index_select(x, dim, index); of a 0-d x (by its one element), a 0-d result, as torch's."""
    x = tensor(args[0])
    selected = b.emit(OpCode.INDEX_SELECT, [x, tensor(args[2])], AxisAttrs(axis=int(args[1])))
    return reshape_to(b, selected, []) if shape_of(x) == () else selected


def _cumsum(b: Emitter, args: list[Any]) -> Any:
    """aten::cumsum(x, dim, dtype): a dtype converts the input first, as torch does."""
    x = tensor(args[0])
    dtype = args[2] if len(args) > 2 else None
    if dtype is not None:
        try:
            x = b.cast(x, DType(int(dtype)))
        except ValueError:
            raise Unsupported(f"cumsum to c10::ScalarType {dtype} is not compiled") from None
    rank_of(x)
    return b.emit(OpCode.CUMSUM, [x], AxisAttrs(axis=int(args[1])))


LOWERINGS: dict[str, Lowering] = {
    "aten::embedding": _embedding,
    "aten::eq": _compare(OpCode.EQ, OpCode.EQ),
    "aten::ne": _compare(OpCode.NE, OpCode.NE),
    "aten::lt": _compare(OpCode.LT, OpCode.GT),
    "aten::le": _compare(OpCode.LE, OpCode.GE),
    "aten::gt": _compare(OpCode.GT, OpCode.LT),
    "aten::ge": _compare(OpCode.GE, OpCode.LE),
    "aten::__and__": _bitwise(OpCode.BITWISE_AND),
    "aten::bitwise_and": _bitwise(OpCode.BITWISE_AND),
    "aten::__or__": _bitwise(OpCode.BITWISE_OR),
    "aten::bitwise_or": _bitwise(OpCode.BITWISE_OR),
    "aten::bitwise_not": _bitwise_not,
    "aten::logical_and": _logical(OpCode.BITWISE_AND),
    "aten::logical_or": _logical(OpCode.BITWISE_OR),
    "aten::logical_not": _logical_not,
    "aten::where": _where,
    "aten::masked_fill": _masked_fill,
    "aten::index": _index,
    "aten::gather": _gather,
    "aten::index_select": _index_select,
    "aten::cumsum": _cumsum,
    **{kind: _extremum(kind, OpCode.LT) for kind in ("aten::min", "aten::minimum")},
    **{kind: _extremum(kind, OpCode.GT) for kind in ("aten::max", "aten::maximum")},
}

__all__ = ["LOWERINGS", "TORCH_DTYPES"]
