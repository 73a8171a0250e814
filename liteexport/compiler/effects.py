"""Side effects of TorchScript nodes: which nodes write to something, and how the walk
carries out the writes it can compile.

A node that writes (``list.append``, ``self.x = ...``, ``x.relu_()``) changes a value
other nodes read later without its result being used, so "report it only if its result
reaches an output" would drop it silently. ``mutates`` says which nodes write: the walk
reports them whenever they cannot be compiled. Writes to lists and dicts are compiled by
mutating the walk's own Python containers (``CONTAINER_WRITES``): TorchScript lists and
dicts are reference types, and so are Python's, so every alias sees the write.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import torch

from liteexport.compiler.values import Poison, Unsupported

# Nodes without results whose effect does not matter to a compiled program.
IGNORED = {"aten::warn", "prim::Print"}

# "(a!)" in a schema marks an argument the operator writes to.
_WRITES = re.compile(r"\([a-z]+!")
# A result annotated "Tensor(a)" (no "!") shares memory with an input: a view.
_VIEW_RESULT = re.compile(r"->\s*\(?Tensor\([a-z]+\)")


def _schema(node: torch._C.Node) -> str:
    try:
        return str(node.schema())
    except RuntimeError:  # nodes without a registered schema
        return ""


def mutates(node: torch._C.Node) -> bool:
    """Whether ``node`` (or a node in its blocks) writes to a list, dict, object or tensor."""
    kind = node.kind()
    if kind in IGNORED:
        return False
    if kind == "prim::SetAttr":
        return True
    if node.outputsSize() == 0 and kind not in ("prim::RaiseException", "prim::If", "prim::Loop"):
        return True
    if kind.startswith("aten::") and _WRITES.search(_schema(node).split("->")[0]):
        return True
    for block in node.blocks():
        inner = block.returnNode().prev()
        while inner.kind() != "prim::Param":
            if mutates(inner):
                return True
            inner = inner.prev()
    return False


def writes_first_argument(node: torch._C.Node) -> bool:
    """Whether the node updates its first argument in place (``relu_``, ``add_``...)."""
    arguments = _schema(node).split("(", 1)[-1]
    first = arguments.split(",", 1)[0]
    return bool(_WRITES.search(first))


def returns_view(node: torch._C.Node) -> bool:
    """Whether the node's tensor result may share memory with its input (``view``,
    ``transpose``, ``select``, ``chunk``...)."""
    return bool(_VIEW_RESULT.search(_schema(node)))


def _index(value: Any) -> Any:
    if isinstance(value, Poison):
        raise Unsupported("the index is not known at compile time")
    return value


def _append(items: list[Any], value: Any) -> list[Any]:
    items.append(value)
    return items


def _extend(items: list[Any], other: list[Any]) -> None:
    items.extend(other)


def _insert(items: list[Any], index: Any, value: Any) -> None:
    items.insert(_index(index), value)


def _pop(items: list[Any] | dict[Any, Any], *key: Any) -> Any:
    return items.pop(*[_index(k) for k in key])


def _set_item(container: list[Any] | dict[Any, Any], key: Any, value: Any) -> Any:
    container[_index(key)] = value
    return container if isinstance(container, list) else None


def _clear(container: list[Any] | dict[Any, Any]) -> None:
    container.clear()


def _reverse(items: list[Any]) -> None:
    items.reverse()


# Writes to a list or dict, applied to the walk's Python container (the first argument).
CONTAINER_WRITES: dict[str, Callable[..., Any]] = {
    "aten::append": _append,
    "aten::extend": _extend,
    "aten::insert": _insert,
    "aten::pop": _pop,
    "aten::_set_item": _set_item,
    "aten::clear": _clear,
    "aten::reverse": _reverse,
}
