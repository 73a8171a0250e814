"""``liteexport profile``: where a bundle's time goes, per compiled instruction and per op, each
mapped through the debug table to its source line and module hierarchy.

Each engine runs the method ``warmup`` times unmeasured, then ``runs`` times timing every step of
the compiled programs; an instruction's time is the sum over the measured runs. runtime_py times
them with `runtime_py.profiling.Profiler`, the native core with its Module::profile (a clock read
per step, `native/src/step_profiler.h`), torch's lite interpreter with
torch.profiler (liteexport's torch backend makes each step a user scope). The rows are sorted by
cost, so the first rows name the lines of the model to optimize. The time the bundle's
TorchScript bytecode spends around its compiled programs (the wrapper; unlowered code of a
partially lowered bundle) is one row of its own. An instruction is keyed by the lowered
submodule it belongs to (its dotted path; "" for a bundle lowered whole), its method and its
index, so two lowered submodules' ``forward#0`` are two rows.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from runtime_py.errors import ExecutionError, InputError

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
    lowered: str = ""  # the lowered submodule's dotted path (partial lowering); "" for a whole bundle

    @property
    def where(self) -> str:
        return self.location or "(no debug table: instruction only)"

    @property
    def label(self) -> str:
        """``forward:3``, or ``encoder.forward:3`` in a lowered submodule."""
        return f"{self.lowered}.{self.method}:{self.index}" if self.lowered else f"{self.method}:{self.index}"


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
                   warmup: int = 2, engine: str = "runtime_py", threads: int = 1) -> Profile:
    """Profile ``method`` of the bundle at ``path`` on ``inputs``: ``warmup`` unmeasured runs, then
    ``runs`` measured ones, on ``engine``.

    Parameters
    ----------
    path : the bundle.
    method : the method to run, e.g. ``"forward"``.
    inputs : its inputs, numpy arrays.
    runs, warmup : measured and unmeasured runs.
    engine : ``"runtime_py"`` (numpy), ``"native"`` (the native core through its
        host tool, built by ``native/build.sh host``) or ``"torch"`` (torch's lite
        interpreter with liteexport's torch backend, timed by ``torch.profiler``).
    threads : the threads the native core and torch compute on (1, the default, is what an Android
        app gets unless it asks for more); runtime_py computes on numpy's BLAS threads.

    Returns
    -------
    Profile
        Every instruction's time and calls, most expensive first, with its source line.

    Examples
    --------
    >>> result = profile_bundle("tiny.ptl", "forward", [np.zeros((1, 3, 32, 32), np.float32)])
    >>> print(format_profile(result, top=5))  # doctest: +SKIP
    """
    measure = {"runtime_py": _measure_runtime_py, "native": _measure_native, "torch": _measure_torch}.get(engine)
    if measure is None:
        raise InputError(f"unknown engine {engine!r}: runtime_py, native or torch")
    if not 1 <= threads <= 64:
        raise InputError(f"threads must be 1..64, got {threads}")
    total, costs = measure(Path(path), method, inputs, runs, warmup, threads)
    costs.sort(key=lambda c: -c.seconds)
    ops: dict[str, list[InstructionCost]] = {}
    for cost in costs:
        ops.setdefault(cost.op, []).append(cost)
    op_costs = sorted((OpCost(op, sum(c.seconds for c in group), sum(c.calls for c in group), len(group))
                       for op, group in ops.items()), key=lambda o: -o.seconds)
    in_programs = sum(c.seconds for c in costs)
    return Profile(str(path), method, engine, runs, total, tuple(costs), tuple(op_costs),
                   max(0.0, total - in_programs))


# Each engine's measurement: (the method's wall time over the measured runs, one cost per
# instruction that ran)
Measured = tuple[float, list[InstructionCost]]


def _measure_runtime_py(path: Path, method: str, inputs: Sequence[np.ndarray], runs: int, warmup: int,
                        threads: int) -> Measured:
    import runtime_py
    from runtime_py.profiling import Profiler

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
    paths = {id(plan): path for path, plan in lowered_programs(module)}
    costs = []
    for (number, index), seconds in profiler.seconds.items():
        program = profiler.programs[number]
        instruction = program.instructions[index]
        costs.append(_mapped(module.debug_table, program.method, index, _op_name(instruction.op),
                             instruction.debug_handle, seconds, profiler.calls[(number, index)],
                             paths.get(id(program.handle), "")))
    return total, costs


LOWERED_MODULE_PREFIX = "torch.jit.LoweredModule."  # the type of the object holding a lowered module's programs


def lowered_programs(module: Any) -> list[tuple[str, Any]]:
    """(dotted path of the lowered submodule, one of its compiled programs: the demo backend's
    MethodPlan) for every program of the runtime_py ``module``, found by walking its objects from
    the root; the path is "" for a bundle lowered whole."""
    from liteexport.inspect_bundle import LOWERED_ATTR  # a lowered submodule's slot holding its LoweredModule
    from runtime_py.backends.demo.plan import MethodPlan
    from runtime_py.values import ScriptObject

    attr_names = {t.type_name: t.attr_names for t in module.ptmf.object_types}
    found: list[tuple[str, Any]] = []
    seen: set[int] = set()

    def walk(value: ScriptObject, path: tuple[str, ...]) -> None:
        if id(value) in seen:  # a submodule shared by two attributes is walked once
            return
        seen.add(id(value))
        if value.type_name.startswith(LOWERED_MODULE_PREFIX):
            dotted = ".".join(name for name in path if name != LOWERED_ATTR)
            found.extend((dotted, plan) for slot in value.slots if isinstance(slot, dict)
                         for plan in slot.values() if isinstance(plan, MethodPlan))
            return
        for name, slot in zip(attr_names.get(value.type_name, ()), value.slots, strict=False):
            if isinstance(slot, ScriptObject):
                walk(slot, (*path, name))

    root = module._loaded.root
    if isinstance(root, ScriptObject):
        walk(root, ())
    return found


def _measure_native(path: Path, method: str, inputs: Sequence[np.ndarray], runs: int, warmup: int,
                    threads: int) -> Measured:
    """The native core's Module::profile, through liteexport_native_run --profile (its JSON rows
    are mapped through the debug table by the core itself, as its C++ and Java APIs give them)."""
    import subprocess
    import tempfile

    from liteexport.native_tool import native_tool, raise_tool_error

    tool = native_tool()
    with tempfile.TemporaryDirectory(prefix="liteexport-profile-") as folder:
        files = []
        for i, array in enumerate(inputs):
            files.append(str(Path(folder) / f"input{i}.npy"))
            np.save(files[-1], np.asarray(array))  # not ascontiguousarray: it makes a 0-d array 1-d
        out = Path(folder) / "profile.json"
        done = subprocess.run([str(tool), "--method", method, "--repeat", str(runs), "--warmup", str(warmup),
                               "--threads", str(threads),
                               str(path), *files, "--profile", str(out)], capture_output=True, text=True,
                              check=False)
        if done.returncode != 0:
            raise_tool_error(done.returncode, done.stderr)
        data = json.loads(out.read_text())
    return data["total_seconds"], [
        InstructionCost(r["method"], r["index"], r["op"], r["node"], r["location"], r["module_hierarchy"],
                        r["seconds"], r["calls"]) for r in data["instructions"]]


# torch.profiler's name of a step of liteexport's torch backend (torch_backend/program_plan.h)
_TORCH_STEP = re.compile(r"^(?P<op>\w+) \(liteexport (?P<method>.+)#(?P<index>\d+), handle (?P<handle>-?\d+)\)$")


def _measure_torch(path: Path, method: str, inputs: Sequence[np.ndarray], runs: int, warmup: int,
                   threads: int) -> Measured:
    """torch's lite interpreter with liteexport's torch backend, whose steps are user scopes of
    torch.profiler; the profiler's own cost (a record per ATen call) is in the times."""
    import torch
    import torch.jit.mobile

    import runtime_py
    from liteexport.torch_backend import load_torch_backend

    described = runtime_py.load(path)
    described.method_schema(method)  # InputError naming the methods there are
    # torch's lite interpreter does not count a method's inputs (too many crash it): runtime_py does
    completed = described.with_defaults(method, list(inputs))
    table = described.debug_table
    load_torch_backend()
    module = torch.jit.mobile._load_for_lite_interpreter(str(path))
    args = [torch.from_numpy(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else a for a in completed]

    def run(*values: torch.Tensor) -> object:
        return module.run_method(method, *values)

    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        return _torch_steps(table, run, args, runs, warmup, _paths_by_step(described))
    except RuntimeError as exc:
        raise _torch_error(exc, table, method) from None
    finally:
        torch.set_num_threads(previous_threads)


def _torch_error(exc: RuntimeError, table: Any, method: str) -> Exception:
    """An error of our backend that torch passed on as text, as runtime_py raises it: an input
    that does not fit is an InputError (exit 6) naming the module that reads it, another failure
    an ExecutionError with the failing instruction's source; anything else is torch's own."""
    from bundle_format.error_codes import execution_error, input_error
    from liteexport.torch_backend import debug_handle_of, demo_error_of
    from runtime_py.module import source_mapped_message

    coded = demo_error_of(exc)
    if coded is None:
        return exc
    code, fields = coded
    handle = debug_handle_of(exc)
    entry = table.lookup(handle) if table is not None and handle is not None else None
    if code.startswith("INPUT_"):
        error = input_error(code, debug_handle=-1, **fields)
        where = f"\nModule hierarchy: {entry.module_hierarchy}" if entry is not None else ""
        mapped = InputError(f"{method}: {error.message}{where}")
        mapped.code, mapped.fields, mapped.debug_handle = error.code, error.fields, handle if handle is not None else -1
        return mapped
    failure = execution_error(code, debug_handle=handle if handle is not None else -1, **fields)
    return ExecutionError(source_mapped_message(failure, table, method))


def _paths_by_step(module: Any) -> dict[tuple[str, int, int], str]:
    """(method, instruction index, debug handle) -> the lowered submodule's path: torch's step
    names (``CONV2D (liteexport forward#3, handle 12)``) carry no path, but each lowered module's
    instructions have debug handles of their own (without a debug table, two submodules' steps
    with the same method and index are one row)."""
    return {(plan.method, index, instruction.debug_handle): path for path, plan in lowered_programs(module)
            for index, instruction in enumerate(plan.instructions)}


def _torch_steps(table: Any, run: Callable[..., object], args: Sequence[Any], runs: int, warmup: int,
                 paths: Mapping[tuple[str, int, int], str]) -> Measured:
    from torch.profiler import ProfilerActivity, profile, record_function

    for _ in range(warmup):
        run(*args)
    recorded = profile(activities=[ProfilerActivity.CPU])
    with _stderr_silenced():  # torch's Kineto logs "profiler_start"/"profiler_stop" lines there
        recorded.start()
    try:
        run(*args)  # the profiler's first records cost more: this run is not counted
        with record_function("liteexport: measured runs"):
            start = time.perf_counter()
            for _ in range(runs):
                run(*args)
            total = time.perf_counter() - start
    finally:
        with _stderr_silenced():
            recorded.stop()
    window = next(e.time_range for e in recorded.events() if e.name == "liteexport: measured runs")
    seconds: dict[tuple[str, str, int], float] = {}  # (lowered path, method, index)
    calls: dict[tuple[str, str, int], int] = {}
    names: dict[tuple[str, str, int], tuple[str, int]] = {}
    for event in recorded.events():
        step = _TORCH_STEP.match(event.name)
        if step is None or event.time_range.start < window.start:
            continue
        method, index, handle = step["method"], int(step["index"]), int(step["handle"])
        key = (paths.get((method, index, handle), ""), method, index)
        seconds[key] = seconds.get(key, 0.0) + event.cpu_time_total / 1e6
        calls[key] = calls.get(key, 0) + 1
        names[key] = (step["op"], handle)
    return total, [_mapped(table, method, index, names[key][0], names[key][1], seconds[key], calls[key], path)
                   for key in seconds for path, method, index in [key]]


@contextlib.contextmanager
def _stderr_silenced() -> Iterator[None]:
    """File descriptor 2 goes to /dev/null for the block (C++ code writes there directly)."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as null:
            os.dup2(null.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _mapped(table: Any, program: str, index: int, op: str, handle: int, seconds: float, calls: int,
            lowered: str = "") -> InstructionCost:
    """An instruction's cost, with its node, source line and module hierarchy from ``table``."""
    entry = table.lookup(handle) if table is not None else None
    frame = entry.user_frame() if entry is not None else None
    return InstructionCost(program, index, op, entry.node_kind if entry else "",
                           f"{frame.file}:{frame.line}" if frame else "", entry.module_hierarchy if entry else "",
                           seconds, calls, lowered)


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
                      [(c.label, c.op, f"{c.seconds * per_run:.3f}",
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
