"""`liteexport run` on bundles whose forward bytecode gives an instruction or an operator a value of
the wrong kind: nobody type-checked the bytecode, so each is the bundle's error - exit 7 with a
message that names the instruction, pc and function - never a bug's exit 70. And the other side
of the rule: an implementation of ours that fails on arguments of its schema's types is a bug,
exit 70 (runtime_py/interpreter.py, run; runtime_py/operators/registry.py, fail)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_bytes
from bundle_format.ptmf import BytecodeOp as Op
from bundle_format.ptmf import Instruction
from runtime_py.errors import ExecutionError, InternalError
from runtime_py.module import Module
from runtime_py.values import ScriptObject

from .conftest import invoke

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))
import crafted  # noqa: E402
import harness  # noqa: E402

FORWARD = "function __torch__.SmallLinear.forward"  # the torch_linear seed's, whose forward each case replaces
_I = Instruction
_S = ptmf.StringValue
_INT, _STR, _TRUE = ptmf.IntValue(3), ptmf.StringValue("a"), ptmf.BoolValue(True)
_ARGS = _I(Op.STOREN, 1, 2)  # self in register 1, x (a [2, 4] tensor) in register 2
_SELF, _X = _I(Op.LOAD, 1, 0), _I(Op.LOAD, 2, 0)
_RET = _I(Op.RET, 0, 0)

# name -> (forward's code, its constants, its types, what the error says: an instruction's refusal names
# the instruction, pc and function; an operator's error its name, and its debug handle maps it to source)
CASES: dict[str, tuple[tuple[Instruction, ...], tuple[ptmf.IValue, ...], tuple[str, ...], str]] = {
    "get_attr_of_a_tensor": ((_ARGS, _X, _I(Op.GET_ATTR, 0, 0), _RET), (), (),
                             "GET_ATTR failed at pc 2 of {f}: GET_ATTR of attribute slot 0 needs an object, got a "
                             "Tensor"),
    "get_attr_slot_missing": ((_ARGS, _SELF, _I(Op.GET_ATTR, 99, 0), _RET), (), (),
                              "GET_ATTR failed at pc 2 of {f}: object of type __torch__.SmallLinear has no "
                              "attribute slot 99"),
    "get_attr_unblocked": ((_ARGS, _X, _I(Op.JMP, 1, 0), _I(Op.GET_ATTR, 0, 0), _RET), (), (),
                           "GET_ATTR failed at pc 3 of {f}: GET_ATTR of attribute slot 0 needs an object, got a "
                           "Tensor"),  # a step of its own, not in a compiled block (a jump lands on it)
    "set_attr_of_an_int": ((_ARGS, _I(Op.LOADC, 0, 0), _X, _I(Op.SET_ATTR, 0, 0), _X, _RET), (_INT,), (),
                           "SET_ATTR failed at pc 3 of {f}: SET_ATTR of attribute slot 0 needs an object, got an int"),
    "interface_call_on_a_tensor": ((_ARGS, _X, _I(Op.INTERFACE_CALL, 0, 1), _RET), (_S("tofile"),), (),
                                   "method tofile called on a ndarray, not an object"),
    "interface_call_name_not_a_str": ((_ARGS, _SELF, _I(Op.INTERFACE_CALL, 0, 1), _RET), (_INT,), (),
                                      "INTERFACE_CALL failed at pc 2 of {f}: INTERFACE_CALL needs a method name, "
                                      "got an int"),
    "list_unpack_of_a_tensor": ((_ARGS, _X, _I(Op.LIST_UNPACK, 2, 0), _RET), (), (),
                                "LIST_UNPACK failed at pc 2 of {f}: LIST_UNPACK needs a list or tuple, got a Tensor"),
    "tuple_index_by_a_str": ((_ARGS, _X, _X, _I(Op.TUPLE_CONSTRUCT, 2, 0), _I(Op.LOADC, 0, 0),
                              _I(Op.TUPLE_INDEX, 0, 0), _RET), (_STR,), (),
                             "TUPLE_INDEX failed at pc 5 of {f}: TUPLE_INDEX needs an int index, got a str"),
    "tuple_index_of_an_int": ((_ARGS, _I(Op.LOADC, 0, 0), _I(Op.LOADC, 0, 0), _I(Op.TUPLE_INDEX, 0, 0),
                               _RET), (_INT,), (),
                              "TUPLE_INDEX failed at pc 3 of {f}: TUPLE_INDEX needs a list or tuple, got an int"),
    "tuple_slice_of_a_tensor": ((_ARGS, _X, _I(Op.TUPLE_SLICE, 0, 1), _RET), (), (),
                                "TUPLE_SLICE failed at pc 2 of {f}: TUPLE_SLICE needs a list or tuple, got a Tensor"),
    "dict_index_of_a_tensor": ((_ARGS, _X, _I(Op.LOADC, 0, 0), _I(Op.DICT_INDEX, 0, 0), _RET), (_STR,), (),
                               "DICT_INDEX failed at pc 3 of {f}: DICT_INDEX needs a dict, got a Tensor"),
    "dict_construct_tensor_key": ((_ARGS, _X, _I(Op.LOADC, 0, 0), _I(Op.DICT_CONSTRUCT, 0, 2), _RET),
                                  (_INT,), ("Dict[Tensor, int]",),
                                  "DICT_CONSTRUCT failed at pc 3 of {f}: DICT_CONSTRUCT: a dict key must be a str, "
                                  "int, float or bool, got a Tensor"),
    "dict_construct_odd_count": ((_ARGS, _X, _I(Op.DICT_CONSTRUCT, 0, 1), _RET), (), ("Dict[str, int]",),
                                 "DICT_CONSTRUCT failed at pc 2 of {f}: DICT_CONSTRUCT needs keys and values in "
                                 "pairs, got 1 values"),
    "loop_short_stack": ((_ARGS, _X, _I(Op.LOOP, 2, 0), _RET), (), (),
                         "LOOP failed at pc 2 of {f}: LOOP needs 3 values (N = 0) but the stack holds 1"),
    "loop_str_counter": ((_ARGS, _I(Op.LOADC, 0, 0), _I(Op.LOADC, 1, 0), _I(Op.LOADC, 2, 0),
                          _I(Op.LOOP, 2, 2), _RET), (_STR, _INT, _TRUE), (),
                         "LOOP failed at pc 4 of {f}: LOOP needs an int trip count and maximum, got a str and an int"),
    "format_of_a_tensor": ((_ARGS, _X, _I(Op.FORMAT, 1, 0), _RET), (), (),
                           "FORMAT failed at pc 2 of {f}: FORMAT needs a format string, got a Tensor"),
    "dtype_of_an_int": ((_ARGS, _I(Op.LOADC, 0, 0), _I(Op.DTYPE, 0, 0), _RET), (_INT,), (),
                        "DTYPE failed at pc 2 of {f}: DTYPE needs a Tensor, got an int"),
    "num_to_tensor_of_a_str": ((_ARGS, _I(Op.LOADC, 0, 0), _I(Op.NUM_TO_TENSOR, 0, 0), _RET), (_STR,), (),
                               "NUM_TO_TENSOR failed at pc 2 of {f}: NUM_TO_TENSOR needs a number, got a str"),
    "to_list_str_element_type": ((_ARGS, _X, _I(Op.LOADC, 0, 0), _I(Op.LOADC, 0, 0), _I(Op.TO_LIST, 0, 0),
                                  _RET), (_STR,), (),
                                 "TO_LIST failed at pc 4 of {f}: TO_LIST needs a Tensor and an int element type, "
                                 "got a Tensor and a str"),
    "stack_underflow": ((_ARGS, _I(Op.DROP, 0, 0), _X, _RET), (), (),
                        "DROP failed at pc 1 of {f}: the stack is empty (the bytecode pops more values than it "
                        "pushed)"),
    "storen_short_stack": ((_ARGS, _I(Op.STOREN, 1, 2), _X, _RET), (), (),
                           "STOREN failed at pc 1 of {f}: instruction needs 2 values but the stack holds 0"),
    # operator arguments against the operator's schema: aten::linear (operator 0) given a str weight,
    # aten::relu (operator 1) an int; in a compiled block (a direct call) and as a step of its own
    "operator_argument_type": ((_ARGS, _X, _I(Op.LOADC, 0, 0), _I(Op.LOADC, 1, 0), _I(Op.OP, 0, 0), _RET),
                               (_STR, ptmf.NoneValue()), (),
                               "Error: aten::linear: argument 'weight' must be Tensor, got str"),
    "operator_argument_type_unblocked": ((_ARGS, _I(Op.LOADC, 0, 0), _I(Op.JMP, 1, 0), _I(Op.OP, 1, 0),
                                          _RET), (_INT,), (),
                                         "Error: aten::relu: argument 'self' must be Tensor, got int"),
}


def _run(tmp_path: Path, data: bytes) -> Any:
    path = tmp_path / "hostile.ptl"
    path.write_bytes(data)
    return invoke(["run", str(path), "--random", "2x4", "-o", str(tmp_path / "out.npz")])


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_value_of_the_wrong_kind_is_the_bundles_error(tmp_path: Path, name: str) -> None:
    code, constants, types, message = CASES[name]
    result = _run(tmp_path, crafted._with_forward(code, constants, types))
    assert result.exit_code == 7, result.output
    assert result.stderr.startswith("Error: ") and message.format(f=FORWARD) in result.stderr, result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.output
    assert not (tmp_path / "out.npz").exists()


def test_each_is_an_execution_error_through_the_api() -> None:
    """The same through runtime_py's API, and the fuzz harness accepts each (our errors only)."""
    for name, (code, constants, types, _) in CASES.items():
        data = crafted._with_forward(code, constants, types)
        with pytest.raises(ExecutionError) as failure:
            Module(read_bundle_bytes(data)).forward(np.zeros((2, 4), np.float32))
        assert not isinstance(failure.value, InternalError), name
        assert harness.failure(data, "ptmf", [[2, 4]]) is None  # raises Crash for anything but our errors


