"""``liteexport profile``: where a bundle's time goes, per compiled instruction and per op, each
mapped through the debug table to its source line and module hierarchy.

runtime_py runs the method ``warmup`` times unmeasured, then ``runs`` times under a
`runtime_py.profiling.Profiler`; each instruction's time is the sum over the measured runs. The
rows are sorted by cost, so the first rows name the lines of the model to optimize. The time the
bundle's TorchScript bytecode spends around its compiled programs (the wrapper; unlowered code of
a partially lowered bundle) is one row of its own.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from runtime_py.errors import InputError

TORCHSCRIPT_ROW = "(TorchScript bytecode around the compiled programs)"


@dataclass(frozen=True)
class InstructionCost:
    method: str
    index: int  # the instruction's position in its compiled program
    op: str  # the demo opcode, e.g. CONV2D
    node: str  # the TorchScript node it was compiled from (debug table), e.g. aten::conv2d
    location: str  # file:line of the user's code (debug table), or "" without one
    module_hierarchy: str  # e.g. top(TinyCNN).features(Sequential).0(Conv2d)
    seconds: float  # over all measured runs
    calls: int

    @property
    def where(self) -> str:
        return self.location or "(no debug table: instruction only)"


@dataclass(frozen=True)
class OpCost:
    op: str
    seconds: float
    calls: int
    instructions: int


@dataclass(frozen=True)
class Profile:
    bundle: str
    method: str
    engine: str
    runs: int
    total_seconds: float  # the method's wall time over the measured runs
    instructions: tuple[InstructionCost, ...]  # most expensive first
    ops: tuple[OpCost, ...]  # most expensive first
    other_seconds: float  # outside compiled programs (TorchScript bytecode)

    def share(self, seconds: float) -> float:
        return seconds / self.total_seconds if self.total_seconds > 0 else 0.0

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["instructions"] = [{**asdict(i), "share": self.share(i.seconds)} for i in self.instructions]
        data["ops"] = [{**asdict(o), "share": self.share(o.seconds)} for o in self.ops]
        data["other_share"] = self.share(self.other_seconds)
        return data


def profile_bundle(path: str | Path, method: str, inputs: Sequence[np.ndarray], runs: int = 20,
                   warmup: int = 2, engine: str = "runtime_py") -> Profile:
    """Profile ``method`` of the bundle at ``path`` on ``inputs`` (see the module docstring)."""
    import runtime_py
    from runtime_py.profiling import Profiler

    if engine != "runtime_py":
        raise InputError(f"--engine {engine}: profiling runs on runtime_py only for now (the native core's and "
                         "torch's per-instruction timings are not exposed yet)")
    module = runtime_py.load(path)
    module.method_schema(method)  # InputError naming the methods there are
    for _ in range(warmup):
        module.run_method(method, *inputs)
    profiler = Profiler()
    with profiler.active():
        start = time.perf_counter()
        for _ in range(runs):
            module.run_method(method, *inputs)
        total = time.perf_counter() - start
    table = module.debug_table
    costs = []
    for (program, index), seconds in profiler.seconds.items():
        instruction = profiler.instructions[program][index]
        entry = table.lookup(instruction.debug_handle) if table is not None else None
        frame = entry.user_frame() if entry is not None else None
        costs.append(InstructionCost(
            program, index, _op_name(instruction.op), entry.node_kind if entry else "",
            f"{frame.file}:{frame.line}" if frame else "", entry.module_hierarchy if entry else "",
            seconds, profiler.calls[(program, index)]))
    costs.sort(key=lambda c: -c.seconds)
    ops: dict[str, list[InstructionCost]] = {}
    for cost in costs:
        ops.setdefault(cost.op, []).append(cost)
    op_costs = sorted((OpCost(op, sum(c.seconds for c in group), sum(c.calls for c in group), len(group))
                       for op, group in ops.items()), key=lambda o: -o.seconds)
    return Profile(str(path), method, engine, runs, total, tuple(costs), tuple(op_costs),
                   max(0.0, total - profiler.program_seconds))


def _op_name(op: int) -> str:
    from bundle_format.program import OpCode

    try:
        return str(OpCode(op).name)
    except ValueError:
        return f"opcode {op}"


def format_profile(profile: Profile, top: int = 15) -> str:
    """The human-readable report: by op, then the ``top`` instructions with their source lines."""
    per_run = 1e3 / profile.runs
    lines = [f"{profile.bundle}: {profile.method} on {profile.engine}, {profile.runs} runs, "
             f"{profile.total_seconds * per_run:.3f} ms a run", "", "By op:"]
    rows: list[tuple[object, ...]] = [
        (o.op, f"{o.seconds * per_run:.3f}", f"{100 * profile.share(o.seconds):.1f}%", o.calls // profile.runs,
         o.instructions) for o in profile.ops]
    rows.append((TORCHSCRIPT_ROW, f"{profile.other_seconds * per_run:.3f}",
                 f"{100 * profile.share(profile.other_seconds):.1f}%", "", ""))
    lines += _columns(("op", "ms/run", "share", "calls/run", "instructions"), rows)
    lines += ["", f"Most expensive instructions (of {len(profile.instructions)}):"]
    lines += _columns(("#", "op", "ms/run", "share", "source", "module"),
                      [(f"{c.method}:{c.index}", c.op, f"{c.seconds * per_run:.3f}",
                        f"{100 * profile.share(c.seconds):.1f}%", c.where, c.module_hierarchy)
                       for c in profile.instructions[:top]])
    return "\n".join(lines)


def _columns(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return [("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True))).rstrip() for row in cells]


def write_chart(profile: Profile, path: str | Path, top: int = 15) -> None:
    """A horizontal bar chart (PNG) of the ``top`` instructions' share, labelled with their source lines."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise InputError("--chart needs matplotlib: pip install matplotlib") from exc
    from liteexport.atomic_write import write_atomic

    rows = list(profile.instructions[:top])[::-1]
    labels = [f"{c.op} #{c.index}  {c.location or c.node or ''}" for c in rows]
    shares = [100 * profile.share(c.seconds) for c in rows]
    figure, axes = plt.subplots(figsize=(9, 0.35 * len(rows) + 1.2))
    axes.barh(range(len(rows)), shares, color="#4c72b0")
    axes.set_yticks(range(len(rows)), labels, fontsize=8)
    axes.set_xlabel("share of the method's time (%)")
    axes.set_title(f"{Path(profile.bundle).name}: {profile.method}, "
                   f"{profile.total_seconds * 1e3 / profile.runs:.2f} ms a run ({profile.engine})", fontsize=9)
    figure.tight_layout()
    import io

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    write_atomic(path, buffer.getvalue())
