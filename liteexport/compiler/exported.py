"""The torch.export front end's compiler entry: an ``ExportedProgram`` -> a CompiledModule.

The program is decomposed to the Core ATen opset, except for the ops we have a lowering of
our own for (linear, conv2d, layer_norm, gelu, scaled_dot_product_attention...: one fused
instruction each rather than what they decompose to). Its placeholders are bound from the graph
signature (parameters, buffers and lifted constants as compile-time tensors; user inputs as
run-time tensors of the shapes and named dims torch recorded), the graph is walked
(``fx_walk``), and the result goes through the same optimization, emission and assembly as a
TorchScript method's, so the bundle is the one the TorchScript front end would write.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from torch.utils import _pytree as pytree

from bundle_format import ptmf
from bundle_format.program import DTYPE_NAMES, DTYPES_BY_NAME
from liteexport.compiler.assembly import (
    compiled_value,
    constant_output,
    empty_program,
    finish_module,
    optimized,
    with_symbolic_dims,
)
from liteexport.compiler.dtypes import COMPILED_DTYPES, COMPILED_NAMES
from liteexport.compiler.emit import ModuleEmitter
from liteexport.compiler.fx_forms import FORMS, IDENTITY, kind_of
from liteexport.compiler.fx_walk import CHECKS, NO_MODULE, FxWalk
from liteexport.compiler.lowerings import LOWERINGS
from liteexport.compiler.reports import EXPORT_WHAT_TO_TRY, ReportLog, unsupported_error
from liteexport.compiler.state_ops import StateBinding, state_binding
from liteexport.compiler.symbolic import input_symbols
from liteexport.compiler.values import Poison, Sym, TensorConst, TensorValue, find_blocked, find_poison
from liteexport.errors import ModelError
from liteexport.input_spec import DimRange, TensorSpec
from liteexport.lowered import CompiledModule, MethodSignature

__all__ = ["compile_exported", "core_aten", "decompose_unlowered", "input_specs", "unlowered"]

_WEIGHTS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


def core_aten(program: ExportedProgram) -> ExportedProgram:
    """``program`` decomposed to Core ATen, keeping every op the lowering table has an entry for;
    then the ops left without a lowering that torch decomposes into ops with one (``decompose_unlowered``)."""
    table = torch.export.default_decompositions()
    for op in list(table.keys()):
        if isinstance(op, torch._ops.OpOverload) and kind_of(op) in LOWERINGS:
            del table[op]
    with torch_quietly():
        return decompose_unlowered(program.run_decompositions(table))


def decompose_unlowered(program: ExportedProgram) -> ExportedProgram:
    """``program`` with each op that has no lowering but a decomposition in torch's table (a Core
    ATen op such as ``repeat`` or ``elu``) decomposed, one op at a time, where everything its
    decomposition gives has a lowering; otherwise the op is kept, so the report names the op the
    user wrote, not the primitives torch would reduce it to."""
    from torch._decomp import decomposition_table

    tried: set[Any] = set()
    while True:
        left = unlowered(program)
        candidates = sorted((op for op in left - tried if op in decomposition_table), key=str)
        if not candidates:
            return program
        for op in candidates:
            tried.add(op)
            trial = program.run_decompositions({op: decomposition_table[op]})
            if unlowered(trial) <= left - {op}:
                program, left = trial, unlowered(trial)


def unlowered(program: ExportedProgram) -> set[Any]:
    """The ATen ops of ``program``'s nodes that no lowering, Core ATen form or pass-through takes."""
    return {node.target for node in program.graph.nodes
            if node.op == "call_function" and isinstance(node.target, torch._ops.OpOverload)
            and node.target not in CHECKS and not has_lowering(kind_of(node.target))}


def has_lowering(kind: str) -> bool:
    """Whether an exported node of ``kind`` reaches a lowering: its own, through a Core ATen form
    (FORMS), or as a pass-through (IDENTITY)."""
    return kind in LOWERINGS or kind in FORMS or kind in IDENTITY