def test_get_slot_from_the_file_is_an_execution_error() -> None:
    """ScriptObject.get_slot's index comes from the file (as set_slot's does): the bundle's error."""
    with pytest.raises(ExecutionError, match="object of type M has no attribute slot 3"):
        ScriptObject("M", [1]).get_slot(3)
    with pytest.raises(ExecutionError, match="object of type M has no attribute slot -1"):
        ScriptObject("M", [1]).get_slot(-1)


def _linear_bundle() -> bytes:
    return harness.load_seeds()["torch_linear.ptmf.bin"]


def _broken(error: type[Exception]) -> Callable[..., Any]:
    """A demo linear kernel factory whose kernel has a deliberate Python bug (it raises ``error``)."""
    def make(*_: Any) -> Callable[..., Any]:
        def kernel(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray:
            raise error("deliberate bug in the kernel")

        return kernel

    return make


@pytest.mark.parametrize("error", [TypeError, AttributeError, KeyError, IndexError, NameError, AssertionError])
def test_a_kernel_bug_exits_70_not_7(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     error: type[Exception]) -> None:
    """A TorchScript operator's kernel raising a Python error on well-typed arguments is our bug."""
    import runtime_py.operators.linalg as linalg

    monkeypatch.setattr(linalg, "make_linear", _broken(error))
    result = _run(tmp_path, _linear_bundle())
    assert result.exit_code == 70, result.output
    assert result.stderr.startswith("Error: internal error (a bug in liteexport, please report it): "), result.stderr
    assert (f"aten::linear at pc 9 of {FORWARD}, debug handle 9: aten::linear failed on arguments of its "
            f"schema's types: {error.__name__}: ") in result.stderr, result.stderr


def test_a_kernel_value_complaint_stays_exit_7(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other side of the rule: a ValueError (a shape that does not fit) is about the values."""
    import runtime_py.operators.linalg as linalg

    monkeypatch.setattr(linalg, "make_linear", _broken(ValueError))
    result = _run(tmp_path, _linear_bundle())
    assert result.exit_code == 7, result.output
    assert result.stderr == "Error: forward: aten::linear: deliberate bug in the kernel\n", result.stderr


@pytest.mark.parametrize("error, exit_code", [(TypeError, 70), (KeyError, 70), (ValueError, 7), (ZeroDivisionError, 7)])
def test_a_demo_program_kernel_bug_exits_70(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            error: type[Exception], exit_code: int) -> None:
    """The same rule in the demo backend's executor (a lowered module): its plan checked the steps'
    operands at load, so a kernel's TypeError is ours; a ValueError is the values'."""
    import dataclasses

    from bundle_format.program import OpCode as DemoOp
    from runtime_py.backends.demo import kernels

    spec = kernels.KERNELS[DemoOp.LINEAR]
    monkeypatch.setitem(kernels.KERNELS, DemoOp.LINEAR, dataclasses.replace(spec, factory=_broken(error)))
    path = tmp_path / "mlp.ptl"
    path.write_bytes(harness.load_seeds()["lowered_mlp.ptmf.bin"])
    result = invoke(["run", str(path), "--random", "4x20", "-o", str(tmp_path / "out.npz")])
    assert result.exit_code == exit_code, result.output
    if exit_code == 70:
        assert "internal error (a bug in liteexport, please report it): demo kernel of " in result.stderr
        assert f"{error.__name__}: " in result.stderr, result.stderr
    else:
        assert "internal error" not in result.stderr and "deliberate bug in the kernel" in result.stderr


def test_schema_check_only_blames_the_arguments_when_they_are_wrong() -> None:
    """registry.fail: the same TypeError is the bundle's with an ill-typed argument, ours without."""
    from runtime_py.operators.registry import OPERATORS, fail

    schema = OPERATORS["aten::relu"].schema
    exc = TypeError("unsupported operand")
    assert isinstance(fail("aten::relu", exc, schema, [np.ones(2)]), InternalError)
    refused = fail("aten::relu", exc, schema, ["x"])
    assert isinstance(refused, ExecutionError) and str(refused) == "aten::relu: argument 'self' must be Tensor, got str"
    assert str(fail("aten::relu", exc, schema, [])) == "aten::relu: called with 0 arguments, its schema takes 1"
