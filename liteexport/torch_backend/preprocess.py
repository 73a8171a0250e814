"""liteexport's compiler as the preprocess of torch's to_backend API.

``torch._C._jit_to_backend(BACKEND_NAME, scripted, spec)`` (and
``_jit_to_backend_selective``) call the backend's registered preprocess with the module to lower.
The C++ extension (``backend.cpp``) registers one that calls :func:`preprocess` here with the
module, the compile spec and, per method, the debug handle torch generated for every node of the
method's inlined graph. The compiled programs carry those handles (not the compiler's own), so
torch's lite interpreter maps a failing instruction to torch's own module hierarchy and traceback,
exactly as for torch's demo backend; :data:`debug_tables` keeps the matching debug table for
packers that store ours too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from bundle_format.debug_table import DebugTable
from bundle_format.program import Program
from bundle_format.program_codec import encode_program
from liteexport.backend import BACKEND_NAME, DEMO_BACKEND
from liteexport.compiler.source import parse_torch_range
from liteexport.errors import ModelError, UnsupportedNodesError
from liteexport.lowered import CompiledModule

# (debug handle, node kind, module hierarchy, torch's source range text) of one inlined node
NodeRecord = tuple[int, str, str, str]

# The debug table of every module lowered in this process through to_backend, in torch's handles
# (unique in a process), in the order lowered: liteexport.partial packs those of one export.
debug_tables: list[DebugTable] = []

INPUT_SHAPES_KEY = "input_shapes"

# The compiler's own error of every module that failed to lower in this process, in the order met:
# torch turns the RuntimeError raised here into its own, so liteexport.partial reports this one (the
# usual exit code and report) instead.
failures: list[tuple[str, ModelError | UnsupportedNodesError]] = []  # (module's type name, error)

# The compilation unit of the archive being lowered (torch.jit.load keeps its free functions
# there, where prim::CallFunction finds them), set by liteexport.partial around the lowering;
# None: this process's own.
functions: Any = None


def preprocess(module: torch._C.ScriptModule, method_compile_spec: Mapping[str, Any],
               nodes_by_method: Sequence[tuple[str, Sequence[NodeRecord]]]
               ) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
    """Compile the methods named in ``method_compile_spec``; returns the processed module's
    programs (method -> uint8 flatbuffer tensor) and weights (float32, int64, int32 or bool tensors).

    A method's spec may give ``"input_shapes"`` as a list of shapes (lists of ints, -1 for a
    dynamic dim); a string there (as torch's demo tests pass) is ignored, as torch's demo does.
    Raises RuntimeError with the compiler's message (torch's demo wording first)."""
    scripted = torch.jit._recursive.wrap_cpp_module(module)
    shapes = {name: [list(shape) for shape in spec[INPUT_SHAPES_KEY]]
              for name, spec in method_compile_spec.items()
              if isinstance(spec, Mapping) and isinstance(spec.get(INPUT_SHAPES_KEY), (list, tuple))}
    try:
        compiled = DEMO_BACKEND.preprocess(scripted, list(method_compile_spec), shapes, functions=functions,
                                           constant_outputs=False)  # torch's wrapper wants them from execute
    except UnsupportedNodesError as exc:
        failures.append((str(module._type().qualified_name()), exc))
        raise RuntimeError(torch_wording(exc)) from None
    except ModelError as exc:
        failures.append((str(module._type().qualified_name()), exc))
        raise RuntimeError(f"{BACKEND_NAME} (liteexport): {exc}") from None
    compiled = with_torch_handles(compiled, nodes_by_method)
    debug_tables.append(compiled.debug_table)
    programs = {p.method: torch.frombuffer(bytearray(encode_program(p)), dtype=torch.uint8)
                for p in compiled.programs}
    weights = [torch.from_numpy(np.array(w, copy=True)) for w in compiled.weights]  # dtypes kept (int64 indices)
    return programs, weights


def torch_wording(error: UnsupportedNodesError) -> str:
    """The message torch's demo preprocess raises (``The node of aten::mul is not supported in
    this compiler. Source code:   File ...``) for the first node, then every other one and the
    summary of kinds (liteexport's extra lines)."""
    text, reports = str(error), "\n\n".join(error.reports)
    summary = text[: len(text) - len(reports)].strip()
    return "\n\n".join([*error.reports, summary] if summary else error.reports)


def with_torch_handles(compiled: CompiledModule,
                       nodes_by_method: Sequence[tuple[str, Sequence[NodeRecord]]]) -> CompiledModule:
    """``compiled`` with every debug handle replaced by the one torch generated for the same node
    (same method, node kind, module hierarchy and source range; nodes met again, a module called
    twice, pair up in program order). A handle torch has no node for becomes -1."""
    available: dict[tuple[str, str, str, str], list[int]] = {}
    for method, records in nodes_by_method:
        for handle, kind, hierarchy, source_range in records:
            span = parse_torch_range(source_range)  # as the compiler's frames (a traced node: the text)
            snippet = span.format() if span is not None else source_range.rstrip("\n")
            available.setdefault((method, kind, hierarchy, snippet), []).append(handle)
    mapping: dict[int, int] = {}
    for entry in compiled.debug_table.entries:
        snippet = entry.frames[-1].snippet if entry.frames else ""
        handles = available.get((entry.method, entry.node_kind, entry.module_hierarchy, snippet))
        if handles:
            mapping[entry.handle] = handles.pop(0)
    entries = sorted((dataclasses.replace(e, handle=mapping[e.handle])
                      for e in compiled.debug_table.entries if e.handle in mapping),
                     key=lambda e: e.handle)
    return dataclasses.replace(
        compiled, programs=tuple(_renumbered(p, mapping) for p in compiled.programs),
        debug_table=DebugTable(tuple(entries), compiled.debug_table.format_version))


def _renumbered(program: Program, mapping: Mapping[int, int]) -> Program:
    return dataclasses.replace(
        program,
        instructions=tuple(dataclasses.replace(i, debug_handle=mapping.get(i.debug_handle, -1))
                           for i in program.instructions),
        output_debug_handles=tuple(mapping.get(h, -1) for h in program.output_debug_handles))


__all__ = ["preprocess", "torch_wording", "with_torch_handles"]
