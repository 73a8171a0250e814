"""The TorchScript front end's compiler entry: a ScriptModule -> compiled programs
(``exported.py`` is the torch.export front end's).

``compile_module`` walks each method's graph (following submodule and function calls),
lowers tensor nodes to the demo instruction set, folds what is known at compile time,
removes dead code, folds batch norms and fuses ReLUs, and returns plain data: one
:class:`~bundle_format.program.Program` per method, the weights they load and a debug
table mapping every instruction's handle to the model's source. Every node it cannot
compile (and that matters for an output) is reported at once in one
:class:`~liteexport.errors.UnsupportedNodesError`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from bundle_format import ptmf
from bundle_format.program import DTYPES_BY_NAME, Program
from liteexport.compiler.assembly import (
    compiled_value,
    constant_output,
    empty_program,
    finish_module,
    optimized,
    with_symbolic_dims,
)
from liteexport.compiler.dtypes import COMPILED_NAMES
from liteexport.compiler.emit import ModuleEmitter
from liteexport.compiler.graph_walk import MethodWalk, module_type_name, node_frame
from liteexport.compiler.reports import ReportLog, unsupported_error
from liteexport.compiler.symbolic import input_symbols
from liteexport.compiler.values import (
    ModuleRef,
    NodeSite,
    Poison,
    Sym,
    TensorConst,
    TensorValue,
    find_blocked,
    find_poison,
)
from liteexport.errors import ModelError
from liteexport.input_spec import DimRange, TensorSpec, as_tensor_spec
from liteexport.lowered import CompiledModule, MethodSignature
from runtime_py.errors import InputError

__all__ = ["compile_module"]


def compile_module(scripted: torch.jit.ScriptModule, methods: Sequence[str] | None = None,
                   input_shapes: Mapping[str, Sequence[Sequence[int] | TensorSpec]] | None = None,
                   progress: Callable[[str], None] | None = None,
                   functions: Any = None, constant_outputs: bool = True,
                   dims: Mapping[str, DimRange] | None = None,
                   specialize: Mapping[str, Mapping[str, Any]] | None = None) -> CompiledModule:
    """Compile ``methods`` of ``scripted`` (default: ``forward`` and every
    ``@torch.jit.export`` method).

    ``input_shapes[method]`` gives each input's static shape (-1 or a dim name: dynamic dim) and
    dtype: a TensorSpec (liteexport.input_spec), or a plain int shape for a float32 input; without
    it input shapes are unknown and inputs float32. ``dims`` bounds the named dims (a named dim
    without bounds is checked only to agree across inputs); the program records both, and every
    engine checks them on each call. ``functions`` is the compilation unit of a module loaded with
    ``torch.jit.load`` (its free functions live there, not in this process's).
    ``constant_outputs``: whether a returned tuple may hold constants (googlenet's (logits, None,
    None)); the wrapper liteexport's packer writes loads them itself, but the one torch's
    to_backend writes expects every element from the backend, so lowering through it passes False.
    ``specialize[method]`` gives non-Tensor arguments a value (int, float, bool or a list of them):
    the method is compiled for it, folded in, and takes its Tensor arguments only.
    Raises
    ModelError for a bad method name or a non-Tensor argument, UnsupportedNodesError listing
    every node that cannot be compiled.
    """
    if not isinstance(scripted, torch.jit.ScriptModule):
        raise ModelError(f"expected a scripted module (torch.jit.script), got {type(scripted).__name__}")
    names = _select_methods(scripted, methods)
    notes: list[str] = []
    if methods is None:
        # Chosen by default, not by the user: a helper with non-Tensor arguments (timm's
        # forward_head(x, pre_logits: bool)) is skipped with a note, not an error.
        for name in [n for n in names if n != "forward"]:
            problem = _non_tensor_argument(scripted, name)
            if problem:
                names.remove(name)
                notes.append(f"method {name!r} not compiled: {problem} (only Tensor arguments are compiled; "
                             f"name it with --method to see the error)")
    for name in input_shapes or {}:
        if name not in names:
            raise ModelError(f"input_shapes names {name!r}, which is not a compiled method "
                             f"(compiling: {', '.join(names)})")
    root = ModuleRef(scripted._c, (("top", module_type_name(scripted._c)),))
    # Module tensors some method writes in place are program state, shared by every method: a
    # walk that meets such a write records it, and the module is walked again with it as state.
    state: frozenset[str] = frozenset()
    while True:
        log = ReportLog()
        emitter = ModuleEmitter()
        used_reports: set[int] = set()
        signatures: list[MethodSignature] = []
        programs: list[Program] = []
        written: set[str] = set()
        for name in names:
            shapes = (input_shapes or {}).get(name)
            signature, program, poisoned, writes = _compile_method(
                scripted, root, name, shapes, log, emitter, progress, () if functions is None else (functions,),
                constant_outputs, (specialize or {}).get(name, {}), dims or {}, state)
            if shapes is not None:
                program = with_symbolic_dims(program, [as_tensor_spec(s) for s in shapes], dims or {})
            used_reports |= poisoned
            signatures.append(signature)
            programs.append(program)
            written |= writes
        if written <= state:
            break
        state |= written
    reports = log.live(used_reports)
    if reports:
        raise unsupported_error(reports)
    return finish_module(str(scripted._c._type().qualified_name()), signatures, programs, emitter, notes)


def _non_tensor_argument(scripted: torch.jit.ScriptModule, name: str) -> str:
    """What keeps method ``name`` from being compiled for its arguments, or ""."""
    for arg in list(scripted._c._get_method(name).schema.arguments)[1:]:
        if arg.type.kind() != "TensorType":
            return f"argument {arg.name!r} is {arg.type.annotation_str}"
    return ""


def _select_methods(scripted: torch.jit.ScriptModule, methods: Sequence[str] | None) -> list[str]:
    available = [m for m in scripted._c._method_names() if not m.startswith("__")]
    if methods is None:
        chosen = [m for m in ("forward",) if m in available] + _exported(scripted, available)
        if not chosen:
            raise ModelError("the module has no forward or @torch.jit.export method to compile")
        return chosen
    for name in methods:
        if name not in available:
            raise ModelError(f"the module has no compiled method {name!r}; "
                             f"available: {', '.join(available) or '(none)'}")
    return list(dict.fromkeys(methods))


def _exported(scripted: torch.jit.ScriptModule, available: list[str]) -> list[str]:
    """Methods marked @torch.jit.export, besides forward, from the scripted Python class.
    Without the class (a module loaded from a file), every public method counts."""
    concrete = getattr(scripted, "_concrete_type", None)
    py_class = getattr(concrete, "py_class", None) if concrete is not None else None
    exported = []
    for name in available:
        if name == "forward":
            continue
        if py_class is None:
            if not name.startswith("_"):
                exported.append(name)
            continue
        fn = getattr(py_class, name, None)
        if fn is not None and torch._jit_internal.get_torchscript_modifier(fn) \
                == torch._jit_internal.FunctionModifiers.EXPORT:
            exported.append(name)
    return exported


def _compile_method(scripted: torch.jit.ScriptModule, root: ModuleRef, name: str,
                    shapes: Sequence[Sequence[int] | TensorSpec] | None, log: ReportLog, emitter: ModuleEmitter,
                    progress: Callable[[str], None] | None, functions: Sequence[Any], constant_outputs: bool,
                    specialized: Mapping[str, Any], dims: Mapping[str, DimRange],
                    state: frozenset[str]) -> tuple[MethodSignature, Program, frozenset[int], set[str]]:
    method = scripted._c._get_method(name)
    every = list(method.schema.arguments)[1:]  # drop self
    arguments = [arg for arg in every if arg.name not in specialized]  # the specialized ones are folded in
    for arg in arguments:
        if arg.type.kind() != "TensorType":
            raise ModelError(f"method {name!r}: argument {arg.name!r} is {arg.type.annotation_str}, but every "
                             "input of a compiled method must be a Tensor (compile it for one value with "
                             f"--specialize {name}:{arg.name}=VALUE, or lower submodules only with --lower)")
    if shapes is not None and len(shapes) != len(arguments):
        # the shapes given do not fit the method, as a call with the wrong number of inputs: the
        # user's input (exit 6), not a model that cannot be loaded (exit 3)
        names = ", ".join(arg.name for arg in arguments) or "none"
        raise InputError(f"method {name!r} takes {len(arguments)} inputs ({names}) but --input-shape / "
                         f"input_shapes gives {len(shapes)} shapes")
    specs = None if shapes is None else [as_tensor_spec(s) for s in shapes]
    inputs = [Sym(None, input_index=i) if specs is None else
              Sym(specs[i].static_shape, input_index=i, dtype=DTYPES_BY_NAME[specs[i].dtype])
              for i in range(len(arguments))]
    for value, spec in zip(inputs, specs or (), strict=False):
        value.symbols = input_symbols(value, spec.shape, dims)  # aten::size of a named dim is a SymSize

    def walked(count: int) -> None:
        if progress is not None:
            progress(f"compiling {name}: {count} nodes walked")

    walk = MethodWalk(name, log, functions, walked, state)
    tensors = iter(inputs)
    (result,) = walk.run(root, [specialized[arg.name] if arg.name in specialized else next(tensors) for arg in every])
    if progress is not None:  # a stage of its own: the last count of the walk may have been rate-limited
        progress(f"walked {name}: {walk.visited} nodes, {len(walk.nodes)} instructions before optimization")
    returns_tuple = isinstance(result, tuple)
    # a dict of tensors keyed by strings (the segmentation models' {"out": ...}): the wrapper
    # rebuilds it from the program's outputs, in the dict's order
    keys = tuple(result) if isinstance(result, dict) and result and all(isinstance(k, str) for k in result) \
        and constant_outputs else ()
    values = list(result) if returns_tuple else list(result.values()) if keys else [result]
    poisoned = find_poison(values) | find_blocked(values)
    outputs: list[TensorValue] = []
    constants: list[tuple[int, ptmf.IValue]] = []  # rebuilt by the wrapper, not returned by the program
    problems = []
    for index, value in enumerate(values):
        if isinstance(value, (Sym, TensorConst)) and compiled_value(value):
            outputs.append(value)
        elif returns_tuple and constant_outputs and (constant := constant_output(value)) is not None:
            constants.append((index, constant))
        elif not isinstance(value, Poison):
            what = "None" if value is None else (
                f"a {value.tensor.dtype} tensor" if isinstance(value, TensorConst) else f"a {type(value).__name__}")
            where = f"output {index}" if returns_tuple else f"entry {keys[index]!r}" if keys else "the result"
            problems.append(f"{where} is {what}")
    if not outputs and not poisoned:
        problems.append("no output is a Tensor")
    if problems:
        poisoned |= _bad_output(log, name, method.graph, root, ", ".join(problems), constant_outputs)
    new_values = {name: walk.current(binding.value) for name, binding in walk.states.items()}
    nodes, outputs, poisoned = optimized(walk.nodes, outputs, walk.states, new_values,
                                         NodeSite(name, "prim::Return", root.hierarchy, ()), poisoned)
    signature = MethodSignature(name, tuple(a.name for a in arguments), returns_tuple, len(outputs), tuple(constants),
                                keys)
    if poisoned:
        return signature, empty_program(name, inputs), poisoned, walk.written_attributes
    return (signature, emitter.program(name, inputs, nodes, outputs, list(walk.states.values())), frozenset(),
            walk.written_attributes)


def _bad_output(log: ReportLog, method: str, graph: Any, root: ModuleRef, problem: str,
                constant_outputs: bool) -> frozenset[int]:
    """Report a method whose result is not a Tensor or a flat tuple of compiled-dtype Tensors, at
    the node producing the returned value."""
    producer = next(iter(graph.outputs())).node()
    frame = node_frame(producer, method)
    site = NodeSite(method, producer.kind(), root.hierarchy, () if frame is None else (frame,))
    allowed = ("and of constants (None, bool, int, float)" if constant_outputs else
               "(constants such as None only in bundles `liteexport export` writes: torch's to_backend "
               "wrapper expects every element from the backend)")
    reason = (f"{problem}: a method must return a Tensor ({COMPILED_NAMES}), a flat tuple (or NamedTuple) of them "
              f"{allowed}, or a dict of them keyed by strings; return only the tensors, e.g. from a wrapper module")
    return frozenset({log.add(site, reason)})
