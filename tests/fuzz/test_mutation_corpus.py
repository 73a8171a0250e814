"""Deterministic mutation corpus: every mutant of every seed ends in a LiteExportError (not an
InternalError) or loads, within a time bound. Seeds: tests/fuzz/seeds (tests/fuzz/make_seeds.py);
mutators: tests/fuzz/harness.py. Crashers found by this or by atheris live in tests/fuzz/crashers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import harness  # noqa: E402

MUTANTS_PER_SEED = 350
HANG_SECONDS = 30  # a watchdog for loops the load budget missed, far above any real load: not a speed check
DESCRIBE_EVERY = 5  # describing through a temp file is the slow part; do it for every 5th mutant

SEEDS = harness.load_seeds()
SHAPES = harness.seed_shapes()


def _shapes(name: str) -> list[list[int]] | None:
    return SHAPES.get(name.removesuffix(".bin"))  # inputs.json names seeds without ".bin"


def _exercise_bounded(data: bytes, kind: str, shapes: list[list[int]] | None, describe: bool) -> str:
    error = harness.bounded_failure(data, kind, shapes, describe, HANG_SECONDS)
    return "ok" if error is None else type(error).__name__


def test_seeds_are_present() -> None:
    kinds = {harness.kind_of(name) for name in SEEDS}
    assert kinds == {"ptmf", "zip", "program", "debug"}


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_seed_loads(name: str) -> None:
    expected = "FormatError" if name.startswith("torch_full_jit_save") else "ok"
    assert _exercise_bounded(SEEDS[name], harness.kind_of(name), _shapes(name), True) == expected


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_mutants_end_in_our_errors(name: str) -> None:
    data, kind = SEEDS[name], harness.kind_of(name)
    mutator = harness.Mutator(data, kind)
    outcomes: dict[str, int] = {}
    for i in range(MUTANTS_PER_SEED):
        mutant = mutator.mutant(i)
        try:
            outcome = _exercise_bounded(mutant, kind, _shapes(name), i % DESCRIBE_EVERY == 0)
        except AssertionError as exc:
            path = harness.CRASHERS / f"new_{name.removesuffix('.bin')}_{i}.{kind}.bin"
            path.write_bytes(mutant)
            raise AssertionError(f"mutant {i} of {name} (saved as {path.name}): {exc}") from exc
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    assert outcomes.get("FormatError", 0) > 0, outcomes


CRASHER_FILES = sorted(harness.CRASHERS.glob("*.bin"))


@pytest.mark.parametrize("path", CRASHER_FILES, ids=[p.name for p in CRASHER_FILES])
def test_crasher_regressions(path: Path) -> None:
    """Inputs that once escaped as another exception, crashed or hung: name ``<what>.<kind>.bin``."""
    outcome = _exercise_bounded(path.read_bytes(), harness.kind_of(path.name), None, True)
    assert outcome != "ok" or "loads" in path.name
