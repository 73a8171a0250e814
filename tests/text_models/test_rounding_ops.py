"""floor_divide, remainder and div(rounding_mode='floor'|'trunc') on run-time values (issue 20)
against torch eager, compiled from traced and scripted modules and run by runtime_py, by torch's lite
interpreter with liteexport's backend and, where it builds, by the native core (``run_engines``):
float32 within the parity tolerance (a zero divisor's inf and NaN included), int64 and int32 exactly,
with Python's signs (the quotient rounds down, the remainder takes the divisor's sign). An integer
divided by zero is an error in every engine, as in torch (ZeroDivisionError)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport.torch_backend as tb
import runtime_py
from bundle_format.debug_table import DebugTable
from bundle_format.program import BinaryAttrs, OpCode
from liteexport.bundle import write_bundle
from liteexport.lowered import CompiledModule, MethodSignature
from runtime_py.budgets import RunLimitExceeded
from runtime_py.errors import ExecutionError
from tests.runtime_py.backends.demo_backend_helpers import one_op_program
from tests.text_models.test_selection_ops import Fn
from tests.text_models.typed import check_against_eager, compile_scripted, compile_traced, run_engines

pytestmark = pytest.mark.torch_oracle


@pytest.fixture(scope="module", autouse=True)
def backend() -> None:
    tb.load_torch_backend()


def make(kind: str, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Dividends and divisors of both signs; integer divisors are never zero; float divisors hold exact
    zeros (inf and NaN results) and values that divide exactly (the rounding boundary)."""
    g = torch.Generator().manual_seed(seed)
    dtype = torch.float32 if kind.startswith("float32") else getattr(torch, kind.split("_")[0])
    if kind == "float32":
        return torch.randn(shape, generator=g) * 7
    if kind == "float32_divisor":
        values = torch.randn(shape, generator=g) * 3
        values.view(-1)[::5] = 0.0
        values.view(-1)[1::5] = -2.0
        return values
    values = torch.randint(-20, 21, shape, generator=g, dtype=dtype)
    if kind.endswith("_divisor"):
        values = torch.where(values == 0, torch.full_like(values, -3), values % 9 - 4)
        values = torch.where(values == 0, torch.full_like(values, 5), values)
    return values


_OPS: dict[str, tuple[Callable[..., torch.Tensor], OpCode]] = {
    "floor_divide": (lambda a, b: a // b, OpCode.FLOOR_DIV),
    "remainder": (lambda a, b: a % b, OpCode.REMAINDER),
    "div_floor": (lambda a, b: torch.div(a, b, rounding_mode="floor"), OpCode.FLOOR_DIV),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), OpCode.TRUNC_DIV),
}
# name -> (inputs (kind, shape), the torch code, an opcode the program must hold)
CASES: dict[str, tuple[list[tuple[str, tuple[int, ...]]], Callable[..., object], OpCode]] = {}
for _kind in ("float32", "int64", "int32"):
    for _name, (_fn, _op) in _OPS.items():
        CASES[f"{_name}_{_kind}"] = ([(_kind, (3, 8)), (f"{_kind}_divisor", (8,))], _fn, _op)
        CASES[f"{_name}_{_kind}_scalar"] = ([(_kind, (3, 8))], lambda a, f=_fn: (f(a, 3), f(a, -4)), _op)
        CASES[f"{_name}_{_kind}_reverse"] = ([(f"{_kind}_divisor", (3, 8))], lambda b, f=_fn: f(torch.tensor(17), b),
                                             _op)
CASES["floor_divide_int64_by_float"] = ([("int64", (3, 8))], lambda a: (a // 2.5, a % 1.5), OpCode.FLOOR_DIV)
CASES["remainder_int32_by_float32"] = ([("int32", (3, 8)), ("float32_divisor", (3, 8))], lambda a, b: a % b,
                                       OpCode.REMAINDER)


@pytest.mark.parametrize("name", sorted(CASES))
def test_traced_op_matches_torch_in_every_engine(name: str, tmp_path: Path) -> None:
    kinds, fn, opcode = CASES[name]
    module = Fn(fn)
    _, compiled = compile_traced(module, [make(kind, shape, 0) for kind, shape in kinds])
    assert opcode in {ins.op for ins in compiled.programs[0].instructions}
    for seed in (1, 2):
        inputs = [make(kind, shape, seed) for kind, shape in kinds]
        check_against_eager(module, compiled, tmp_path / f"{name}.ptl", inputs)


class Scripted(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                                 torch.Tensor, torch.Tensor, torch.Tensor]:
        return (a // b, a % b, torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
                a // 3, torch.remainder(a, -4))


@pytest.mark.parametrize("kind", ["float32", "int64", "int32"])
def test_scripted_ops_match_torch_in_every_engine(kind: str, tmp_path: Path) -> None:
    module = Scripted()
    shapes = [(kind, (2, 6)), (f"{kind}_divisor", (6,))]
    compiled = compile_scripted(module, [make(k, s, 0) for k, s in shapes])
    ops = [ins.op for ins in compiled.programs[0].instructions]
    assert {OpCode.FLOOR_DIV, OpCode.TRUNC_DIV, OpCode.REMAINDER} <= set(ops)
    for seed in (1, 2):
        inputs = [make(k, s, seed) for k, s in shapes]
        check_against_eager(module, compiled, tmp_path / "scripted.ptl", inputs)


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "div_floor", "div_trunc"])
@pytest.mark.parametrize("kind", ["int64", "int32"])
def test_an_integer_division_by_zero_is_an_error_in_every_engine(name: str, kind: str, tmp_path: Path) -> None:
    fn, _ = _OPS[name]
    module = Fn(fn)
    a, b = make(kind, (2, 4), 1), make(f"{kind}_divisor", (4,), 1)
    _, compiled = compile_traced(module, [a, b])
    b[2] = 0
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        module(a, b)  # torch's own refusal
    # runtime_py's error, and (checked by run_engines) the native core's, kind and message the same
    with pytest.raises(ExecutionError, match=r"\(slots \[0, 1\] -> \[\d+\]\): integer division or modulo by zero"):
        run_engines(compiled, tmp_path / "m.ptl", [a, b])
    lite = torch.jit.mobile._load_for_lite_interpreter(str(tmp_path / "m.ptl"))
    with pytest.raises(RuntimeError, match="integer division or modulo by zero"):
        lite.run_method("forward", a, b)


def test_memory_budget_refuses_a_huge_broadcast_before_allocating_it(tmp_path: Path) -> None:
    """[30000, 1] // [1, 30000]: a 3.6 GB result and the float formula's 4 temporaries as large
    (runtime_py's bound, memory.py), refused before the kernel runs."""
    program = one_op_program(OpCode.FLOOR_DIV, BinaryAttrs(), [(30000, 1), (1, 30000)])
    path = tmp_path / "huge.ptl"
    write_bundle(CompiledModule("__torch__.m.M", (MethodSignature("forward", ("a", "b"), False, 1),), (program,), (),
                                DebugTable(())), path)
    module = runtime_py.load(path, max_memory=1 << 30)
    with pytest.raises(RunLimitExceeded, match="FLOOR_DIV .* would allocate up to 18000000000 bytes"):
        module.forward(np.ones((30000, 1), np.float32), np.ones((1, 30000), np.float32))
