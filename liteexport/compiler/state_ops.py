"""Lowering of the writes into program state (a KV cache) and of the copy a state write reads.

A buffer the model writes in place (torch.export's ``buffers_to_mutate``) is bound as a run-time
value marked with its state's name (``Sym.state``). After ``run_decompositions`` its writes are
functional: ``index_put(cache, [None, None, positions], keys)`` gives "the cache with those rows
replaced", and the graph signature says the result is the buffer's new value. Compiled as that,
every call would copy the whole cache; INDEX_COPY writes the rows in place instead, into the
state's own slot (the runtimes journal what it overwrites, so a failed call is undone). A
buffer's new value computed otherwise is written whole at the end of the method (STATE_WRITE,
compiler/exported.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import torch

from bundle_format.program import AxisAttrs, OpCode
from liteexport.compiler.dtypes import COMPILED_DTYPES, COMPILED_NAMES, dtype_of
from liteexport.compiler.ops import Emitter, Lowering, is_number, shape_of, tensor
from liteexport.compiler.shape_ops import expand_to
from liteexport.compiler.values import NodeSite, OpNode, Sym, TensorConst, TensorValue, Unsupported
from liteexport.errors import ModelError

__all__ = ["LOWERINGS", "StateBinding", "state_binding", "write_states"]


def _index_put(b: Emitter, args: list[Any]) -> Any:
    """aten::index_put(state, indices, values, accumulate): one index tensor, at axis d after d
    Nones (``cache[:, :, positions] = keys``), writes rows of the state in place."""
    state, indices, values, accumulate = args[0], list(args[1]), args[2], bool(args[3]) if len(args) > 3 else False
    if accumulate:
        raise Unsupported("index_put with accumulate=True (index_add) is not compiled")
    given = [i for i, index in enumerate(indices) if index is not None]
    if len(given) != 1 or given[0] != len(indices) - 1:
        raise Unsupported("only index_put with one index tensor after full slices (cache[:, :, positions] = v) "
                          "is compiled")
    return _write_rows(b, state, given[0], indices[-1], values)


def _index_copy(b: Emitter, args: list[Any]) -> Any:
    """aten::index_copy(state, dim, index, source)."""
    return _write_rows(b, args[0], int(args[1]), args[2], args[3])


def _write_rows(b: Emitter, state: Any, axis: int, index: Any, values: Any) -> Any:
    if not (isinstance(state, Sym) and state.state is not None):
        raise Unsupported("writing rows of a tensor is compiled only into a buffer the model keeps across "
                          "calls (program state, such as a KV cache)")
    shape = shape_of(state)
    assert shape is not None  # a state has a static shape
    axis = axis % len(shape) if shape else axis
    index = tensor(index)
    index_shape = shape_of(index)
    if index_shape is None or len(index_shape) != 1:
        raise Unsupported("the positions written must be a 1-D tensor")
    source = b.cast(tensor(values), dtype_of(state))  # torch's index_put takes the state's dtype only
    expected = [*shape[:axis], index_shape[0], *shape[axis + 1:]]
    source_shape = shape_of(source)
    if source_shape is None or len(source_shape) != len(shape) or any(
            want not in (-1, got) and got != -1 for want, got in zip(expected, source_shape, strict=True)):
        raise Unsupported(f"the values written have shape {source_shape}, the rows of state {state.state!r} "
                          f"take {tuple(expected)}")
    written = b.emit(OpCode.INDEX_COPY, [state, index, source], AxisAttrs(axis=axis))
    assert isinstance(written, Sym)
    written.state = state.state
    return written


def _copy(b: Emitter, args: list[Any]) -> Any:
    """aten::copy(self, src): ``src`` converted to self's dtype and broadcast to its shape (the
    functional form of ``buffer.copy_(src)``; self's values are not read)."""
    target, source = tensor(args[0]), args[1]
    shape = shape_of(target)
    if shape is None or -1 in shape:
        raise Unsupported("copy into a tensor of a shape known only at run time is not compiled")
    value = b.cast(TensorConst(torch.tensor(source)) if is_number(source) else tensor(source), dtype_of(target))
    return value if shape_of(value) == shape else expand_to(b, value, list(shape))


LOWERINGS: dict[str, Lowering] = {
    "aten::index_put": _index_put,
    "aten::index_copy": _index_copy,
    "aten::copy": _copy,
}


@dataclass(frozen=True)
class StateBinding:
    """One buffer the method writes: its name, the run-time value a call starts from (the
    state's slot), and its value when the module is loaded."""

    name: str
    value: Sym
    initial: torch.Tensor


def state_binding(name: str, initial: torch.Tensor) -> StateBinding:
    """The state a written buffer becomes; ModelError for a dtype no engine holds."""
    if initial.dtype not in COMPILED_DTYPES or initial.layout != torch.strided:
        raise ModelError(f"buffer {name!r} is written by the model, so it is kept across calls as program state, "
                         f"but it is a {initial.dtype} tensor: program state holds {COMPILED_NAMES} tensors")
    value = Sym(tuple(initial.shape), dtype=dtype_of(TensorConst(initial)), state=name)
    return StateBinding(name, value, initial.contiguous())


def write_states(nodes: list[OpNode], states: Mapping[str, StateBinding], new_values: Mapping[str, Any],
                 site: NodeSite) -> list[TensorValue]:
    """The end of a method that writes ``states``: each state's value after the call
    (``new_values``) is already in place when it is the last in-place write into it; otherwise a
    STATE_WRITE appended to ``nodes`` sets it. Returns the written values, which dead-code removal
    must keep (nothing else reads them)."""
    latest: dict[str, Sym] = {name: binding.value for name, binding in states.items()}
    for node in nodes:
        if node.op == OpCode.INDEX_COPY and node.output.state in latest:
            latest[node.output.state] = node.output
    kept: list[TensorValue] = []
    for name, value in new_values.items():
        if value is latest[name]:
            if value is not states[name].value:
                kept.append(value)
            continue
        if not isinstance(value, (Sym, TensorConst)):
            continue  # a poisoned value: its reports are raised with the others
        node = OpNode(OpCode.STATE_WRITE, [latest[name], value], None, site)
        node.output = Sym(latest[name].shape, producer=node, dtype=latest[name].dtype, state=name)
        nodes.append(node)
        latest[name] = node.output
        kept.append(node.output)
    return kept