@contextlib.contextmanager
def torch_quietly() -> Iterator[None]:
    """torch.export's logging and warnings off while it runs: what it has to say that matters
    reaches the user as an error, in one paragraph."""
    logging.disable(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            warnings.simplefilter("ignore", UserWarning)
            yield
    finally:
        logging.disable(logging.NOTSET)


def input_specs(program: ExportedProgram, names: Mapping[str, str] | None = None) -> tuple[TensorSpec, ...]:
    """The user inputs' shapes and dtypes as torch recorded them: a dim torch keeps symbolic
    is named by ``names`` (torch's symbol, e.g. ``s0`` -> the user's ``S``), else by the symbol.
    ModelError for an input the compiled programs cannot take (dtype, layout, a dim that is an
    expression of others)."""
    specs = []
    for spec, node in zip(program.graph_signature.input_specs, _placeholders(program), strict=True):
        if spec.kind != InputKind.USER_INPUT:
            continue
        value = node.meta.get("val")
        if not isinstance(value, torch.Tensor):
            raise ModelError(f"input {spec.arg.name!r} is a {type(value).__name__}, but every input of a compiled "
                             "method must be a Tensor")
        if value.layout != torch.strided:
            raise ModelError(f"input {spec.arg.name!r} is a {value.layout} tensor; compiled methods take dense "
                             "(strided) tensors: pass x.to_dense()")
        if value.dtype not in COMPILED_DTYPES:
            raise ModelError(f"input {spec.arg.name!r} is a {value.dtype} tensor; compiled methods take "
                             f"{COMPILED_NAMES} inputs: convert it before the call (x.float())")
        shape: list[int | str] = []
        for axis, size in enumerate(value.shape):
            if isinstance(size, int):
                shape.append(size)
                continue
            symbol = str(size.node.expr)
            if not symbol.isidentifier():
                raise ModelError(f"input {spec.arg.name!r}: dim {axis} is {symbol}, an expression of other dims; "
                                 "give each input dim its own name or a static size")
            shape.append((names or {}).get(symbol, symbol))
        specs.append(TensorSpec(tuple(shape), DTYPE_NAMES[COMPILED_DTYPES[value.dtype]]))
    return tuple(specs)


def symbol_bounds(program: ExportedProgram, names: Mapping[str, str] | None = None) -> dict[str, DimRange]:
    """The bounds torch recorded for each symbolic dim (``range_constraints``), by name; a dim
    without an upper bound is left out (its programs check only that its inputs agree)."""
    bounds: dict[str, DimRange] = {}
    for symbol, ranges in program.range_constraints.items():
        upper = ranges.upper
        # torch's int_oo calls itself finite (is_finite is True): an integer bound is one
        if not getattr(upper, "is_finite", True) or not getattr(upper, "is_Integer", True) \
                or not str(symbol).isidentifier():
            continue
        name = (names or {}).get(str(symbol), str(symbol))
        bounds[name] = DimRange(name, int(ranges.lower), int(upper))
    return bounds


def compile_exported(program: ExportedProgram, dims: Mapping[str, DimRange] | None = None,
                     names: Mapping[str, str] | None = None, method: str = "forward",
                     progress: Callable[[str], None] | None = None) -> CompiledModule:
    """Compile ``program`` (torch.export's) as one method, ``method``. ``names`` renames torch's
    dim symbols to the user's (``{"s0": "S"}``); ``dims`` bounds the named dims (default: the
    bounds torch recorded). Raises ModelError for inputs or outputs a bundle cannot carry,
    UnsupportedNodesError listing every node that cannot be compiled."""
    if progress is not None:
        progress("decomposing to Core ATen")
    program = core_aten(program)
    specs = input_specs(program, names)
    bounds = {**symbol_bounds(program, names), **(dims or {})}
    log = ReportLog()
    emitter = ModuleEmitter()
    root = _root_type(program)
    walk = FxWalk(method, log, root.rsplit(".", 1)[-1])
    bound: dict[Any, Any] = {}
    inputs: list[Sym] = []
    arg_names: list[str] = []
    # buffers a call writes (torch.export's buffers_to_mutate) are program state: run-time values
    states: dict[str, StateBinding] = {}
    mutated = set(program.graph_signature.buffers_to_mutate.values())
    for spec, node in zip(program.graph_signature.input_specs, _placeholders(program), strict=True):
        if spec.kind == InputKind.BUFFER and spec.target in mutated:
            states[spec.target] = state_binding(spec.target, _weight(program, spec.target).detach())
            bound[node] = states[spec.target].value
        elif spec.kind in _WEIGHTS:
            bound[node] = TensorConst(_weight(program, spec.target).detach(), state=True)
        elif spec.kind == InputKind.USER_INPUT:
            tensor_spec = specs[len(inputs)]
            value = Sym(tensor_spec.static_shape, input_index=len(inputs), dtype=DTYPES_BY_NAME[tensor_spec.dtype])
            value.symbols = input_symbols(value, tensor_spec.shape, bounds)
            bound[node] = value
            inputs.append(value)
            arg_names.append(spec.arg.name)
        else:  # a custom object or an effect token
            bound[node] = log.poison(walk.site(node, "placeholder"), f"a {spec.kind.name} input is not compiled")

    def walked(count: int) -> None:
        if progress is not None:
            progress(f"compiling {method}: {count} nodes walked")

    results = walk.run(program.graph, bound, walked)
    output_node = next(n for n in reversed(program.graph.nodes) if n.op == "output")
    user: list[Any] = []
    problems: list[str] = []
    new_values: dict[str, Any] = {}  # state -> the value the call leaves in it
    for spec, value in zip(program.graph_signature.output_specs, results, strict=True):
        if spec.kind == OutputKind.USER_OUTPUT:
            user.append(value)
        elif spec.kind == OutputKind.BUFFER_MUTATION and spec.target in states:
            new_values[spec.target] = value
        else:  # an input written in place: the caller's tensor, which no engine hands back
            problems.append(f"{spec.kind.name.lower().replace('_', ' ')} of {spec.target!r} (state kept across "
                            "calls) is not compiled")
    structure = pytree.tree_unflatten(user, program.call_spec.out_spec)
    returns_tuple, keys, values = _structure(structure, problems)
    poisoned = find_poison(values) | find_blocked(values)
    outputs: list[TensorValue] = []
    constants: list[tuple[int, ptmf.IValue]] = []
    for index, value in enumerate(values):
        if isinstance(value, (Sym, TensorConst)) and compiled_value(value):
            outputs.append(value)
        elif returns_tuple and (constant := constant_output(value)) is not None:
            constants.append((index, constant))
        elif not isinstance(value, Poison):
            what = "None" if value is None else (
                f"a {value.tensor.dtype} tensor" if isinstance(value, TensorConst) else f"a {type(value).__name__}")
            where = f"output {index}" if returns_tuple else f"entry {keys[index]!r}" if keys else "the result"
            problems.append(f"{where} is {what}")
    if not outputs and not poisoned and not problems:
        problems.append("no output is a Tensor")
    if problems:
        poisoned |= {log.add(walk.site(output_node, "output"), "; ".join(problems) + (
            f": a method must return a Tensor ({COMPILED_NAMES}), a flat tuple or list of them and of constants "
            "(None, bool, int, float), or a dict of them keyed by strings"), forced=True)}
    nodes, outputs, poisoned = optimized(walk.nodes, outputs, states, new_values, walk.site(output_node, "output"),
                                         poisoned)
    reports = log.live(poisoned)
    if reports:
        raise unsupported_error(reports, EXPORT_WHAT_TO_TRY)
    if progress is not None:
        progress(f"walked {method}: {walk.visited} nodes, {len(walk.nodes)} instructions before optimization")
    signature = MethodSignature(method, tuple(arg_names), returns_tuple, len(outputs), tuple(constants), keys)
    compiled = emitter.program(method, inputs, nodes, outputs, list(states.values())) if nodes or outputs \
        else empty_program(method, inputs)
    compiled = with_symbolic_dims(compiled, specs, bounds)
    return finish_module(f"__torch__.{root}", [signature], [compiled], emitter, [])


def _structure(structure: Any, problems: list[str]) -> tuple[bool, tuple[str, ...], list[Any]]:
    """(returns_tuple, dict keys, flat values) of the user's output structure; a structure the
    bundle's wrapper cannot rebuild (nested containers, dataclasses) is added to ``problems``."""
    if isinstance(structure, dict):
        if all(isinstance(k, str) for k in structure) and not any(isinstance(v, (list, tuple, dict))
                                                                   for v in structure.values()):
            return False, tuple(structure), list(structure.values())
        problems.append("the result is a dict holding containers or keyed by non-strings")
        return False, (), []
    if isinstance(structure, (tuple, list)):
        if any(isinstance(v, (list, tuple, dict)) for v in structure):
            problems.append("the result is a nested tuple or list")
            return True, (), []
        return True, (), list(structure)
    return False, (), [structure]


def _placeholders(program: ExportedProgram) -> list[Any]:
    return [n for n in program.graph.nodes if n.op == "placeholder"]


def _weight(program: ExportedProgram, target: str | None) -> torch.Tensor:
    """A parameter, buffer or lifted constant by its signature target."""
    assert target is not None
    value = program.state_dict[target] if target in program.state_dict else program.constants[target]
    if not isinstance(value, torch.Tensor):
        raise ModelError(f"{target} is a {type(value).__name__}, not a tensor")
    return value


def _root_type(program: ExportedProgram) -> str:
    """The exported module's class as ``module.Class`` (from any node's nn_module_stack)."""
    for node in program.graph.nodes:
        stack = node.meta.get("nn_module_stack")
        if stack:
            path, module_type = next(iter(stack.values()))
            if str(path).startswith(NO_MODULE):
                continue
            return module_type if isinstance(module_type, str) else \
                f"{module_type.__module__}.{module_type.__qualname__}"
    return "ExportedProgram"
