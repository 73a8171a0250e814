"""The results of a tensor node the compiler cannot compile, computed by torch's meta
kernels (shapes and dtypes, no data), so that the walk can go on past it.

Without them an uncompilable node's result is :class:`Poison`, which erases everything
downstream: the next layer's own blockers, and every shape-dependent decision, would be
unknown, so a model with 35 blocked layers would show one. With them the result is a
blocked :class:`Sym` with its true shape, and non-tensor results (``x.is_floating_point()``)
are the values torch computes from shapes and dtypes alone.
"""

from __future__ import annotations

from typing import Any

import torch

from liteexport.compiler.values import Sym, TensorConst

_FAIL = object()


def _to_meta(value: Any) -> Any:
    if isinstance(value, Sym):
        if value.shape is None or any(d < 0 for d in value.shape):
            return _FAIL
        return torch.empty(value.shape, device="meta")
    if isinstance(value, TensorConst):
        return value.tensor.to("meta")
    if isinstance(value, (list, tuple)):
        items = [_to_meta(v) for v in value]
        return _FAIL if any(v is _FAIL for v in items) else type(value)(items)
    if value is None or isinstance(value, (bool, int, float, str, torch.device, torch.dtype)):
        return value
    return _FAIL


def _from_meta(value: Any, blocked: frozenset[int]) -> Any:
    if isinstance(value, torch.Tensor):
        return Sym(tuple(int(d) for d in value.shape), blocked=blocked)
    if isinstance(value, (list, tuple)):
        return type(value)(_from_meta(v, blocked) for v in value)
    return value


def _operator(schema: str) -> Any:
    """The OpOverload of an ``aten::name.overload(...)`` schema, or None."""
    qualified = schema.split("(", 1)[0]
    if not qualified.startswith("aten::"):
        return None
    name, _, overload = qualified.removeprefix("aten::").partition(".")
    packet = getattr(torch.ops.aten, name, None)
    return getattr(packet, overload or "default", None) if packet is not None else None


def meta_results(node: torch._C.Node, args: list[Any], blocked: frozenset[int]) -> list[Any] | None:
    """The node's results with ``blocked`` tensors in place of data, or None when torch's
    meta kernels cannot tell (data-dependent results, dynamic shapes, non-ATen nodes)."""
    try:
        operator = _operator(str(node.schema()))
    except RuntimeError:
        return None
    if operator is None:
        return None
    meta_args = [_to_meta(a) for a in args]
    if any(a is _FAIL for a in meta_args):
        return None
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for spec, value in zip(operator._schema.arguments, meta_args, strict=False):
        if spec.kwarg_only:
            keywords[spec.name] = value
        else:
            positional.append(value)
    try:
        with torch.no_grad():
            result = operator(*positional, **keywords)
    except Exception:  # torch raises many kinds for what meta tensors cannot compute
        return None
    results = list(result) if node.outputsSize() > 1 else [result]
    if len(results) != node.outputsSize():
        return None
    return [_from_meta(r, blocked) for r in results]
