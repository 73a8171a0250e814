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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from liteexport.atomic_write import write_atomic
from runtime_py.errors import ModelError, UnsupportedNodesError
from runtime_py.format.debug_table import DEBUG_TABLE_EXTRA_FILE, DebugTable
from runtime_py.format.debug_table_codec import encode_debug_table

AUTO = "auto"
LOWERED_TYPE = "torch.jit.LoweredModule."  # in the qualified name of every type to_backend made


@dataclass(frozen=True)
class PartialExport:
    size: int  # bytes written
    lowered: tuple[str, ...]  # dotted names of the submodules compiled ("" : the whole module)
    unlowered: tuple[tuple[str, str], ...]  # (dotted name, why it stayed TorchScript), auto only

    def summary(self, path: str | Path) -> str:
        lines = [f"Wrote {path}: {self.size:,} bytes; lowered: {', '.join(self.lowered)}"]
        if self.unlowered:
            lines.append("kept as TorchScript bytecode:")
            lines += [f"  {name}: {why}" for name, why in self.unlowered]
        return "\n".join(lines)


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


def _why_not(module: Any) -> str | None:
    """None when ``module``'s forward compiles fully, else the reason (the blockers by kind)."""
    from liteexport.compiler import compile_module

    if "forward" not in module._c._method_names():
        return "no forward method"
    try:
        compile_module(module, ["forward"], constant_outputs=False)  # as the to_backend preprocess does
    except UnsupportedNodesError as exc:
        return "unsupported: " + ", ".join(f"{kind} ({n} site{'s' * (n != 1)})" for kind, n in exc.counts.items())
    except ModelError as exc:
        return str(exc)
    return None


def choose_auto(scripted: Any) -> tuple[list[str], list[tuple[str, str]]]:
    """The largest submodules that compile fully (top-down), and every module that did not,
    with why. The root is never chosen here: a module that compiles whole needs no partial
    lowering."""
    chosen: list[str] = []
    unlowered: list[tuple[str, str]] = []
    pending = [(name, child) for name, child in scripted.named_children()]
    while pending:
        name, module = pending.pop(0)
        why = _why_not(module)
        if why is None:
            chosen.append(name)
            continue
        unlowered.append((name, why))
        pending[:0] = [(f"{name}.{child_name}", child) for child_name, child in module.named_children()]
    return chosen, unlowered


def _shared_types(scripted: Any, chosen: Sequence[str]) -> None:
    """torch's selective lowering retypes every attribute of a lowered module's type in the parent:
    an unlowered sibling of the same TorchScript type would then run the lowered code. Refuse."""
    for name in chosen:
        parent_name, _, leaf = name.rpartition(".")
        parent = _submodule(scripted, parent_name) if parent_name else scripted
        own_type = _submodule(scripted, name)._c._type()
        for sibling, module in parent.named_children():
            full = f"{parent_name}.{sibling}" if parent_name else sibling
            if sibling != leaf and full not in chosen and module._c._type() == own_type:
                raise ModelError(f"--lower {name}: {full} has the same TorchScript type and would be lowered "
                                 f"with it; lower both ({name} and {full}) or neither")


def export_partial(scripted: Any, path: str | Path, lower: Sequence[str], *,
                   methods: Sequence[str] | None = None, input_shapes: Mapping[str, Any] | None = None,
                   examples: Mapping[str, Sequence[Sequence[np.ndarray]]] | None = None) -> PartialExport:
    """Lower the submodules named in ``lower`` (dotted names, or ``["auto"]``) of ``scripted``
    and write the mixed bundle to ``path``."""
    from liteexport.api import lower as lower_module
    from liteexport.mixed_debug import mixed_debug_table
    from liteexport.test_vectors import record_test_vectors
    from liteexport.torch_backend import preprocess

    if methods or input_shapes:
        raise ModelError("methods and input shapes apply to whole-module lowering; a partial lowering "
                         "compiles each chosen submodule's forward and keeps every method of the module")
    unlowered: list[tuple[str, str]] = []
    if list(lower) == [AUTO]:
        chosen, unlowered = choose_auto(scripted)
        if not chosen:
            reasons = "; ".join(f"{name}: {why}" for name, why in unlowered) or "the module has no submodules"
            raise ModelError(f"--lower auto: no submodule compiles fully ({reasons})")
    else:
        chosen = list(dict.fromkeys(lower))
        for name in chosen:
            _submodule(scripted, name)
    _shared_types(scripted, chosen)
    vectors = record_test_vectors(scripted, examples) if examples else {}
    preprocess.debug_tables.clear()
    lowered = lower_module(scripted, submodules=chosen)
    entries = [e for table in preprocess.debug_tables for e in table.entries]
    size = write_mixed(lowered, path, vectors, mixed_debug_table(lowered, entries, chosen))  # with the outer hierarchy
    return PartialExport(size, tuple(chosen), tuple(unlowered))


def has_lowered_parts(scripted: Any) -> bool:
    """Whether ``scripted`` is, or holds, a module torch's to_backend lowered (e.g. one saved with
    torch.jit.save after ``_jit_to_backend``): it is packed as it is."""
    return any(LOWERED_TYPE in str(module._c._type().qualified_name()) for module in scripted.modules())


def write_mixed(module: Any, path: str | Path, vectors: Mapping[str, Any] | None = None,
                debug_table: DebugTable | None = None) -> int:
    """Write ``module`` (TorchScript holding lowered parts) with torch's flatbuffer writer, plus
    our debug table and test vectors as extra files; returns the size written."""
    from liteexport.test_vectors import TEST_VECTORS_EXTRA_FILE, encode_test_vectors

    extra_files: dict[str, bytes] = {}
    if debug_table is not None and debug_table.entries:
        extra_files[DEBUG_TABLE_EXTRA_FILE] = encode_debug_table(debug_table)
    if vectors:
        extra_files[TEST_VECTORS_EXTRA_FILE] = encode_test_vectors(dict(vectors))
    data = module._c._save_to_buffer_for_mobile(extra_files, False, True)
    write_atomic(path, memoryview(data))
    return len(data)

__all__ = ["AUTO", "PartialExport", "choose_auto", "export_partial", "has_lowered_parts", "write_mixed"]
