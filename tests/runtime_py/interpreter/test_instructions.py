"""One instruction at a time, on hand-built functions (no torch, no operator table)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from bundle_format.ptmf import BytecodeOp as Op
from runtime_py.errors import ExecutionError, FormatError
from runtime_py.interpreter import Code, ScriptError, run


class _Runtime:
    def call_method(self, obj: Any, name: str, args: list[Any]) -> Any:
        return getattr(obj, name)(*args)

    def create_object(self, type_name: str) -> Any:
        from runtime_py.values import ScriptObject
        return ScriptObject(type_name)


def _add(stack: list[Any]) -> None:
    b = stack.pop()
    stack.append(stack.pop() + b)


def _lt(stack: list[Any]) -> None:
    b = stack.pop()
    stack.append(stack.pop() < b)


def _fail(stack: list[Any]) -> None:
    raise ValueError("shapes do not match")


def _run(instructions: list[tuple[int, int, int]], args: list[Any], constants: tuple[Any, ...] = (),
         types: tuple[str, ...] = (), register_size: int = 8, handles: tuple[int, ...] | None = None) -> Any:
    code = Code("__torch__.T.forward", tuple((int(op), x, n) for op, x, n in instructions), constants,
                (_add, _lt, _fail), types, register_size, handles, ("aten::add.int", "aten::lt.int", "aten::fail"))
    return run(code, args, _Runtime())


def test_storen_loads_registers_in_order() -> None:
    # STOREN 1 3: self -> r1, a -> r2, b -> r3
    assert _run([(Op.STOREN, 1, 3), (Op.LOAD, 3, 0), (Op.RET, 0, 0)], [None, 1, 2]) == 2
    assert _run([(Op.STOREN, 1, 3), (Op.MOVE, 2, 0), (Op.RET, 0, 0)], [None, 1, 2]) == 1


def test_loop_counts_and_carries_values() -> None:
    # acc = 0; for i in range(n): acc = acc + i  -- the shape torch emits
    code = [
        (Op.STOREN, 1, 2),  # r1 self, r2 n
        (Op.LOADC, 0, 0),  # trip count 0
        (Op.LOAD, 2, 0),  # max trip count n
        (Op.LOADC, 1, 0),  # cond True
        (Op.LOADC, 0, 0),  # acc = 0 (loop-carried)
        (Op.LOOP, 9, 3),  # N = 2 + 1 carried value; on exit jump to RET
        (Op.STOREN, 3, 2),  # r3 = i, r4 = acc
        (Op.MOVE, 4, 0),
        (Op.MOVE, 3, 0),
        (Op.OP, 0, 0),  # acc + i
        (Op.STORE, 5, 0),
        (Op.LOADC, 1, 0),  # cond True
        (Op.LOAD, 5, 0),  # carried acc above cond
        (Op.JMP, -8, 0),  # back to LOOP
        (Op.RET, 0, 0),  # the carried value replaced the three counters
    ]
    assert _run(code, [None, 5], constants=(0, True)) == 10
    assert _run(code, [None, 0], constants=(0, True)) == 0


def test_jf_takes_the_jump_on_false() -> None:
    code = [(Op.STOREN, 1, 2), (Op.LOAD, 2, 0), (Op.JF, 3, 0), (Op.LOADC, 0, 0), (Op.RET, 0, 0),
            (Op.LOADC, 1, 0), (Op.RET, 0, 0)]
    assert _run(code, [None, True], constants=("yes", "no")) == "yes"
    assert _run(code, [None, False], constants=("yes", "no")) == "no"


def test_containers() -> None:
    body = [(Op.LOADC, 0, 0), (Op.LOADC, 1, 0), (Op.LOADC, 2, 0), (Op.LOADC, 3, 0)]
    assert _run(body + [(Op.DICT_CONSTRUCT, 0, 4), (Op.RET, 0, 0)], [], ("a", 1, "b", 2), ("Dict[str, int]",)) \
        == {"a": 1, "b": 2}
    assert _run(body + [(Op.LIST_CONSTRUCT, 0, 4), (Op.RET, 0, 0)], [], (1, 2, 3, 4), ("List[int]",)) == [1, 2, 3, 4]
    assert _run(body + [(Op.TUPLE_CONSTRUCT, 3, 0), (Op.TUPLE_SLICE, 1, 2), (Op.RET, 0, 0)], [], (1, 2, 3, 4)) \
        == (3, 4)
    assert _run([(Op.LOADC, 0, 0), (Op.LOADC, 1, 0), (Op.TUPLE_INDEX, 0, 0), (Op.RET, 0, 0)], [],
                ((5, 6, 7), -1)) == 7
    assert _run([(Op.LOADC, 0, 0), (Op.LIST_UNPACK, 2, 0), (Op.OP, 0, 0), (Op.RET, 0, 0)], [], ([3, 4],)) == 7
    assert _run([(Op.LOADC, 0, 0), (Op.LOADC, 1, 0), (Op.DICT_INDEX, 0, 0), (Op.RET, 0, 0)], [],
                ({"k": 9}, "k")) == 9
    with pytest.raises(ExecutionError, match="KeyError: z"):
        _run([(Op.LOADC, 0, 0), (Op.LOADC, 1, 0), (Op.DICT_INDEX, 0, 0), (Op.RET, 0, 0)], [], ({"k": 9}, "z"))
    with pytest.raises(ExecutionError, match="Expected 3 elements"):
        _run([(Op.LOADC, 0, 0), (Op.LIST_UNPACK, 3, 0), (Op.RET, 0, 0)], [], ([3, 4],))


@pytest.mark.parametrize("args, expected", [
    (("n={} x={}", 3, 1.5), "n=3 x=1.5"),
    (("{} {} {} {}", 2.0, 0.1, True, None), "2. 0.10000000000000001 True None"),
    (("{}|{}", [1, 2], ("a", 3.5)), "[1, 2]|(a, 3.5)"),
    (("no fields", ), "no fields"),
])
def test_format(args: tuple[Any, ...], expected: str) -> None:
    code = [(Op.LOADC, i, 0) for i in range(len(args))] + [(Op.FORMAT, len(args), 0), (Op.RET, 0, 0)]
    assert _run(code, [], args) == expected


def test_tensor_queries() -> None:
    t = np.zeros((2, 3), dtype=np.int64)
    for op, expected in ((Op.DIM, 2), (Op.DTYPE, 4), (Op.DEVICE, "cpu"), (Op.IS_CUDA, False)):
        assert _run([(Op.LOADC, 0, 0), (op, 0, 0), (Op.RET, 0, 0)], [], (t,)) == expected
    scalar = _run([(Op.LOADC, 0, 0), (Op.NUM_TO_TENSOR, 0, 0), (Op.RET, 0, 0)], [], (1.5,))
    assert scalar.shape == () and scalar.dtype == np.float64 and scalar == 1.5
    f = np.array([[1.0, 2.0]], dtype=np.float32)
    assert _run([(Op.LOADC, 0, 0), (Op.LOADC, 1, 0), (Op.LOADC, 2, 0), (Op.TO_LIST, 0, 0), (Op.RET, 0, 0)], [],
                (f, 2, 1)) == [[1.0, 2.0]]
    with pytest.raises(ExecutionError, match="dimension"):
        _run([(Op.LOADC, 0, 0), (Op.LOADC, 1, 0), (Op.LOADC, 2, 0), (Op.TO_LIST, 0, 0), (Op.RET, 0, 0)], [],
             (f, 1, 1))


def test_is_isnot_not_and_isinstance() -> None:
    def check(op: int, a: Any, b: Any) -> Any:
        return _run([(Op.LOADC, 0, 0), (Op.LOADC, 1, 0), (op, 0, 0), (Op.RET, 0, 0)], [], (a, b))
    assert check(Op.IS, None, None) is True
    assert check(Op.ISNOT, np.zeros(1), None) is True
    assert check(Op.IS, 3, 3) is True
    assert _run([(Op.LOADC, 0, 0), (Op.NOT, 0, 0), (Op.RET, 0, 0)], [], (False,)) is True
    code = [(Op.LOADC, 0, 0), (Op.ISINSTANCE, 0, 2), (Op.RET, 0, 0)]
    assert _run(code, [], (np.zeros(1),), ("int", "Tensor")) is True
    assert _run(code, [], ("s",), ("int", "Tensor")) is False


def test_objects_and_attributes() -> None:
    code = [(Op.CREATE_OBJECT, 0, 0), (Op.STORE, 1, 0), (Op.LOAD, 1, 0), (Op.LOADC, 0, 0), (Op.SET_ATTR, 2, 0),
            (Op.MOVE, 1, 0), (Op.GET_ATTR, 2, 0), (Op.RET, 0, 0)]
    assert _run(code, [], (42,), ("__torch__.Foo",)) == 42


def test_interface_call_passes_object_and_inputs() -> None:
    class Obj:
        def scale(self, a: int, b: int) -> int:
            return a * b
    code = [(Op.STOREN, 1, 3), (Op.MOVE, 1, 0), (Op.MOVE, 2, 0), (Op.MOVE, 3, 0), (Op.INTERFACE_CALL, 0, 3),
            (Op.RET, 0, 0)]
    assert _run(code, [Obj(), 6, 7], ("scale",)) == 42


def test_raise_exception_keeps_class_and_debug_handle() -> None:
    code = [(Op.LOADC, 0, 0), (Op.LOADC, 1, 0), (Op.RAISE_EXCEPTION, 0, 0), (Op.RET, 0, 0)]
    with pytest.raises(ScriptError, match="builtins.ValueError: bad") as info:
        _run(code, [], ("bad", "builtins.ValueError"), handles=(10, 11, 12, 13))
    assert info.value.debug_handle == 12
    with pytest.raises(ScriptError, match="^AssertionError: neg$"):
        _run(code, [], ("AssertionError: neg", None))


def test_kernel_failure_names_operator_pc_function_and_handle() -> None:
    code = [(Op.LOADC, 0, 0), (Op.OP, 2, 0), (Op.RET, 0, 0)]
    with pytest.raises(ExecutionError, match=r"aten::fail failed at pc 1 of function __torch__.T.forward: "
                                             r"ValueError: shapes do not match") as info:
        _run(code, [], (1,), handles=(5, 6, 7))
    assert info.value.debug_handle == 6


def test_unknown_opcode_names_it_pc_and_function() -> None:
    with pytest.raises(FormatError, match="unsupported instruction FORK at pc 1 of function __torch__.T.forward"):
        _run([(Op.LOADC, 0, 0), (Op.FORK, 0, 0), (Op.RET, 0, 0)], [], (1,))
    with pytest.raises(FormatError, match="unsupported instruction opcode 99 at pc 0"):
        _run([(99, 0, 0)], [])


def test_warn_logs_the_message(caplog: pytest.LogCaptureFixture) -> None:
    _run([(Op.LOADC, 0, 0), (Op.LOADC, 1, 0), (Op.WARN, 0, 0), (Op.LOADC, 1, 0), (Op.RET, 0, 0)], [], ("careful", 2))
    assert "careful" in caplog.text
