"""What both front ends do once a method's graph is walked: its outputs checked against what a
bundle can return, its named dims recorded, and the compiled methods assembled into one
:class:`~liteexport.lowered.CompiledModule` (working memory planned, notes written).

Shared by the TorchScript walk (``compiler/scripted.py``) and the torch.export walk
(``compiler/exported.py``), so a program is the same whichever front end produced it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bundle_format import ptmf
from bundle_format.program import Program, SymbolicDim, ValueInfo
from liteexport.compiler.dtypes import COMPILED_DTYPES
from liteexport.compiler.emit import ModuleEmitter
from liteexport.compiler.passes import optimize
from liteexport.compiler.state_ops import StateBinding, write_states
from liteexport.compiler.values import NodeSite, OpNode, Sym, TensorConst, TensorValue, find_blocked, find_poison
from liteexport.compiler.working_memory import plan_working_memory
from liteexport.input_spec import DimRange, TensorSpec
from liteexport.lowered import CompiledModule, MethodSignature

__all__ = ["compiled_value", "constant_output", "empty_program", "finish_module", "optimized", "with_symbolic_dims"]


def optimized(nodes: list[OpNode], outputs: list[TensorValue], states: Mapping[str, StateBinding],
              new_values: Mapping[str, Any], site: NodeSite,
              poisoned: frozenset[int]) -> tuple[list[OpNode], list[TensorValue], frozenset[int]]:
    """A walked method's instructions with its state writes appended (``new_values``: each state's
    value after the call; compiler/state_ops.py) and the passes run: (instructions, outputs as the
    passes left them, ``poisoned`` with the reports of what they read). No instructions when poisoned."""
    values = list(new_values.values())
    poisoned = poisoned | find_poison(values) | find_blocked(values)
    written = write_states(nodes, states, new_values, site)
    # the passes replace values in the list they are given (a fused relu's output): the outputs are
    # read back from it, and the written states, which nothing else reads, are kept alive by it
    roots = outputs + written
    kept = optimize(nodes, roots) if not poisoned else []
    for node in kept:  # blocked values propagate to what reads them; this is the safety net
        poisoned |= find_blocked(node.inputs)
    return kept, roots[:len(outputs)], poisoned


def with_symbolic_dims(program: Program, specs: Sequence[TensorSpec], dims: Mapping[str, DimRange]) -> Program:
    """``program`` with its inputs' named dims recorded as SymbolicDims (numbered in order of first use)."""
    names = list(dict.fromkeys(name for spec in specs for name in spec.dim_names))
    if not names:
        return program
    number = {name: i for i, name in enumerate(names)}
    inputs = tuple(dataclasses.replace(info, dim_symbols=tuple(number[s] if isinstance(s, str) else -1
                                                               for s in spec.shape))
                   for info, spec in zip(program.inputs, specs, strict=True))
    symbolic = tuple(SymbolicDim(n, dims[n].lo, dims[n].hi) if n in dims else SymbolicDim(n, 0) for n in names)
    return dataclasses.replace(program, inputs=inputs, symbolic_dims=symbolic)


# Tuple elements known at compile time that the wrapper loads as constants (the None auxiliary
# outputs of googlenet and inception_v3 in eval mode), by exact type: a bool is an int too.
_CONSTANT_OUTPUTS: dict[type, Callable[[Any], ptmf.IValue]] = {
    type(None): lambda _: ptmf.NoneValue(), bool: ptmf.BoolValue, int: ptmf.IntValue, float: ptmf.DoubleValue}


def constant_output(value: Any) -> ptmf.IValue | None:
    """A returned value known at compile time as the constant the wrapper loads, or None."""
    make = _CONSTANT_OUTPUTS.get(type(value))
    return make(value) if make is not None else None


def compiled_value(value: Sym | TensorConst) -> bool:
    """Whether a returned tensor can be a program output (a constant of a compiled dtype)."""
    return isinstance(value, Sym) or value.tensor.dtype in COMPILED_DTYPES


def empty_program(name: str, inputs: list[Sym]) -> Program:
    """Placeholder for a method with reports: the caller raises before returning it."""
    return Program(name, len(inputs), tuple(ValueInfo(v.shape, v.dtype) for v in inputs), (), (), (), ())


def finish_module(qualname: str, signatures: Sequence[MethodSignature], programs: Sequence[Program],
                  emitter: ModuleEmitter, notes: Sequence[str]) -> CompiledModule:
    """The compiled methods as one CompiledModule, with each program's working memory planned
    (and a note for the programs that have named dims)."""
    weight_shapes = [tuple(w.shape) for w in emitter.weights]
    planned = [dataclasses.replace(p, working_memory=plan_working_memory(p, weight_shapes)) for p in programs]
    notes = [*notes] + [
        f"method {p.method!r} holds up to {p.working_memory:,} bytes of results at the upper bounds of "
        f"{', '.join(str(d) for d in p.symbolic_dims)} (planned at export; a smaller memory budget is refused "
        "at every call)" for p in planned if p.working_memory]
    return CompiledModule(qualname=qualname, methods=tuple(signatures), programs=tuple(planned),
                          weights=tuple(emitter.weights), debug_table=emitter.debug_table(), notes=tuple(notes))
