"""Structure-aware attacks (tests/fuzz/attacks.py, issue 13) end in our errors, within a time bound,
saying where; and none leaves anything behind in the process: after each one a valid seed is
loaded and run again and must give the outputs it gave before any attack (cross-load)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import attacks  # noqa: E402
import harness  # noqa: E402

from bundle_format.bundle_file import read_bundle_bytes  # noqa: E402
from runtime_py.errors import ExecutionError  # noqa: E402
from runtime_py.module import Module  # noqa: E402

ATTACKS_PER_KIND = 20
HANG_SECONDS = 30  # a watchdog for loops the budgets missed, far above any real load: not a speed check
SEEDS = harness.load_seeds()
SHAPES = harness.seed_shapes()
# seeds with a known forward signature: the valid files of the cross-load checks
RUNNABLE = sorted(name for name in SEEDS if name.removesuffix(".bin") in SHAPES)


def seed_inputs(name: str) -> list[np.ndarray]:
    return [np.linspace(-1, 1, int(np.prod(s)), dtype=np.float32).reshape(s) for s in SHAPES[name.removesuffix(".bin")]]


def run_seed(name: str) -> list[np.ndarray]:
    out = Module(read_bundle_bytes(SEEDS[name])).forward(*seed_inputs(name))
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


REFERENCE = {name: run_seed(name) for name in RUNNABLE}  # computed before any attack ran


def assert_seed_unharmed(name: str) -> None:
    for got, want in zip(run_seed(name), REFERENCE[name], strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


# what each attack may end in: "ok" only where the changed record or code is never used
EXPECTED = {"pickle_build": {"FormatError", "ok"}, "pickle_shared_tuples": {"FormatError"},
            "zip_declared_size": {"FormatError", "ok"}, "program_slots": {"ok"}, "setstate_code": {"FormatError"},
            "forward_code": {"ok"}, "shared_ivalues": {"FormatError"}}


@pytest.mark.parametrize("name", sorted(attacks.ATTACKS))
def test_attacks_end_in_our_errors_and_poison_nothing(name: str) -> None:
    assert set(EXPECTED) == set(attacks.ATTACKS)
    kind = attacks.ATTACKS[name][1]
    outcomes: dict[str, int] = {}
    for i in range(ATTACKS_PER_KIND):
        data = attacks.attack(name, i)
        try:
            error = harness.bounded_failure(data, kind, None, False, HANG_SECONDS)
        except AssertionError as exc:
            path = harness.CRASHERS / f"new_{name}_{i}.{kind}.bin"
            path.write_bytes(data)
            raise AssertionError(f"attack {name} {i} (saved as {path.name}): {exc}") from exc
        outcome = "ok" if error is None else type(error).__name__
        assert outcome in EXPECTED[name], f"attack {name} {i}: {error}"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        assert_seed_unharmed(RUNNABLE[i % len(RUNNABLE)])
    assert sum(outcomes.values()) == ATTACKS_PER_KIND


def test_far_apart_slots_compute_what_the_seed_computes() -> None:
    for i in range(5):
        module = Module(read_bundle_bytes(attacks.attack("program_slots", i)))
        got = np.asarray(module.forward(*seed_inputs("lowered_mlp.ptmf.bin")))
        np.testing.assert_array_equal(got, REFERENCE["lowered_mlp.ptmf.bin"][0])


def test_endless_forwards_stop_at_the_budget() -> None:
    for i in range(6):
        module = Module(read_bundle_bytes(attacks.attack("forward_code", i)))
        with pytest.raises(ExecutionError):
            module.forward(*seed_inputs("torch_linear.ptmf.bin"), max_instructions=10_000)


BOMB_BUDGET = 64 << 20


@pytest.mark.parametrize("i", range(12))
def test_program_bombs_stop_at_the_memory_budget_before_allocating(i: int) -> None:
    """A compiled program making gigabytes from one element ends in RunLimitExceeded under a 64 MiB
    budget, and what the process allocated stays within the budget (plus the bundle's own size)."""
    import tracemalloc

    from runtime_py.budgets import RunLimitExceeded

    data = attacks.program_bomb(random.Random(f"program_bomb/{i}"))
    module = Module(read_bundle_bytes(data))
    tracemalloc.start()
    try:
        with pytest.raises(RunLimitExceeded, match="more than the memory budget of 67108864 bytes"):
            module.forward(np.ones((4, 20), np.float32), max_memory=BOMB_BUDGET, timeout=HANG_SECONDS)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < BOMB_BUDGET + (8 << 20), f"bomb {i}: peak {peak} bytes"
    assert_seed_unharmed(RUNNABLE[i % len(RUNNABLE)])
