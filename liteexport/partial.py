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

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE, DebugTable
from bundle_format.debug_table_codec import encode_debug_table
from liteexport.atomic_write import write_atomic
from liteexport.errors import ModelError, UnsupportedNodesError

AUTO = "auto"
BEYOND_FORWARD = "a lowered module has only forward, but the code around it reads"
LOWERED_TYPE = "torch.jit.LoweredModule."  # in the qualified name of every type to_backend made


@dataclass(frozen=True)
class PartialExport:
    size: int  # bytes written
    lowered: tuple[str, ...]  # dotted names of the submodules compiled ("" : the whole module)
    unlowered: tuple[tuple[str, str], ...]  # (dotted name, why it stayed TorchScript), auto only
    engines: tuple[str, ...] = ()  # which engine runs the bundle, one line each (see engine_report)
    notes: tuple[str, ...] = ()  # the self-check's, one per method checked

    def summary(self, path: str | Path) -> str:
        lines = [f"Wrote {path}: {self.size:,} bytes; lowered: {', '.join(self.lowered)}"]
        if self.unlowered:
            lines.append("kept as TorchScript bytecode:")
            lines += [f"  {name}: {why}" for name, why in self.unlowered]
        if self.engines:
            lines.append("runs in:")
            lines += [f"  {line}" for line in self.engines]
        return "\n".join(lines)


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


def _why_not(module: Any, functions: Any = None) -> str | None:
    """None when ``module``'s forward compiles fully, else the reason (the blockers by kind)."""
    from liteexport.backend import DEMO_BACKEND

    if "forward" not in module._c._method_names():
        return "no forward method"
    try:
        # as the to_backend preprocess does
        DEMO_BACKEND.preprocess(module, ["forward"], functions=functions, constant_outputs=False)
    except UnsupportedNodesError as exc:
        return "unsupported: " + ", ".join(f"{kind} ({n} site{'s' * (n != 1)})" for kind, n in exc.counts.items())
    except ModelError as exc:
        return str(exc)
    return None


def _read_beyond_forward(scripted: Any, name: str) -> str | None:
    """What an ancestor's code uses of submodule ``name`` other than calling its forward
    (``self.proj.weight``, as edgenext does), or None: the lowered module torch puts in its place
    has only the lowered methods, and torch fails at save time on any other use."""
    parent_name, _, leaf = name.rpartition(".")
    parts = parent_name.split(".") if parent_name else []
    parent_type = (_submodule(scripted, parent_name) if parent_name else scripted)._c._type()
    ancestors = [scripted] + [_submodule(scripted, ".".join(parts[:i + 1])) for i in range(len(parts))]
    for module in ancestors:
        for method in module._c._method_names():
            for node in _all_nodes(module._c._get_method(method).graph.nodes()):
                if node.kind() != "prim::GetAttr" or node.s("name") != leaf or node.input().type() != parent_type:
                    continue
                for use in node.output().uses():
                    user = use.user
                    if user.kind() == "prim::GetAttr":
                        return f"{leaf}.{user.s('name')}"
                    if user.kind() != "prim::CallMethod" or user.s("name") != "forward" or use.offset != 0:
                        return f"{leaf} itself ({user.kind()})"
    return None


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
        if read is not None:
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


def choose_auto(scripted: Any, unique_types: bool = False,
                functions: Any = None) -> tuple[list[str], list[tuple[str, str]]]:
    """The largest submodules that compile fully (top-down), and every module that did not,
    with why. The root is never chosen here: a module that compiles whole needs no partial
    lowering. With ``unique_types`` (a loaded archive, whose types are fixed), only a selection
    torch's selective lowering accepts (see ``selection_problem``): no module under a parent
    whose type is shared, and every module of a chosen type or none."""
    by_type = _type_counts(scripted) if unique_types else {}
    chosen: list[str] = []
    unlowered: list[tuple[str, str]] = []
    pending = [(name, child) for name, child in scripted.named_children()]
    while pending:
        name, module = pending.pop(0)
        why = _why_not(module, functions)
        if why is None and (read := _read_beyond_forward(scripted, name)) is not None:
            why = f"{BEYOND_FORWARD} {read}"
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


