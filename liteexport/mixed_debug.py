"""The debug table of a mixed bundle (partial lowering): the compiler's entries for the lowered
modules' nodes, each seen from the TorchScript call that reaches it.

torch's lite interpreter names a failure in a delegate from a stack of handles: the delegate's
(the node's), then the caller's (the bytecode's ``execute`` call, whose callstack holds the outer
modules and frames). The compiler's entries know only the lowered module. The caller's handle
cannot serve as a key here: torch's flatbuffer writer draws the outer bytecode's handles from a
process-wide counter on every save, after this table must be final, and torch's flatbuffer
loader reads no debug info at all. So the outer part is taken from torch's own debug info of the
same module (a zip save with ``_save_mobile_debug_info``, which holds the callstack of every
instruction) and stored in each node's entry (``runtime_py.delegate_trace.in_call_context``).
torch's lite interpreter gets the same text through the lowered module's compile spec, which
liteexport's torch backend reads when the bundle loads (``_attach_traces``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from bundle_format import ptmf
from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE, DebugEntry, DebugTable
from bundle_format.debug_table_codec import decode_debug_table
from bundle_format.program_codec import decode_program
from bundle_format.zip_reader import read_zip_module
from runtime_py.delegate_trace import in_call_context, torch_style_trace

EXECUTE = "execute"  # the method the LoweredModule's bytecode calls on its backend
LOWERED_ATTR = "__loweredModule__"
TRACE_OPTION = "liteexport.trace."  # backend.cpp's kTracePrefix
_LEVEL = re.compile(r"\.([^.()]+)\(([^()]*)\)")
_NOT_AN_ATTRIBUTE = ("SELF", "UNKNOWN_INSTANCE")  # torch's levels of a module's own methods, of functions


def _lowered_name(call: DebugEntry) -> str | None:
    """The dotted name of the lowered submodule whose ``execute`` call ``call`` is
    (``top(C)::<unknown>.B0(B)::forward.A0(A)::forward.__loweredModule__(A)`` -> ``B0.A0``)."""
    names = [name for name, _ in _LEVEL.findall(call.module_hierarchy) if name not in _NOT_AN_ATTRIBUTE]
    if not names or names[-1] != LOWERED_ATTR:
        return None
    return ".".join(names[:-1])


def _execute_calls(module: ptmf.Module, table: DebugTable) -> dict[str, list[DebugEntry]]:
    """Torch's entry of every ``execute`` call in the bytecode, by lowered submodule."""
    calls: dict[str, list[DebugEntry]] = {}
    for value in module.ivalues:
        if not isinstance(value, ptmf.Function) or value.debug_handles is None:
            continue
        for pc, ins in enumerate(value.instructions):
            if ins.op != ptmf.BytecodeOp.INTERFACE_CALL or not 0 <= ins.x < len(value.constants):
                continue
            name = module.ivalues[value.constants[ins.x]]
            entry = table.lookup(value.debug_handles[pc]) if pc < len(value.debug_handles) else None
            if isinstance(name, ptmf.StringValue) and name.value == EXECUTE and entry is not None:
                lowered = _lowered_name(entry)
                if lowered is not None:
                    calls.setdefault(lowered, []).append(entry)
    return calls


def _lowered_module(scripted: Any, name: str) -> Any:
    module = scripted
    for part in name.split("."):
        module = getattr(module, part)
    return getattr(module, LOWERED_ATTR)


def _program_handles(lowered_module: Any) -> dict[str, set[int]]:
    """The debug handles of each method's compiled program in a LoweredModule."""
    processed = getattr(lowered_module, "__processed_module")
    return {method: {ins.debug_handle for ins in decode_program(tensor.numpy().tobytes()).instructions}
            for method, tensor in processed["programs"].items()}


def _attach_traces(lowered_module: Any, handles: dict[str, set[int]], table: DebugTable) -> None:
    """Put the torch-style text of each node in the module's compile spec (an option per handle,
    ``liteexport.trace.<handle>``), where liteexport's torch backend finds it when that node
    fails: torch's flatbuffer loader reads no debug info, so torch's lite interpreter has no
    other way to name the hierarchy. Every backend ignores options it does not know."""
    spec = dict(getattr(lowered_module, "__method_compile_spec"))
    for method, method_handles in handles.items():
        options = dict(spec.get(method) or {})
        for handle in sorted(method_handles):
            entry = table.lookup(handle)
            if entry is not None:
                options[f"{TRACE_OPTION}{handle}"] = "\n".join(torch_style_trace([entry], None))
        spec[method] = options
    lowered_module._c.setattr("__method_compile_spec", spec)  # saved by the module's __getstate__


def mixed_debug_table(lowered: Any, entries: Sequence[DebugEntry], names: Sequence[str]) -> DebugTable:
    """``entries`` (the compiler's, in torch's handles) of the submodules ``names`` lowered in
    ``lowered``, each in the context of its submodule's ``execute`` call; each lowered module's
    compile spec gets the text of its nodes (``_attach_traces``). A submodule called from more than
    one place keeps its entries as they are: which call failed is known only at run time."""
    data = lowered._c._save_to_buffer_for_mobile({}, True, False)  # zip, with torch's debug info
    zip_module = read_zip_module(data)
    raw = zip_module.extra_file(DEBUG_TABLE_EXTRA_FILE)
    calls = _execute_calls(zip_module, decode_debug_table(raw)) if raw is not None else {}
    modules = {name: _lowered_module(lowered, name) for name in names}
    handles = {name: _program_handles(module) for name, module in modules.items()}
    context: dict[int, DebugEntry] = {}
    for name, sites in calls.items():
        if len(sites) == 1 and name in handles:
            context.update(dict.fromkeys(set().union(*handles[name].values()), sites[0]))
    composed = [in_call_context(context[e.handle], e) if e.handle in context else e for e in entries]
    table = DebugTable(tuple(sorted(composed, key=lambda e: e.handle)))
    for name, module in modules.items():
        _attach_traces(module, handles[name], table)
    return table


__all__ = ["TRACE_OPTION", "mixed_debug_table"]
