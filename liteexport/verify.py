"""``liteexport verify``: run a bundle's stored test vectors on each engine and compare.

Per method, vector and output: max abs/rel error against the expected values (torch's
outputs at export time) and pass/fail against a tolerance: the one given, else the one the
export stored for the method (``liteexport/test_tolerances.json``: its self-check's, for a
bundle of narrowed weights), else the default. When a delegated method fails, the compiled
program is run instruction by instruction in runtime_py and, with torch, in ATen (the
compiler's per-opcode semantics); the first instruction whose values differ is named with its
debug handle and source line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

import numpy as np

from bundle_format.debug_table import DebugTable
from bundle_format.program import Program
from liteexport.inspect_bundle import delegate_contents
from liteexport.parity import ATOL, RTOL, as_outputs, constant_problem, is_constant, max_errors
from liteexport.test_vectors import (
    TEST_VECTORS_EXTRA_FILE,
    TOLERANCES_EXTRA_FILE,
    StoredTolerance,
    TestVector,
    decode_test_vectors,
    decode_tolerances,
)
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.backend import widened
from runtime_py.backends.demo.plan import build_plan, instruction_label
from runtime_py.budgets import RunLimitExceeded
from runtime_py.errors import LiteExportError, UserError
from runtime_py.module import Module, load

ENGINES = ("runtime_py", "torch")
DEFAULT_ATOL, DEFAULT_RTOL = ATOL, RTOL  # unscaled here (parity's are scaled to the output)
GIVEN, STORED, DEFAULT = "given", "stored by export", "default"  # where a tolerance came from
Runner = Callable[[str, Sequence[np.ndarray]], tuple[Any, ...]]  # see liteexport.parity.as_outputs


@dataclass(frozen=True)
class OutputCheck:
    engine: str
    method: str
    vector: int
    output: int
    max_abs: float
    max_rel: float
    passed: bool
    problem: str = ""  # shape/dtype mismatch or the engine's error


@dataclass(frozen=True)
class Divergence:
    """The first compiled instruction whose value differs between runtime_py and ATen."""

    method: str
    vector: int
    instruction: str  # e.g. "instruction #3 CONV2D (slots [0, 1, 2] -> [3])"
    debug_handle: int
    location: str  # file:line of the model's own source, or ""
    module_hierarchy: str
    max_abs: float


@dataclass(frozen=True)
class Tolerance:
    """The tolerance a method's outputs are checked against, and where atol and rtol came from."""

    atol: float
    rtol: float
    atol_from: str = DEFAULT  # GIVEN, STORED or DEFAULT
    rtol_from: str = DEFAULT
    rule: str = ""  # the export's, for a stored one

    def describe(self) -> str:
        """e.g. "atol 0.05, rtol 0 (stored by export: 0.05 x the output's magnitude under --quantize dynamic-int8)"."""
        def source(where: str) -> str:
            return f"{where}: {self.rule}" if where == STORED and self.rule else where

        if self.atol_from == self.rtol_from:
            return f"atol {self.atol:g}, rtol {self.rtol:g} ({source(self.atol_from)})"
        return f"atol {self.atol:g} ({source(self.atol_from)}), rtol {self.rtol:g} ({source(self.rtol_from)})"


def choose_tolerance(stored: StoredTolerance | None, atol: float | None, rtol: float | None) -> Tolerance:
    """Each of atol and rtol: given (not None), else stored by the export, else the default."""
    def pick(given: float | None, kept: float | None, default: float) -> tuple[float, str]:
        if given is not None:
            return given, GIVEN
        return (kept, STORED) if kept is not None else (default, DEFAULT)

    a, a_from = pick(atol, stored.atol if stored else None, DEFAULT_ATOL)
    r, r_from = pick(rtol, stored.rtol if stored else None, DEFAULT_RTOL)
    return Tolerance(a, r, a_from, r_from, stored.rule if stored and STORED in (a_from, r_from) else "")


@dataclass
class VerifyReport:
    checks: list[OutputCheck] = field(default_factory=list)
    divergences: list[Divergence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    tolerances: dict[str, Tolerance] = field(default_factory=dict)  # method -> the one its outputs were checked against

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)


