"""docs/reference.md's Core ATen table: every op overload torch tags ``core`` (torch.Tag.core),
and what the torch.export front end does with it.

    python scripts/core_aten_table.py            rewrite the table in docs/reference.md
    python scripts/core_aten_table.py --check    exit 1 when the committed table differs
    python scripts/core_aten_table.py --measure  run torch's OpInfo samples first (slow: about
                                                 a second a sample) and store their counts in
                                                 scripts/core_aten_opinfo.json

The status of each overload comes from torch's registry and liteexport's tables (fast, checked
by tests/frontend_export/test_core_aten_table.py):
- compiles: the compiler has a lowering for it (its own, a Core ATen form of one, a pass-through,
  or a fold at export for an op that takes no tensor);
- kept fused: no lowering, and never reached: core_aten() keeps the op users write (layer_norm,
  max_pool2d...), which has one; verified here by exporting that op;
- decomposes: no lowering, but torch's decomposition of it compiles (measured on its OpInfo samples);
- refused: with the class of reason.
The OpInfo column (samples lowered / exported) comes from the stored measurement.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F  # noqa: N812 - torch's own spelling

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from liteexport.compiler.exported import core_aten, torch_quietly  # noqa: E402
from liteexport.compiler.fx_forms import FORMS, IDENTITY, kind_of  # noqa: E402
from liteexport.compiler.fx_walk import CHECKS  # noqa: E402
from liteexport.compiler.lowerings import LOWERINGS  # noqa: E402
from tests.frontend_export.opinfo import ALIASES  # noqa: E402

DOC = ROOT / "docs" / "reference.md"
MEASURED = ROOT / "scripts" / "core_aten_opinfo.json"
BEGIN, END = "<!-- core-aten-table:begin -->", "<!-- core-aten-table:end -->"

# Core ATen ops core_aten() never produces from the op users write, which it keeps (it has a
# lowering): that op, and a module writing it, exported to check the claim.
REACHED_AS: dict[str, tuple[str, Callable[[torch.Tensor], Any]]] = {
    "aten::_adaptive_avg_pool2d": ("aten::adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, 2)),
    "aten::_log_softmax": ("aten::log_softmax", lambda x: F.log_softmax(x, -1)),
    "aten::_softmax": ("aten::softmax", lambda x: F.softmax(x, -1)),
    "aten::addmm": ("aten::linear", lambda x: F.linear(x, torch.ones(5, 4), torch.ones(5))),
    "aten::convolution": ("aten::conv2d", lambda x: F.conv2d(x, torch.ones(2, 3, 1, 1))),
    "aten::max_pool2d_with_indices": ("aten::max_pool2d", lambda x: F.max_pool2d(x, 2)),
    "aten::native_group_norm": ("aten::group_norm", lambda x: F.group_norm(x, 3)),
    "aten::native_layer_norm": ("aten::layer_norm", lambda x: F.layer_norm(x, (4,))),
    "aten::upsample_bilinear2d": ("aten::upsample_bilinear2d",
                                  lambda x: F.interpolate(x, scale_factor=2.0, mode="bilinear")),
    "aten::upsample_nearest2d": ("aten::upsample_nearest2d", lambda x: F.interpolate(x, scale_factor=2.0)),
}

# Why an op without a lowering is refused, by overload name; first match wins
_REASONS: tuple[tuple[Callable[[str], bool], str], ...] = (
    (lambda name: "_backward" in name, "backward op (training only)"),
    (lambda name: name.split(".")[0] in ("rand", "randn", "randperm", "native_dropout"),
     "random (not for inference; eval-mode dropout is gone before export)"),
    (lambda name: name.startswith("_native_batch_norm_legit."), "training-mode batch norm (batch statistics)"),
    (lambda name: name.startswith("_fft_"), "complex result (FFT)"),
    (lambda name: name.split(".")[0] in ("nonzero", "_local_scalar_dense", "masked_scatter"),
     "data-dependent (a shape or Python value from tensor values)"),
    (lambda name: name.split(".")[0] in ("as_strided", "empty_strided", "sym_stride", "sym_storage_offset"),
     "strides and storage (a compiled value has no memory layout)"),
    (lambda name: name.endswith(".out"), "out= variant (an exported graph is functional)"),
    (lambda name: "3d" in name.split(".")[0], "3-D (volumetric) op"),
)


# Overloads of an op with a lowering that the lowering refuses whatever the values (its OpInfo
# samples show it: scripts/core_aten_opinfo.json)
_REFUSED_OVERLOADS = {
    "clamp.Tensor": "tensor bounds (the lowering takes bounds known at export)",
}


def core_overloads() -> list[torch._ops.OpOverload]:
    """Every ATen overload tagged core, sorted by name."""
    found = []
    for name in torch._C._dispatch_get_all_op_names():
        namespace, _, rest = name.partition("::")
        if namespace != "aten":
            continue
        base, _, overload = rest.partition(".")
        op = getattr(getattr(torch.ops.aten, base), overload or "default")
        if torch.Tag.core in op.tags:
            found.append(op)
    return sorted(set(found), key=str)


def _short(op: torch._ops.OpOverload) -> str:
    return str(op).removeprefix("aten.")


def status(op: torch._ops.OpOverload, measured: dict[str, Any]) -> tuple[str, str]:
    """(status, detail) of one overload."""
    kind, name = kind_of(op), _short(op)
    reached = REACHED_AS.get(kind)
    users = f"; users' code reaches it as `{reached[0]}`, kept" if reached and reached[0] != kind else ""
    if op in CHECKS or op is torch.ops.aten.sym_size.int:
        return "compiles", "evaluated at export (a size or a check)"
    if kind in IDENTITY:
        return "compiles", "pass-through (an exported graph is functional)"
    if kind in FORMS:
        return "compiles", "Core ATen form of a lowering" + users
    if name in _REFUSED_OVERLOADS:
        return "refused", _REFUSED_OVERLOADS[name]
    if kind in LOWERINGS:
        return "compiles", "lowering" + users
    if reached:
        return "kept fused", f"reached as `{reached[0]}`"
    for matches, reason in _REASONS:
        if matches(name):
            return "refused", reason
    if not any(isinstance(a.type, torch.TensorType) for a in op._schema.arguments):
        # the walk evaluates a node whose inputs are all known with torch itself (not random ones)
        return "compiles", "folded at export (takes no tensor)"
    from torch._decomp import decomposition_table

    tally = measured.get(name.split(".")[0])
    if tally and tally["lowered"]:  # torch.export's decompositions (default_decompositions())
        return "decomposes", "torch decomposes it into ops that compile"
    if op in decomposition_table:
        if tally:
            return "refused", "no lowering; torch's decomposition leaves ops without one"
        return "refused", "no lowering; torch's decomposition not measured (no OpInfo)"
    return "refused", "no lowering"


def verify_reached_as() -> list[str]:
    """The REACHED_AS claims that do not hold: the kept op missing from core_aten()'s graph, or the
    Core ATen op present."""
    wrong = []
    for core, (kept, write) in REACHED_AS.items():
        x = torch.randn(1, 3, 4, 4)
        with torch_quietly():
            program = core_aten(torch.export.export(_Wrap(write), (x,)))
        kinds = {kind_of(n.target) for n in program.graph.nodes if isinstance(n.target, torch._ops.OpOverload)}
        if kept not in kinds or (core != kept and core in kinds):
            wrong.append(f"{core}: expected {kept} kept, graph has {sorted(kinds)}")
    return wrong


class _Wrap(torch.nn.Module):  # type: ignore[misc]  # (torch is not analyzed: Any)
    def __init__(self, write: Callable[[torch.Tensor], Any]) -> None:
        super().__init__()
        self.write = write

    def forward(self, x: torch.Tensor) -> Any:
        return self.write(x)


def table(measured: dict[str, Any]) -> str:
    """The markdown between the markers: counts, then one row per op name."""
    rows: dict[str, list[tuple[str, str, str]]] = {}
    for op in core_overloads():
        name = _short(op)
        rows.setdefault(name.split(".")[0], []).append((name.split(".", 1)[1], *status(op, measured)))
    counts: dict[str, int] = {}
    for overloads in rows.values():
        for _, state, _ in overloads:
            counts[state] = counts.get(state, 0) + 1
    total = sum(counts.values())
    lines = [f"{total} Core ATen overloads (torch {torch.__version__.split('+')[0]}, `torch.Tag.core`): "
             + ", ".join(f"{counts.get(s, 0)} {s}" for s in ("compiles", "kept fused", "decomposes", "refused"))
             + ".", "", "| op | overloads | status | how / why | OpInfo samples lowered / exported |",
             "|---|---|---|---|---|"]
    for base, overloads in rows.items():
        tally = measured.get(base)
        aliases = ALIASES.get(base, ())
        column = "no OpInfo" if not tally else f"{tally['lowered']} / {tally['samples']}" + (
            f" (OpInfo {', '.join(a + (f':{v}' if v else '') for a, v in aliases)})" if aliases else "") + (
            f" ({len(tally['wrong'])} wrong: see test_opinfo_parity.py)" if tally["wrong"] else "")
        states = {(state, detail) for _, state, detail in overloads}
        if len(states) == 1:
            (state, detail), = states
            lines.append(f"| `{base}` | {', '.join(o for o, _, _ in overloads)} | {state} | {detail} | {column} |")
        else:
            for overload, state, detail in overloads:
                lines.append(f"| `{base}` | {overload} | {state} | {detail} | {column} |")
    return "\n".join(lines)


def rendered(doc: str, measured: dict[str, Any]) -> str:
    head, _, rest = doc.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{table(measured)}\n{END}{tail}"


def measure() -> dict[str, Any]:
    """The OpInfo samples of every Core ATen op name (OpInfos by their aten_name) through the
    front end, on runtime_py (the parity test adds the native core)."""
    import tempfile

    from tests.frontend_export.opinfo import Tally, opinfos_by_aten_name, opinfos_for, probe, samples

    by_name = opinfos_by_aten_name()
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        for base in sorted({_short(op).split(".")[0] for op in core_overloads()}):
            tally = Tally()
            for info in opinfos_for(base, by_name):
                for index, sample in enumerate(samples(info)):
                    tally.add(probe(info, sample, Path(scratch) / f"{index}.ptl", None))
            if tally.samples - sum(tally.skipped.values()):
                result[base] = {"samples": tally.samples - sum(tally.skipped.values()), "lowered": tally.lowered,
                                "refused": dict(sorted(tally.refused.items())), "max_error": tally.max_error,
                                "wrong": tally.wrong}
                print(base, result[base], flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/reference.md's table is stale")
    parser.add_argument("--measure", action="store_true", help="run the OpInfo samples first (slow)")
    args = parser.parse_args(argv)
    if args.measure:
        MEASURED.write_text(json.dumps(measure(), indent=1, sort_keys=True) + "\n")
    measured = json.loads(MEASURED.read_text()) if MEASURED.exists() else {}
    doc = DOC.read_text()
    if BEGIN not in doc or END not in doc:
        print(f"{DOC}: no {BEGIN} ... {END} markers", file=sys.stderr)
        return 1
    new = rendered(doc, measured)
    if args.check:
        wrong = verify_reached_as()
        for line in wrong:
            print("kept fused claim does not hold:", line, file=sys.stderr)
        if new != doc:
            print(f"{DOC}: the Core ATen table is stale: run python scripts/core_aten_table.py", file=sys.stderr)
        return 1 if wrong or new != doc else 0
    DOC.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
