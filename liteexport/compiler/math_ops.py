"""Lowering of clamping activations, SiLU and reductions over dims (see ops.py for the
conventions): hardtanh/relu6/clamp become one CLAMP; mean and sum one MEAN or SUM."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bundle_format.program import BinaryAttrs, ClampAttrs, DType, OpCode, ReduceAttrs
from liteexport.compiler.dtypes import dtype_of
from liteexport.compiler.ops import (
    _FLOAT32_SCALAR_TYPE,
    Emitter,
    Lowering,
    _unary,
    is_number,
    shape_of,
    tensor,
)
from liteexport.compiler.values import Unsupported


def _bound(value: Any, name: str) -> float | None:
    if value is None:
        return None
    if not is_number(value):
        raise Unsupported(f"clamp's {name} must be a number known at compile time (tensor bounds are not compiled)")
    return float(value)


def _clamp_to(low: float | None, high: float | None) -> Lowering:
    return lambda b, args: b.emit(OpCode.CLAMP, [tensor(args[0])], ClampAttrs(min=low, max=high))


def _clamp(b: Emitter, args: list[Any]) -> Any:
    """aten::clamp(x, min, max) with number bounds."""
    low, high = _bound(args[1], "min"), _bound(args[2] if len(args) > 2 else None, "max")
    if low is None and high is None:
        raise Unsupported("clamp needs min or max")
    return b.emit(OpCode.CLAMP, [tensor(args[0])], ClampAttrs(min=low, max=high))


def _clamp_one_side(side: str) -> Lowering:
    def lower(b: Emitter, args: list[Any]) -> Any:
        bound = _bound(args[1], side)
        attrs = ClampAttrs(min=bound, max=None) if side == "min" else ClampAttrs(min=None, max=bound)
        return b.emit(OpCode.CLAMP, [tensor(args[0])], attrs)
    return lower


def _hardtanh(b: Emitter, args: list[Any]) -> Any:
    low, high = _bound(args[1], "min_val"), _bound(args[2], "max_val")
    return b.emit(OpCode.CLAMP, [tensor(args[0])], ClampAttrs(min=low, max=high))


def _leaky_relu(b: Emitter, args: list[Any]) -> Any:
    """leaky_relu(x, s) = clamp(x, min=0) + s * clamp(x, max=0): exact (one side is always 0)."""
    x, slope = tensor(args[0]), args[1] if len(args) > 1 else 0.01
    if not is_number(slope):
        raise Unsupported("negative_slope must be a number")
    positive = b.emit(OpCode.CLAMP, [x], ClampAttrs(min=0.0, max=None))
    negative = b.emit(OpCode.MUL, [b.emit(OpCode.CLAMP, [x], ClampAttrs(min=None, max=0.0))],
                      BinaryAttrs(scalar=float(slope)))
    return b.emit(OpCode.ADD, [positive, negative], BinaryAttrs())


def _abs(b: Emitter, args: list[Any]) -> Any:
    """|x|: ABS of float32; of integers where(x < 0, -x, x), keeping torch's integer dtype (ABS takes
    float32 only; T5's relative positions are int64 and index an embedding afterwards)."""
    x = tensor(args[0])
    if dtype_of(x) in (DType.INT64, DType.INT32):
        negative = b.emit(OpCode.LT, [x], BinaryAttrs(scalar=0.0))
        return b.emit(OpCode.WHERE, [negative, b.emit(OpCode.NEG, [x], None), x], None)
    return _unary(OpCode.ABS)(b, args)


def _round(b: Emitter, args: list[Any]) -> Any:
    """aten::round(x) and round.decimals(x, decimals=0); other decimals are not compiled."""
    if len(args) > 1 and args[1] not in (None, 0):
        raise Unsupported(f"round with decimals={args[1]} is not compiled (only whole numbers)")
    return _unary(OpCode.ROUND)(b, args[:1])


def _check_dtype(dtype: Any) -> None:
    if dtype is not None and dtype != _FLOAT32_SCALAR_TYPE:
        raise Unsupported("only a float32 result is compiled (dtype=)")