def export_partial(scripted: Any, path: str | Path, lower: Sequence[str], *,
                   methods: Sequence[str] | None = None, input_shapes: Mapping[str, Any] | None = None,
                   examples: Mapping[str, Sequence[Sequence[np.ndarray]]] | None = None,
                   unshared: Callable[[], Any] | None = None, functions: Any = None,
                   check: bool = True) -> PartialExport:
    """Lower the submodules named in ``lower`` (dotted names, or ``["auto"]``) of ``scripted``
    and write the mixed bundle to ``path``. ``unshared`` scripts the model again with a
    TorchScript type per module (for a model from Python source, as torch's own selective-lowering
    tests do): it is used when the selection needs it; without it (an archive), ``auto`` picks
    only what torch accepts and named submodules torch would refuse are reported (exit 4).
    ``functions``: the compilation unit of a loaded archive (its free functions). ``examples``
    are stored as test vectors; with them or ``input_shapes`` (random inputs), the bundle is run in
    runtime_py against torch before it is written (``check``; ``methods`` limits which methods)."""
    from liteexport.mixed_debug import mixed_debug_table
    from liteexport.test_vectors import record_test_vectors
    from liteexport.to_backend import lower as lower_module
    from liteexport.torch_backend import preprocess

    unlowered: list[tuple[str, str]] = []
    if list(lower) == [AUTO]:
        chosen, unlowered = choose_auto(scripted, functions=functions)
        if selection_problem(scripted, chosen) is not None and unshared is None:
            chosen, unlowered = choose_auto(scripted, unique_types=True, functions=functions)
        if not chosen:
            reasons = "; ".join(f"{name}: {why}" for name, why in unlowered) or "the module has no submodules"
            raise ModelError(f"--lower auto: no submodule compiles fully ({reasons})")
    else:
        chosen = list(dict.fromkeys(lower))
        for name in chosen:
            _submodule(scripted, name)
    problem = selection_problem(scripted, chosen)
    if problem is not None and unshared is not None:
        scripted = unshared()
        problem = selection_problem(scripted, chosen)
    if problem is not None:  # an archive (or a module scripted by its own code): its types are fixed
        raise UnsupportedNodesError([f"--lower {problem}. A TorchScript archive's types are fixed; a model "
                                     "given as Python source (file.py:Name, or an nn.Module to liteexport.export) "
                                     "is scripted with a type per module when the selection needs it"])
    vectors = record_test_vectors(scripted, examples) if examples else {}
    checked = _check_inputs(scripted, methods, input_shapes, vectors) if check else {}
    preprocess.debug_tables.clear()
    preprocess.functions = functions
    try:
        lowered = lower_module(scripted, submodules=chosen)
    finally:
        preprocess.functions = None
    entries = [e for table in preprocess.debug_tables for e in table.entries]
    # the debug table sees each lowered node from the outer call (torch's hierarchy and frames)
    data = mixed_bytes(lowered, vectors, mixed_debug_table(lowered, entries, chosen))
    engines, notes = _self_check(data, checked)
    write_atomic(path, memoryview(data))
    return PartialExport(len(data), tuple(chosen), tuple(unlowered), engines, notes)


