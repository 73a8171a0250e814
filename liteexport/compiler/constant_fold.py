"""Folding nodes whose tensors are all compile-time constants of any dtype, with torch itself.

Models compute on integer and bool buffers at compile time too: swin's
``table[relative_position_index]``, maxvit's ``index.view(-1)``. When every tensor a node reads
is a constant and one of them is not float32, the node is evaluated with its own aten op (the
exact torch result, also for dtypes programs do not hold, as float64); float32-only nodes keep
folding through the instructions' semantics (``Emitter.emit``).
"""

from __future__ import annotations

from typing import Any

import torch

from liteexport.compiler.values import Sym, TensorConst, Unsupported

Lowering = Any  # ops.Lowering (kept Any: this module needs nothing else of ops)

# Ops without an instruction of their own: only compiled when their inputs are constants.
# (Kept short: a node of these kinds after an unsupported one is not reported on its own.)
CONSTANT_ONLY = ("aten::meshgrid",)


def _tensors(value: Any) -> list[Any]:
    if isinstance(value, (Sym, TensorConst)):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []


def _unwrap(value: Any) -> Any:
    if isinstance(value, TensorConst):
        return value.tensor
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(item) for item in value)
    return value


def _wrap(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return TensorConst(value.detach().contiguous())
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(item) for item in value)
    return value


def _aten(kind: str) -> Any:
    namespace, _, name = kind.partition("::")
    if namespace != "aten":
        return None
    return getattr(torch.ops.aten, name, None)


def _constant_only(kind: str) -> Lowering:
    def lower(b: Any, args: list[Any]) -> Any:
        raise Unsupported()  # reported like any op the compiler lacks
    return lower


def fold_with_torch(kind: str, args: list[Any]) -> Any:
    """The node computed now by its own aten op, on the constants it reads (torch picks the overload)."""
    op = _aten(kind)
    if op is None:
        raise Unsupported()
    try:
        with torch.no_grad():
            return _wrap(op(*_unwrap(args)))
    except (RuntimeError, TypeError, ValueError, IndexError) as exc:
        raise Unsupported(f"cannot evaluate it at compile time: {str(exc).splitlines()[0]}") from exc


def with_constant_folding(kind: str, lowering: Lowering | None) -> Lowering:
    """``lowering`` preceded by a fold with torch when every tensor input is a constant and
    one of them is not float32 (or when ``kind`` has no instruction at all)."""
    op = _aten(kind)
    fallback = lowering if lowering is not None else _constant_only(kind)
    if op is None:
        return fallback

    def lower(b: Any, args: list[Any]) -> Any:
        tensors = _tensors(args)
        if tensors and all(isinstance(t, TensorConst) for t in tensors) and (
                lowering is None or any(t.tensor.dtype != torch.float32 for t in tensors)):
            try:
                return fold_with_torch(kind, args)
            except Unsupported:
                if lowering is not None:  # an overload torch.ops cannot pick from Python values
                    return lowering(b, args)
                raise
        return fallback(b, args)

    return lower
