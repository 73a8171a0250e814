"""Running a TorchScript node's own ATen operator on compile-time stand-ins.

Two uses, one mechanism (the node's schema names the operator overload; its arguments are
the walk's abstract values turned into tensors):

* ``meta_results``: an uncompilable tensor node's results from torch's meta kernels
  (shapes and dtypes, no data), so the walk goes on past it. Without them its result is
  :class:`Poison`, which erases everything downstream: the next layer's own blockers, and
  every shape-dependent decision, would be unknown, so a model with 35 blocked layers would
  show one. Tensor results become blocked :class:`Sym` values with their true shapes;
  non-tensor results (``x.is_floating_point()``) are what torch computes from shapes alone.
* ``constant_results``: a view or an in-place update of tensors known at compile time
  (swin's attention mask: ``mask[h0:h1, w0:w1] = count`` on a fresh ``new_zeros``), run by
  torch itself on the real tensors so that views alias exactly as in torch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from bundle_format.program import DType
from liteexport.compiler.dtypes import COMPILED_DTYPES, TORCH_DTYPES
from liteexport.compiler.values import Sym, TensorConst

_FAIL = object()


def _to_meta(value: Any) -> Any:
    if isinstance(value, Sym):
        if value.shape is None or any(d < 0 for d in value.shape):
            return _FAIL
        # its own dtype: what comes after an unsupported node is checked (and reported) as it would be
        return torch.empty(value.shape, device="meta", dtype=TORCH_DTYPES[value.dtype])
    if isinstance(value, TensorConst):
        return value.tensor.to("meta")
    return _plain(value, _to_meta)


def _to_real(value: Any) -> Any:
    if isinstance(value, Sym):
        return _FAIL
    if isinstance(value, TensorConst):
        return value.tensor
    return _plain(value, _to_real)


def _plain(value: Any, convert: Callable[[Any], Any]) -> Any:
    if isinstance(value, (list, tuple)):
        items = [convert(v) for v in value]
        return _FAIL if any(v is _FAIL for v in items) else type(value)(items)
    if value is None or isinstance(value, (bool, int, float, str, torch.device, torch.dtype)):
        return value
    return _FAIL


def _operator(schema: str) -> Any:
    """The OpOverload of an ``aten::name.overload(...)`` schema, or None."""
    qualified = schema.split("(", 1)[0]
    if not qualified.startswith("aten::"):
        return None
    name, _, overload = qualified.removeprefix("aten::").partition(".")
    packet = getattr(torch.ops.aten, name, None)
    return getattr(packet, overload or "default", None) if packet is not None else None


def _run(node: torch._C.Node, args: list[Any], convert: Callable[[Any], Any]) -> list[Any] | None:
    try:
        operator = _operator(str(node.schema()))
    except RuntimeError:  # a node without a schema
        return None
    if operator is None:
        return None
    converted = [convert(a) for a in args]
    if any(a is _FAIL for a in converted):
        return None
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    for spec, value in zip(operator._schema.arguments, converted, strict=False):
        if spec.kwarg_only:
            keywords[spec.name] = value
        else:
            positional.append(value)
    try:
        with torch.no_grad():
            result = operator(*positional, **keywords)
    except Exception:  # torch raises many kinds for what it cannot compute from these
        return None
    results = list(result) if node.outputsSize() > 1 else [result]
    return results if len(results) == node.outputsSize() else None


def _wrap(value: Any, tensor: Callable[[torch.Tensor], Any]) -> Any:
    if isinstance(value, torch.Tensor):
        return tensor(value)
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(v, tensor) for v in value)
    return value


def meta_results(node: torch._C.Node, args: list[Any], blocked: frozenset[int]) -> list[Any] | None:
    """The node's results with ``blocked`` tensors in place of data, or None when torch's
    meta kernels cannot tell (data-dependent results, dynamic shapes, non-ATen nodes)."""
    results = _run(node, args, _to_meta)
    if results is None:
        return None
    return [_wrap(r, lambda t: Sym(tuple(int(d) for d in t.shape), blocked=blocked,
                                   dtype=COMPILED_DTYPES.get(t.dtype, DType.FLOAT32))) for r in results]


def constant_results(node: torch._C.Node, args: list[Any], is_state: Callable[[torch.Tensor], bool]
                     ) -> list[Any] | None:
    """The node's results computed by torch on the constants it reads (views alias, in-place
    updates write), or None when some argument is not known at compile time."""
    results = _run(node, args, _to_real)
    if results is None:
        return None
    return [_wrap(r, lambda t: TensorConst(t, state=is_state(t))) for r in results]
