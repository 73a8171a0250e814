"""TorchScript ints are int64: every int operator wraps as torch's C++ does, in O(1), on edge values
(issue 18: a bundle raising 10 to 2**40, or squaring a number 40 times, ran for ever inside CPython)."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from runtime_py.errors import ExecutionError
from tests.runtime_py.operators.oracle import ours

torch = pytest.importorskip("torch")

MIN, MAX = -(1 << 63), (1 << 63) - 1
EDGES = (MIN, MIN + 1, -(1 << 32), -7, -1, 0, 1, 2, 3, 63, 64, 70, 1 << 32, (1 << 62) + 1, MAX - 1, MAX)

# int x int -> int (or float, for pow) operators, on every pair of edge values
BINARY = ("aten::add.int", "aten::sub.int", "aten::mul.int", "aten::__lshift__.int", "aten::__rshift__.int",
          "aten::__and__.int", "aten::__or__.int", "aten::__xor__.int", "aten::pow.int_to_int", "aten::pow.int",
          "prim::min.int", "prim::max.int", "aten::add", "aten::mul", "aten::sub")
# INT64_MIN // -1 (and % -1) kill torch's own process with SIGFPE: checked against plain wrap-around below
DIVISION = ("aten::floordiv.int", "aten::remainder.int")


def _theirs(key: str, *args: Any) -> Any:
    ns, _, rest = key.partition("::")
    name, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, ns), name), overload or "default")(*args)


def _same(mine: Any, expected: Any) -> bool:
    return type(mine) is type(expected) and (mine == expected or mine != mine and expected != expected)


@pytest.mark.parametrize("key", BINARY + DIVISION)
def test_binary_int_operators_match_torch_on_edge_values(key: str) -> None:
    wrong = []
    for a, b in itertools.product(EDGES, EDGES):
        if key in DIVISION and (b == 0 or (a == MIN and b == -1)):
            continue
        try:
            expected = _theirs(key, a, b)
        except RuntimeError as exc:
            with pytest.raises(ExecutionError, match=str(exc).splitlines()[-1].split(": ")[-1]):
                ours(key, a, b)
            continue
        [mine] = ours(key, a, b)
        if not _same(mine, expected):
            wrong.append(f"{key}({a}, {b}): ours {mine!r}, torch {expected!r}")
    assert not wrong, "\n".join(wrong[:10])


@pytest.mark.parametrize("key", ["aten::neg.int", "prim::abs.int", "aten::Int.float", "aten::floor.float",
                                 "aten::ceil.float", "aten::Int.Scalar"])
def test_unary_operators_match_torch_on_edge_values(key: str) -> None:
    values: tuple[Any, ...] = EDGES if key.endswith(".int") else (
        0.5, -2.5, 2147483647.9, -2147483648.0, -2147483648.5, 3e9, 9.2e18, 9.3e18, -9.3e18, 1e300, float("inf"),
        float("-inf"), float("nan"), -9.223372036854775808e18)
    for value in values:
        try:
            expected = _theirs(key, value)
        except RuntimeError as exc:
            with pytest.raises(ExecutionError, match=str(exc).splitlines()[-1].split(": ")[-1]):
                ours(key, value)
            continue
        assert _same(ours(key, value)[0], expected), f"{key}({value})"


def test_division_overflow_wraps_where_torch_crashes() -> None:
    assert ours("aten::floordiv.int", MIN, -1) == [MIN]  # 2**63 wrapped; torch's process dies of SIGFPE
    assert ours("aten::remainder.int", MIN, -1) == [0]
    assert ours("aten::divmod.int", MIN, -1) == [MIN, 0]
    assert ours("aten::__derive_index", 2, MAX, MAX) == [_theirs("aten::__derive_index", 2, MAX, MAX)]


def test_huge_int_powers_and_repeated_squaring_take_no_time() -> None:
    start = time.perf_counter()
    assert ours("aten::pow.int_to_int", 10, 1 << 40) == [float("inf")]
    value = 3
    for _ in range(40):
        [value] = ours("aten::mul.int", value, value)
    assert MIN <= value <= MAX
    assert value == _square_in_torch(3, 40)
    assert ours("aten::__lshift__.int", 1, 1 << 40) == [_theirs("aten::__lshift__.int", 1, 1 << 40)]
    assert time.perf_counter() - start < 60  # the old exact arithmetic never ended: no tight bound here


def _square_in_torch(value: int, times: int) -> int:
    for _ in range(times):
        value = _theirs("aten::mul.int", value, value)
    return value