def _compare(engine: str, method: str, n: int, got: tuple[Any, ...], vector: TestVector,
             atol: float, rtol: float) -> list[OutputCheck]:
    if len(got) != len(vector.expected):
        return [OutputCheck(engine, method, n, -1, np.inf, np.inf, False,
                            f"{len(got)} outputs, expected {len(vector.expected)}")]
    checks = []
    for i, (g, e) in enumerate(zip(got, vector.expected, strict=True)):
        if is_constant(g) or is_constant(e):  # None in googlenet's (logits, None, None)
            problem = constant_problem(g, e)
            checks.append(OutputCheck(engine, method, n, i, np.inf if problem else 0.0,
                                      np.inf if problem else 0.0, not problem, problem))
            continue
        if g.shape != e.shape or g.dtype != e.dtype:
            checks.append(OutputCheck(engine, method, n, i, np.inf, np.inf, False,
                                      f"got {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}"))
            continue
        max_abs, max_rel = max_errors(g, e)
        ok = bool(np.allclose(g, e, atol=atol, rtol=rtol, equal_nan=True))
        checks.append(OutputCheck(engine, method, n, i, max_abs, max_rel, ok))
    return checks


def _runtime_py_runner(module: Module) -> Runner:
    def run(method: str, inputs: Sequence[np.ndarray]) -> tuple[Any, ...]:
        module.reset_state()  # each vector is a call from the initial state (record_test_vectors)
        return as_outputs(module.run_method(method, *inputs))

    return run


def _torch_runner(path: Path, has_state: bool) -> Runner:
    try:
        import torch
        import torch.jit.mobile
    except ImportError as exc:
        raise UserError("the torch engine needs torch: pip install 'liteexport[export]'") from exc
    from liteexport.torch_backend import load_torch_backend

    load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))

    def run(method: str, inputs: Sequence[np.ndarray]) -> tuple[Any, ...]:
        # a bundle with program state: a fresh load per vector, the initial state (torch's module
        # has no reset_state)
        module = torch.jit.mobile._load_for_lite_interpreter(str(path)) if has_state else lite
        return as_outputs(module.run_method(method, *[torch.from_numpy(np.array(x)) for x in inputs]))

    return run


def divergence_at(method: str, n: int, program: Program, index: int, table: DebugTable | None,
                  max_abs: float) -> Divergence:
    """Instruction ``index`` of ``program`` as a Divergence, its handle mapped to the source."""
    ins = program.instructions[index]
    entry = table.lookup(ins.debug_handle) if table is not None else None
    frame = entry.user_frame() if entry is not None else None
    return Divergence(method, n, instruction_label(index, ins), ins.debug_handle,
                      f"{frame.file}:{frame.line}" if frame else "", entry.module_hierarchy if entry else "", max_abs)


def localize(method: str, n: int, program: Program, stored: Sequence[object], vector: TestVector,
              table: DebugTable | None, atol: float, rtol: float) -> Divergence | str:
    """Where runtime_py's and ATen's per-instruction values first differ (needs torch)."""
    try:
        import torch

        from liteexport.compiler.dtypes import TORCH_DTYPES
        from liteexport.compiler.semantics import run_op
    except ImportError:
        return f"{method}[{n}]: install torch to locate the diverging instruction"
    ours: dict[int, np.ndarray] = {}
    weights = cast("list[np.ndarray]", widened(stored))  # int8 and float16 weights as the kernels see them
    try:
        executor.run(build_plan(program, weights), vector.inputs, lambda i, v: ours.__setitem__(i, np.asarray(v)))
    except LiteExportError:
        pass  # the values up to the failing instruction still count
    slots: dict[int, Any] = {i: torch.from_numpy(np.array(x)) for i, x in enumerate(vector.inputs)}
    slots.update({c.slot: torch.from_numpy(np.array(weights[c.weight])) for c in program.constants})
    slots.update({s.slot: torch.zeros(s.shape, dtype=TORCH_DTYPES[s.dtype]) if s.initial < 0
                  else torch.from_numpy(np.array(weights[s.initial])) for s in program.states})
    with torch.no_grad():
        for index, ins in enumerate(program.instructions):
            reference = run_op(ins.op, ins.attributes, [slots[s] for s in ins.inputs])
            slots[ins.outputs[0]] = reference
            mine = ours.get(index)
            theirs = reference.numpy()
            if mine is None or mine.shape != theirs.shape or not np.allclose(mine, theirs, atol=atol, rtol=rtol):
                return divergence_at(method, n, program, index, table,
                                     max_errors(mine, theirs)[0] if mine is not None and mine.shape == theirs.shape
                                     else float("inf"))
    return f"{method}[{n}]: runtime_py and ATen agree on every instruction; the compiled program differs from eager"