def _check_inputs(scripted: Any, methods: Sequence[str] | None, input_shapes: Mapping[str, Any] | None,
                  vectors: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
    """The test vectors the self-check runs: the examples', else random inputs of the static
    input shapes (torch's outputs recorded here), for ``methods`` (default: every one given)."""
    from liteexport.self_check import random_inputs
    from liteexport.test_vectors import record_test_vectors

    shapes = dict(input_shapes or {})
    names = list(methods) if methods else list(dict.fromkeys([*vectors, *shapes]))
    checked: dict[str, list[Any]] = {}
    for method in names:
        items = list(vectors.get(method, ()))
        if not items and method in shapes:
            items = record_test_vectors(scripted, {method: [random_inputs(shapes[method])]})[method]
        if items:
            checked[method] = items
    return checked


def _leaves(value: Any) -> tuple[Any, ...]:
    """A result's tensors (numpy arrays) and constants in order, through tuples, lists and dicts
    (lraspp returns {"out": ...}; as_outputs keeps such a container as one object array)."""
    from liteexport.parity import as_outputs, is_constant

    if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0:
        value = value.item()
    if isinstance(value, dict):
        return tuple(leaf for key in value for leaf in _leaves(value[key]))
    if isinstance(value, (tuple, list)):
        return tuple(leaf for item in value for leaf in _leaves(item))
    return (value,) if is_constant(value) else as_outputs(value)


def _self_check(data: bytes, checked: Mapping[str, Sequence[Any]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The engine report of the bundle ``data`` and the self-check's notes: each checked method
    run by runtime_py on the bundle against torch's outputs (VerificationError, exit 9, on a
    difference: nothing is written); skipped when runtime_py reaches an operator it lacks (torch's
    lite interpreter has them all; a lacking operator on a path not taken, such as F.interpolate's
    other ranks in ghostnetv2, stops nothing)."""
    import tempfile

    import runtime_py
    from liteexport.errors import VerificationError
    from liteexport.parity import max_errors, structure_problem, within_tolerance
    from runtime_py.errors import LiteExportError

    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder) / "bundle.ptl"
        scratch.write_bytes(data)
        engines = engine_report(scratch)
        if not checked:
            return engines, ()
        module = runtime_py.load(scratch)
        notes = []
        for method, items in checked.items():
            largest = 0.0
            for vector in items:
                try:
                    got = _leaves(getattr(module, method)(*vector.inputs))
                except LiteExportError as exc:
                    if "not implemented in runtime_py" in str(exc):  # torch's lite interpreter runs it
                        notes.append(f"self-check skipped for {method}: {exc}")
                        break
                    raise VerificationError(f"self-check failed: {method} does not run in runtime_py on the check "
                                            f"inputs: {exc}") from exc
                expected = _leaves(vector.expected)
                problem = structure_problem(got, expected)
                if problem:
                    raise VerificationError(f"self-check failed: {method} returns another structure than torch's "
                                            f"({problem}). Nothing was written; --no-check skips this check")
                for i, (g, e) in enumerate(zip(got, expected, strict=True)):
                    if not isinstance(e, np.ndarray):
                        continue
                    g = np.asarray(g)
                    if g.shape != e.shape or not within_tolerance(g, e):
                        what = (f"got shape {list(g.shape)}, torch {list(e.shape)}" if g.shape != e.shape
                                else f"max abs err {max_errors(g, e)[0]:.3g}")
                        raise VerificationError(f"self-check failed: {method} output {i} of the mixed bundle in "
                                                f"runtime_py differs from torch's ({what}). Nothing was written; "
                                                "--no-check skips this check")
                    largest = max(largest, max_errors(g, e)[0])
            else:
                notes.append(f"self-check passed for {method}: max abs error {largest:.2g} against torch "
                             f"on {len(items)} input set{'s' if len(items) > 1 else ''} (runtime_py, mixed bundle)")
    return engines, tuple(notes)


def has_lowered_parts(scripted: Any) -> bool:
    """Whether ``scripted`` is, or holds, a module torch's to_backend lowered (e.g. one saved with
    torch.jit.save after ``_jit_to_backend``): it is packed as it is."""
    return any(LOWERED_TYPE in str(module._c._type().qualified_name()) for module in scripted.modules())


def write_mixed(module: Any, path: str | Path, vectors: Mapping[str, Any] | None = None,
                debug_table: DebugTable | None = None) -> int:
    """Write ``module`` (TorchScript holding lowered parts) with torch's flatbuffer writer, plus
    our debug table and test vectors as extra files; returns the size written."""
    data = mixed_bytes(module, vectors, debug_table)
    write_atomic(path, memoryview(data))
    return len(data)


def mixed_bytes(module: Any, vectors: Mapping[str, Any] | None = None,
                debug_table: DebugTable | None = None) -> bytes:
    """``module`` as torch's flatbuffer, with our debug table and test vectors as extra files."""
    from liteexport.test_vectors import TEST_VECTORS_EXTRA_FILE, encode_test_vectors

    extra_files: dict[str, bytes] = {}
    if debug_table is not None and debug_table.entries:
        extra_files[DEBUG_TABLE_EXTRA_FILE] = encode_debug_table(debug_table)
    if vectors:
        extra_files[TEST_VECTORS_EXTRA_FILE] = encode_test_vectors(dict(vectors))
    return bytes(module._c._save_to_buffer_for_mobile(extra_files, False, True))


__all__ = ["AUTO", "PartialExport", "choose_auto", "export_partial", "has_lowered_parts", "engine_report",
           "selection_problem", "write_mixed"]
