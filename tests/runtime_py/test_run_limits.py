"""Run-time limits: a method call may be given an instruction budget and/or a timeout (runtime_py.load,
Module.run_method, `liteexport run/verify --max-instructions/--timeout`); a hostile bundle's endless
loop then ends in RunLimitExceeded (exit 7) instead of spinning forever."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))
import crafted  # noqa: E402
import harness  # noqa: E402

import runtime_py  # noqa: E402
from runtime_py.budgets import RunBudget, RunLimitExceeded  # noqa: E402
from runtime_py.errors import ExecutionError  # noqa: E402

X = np.arange(8, dtype=np.float32).reshape(2, 4)


@pytest.fixture(params=["forward_jmp_self", "forward_loop_2_62", "forward_shared_tuple_key"])
def endless(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / f"{request.param}.ptl"
    path.write_bytes(getattr(crafted, request.param)())
    return path


def test_instruction_budget_ends_an_endless_loop(endless: Path) -> None:
    module = runtime_py.load(endless, max_instructions=10_000)
    # the shared-tuple key is stopped before its hash (in C, beyond any clock): by any run budget
    message = "more than 16777216 items" if "tuple" in endless.name else "budget of 10000 instructions"
    with pytest.raises(RunLimitExceeded, match=message) as info:
        module.forward(X)
    assert isinstance(info.value, ExecutionError) and info.value.exit_code == 7
    assert "__torch__.SmallLinear.forward" in str(info.value)


def test_timeout_ends_an_endless_loop(endless: Path) -> None:
    module = runtime_py.load(endless)
    message = "more than 16777216 items" if "tuple" in endless.name else r"ran longer than the time limit of 0\.2 s"
    with pytest.raises(RunLimitExceeded, match=message):
        module.forward(X, timeout=0.2)  # per call, overriding the module's (none)


def test_limits_leave_valid_models_alone(tmp_path: Path) -> None:
    path = tmp_path / "linear.ptl"
    path.write_bytes(harness.load_seeds()["torch_linear.ptmf.bin"])
    unlimited = runtime_py.load(path).forward(X)
    limited = runtime_py.load(path, max_instructions=1000, timeout=60)
    np.testing.assert_array_equal(limited.forward(X), unlimited)
    np.testing.assert_array_equal(limited.forward(X), unlimited)  # each call has a budget of its own
    with pytest.raises(RunLimitExceeded, match="budget of 3 instructions"):
        limited.forward(X, max_instructions=3)


def test_tuple_tree_size_counts_shared_tuples_each_time_at_the_cost_of_the_distinct_ones() -> None:
    from runtime_py.budgets import tuple_tree_size

    t: tuple[object, ...] = (1,)
    for _ in range(60):
        t = (t, t, 2)
    assert tuple_tree_size(t, 2 ** 70) == 2 ** 62 - 2  # s(k) = 2 s(k-1) + 2, s(0) = 2 (the tuple and its 1)
    assert tuple_tree_size(t, 1000) == 1000
    assert tuple_tree_size((1, (2, 3), "x"), 100) == 6


def test_budget_counts_exactly() -> None:
    budget = RunBudget(max_instructions=5)
    assert budget.instructions_left == 5
    timed = RunBudget(max_instructions=10_000, timeout=5)
    assert timed.instructions_left == RunBudget.CHECK_EVERY  # the clock is read every CHECK_EVERY


@pytest.mark.parametrize("limits", [{"max_instructions": 0}, {"max_instructions": 1.5}, {"timeout": 0},
                                    {"timeout": -1}])
def test_bad_limits_are_refused(limits: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be a positive"):
        runtime_py.load(harness.SEEDS / "torch_linear.ptmf.bin", **limits)  # type: ignore[arg-type]


def test_big_int_arithmetic_runs_in_constant_time_as_int64(tmp_path: Path) -> None:
    """forward squares 3 forty times after 10 ** 2**40 and 1 << 2**40: as exact Python ints the
    call never ended, in C, under any --timeout; as torch's int64 it returns at once."""
    path = tmp_path / "big_int.ptl"
    path.write_bytes(crafted.forward_big_int_arithmetic())
    value = 3
    for _ in range(40):
        value = (value * value + (1 << 63)) % (1 << 64) - (1 << 63)  # int64 wrap-around, as torch's aten::mul.int
    assert runtime_py.load(path).forward(X, timeout=30) == value
    assert runtime_py.load(path).forward(X) == value


def _bundle(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.ptl"
    path.write_bytes(getattr(crafted, name)())
    return path


def test_timeout_stops_a_long_matrix_product_inside_a_compiled_program(tmp_path: Path) -> None:
    """An 8192x8192 matmul ran 76 s under --timeout 5: the deadline is now checked between the
    product's blocks of rows, so the call ends soon after it (the bound is generous: shared CI)."""
    import time

    module = runtime_py.load(_bundle(tmp_path, "program_matmul_8192"), timeout=1.0)
    x = np.ones((4, 20), np.float32)
    start = time.monotonic()
    with pytest.raises(RunLimitExceeded, match=r"ran longer than the time limit of 1 s \(instruction #3 MATMUL"):
        module.forward(x)
    assert time.monotonic() - start < 20


def test_memory_budget_refuses_a_16_gib_broadcast_before_allocating_it(tmp_path: Path) -> None:
    import tracemalloc

    module = runtime_py.load(_bundle(tmp_path, "program_broadcast_16_gib"))  # the default budget: 2 GiB
    tracemalloc.start()
    try:
        with pytest.raises(RunLimitExceeded, match=r"instruction #4 ADD \(slots \[3, 4\] -> \[5\]\) would allocate up "
                                                   r"to 17179869184 bytes while 524608 are live: more than the memory "
                                                   r"budget of 2147483648 bytes"):
            module.forward(np.ones((4, 20), np.float32))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20  # the two 256 KiB expanded inputs, not the 16 GiB sum


def test_memory_budget_counts_what_is_live(tmp_path: Path) -> None:
    """The expanded (65536, 1) and (1, 65536) arrays are 256 KiB each: a budget between one and
    both of them stops the second expand; the per-call value overrides the module's."""
    module = runtime_py.load(_bundle(tmp_path, "program_broadcast_16_gib"), max_memory=300 << 10)
    x = np.ones((4, 20), np.float32)
    with pytest.raises(RunLimitExceeded, match=r"instruction #3 EXPAND \(slots \[2\] -> \[4\]\) would allocate up "
                                               r"to 262144 bytes while 262464 are live"):
        module.forward(x)
    with pytest.raises(RunLimitExceeded, match="instruction #4 ADD"):
        module.forward(x, max_memory=1 << 20)


def test_memory_budget_leaves_real_models_alone(tmp_path: Path) -> None:
    path = tmp_path / "convnet.ptl"
    path.write_bytes(harness.load_seeds()["lowered_convnet.ptmf.bin"])
    module = runtime_py.load(path)
    x = np.random.default_rng(0).standard_normal((2, 3, 32, 32)).astype(np.float32)
    np.testing.assert_array_equal(module.forward(x, max_memory=8 << 20), module.forward(x))
