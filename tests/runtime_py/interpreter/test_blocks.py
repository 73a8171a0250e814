"""Compiled straight-line blocks (runtime_py.blocks) against instruction-by-instruction runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bundle_format.ptmf import BytecodeOp as Op
from runtime_py.blocks import block_spans
from runtime_py.budgets import LoadBudget
from runtime_py.errors import ExecutionError
from runtime_py.interpreter import Code, run
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
    from bundle_format.ptmf import Operator
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


@pytest.mark.parametrize("slot", [5, -1])
def test_get_attr_in_a_block_fails_as_the_step_does(slot: int) -> None:
    # self.slot 5 (or -1) of an object with one slot, then of a value that is no object
    code = _code([(Op.STOREN, 1, 2), (Op.LOAD, 1, 0), (Op.GET_ATTR, slot, 0), (Op.STORE, 3, 0), (Op.LOAD, 3, 0),
                  (Op.RET, 0, 0)])
    assert block_spans(code.instructions) == [(0, 5)]
    for obj, error in ((ScriptObject("M", [1]), f": object of type M has no attribute slot {slot}"),
                       (7, f": GET_ATTR of attribute slot {slot} needs an object, got an int")):
        messages = []
        for budget in (None, LoadBudget(100, 1 << 20)):
            with pytest.raises(ExecutionError, match="GET_ATTR failed at pc 2") as failure:
                run(code, [obj, 1], _Runtime(), budget)
            messages.append(str(failure.value))
        assert messages[0] == messages[1] and messages[0].endswith(error)


def _linear_code() -> Code:
    """self.fc1(x) then self.fc2 (no bias) of that: two calls of one aten::linear operator entry."""
    from bundle_format.ptmf import Operator
    from runtime_py.operators import bind_operator

    instructions = ((Op.STOREN, 1, 2), (Op.LOAD, 2, 0), (Op.LOAD, 1, 0), (Op.GET_ATTR, 0, 0), (Op.LOAD, 1, 0),
                    (Op.GET_ATTR, 1, 0), (Op.OP, 0, 0), (Op.LOAD, 1, 0), (Op.GET_ATTR, 2, 0), (Op.LOADC, 0, 0),
                    (Op.OP, 0, 0), (Op.RET, 0, 0))
    return Code("__torch__.T.forward", tuple((int(op), x, n) for op, x, n in instructions), (None,),
                (bind_operator(Operator("aten::linear", "", 3), "f"),), (), 4, None, ("aten::linear",))


def test_each_call_of_a_shared_operator_keeps_its_own_constants() -> None:
    # compiled blocks give each instruction a site of its own; the stepped run shares one: both
    # must follow weights that change between calls (another instance, other shapes, other dtypes)
    rng = np.random.default_rng(0)

    def module(width: int, dtype: Any = np.float32) -> ScriptObject:
        w1, b1, w2 = (rng.standard_normal(shape).astype(dtype) for shape in ((width, 8), (width,), (3, width)))
        return ScriptObject("M", [w1, b1, w2])

    code = _linear_code()
    modules = [module(16), module(16), module(5), module(16, np.float64)]
    for _ in range(2):
        for m in modules + modules[::-1]:
            for x in (rng.standard_normal((2, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)):
                w1, b1, w2 = (s.astype(np.float64) for s in m.slots)
                expected = (x.astype(np.float64) @ w1.T + b1) @ w2.T
                for result in _both(code, [m, x]):
                    assert result.dtype == np.result_type(x, m.slots[0])
                    np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-5)
    # a weight that no longer fits x fails in torch's words, after the site saw it fit
    with pytest.raises(ExecutionError, match=r"aten::linear: mat1 and mat2 shapes cannot be multiplied \(1x7"):
        run(code, [modules[0], np.ones(7, np.float32)], _Runtime())


def test_numpy_floating_point_state_is_the_callers_after_a_run() -> None:
    from bundle_format.ptmf import Operator
    from runtime_py.operators import bind_operator

    # x * x overflowing float32: inf, as in torch, even where numpy would raise; the caller's state stays
    mul = bind_operator(Operator("aten::mul", "Tensor", 2), "f")
    instructions = ((Op.STOREN, 1, 2), (Op.LOAD, 2, 0), (Op.LOAD, 2, 0), (Op.OP, 0, 0), (Op.RET, 0, 0))
    code = Code("__torch__.T.forward", tuple((int(op), x, n) for op, x, n in instructions), (), (mul,), (), 4, None,
                ("aten::mul.Tensor",))
    big = np.full(3, 1e30, np.float32)
    with np.errstate(all="raise"):
        for result in _both(code, [None, big]):
            assert np.isinf(result).all()
        assert np.geterr()["over"] == "raise"
        with pytest.raises(FloatingPointError):
            big * big
