"""Partial lowering: chosen submodules compiled by the demo compiler, the rest TorchScript bytecode.

The chosen submodules are lowered with torch's own selective lowering
(``torch._C._jit_to_backend_selective``, liteexport's compiler as the preprocess), so the mixed
module is exactly what torch would build, and torch's flatbuffer writer packs it (bytecode
version 9, as our whole-module bundles): each lowered submodule becomes a LoweredWrapper holding
its compiled programs, everything else stays TorchScript bytecode. The bundle also carries the
debug table of the lowered parts (in torch's debug handles, which the programs use) and the test
vectors, as our own bundles do. ``auto`` lowers the largest submodules whose ``forward`` compiles
fully: the module itself if it does, else each child that does, else that child's children.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE, DebugTable
from bundle_format.debug_table_codec import encode_debug_table
from liteexport.errors import ModelError, UnsupportedNodesError
from liteexport.quantized_boundaries import BOUNDARY_NOTE, NOT_CALLED

AUTO = "auto"
BEYOND_FORWARD = "a lowered module has only forward, but the code around it reads"
LOWERED_TYPE = "torch.jit.LoweredModule."  # in the qualified name of every type to_backend made


@dataclass(frozen=True)
class Selection:
    """The submodules to lower, of the module they belong to (scripted again, if it had to be)."""

    module: Any  # the ScriptModule the names refer to
    chosen: tuple[str, ...]  # dotted names of the submodules to compile
    unlowered: tuple[tuple[str, str], ...]  # (dotted name, why it stays TorchScript), auto only


@dataclass(frozen=True)
class PartialLowering:
    """The chosen submodules lowered, the rest TorchScript: what the pipeline packs."""

    module: Any  # the ScriptModule holding the lowered submodules
    debug_table: DebugTable  # the lowered nodes, seen from the outer call (torch's hierarchy and frames)
    lowered: tuple[str, ...]  # dotted names of the submodules compiled
    unlowered: tuple[tuple[str, str], ...]  # (dotted name, why it stayed TorchScript), auto only


def engine_report(path: str | Path) -> tuple[str, ...]:
    """Which engines can run the mixed bundle at ``path``, from the TorchScript operators it
    calls: torch's lite interpreter has every one (torch wrote them); runtime_py those in its
    operator table; the native core runs only fully lowered bundles, no TorchScript operator."""
    from torch.jit.mobile import _export_operator_list, _load_for_lite_interpreter

    import runtime_py.operators  # noqa: F401  (registers the operator table)
    from runtime_py.operators.registry import OPERATORS

    used = sorted(_export_operator_list(_load_for_lite_interpreter(str(path))))
    missing = [name for name in used if name not in OPERATORS]
    return ("torch lite interpreter (with liteexport's torch extension): yes",
            "runtime_py: " + (f"only calls that reach none of {', '.join(missing)} (operators it lacks)"
                              if missing else "yes"),
            f"native core: no (it runs fully lowered bundles only; the TorchScript kept calls {len(used)} operators)")


def _submodule(scripted: Any, name: str) -> Any:
    module = scripted
    for part in name.split("."):
        children = dict(module.named_children())
        if part not in children:
            have = ", ".join(children) or "none"
            raise ModelError(f"--lower {name}: the module has no submodule {name!r} (children of "
                             f"{'the module' if module is scripted else 'it'}: {have})")
        module = children[part]
    return module


def _why_not(module: Any, functions: Any = None, shapes: Sequence[Any] | None = None,
             whole: bool = False) -> str | None:
    """None when ``module``'s forward compiles fully (as the to_backend preprocess compiles it; with
    ``whole``, as a whole lowering does, for inputs of ``shapes``), else the reason (the blockers by kind)."""
    from liteexport.backend import DEMO_BACKEND

    if "forward" not in module._c._method_names():
        return "no forward method"
    try:
        DEMO_BACKEND.preprocess(module, ["forward"], {"forward": shapes} if shapes else None, functions=functions,
                                constant_outputs=whole)
    except UnsupportedNodesError as exc:
        return _blockers(exc)
    except ModelError as exc:
        return str(exc)
    return None


def _blockers(error: UnsupportedNodesError) -> str:
    """``unsupported: aten::sort (1 site)`` for ops the compiler has no lowering for; a node it
    lowers in other cases with the reason it did not here (``not compiled here: aten::cumsum (1
    site: the input's rank is not known)``: a submodule is compiled without input shapes)."""
    plain = [f"{kind} ({n} site{'s' * (n != 1)})" for kind, n in error.counts.items() if not error.reasons.get(kind)]
    # (the compiler's advice to give --input-shape is the whole model's: a submodule gets no shapes)
    reasoned = [f"{kind} ({n} site{'s' * (n != 1)}: {error.reasons[kind].split('; give ')[0]})"
                for kind, n in error.counts.items() if error.reasons.get(kind)]
    return "; ".join([*(["unsupported: " + ", ".join(plain)] if plain else []),
                      *(["not compiled here: " + ", ".join(reasoned)] if reasoned else [])])


NEVER_READ = "no code of the modules around it reads it (nothing to lower)"


def _read_beyond_forward(scripted: Any, name: str) -> str | None:
    """What an ancestor's code uses of submodule ``name`` other than calling its forward
    (``self.proj.weight``, as edgenext does), or None: the lowered module torch puts in its place
    has only the lowered methods, and torch fails at save time on any other use. `NEVER_READ` when
    no ancestor reads it at all (a quantized FloatFunctional's unused activation_post_process)."""
    parent_name, _, leaf = name.rpartition(".")
    parts = parent_name.split(".") if parent_name else []
    parent_type = (_submodule(scripted, parent_name) if parent_name else scripted)._c._type()
    ancestors = [scripted] + [_submodule(scripted, ".".join(parts[:i + 1])) for i in range(len(parts))]
    read = False
    for module in ancestors:
        for method in module._c._method_names():
            for node in _all_nodes(module._c._get_method(method).graph.nodes()):
                if node.kind() != "prim::GetAttr" or node.s("name") != leaf or node.input().type() != parent_type:
                    continue
                read = True
                for use in node.output().uses():
                    user = use.user
                    if user.kind() == "prim::GetAttr":
                        return f"{leaf}.{user.s('name')}"
                    if user.kind() != "prim::CallMethod" or user.s("name") != "forward" or use.offset != 0:
                        return f"{leaf} itself ({user.kind()})"
    return None if read else NEVER_READ


def _all_nodes(nodes: Any) -> Any:
    for node in nodes:
        yield node
        for block in node.blocks():
            yield from _all_nodes(block.nodes())


def _type_counts(scripted: Any) -> dict[str, list[str]]:
    """Every module of the hierarchy (the root as ""), by TorchScript type."""
    by_type: dict[str, list[str]] = {}
    for name, module in scripted.named_modules():
        by_type.setdefault(module._c._type().qualified_name(), []).append(name)
    return by_type


def selection_problem(scripted: Any, chosen: Sequence[str]) -> str | None:
    """Why torch's selective lowering would refuse ``chosen`` (or lower something else), or None.

    torch edits the type of each chosen module's parent, so that type must belong to no other
    module ("only supported for module hierarchies with unique types"), and it retypes the chosen
    module's type in every graph of the hierarchy, so every module of that type must be chosen too
    (an unlowered one would run the lowered code)."""
    by_type = _type_counts(scripted)
    for name in chosen:
        read = _read_beyond_forward(scripted, name)
        if read is not None and read != NEVER_READ:  # (lowering a module never called is harmless)
            return f"{name}: {BEYOND_FORWARD} {read}"
        parent = name.rpartition(".")[0]
        shared = by_type[(_submodule(scripted, parent) if parent else scripted)._c._type().qualified_name()]
        if len(shared) > 1:
            return (f"{name}: its parent {parent} has the same TorchScript type as {_others(shared, parent)}, "
                    "and torch's selective lowering lowers a submodule only under a parent of its own type")
        own = by_type[_submodule(scripted, name)._c._type().qualified_name()]
        missing = [other for other in own if other not in chosen]
        if missing:
            return (f"{name}: {_others(missing, '')} {'has' if len(missing) == 1 else 'have'} the same TorchScript "
                    f"type and would be lowered with it; lower every module of the type, or none")
    return None


def _others(names: Sequence[str], but: str) -> str:
    others = [n or "the module" for n in names if n != but]
    return ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")


class _Boundaries:
    """The quantized boundaries of ``scripted``'s submodules (liteexport.quantized_boundaries),
    found once, when first asked."""

    def __init__(self, scripted: Any, functions: Any, shapes: Sequence[Any] | None) -> None:
        self._args = (scripted, functions, shapes)
        self._found: dict[str, str] | None = None
        self._known = False

    def why(self, name: str) -> str | None:
        """Why submodule ``name`` cannot be lowered for a quantized tensor at its boundary, or None."""
        from liteexport import quantized_boundaries as qb

        if not self._known:
            self._found, self._known = qb.quantized_boundaries(*self._args), True
        return qb.UNKNOWN if self._found is None else self._found.get(name)


def choose_auto(scripted: Any, unique_types: bool = False, functions: Any = None,
                shapes: Sequence[Any] | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """The largest submodules that compile fully (top-down) and take and return no quantized
    tensor, and every module that did not, with why. The root is never chosen here: a module that
    compiles whole needs no partial lowering. With ``unique_types`` (a loaded archive, whose types
    are fixed), only a selection torch's selective lowering accepts (see ``selection_problem``): no
    module under a parent whose type is shared, and every module of a chosen type or none.
    ``shapes``: forward's input shapes, when given (the quantized boundaries are then known further)."""
    by_type = _type_counts(scripted) if unique_types else {}
    boundaries = _Boundaries(scripted, functions, shapes)
    chosen: list[str] = []
    unlowered: list[tuple[str, str]] = []
    pending = [(name, child) for name, child in scripted.named_children()]
    while pending:
        name, module = pending.pop(0)
        why = _why_not(module, functions)
        if why is None and (read := _read_beyond_forward(scripted, name)) is not None:
            why = read if read == NEVER_READ else f"{BEYOND_FORWARD} {read}"
        if why is None:
            why = boundaries.why(name)
        if why is None:
            chosen.append(name)
            continue
        shared = by_type.get(module._c._type().qualified_name(), [])
        if len(shared) > 1 and any(True for _ in module.named_children()):
            why += (f"; its submodules stay TorchScript too: {_others(shared, name)} "
                    "share its TorchScript type, and torch lowers submodules only of a parent of its own type")
            unlowered.append((name, why))
            continue
        unlowered.append((name, why))
        pending[:0] = [(f"{name}.{child_name}", child) for child_name, child in module.named_children()]
    if unique_types:
        # a type with an instance left out (under a shared parent): lower none of them
        for name in list(chosen):
            missing = [n for n in by_type[_submodule(scripted, name)._c._type().qualified_name()] if n not in chosen]
            if missing and name in chosen:
                chosen.remove(name)
                unlowered.append((name, f"compiles, but {_others(missing, '')} of the same TorchScript type "
                                        "cannot be lowered with it"))
    return chosen, unlowered


def select_submodules(scripted: Any, lower: Sequence[str], *, rescript: Callable[[], Any] | None = None,
                      functions: Any = None, shapes: Sequence[Any] | None = None) -> Selection:
    """The submodules named in ``lower`` (dotted names, or ``["auto"]``: the largest that compile)
    of ``scripted``, as torch's selective lowering accepts them. ``rescript`` scripts the model
    again with a TorchScript type per module (for a model from Python source, as torch's own
    selective-lowering tests do): it is used when the selection needs it, and the selection then
    belongs to that module; without it (an archive), ``auto`` picks only what torch accepts and
    named submodules torch would refuse are reported (exit 4), as is a named submodule that takes
    or returns a quantized tensor. ``functions``: the compilation unit of a loaded archive;
    ``shapes``: forward's input shapes, when given."""
    unlowered: list[tuple[str, str]] = []
    if list(lower) == [AUTO]:
        chosen, unlowered = choose_auto(scripted, functions=functions, shapes=shapes)
        if selection_problem(scripted, chosen) is not None and rescript is None:
            chosen, unlowered = choose_auto(scripted, unique_types=True, functions=functions, shapes=shapes)
        if not chosen:
            reasons = "; ".join(f"{name}: {why}" for name, why in unlowered) or "the module has no submodules"
            whole = ("; the module compiles whole: export it without --lower"
                     if unlowered and _why_not(scripted, functions, shapes, whole=True) is None else "")
            raise ModelError(f"--lower auto: no submodule can be lowered on its own{whole} ({reasons})")
    else:
        chosen = list(dict.fromkeys(lower))
        boundaries = _Boundaries(scripted, functions, shapes)
        for name in chosen:
            _submodule(scripted, name)
            why = boundaries.why(name)
            if why is not None and why != NOT_CALLED:  # (one the user names is lowered even if never called)
                raise UnsupportedNodesError([f"--lower {name}: {why}; {BOUNDARY_NOTE}"])
    problem = selection_problem(scripted, chosen)
    if problem is not None and rescript is not None:
        scripted = rescript()
        problem = selection_problem(scripted, chosen)
    if problem is not None:  # an archive (or a module scripted by its own code): its types are fixed
        raise UnsupportedNodesError([f"--lower {problem}. A TorchScript archive's types are fixed; a model "
                                     "given as Python source (file.py:Name, or an nn.Module to liteexport.export) "
                                     "is scripted with a type per module when the selection needs it"])
    return Selection(scripted, tuple(chosen), tuple(unlowered))


def lower_selection(selection: Selection, functions: Any = None) -> PartialLowering:
    """The selected submodules lowered with torch's selective lowering, which edits the selection's
    module (record torch's outputs of it before)."""
    from liteexport.mixed_debug import mixed_debug_table
    from liteexport.to_backend import lower as lower_module
    from liteexport.torch_backend import preprocess

    preprocess.debug_tables.clear()
    preprocess.failures.clear()
    preprocess.functions = functions
    try:
        lowered = lower_module(selection.module, submodules=list(selection.chosen))
    except RuntimeError:
        if not preprocess.failures:
            raise
        raise _lowering_failure(selection, *preprocess.failures[0]) from None
    finally:
        preprocess.functions = None
    entries = [e for table in preprocess.debug_tables for e in table.entries]
    return PartialLowering(lowered, mixed_debug_table(lowered, entries, list(selection.chosen)), selection.chosen,
                           selection.unlowered)


def _lowering_failure(selection: Selection, type_name: str, error: ModelError | UnsupportedNodesError) -> Exception:
    """The compiler's ``error`` for the chosen submodule of type ``type_name``, saying which one it is."""
    def unmangled(name: str) -> str:  # torch's selective lowering works on a copy of the type
        return re.sub(r"\.___torch_mangle_\d+", "", name)

    names = [name for name in selection.chosen
             if unmangled(str(_submodule(selection.module, name)._c._type().qualified_name())) == unmangled(type_name)]
    what = f"--lower {', '.join(names) or unmangled(type_name)}: the submodule does not compile"
    if isinstance(error, UnsupportedNodesError):
        summary = str(error)[: len(str(error)) - len("\n\n".join(error.reports))].strip()
        return UnsupportedNodesError(list(error.reports), summary=f"{what}. {summary}".strip(), counts=error.counts)
    return ModelError(f"{what}: {error}")


def has_lowered_parts(scripted: Any) -> bool:
    """Whether ``scripted`` is, or holds, a module torch's to_backend lowered (e.g. one saved with
    torch.jit.save after ``_jit_to_backend``): it is packed as it is."""
    return any(LOWERED_TYPE in str(module._c._type().qualified_name()) for module in scripted.modules())


def mixed_bytes(module: Any, extra_files: Mapping[str, bytes], debug_table: DebugTable | None = None) -> bytes:
    """``module`` as torch's flatbuffer, with ``extra_files`` and our debug table (when given) as
    extra files, as torch stores ``_extra_files``."""
    files = dict(extra_files)
    if debug_table is not None and debug_table.entries:
        files[DEBUG_TABLE_EXTRA_FILE] = encode_debug_table(debug_table)
    return bytes(module._c._save_to_buffer_for_mobile(files, False, True))


__all__ = ["AUTO", "PartialLowering", "Selection", "choose_auto", "engine_report", "has_lowered_parts",
           "lower_selection", "mixed_bytes", "select_submodules", "selection_problem"]