def verify_bundle(path: str | Path, engines: Sequence[str] = ("runtime_py",), atol: float | None = None,
                  rtol: float | None = None, max_instructions: int | None = None,
                  timeout: float | None = None, max_memory: int | None = None) -> VerifyReport:
    """Run the stored test vectors of the bundle at ``path`` on ``engines``; runtime_py's
    method calls under the given limits (exceeding one raises RunLimitExceeded; ``max_memory``
    None: runtime_py's default). ``atol`` and ``rtol`` None: the ones the export stored for the
    method, else DEFAULT_ATOL and DEFAULT_RTOL (``report.tolerances`` says which, per method)."""
    module = load(path, max_instructions=max_instructions, timeout=timeout, max_memory=max_memory)
    content = module.ptmf.extra_file(TEST_VECTORS_EXTRA_FILE)
    if content is None:
        raise UserError(f"{path} holds no test vectors: export it with --example-inputs")
    vectors = decode_test_vectors(content)
    stored = module.ptmf.extra_file(TOLERANCES_EXTRA_FILE)
    kept = decode_tolerances(stored) if stored is not None else {}
    report = VerifyReport(tolerances={method: choose_tolerance(kept.get(method), atol, rtol)
                                      for method in sorted(vectors)})
    runners = {"runtime_py": lambda: _runtime_py_runner(module),
               "torch": lambda: _torch_runner(Path(path), bool(module.state))}
    delegate = delegate_contents(module.ptmf)
    for engine in engines:
        run = runners[engine]()
        for method, items in sorted(vectors.items()):
            for n, vector in enumerate(items):
                try:
                    got = run(method, vector.inputs)
                except RunLimitExceeded:
                    raise  # not a wrong output: the limits given stop the whole verification
                except (LiteExportError, RuntimeError) as exc:
                    report.checks.append(OutputCheck(engine, method, n, -1, np.inf, np.inf, False,
                                                     str(exc).splitlines()[0]))
                    continue
                tolerance = report.tolerances[method]
                report.checks.extend(_compare(engine, method, n, got, vector, tolerance.atol, tolerance.rtol))
    failed = sorted({(c.method, c.vector) for c in report.checks if not c.passed})
    for method, n in failed:
        if delegate is None or method not in delegate[0]:
            continue
        # runtime_py against ATen on the same (widened) weights: the engines' tolerance, never the export's
        found = localize(method, n, delegate[0][method], delegate[1], vectors[method][n], module.debug_table,
                          DEFAULT_ATOL if atol is None else atol, DEFAULT_RTOL if rtol is None else rtol)
        if isinstance(found, Divergence):
            report.divergences.append(found)
        else:
            report.notes.append(found)
    return report


def describe_divergence(d: Divergence) -> str:
    return (f"{d.method}[{d.vector}]: engines diverge first at {d.instruction}, debug handle "
            f"{d.debug_handle}: {d.location} {d.module_hierarchy} (max abs diff {d.max_abs:.3g})")


def format_report(report: VerifyReport) -> str:
    header = f"{'engine':<11} {'method':<12} {'vector':>6} {'output':>6} {'max abs err':>12} {'max rel err':>12}"
    tolerances = set(report.tolerances.values())
    if len(tolerances) == 1:  # one line when every method has the same
        lines = [f"tolerance: {tolerances.pop().describe()}"]
    else:
        lines = [f"tolerance for {method}: {t.describe()}" for method, t in report.tolerances.items()]
    lines.append(header + "  result")
    for c in report.checks:
        result = "pass" if c.passed else "FAIL" + (f" ({c.problem})" if c.problem else "")
        output = "-" if c.output < 0 else str(c.output)
        lines.append(f"{c.engine:<11} {c.method:<12} {c.vector:>6} {output:>6} {c.max_abs:>12.3g} "
                     f"{c.max_rel:>12.3g}  {result}")
    lines += [describe_divergence(d) for d in report.divergences]
    lines += report.notes
    passed = sum(c.passed for c in report.checks)
    lines.append(f"{passed} passed, {len(report.checks) - passed} failed")
    return "\n".join(lines)
