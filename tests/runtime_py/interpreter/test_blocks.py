"""Compiled straight-line blocks (runtime_py.blocks) against instruction-by-instruction runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from runtime_py.blocks import block_spans
from runtime_py.errors import ExecutionError
from runtime_py.format.ptmf import OpCode as Op
from runtime_py.interpreter import Code, LoadBudget, run
from runtime_py.values import ScriptObject
from tests.runtime_py.interpreter.test_instructions import _add, _fail, _Runtime


def _code(instructions: list[tuple[int, int, int]], constants: tuple[Any, ...] = ()) -> Code:
    return Code("__torch__.T.forward", tuple((int(op), x, n) for op, x, n in instructions), constants,
                (_add, _fail), (), 8, None, ("aten::add.int", "aten::fail"))


def _both(code: Code, args: list[Any]) -> tuple[Any, Any]:
    """The result compiled (no budget) and step by step (a load budget runs the plain steps)."""
    stepped = run(code, list(args), _Runtime(), LoadBudget(10_000, 1 << 20))
    return run(code, list(args), _Runtime()), stepped


# self.w is slot 0 of r1; x in r2: (x + self.w) stored, then a list, a tuple and STOREN round trip
SHUFFLE = [
    (Op.STOREN, 1, 2), (Op.LOAD, 2, 0), (Op.LOAD, 1, 0), (Op.GET_ATTR, 0, 0), (Op.OP, 0, 0), (Op.STORE, 3, 0),
    (Op.LOAD, 3, 0), (Op.LOADC, 0, 0), (Op.LIST_CONSTRUCT, 0, 2), (Op.LOAD, 3, 0), (Op.TUPLE_CONSTRUCT, 2, 0),
    (Op.STORE, 4, 0), (Op.MOVE, 4, 0), (Op.DROPR, 3, 0), (Op.LOAD, 2, 0), (Op.LOADC, 0, 0), (Op.STOREN, 5, 2),
    (Op.LOADC, 0, 0), (Op.DROP, 0, 0), (Op.LOAD, 6, 0), (Op.TUPLE_CONSTRUCT, 2, 0), (Op.RET, 0, 0),
]


def test_a_block_computes_what_the_steps_compute() -> None:
    code = _code(SHUFFLE, constants=("c",))
    assert block_spans(code.instructions) == [(0, 21)]
    ours, stepped = _both(code, [ScriptObject("M", [10]), 5])
    assert ours == stepped == (([15, "c"], 15), "c")


def test_jump_targets_split_blocks() -> None:
    # if x: r3 = 1 else: r3 = 2; return r3 + x  -- each jump target (pc 6, 8) starts a block
    code = [(Op.STOREN, 1, 2), (Op.LOAD, 2, 0), (Op.JF, 4, 0), (Op.LOADC, 0, 0), (Op.STORE, 3, 0), (Op.JMP, 3, 0),
            (Op.LOADC, 1, 0), (Op.STORE, 3, 0), (Op.MOVE, 3, 0), (Op.LOAD, 2, 0), (Op.OP, 0, 0), (Op.RET, 0, 0)]
    assert block_spans(code) == [(0, 2), (3, 5), (6, 8), (8, 11)]
    for x, expected in ((3, 4), (0, 2)):
        assert _both(_code(code, constants=(1, 2)), [None, x]) == (expected, expected)


def test_an_operator_failing_in_a_block_names_its_pc() -> None:
    code = _code([(Op.STOREN, 1, 2), (Op.LOAD, 2, 0), (Op.LOAD, 2, 0), (Op.OP, 1, 0), (Op.STORE, 3, 0),
                  (Op.LOAD, 3, 0), (Op.RET, 0, 0)])
    with pytest.raises(ExecutionError, match=r"aten::fail failed at pc 3 of function __torch__\.T\.forward: "
                                             "ValueError: shapes do not match"):
        run(code, [None, 1], _Runtime())


def test_a_short_stack_in_a_block_fails_as_the_step_does() -> None:
    code = _code([(Op.STOREN, 1, 2), (Op.LOAD, 2, 0), (Op.STOREN, 3, 3), (Op.LOAD, 3, 0), (Op.RET, 0, 0)])
    for budget in (None, LoadBudget(100, 1 << 20)):
        with pytest.raises(ExecutionError, match="instruction needs 3 values but the stack holds 1"):
            run(code, [None, 1], _Runtime(), budget)


def test_operators_with_a_direct_call_get_their_arguments_from_locals() -> None:
    from runtime_py.format.ptmf import Operator
    from runtime_py.operators import bind_operator
    from runtime_py.operators.registry import DIRECT

    # x + x * x through the operator table: aten::mul.Tensor and aten::add.Tensor (alpha defaulted)
    ops = tuple(bind_operator(Operator("aten::" + name, "Tensor", 2), "f") for name in ("mul", "add"))
    instructions = ((Op.STOREN, 1, 2), (Op.LOAD, 2, 0), (Op.LOAD, 2, 0), (Op.LOAD, 2, 0), (Op.OP, 0, 0),
                    (Op.OP, 1, 0), (Op.RET, 0, 0))
    code = Code("__torch__.T.forward", tuple((int(op), x, n) for op, x, n in instructions), (), ops, (), 4, None,
                ("aten::mul.Tensor", "aten::add.Tensor"))
    assert all(getattr(kernel, DIRECT, None) is not None for kernel in ops)
    x = np.array([1.0, 2.0, -3.0], dtype=np.float32)
    ours, stepped = _both(code, [None, x])
    np.testing.assert_array_equal(ours, x + x * x)
    np.testing.assert_array_equal(stepped, ours)
    with pytest.raises(ExecutionError, match="aten::mul.Tensor: expected a tensor or a number, got str") as failure:
        run(code, [None, "x"], _Runtime())
    assert failure.value.debug_handle == -1  # the function has no debug handles; the kernel's own error