def _reduction(op: OpCode) -> Callable[[Emitter, list[Any]], Any]:
    """aten::mean/sum over all dims (x, dtype) or over a dim list (x, dims, keepdim, dtype)."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        x = tensor(args[0])
        if len(args) <= 2:  # the overload without dims
            _check_dtype(args[1] if len(args) > 1 else None)
            return b.emit(op, [x], ReduceAttrs(axes=()))
        dims, keepdim = args[1], bool(args[2])
        _check_dtype(args[3] if len(args) > 3 else None)
        if dims is None or (isinstance(dims, list) and not dims):
            axes: tuple[int, ...] = ()
        else:
            axes = tuple(int(d) for d in (dims if isinstance(dims, list) else [dims]))
            shape = shape_of(x)  # unknown rank: the runtime checks the dims
            rank = max(len(shape), 1) if shape is not None else 0
            if len({a % rank if rank else a for a in axes}) != len(axes):
                raise Unsupported(f"dims {list(axes)} name a dim twice")
        return b.emit(op, [x], ReduceAttrs(axes=axes, keepdim=keepdim))
    return lower


def _bmm(b: Emitter, args: list[Any]) -> Any:
    """aten::bmm: a batched matmul of 3-D operands (the attention scores of multi-head attention)."""
    return b.emit(OpCode.MATMUL, [tensor(args[0]), tensor(args[1])], None)


def _baddbmm(b: Emitter, args: list[Any]) -> Any:
    """aten::baddbmm(input, batch1, batch2, beta, alpha) = beta * input + alpha * batch1 @ batch2."""
    x, beta, alpha = tensor(args[0]), args[3], args[4]
    if not (is_number(beta) and is_number(alpha)):
        raise Unsupported("beta and alpha must be numbers")
    product = b.emit(OpCode.MATMUL, [tensor(args[1]), tensor(args[2])], None)
    if alpha != 1:
        product = b.emit(OpCode.MUL, [product], BinaryAttrs(scalar=float(alpha)))
    if beta == 0:  # torch ignores input then (even NaN in it)
        return product
    return b.emit(OpCode.ADD, [product, x], BinaryAttrs(alpha=float(beta)))


def _clone(b: Emitter, args: list[Any]) -> Any:
    """A copy as x * 1 (exact for every float): a new value, so an in-place op on the clone
    never rebinds the original."""
    if len(args) > 1 and args[1] is not None:
        raise Unsupported("a memory_format argument is not compiled")
    return b.emit(OpCode.MUL, [tensor(args[0])], BinaryAttrs(scalar=1.0))


def _square(b: Emitter, args: list[Any]) -> Any:
    x = tensor(args[0])
    return b.emit(OpCode.MUL, [x, x], BinaryAttrs())


def _vector_norm(b: Emitter, x: Any, ord_: Any, dims: Any, keepdim: bool) -> Any:
    """The 2-norm over dims as sqrt(sum(x * x)) (F.normalize's norm); other orders are not compiled."""
    if ord_ not in (2, 2.0):
        raise Unsupported(f"only the 2-norm is compiled, got ord={ord_}")
    squares = _square(b, [x])
    total = _reduction(OpCode.SUM)(b, [squares, dims, keepdim, None])
    return b.emit(OpCode.SQRT, [total], None)


def _linalg_vector_norm(b: Emitter, args: list[Any]) -> Any:
    """aten::linalg_vector_norm(x, ord, dim, keepdim, dtype)."""
    _check_dtype(args[4] if len(args) > 4 else None)
    return _vector_norm(b, tensor(args[0]), args[1], args[2], bool(args[3]))


def _norm(b: Emitter, args: list[Any]) -> Any:
    """aten::norm(x, p, dim, keepdim[, dtype]) (Tensor.norm): the 2-norm."""
    if len(args) < 4:
        raise Unsupported("norm over all elements is not compiled; give dims")
    return _vector_norm(b, tensor(args[0]), 2 if args[1] is None else args[1], args[2], bool(args[3]))


LOWERINGS: dict[str, Lowering] = {
    "aten::abs": _abs,
    "aten::round": _round,
    "aten::square": _square,
    "aten::linalg_vector_norm": _linalg_vector_norm,
    "aten::norm": _norm,
    "aten::clone": _clone,
    "aten::bmm": _bmm,
    "aten::baddbmm": _baddbmm,
    "aten::clamp": _clamp,
    "aten::clip": _clamp,
    "aten::clamp_min": _clamp_one_side("min"),
    "aten::clamp_max": _clamp_one_side("max"),
    "aten::hardtanh": _hardtanh,
    "aten::relu6": _clamp_to(0.0, 6.0),
    "aten::leaky_relu": _leaky_relu,
    "aten::mean": _reduction(OpCode.MEAN),
    "aten::sum": _reduction(OpCode.SUM),
}
