"""Errors: inputs that do not fit (InputError) and failing kernels (ExecutionError), with their exact
messages and debug handles; malformed programs are test_demo_format_errors.py."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bundle_format.error_codes import render
from bundle_format.program import (
    Conv2dAttrs,
    FlattenAttrs,
    FusedAttrs,
    Instruction,
    LayerNormAttrs,
    OpCode,
    PermuteAttrs,
    Pool2dAttrs,
    Program,
    ShapeAttrs,
    ValueInfo,
)
from runtime_py.backends.demo.executor import run
from runtime_py.errors import ExecutionError, InputError
from tests.runtime_py.backends.demo_backend_helpers import one_op_program, plan_of

# forward(a[2, ?], b[3]) -> a + (-b); b is read first (by instruction #0), a by instruction #1
TWO_INPUTS = Program(
    method="forward",
    num_slots=4,
    inputs=(ValueInfo((2, -1)), ValueInfo((3,))),
    constants=(),
    instructions=(
        Instruction(OpCode.NEG, (1,), (2,), None, 20),
        Instruction(OpCode.ADD, (0, 2), (3,), None, 21),
    ),
    outputs=(3,),
    output_debug_handles=(21,),
)
A = np.ones((2, 3), dtype=np.float32)
B = np.ones(3, dtype=np.float32)
ADD_LABEL = "instruction #1 ADD (slots [0, 2] -> [3])"
NEG_LABEL = "instruction #0 NEG (slots [1] -> [2])"

INPUT_CASES: list[tuple[str, list[object], str, int]] = [
    ("too-few", [A], "method 'forward' expected 2 inputs, got 1", -1),
    ("too-many", [A, B, B], "method 'forward' expected 2 inputs, got 3", -1),
    (
        "dtype",
        [A.astype(np.float64), B],
        f"{ADD_LABEL}: input 0: expected float32 of shape (2, ?), got float64 of shape (2, 3)",
        21,
    ),
    (
        "rank",
        [A.reshape(2, 3, 1), B],
        f"{ADD_LABEL}: input 0: expected float32 of shape (2, ?), got float32 of shape (2, 3, 1)",
        21,
    ),
    (
        "static-dim",
        [np.ones((4, 3), np.float32), B],
        f"{ADD_LABEL}: input 0: expected float32 of shape (2, ?), got float32 of shape (4, 3)",
        21,
    ),
    (
        "first-reader",
        [A, np.ones(4, np.float32)],
        f"{NEG_LABEL}: input 1: expected float32 of shape (3,), got float32 of shape (4,)",
        20,
    ),
    (
        "not-an-array",
        [A, [1.0, 2.0, 3.0]],
        f"{NEG_LABEL}: input 1: expected float32 of shape (3,), got list (not an ndarray)",
        20,
    ),
    (
        "numpy-scalar",
        [A, np.float32(1.0)],
        f"{NEG_LABEL}: input 1: expected float32 of shape (3,), got float32 (not an ndarray)",
        20,
    ),
]


@pytest.mark.parametrize(
    ("inputs", "message", "handle"), [c[1:] for c in INPUT_CASES], ids=[c[0] for c in INPUT_CASES]
)
def test_bad_inputs(inputs: list[object], message: str, handle: int) -> None:
    """Inputs that do not fit the program are the caller's to fix: InputError, exit 6."""
    with pytest.raises(InputError) as info:
        run(plan_of(TWO_INPUTS), inputs)
    assert str(info.value) == message
    assert info.value.debug_handle == handle
    assert info.value.code == ("INPUT_COUNT" if "inputs, got" in message else "INPUT_MISMATCH")
    assert render(info.value.code, info.value.fields) == message


def test_an_input_mismatch_names_its_fields() -> None:
    with pytest.raises(InputError) as info:
        run(plan_of(TWO_INPUTS), [A, np.ones(4, np.float32)])
    assert info.value.code == "INPUT_MISMATCH"
    assert info.value.fields == {"instruction": NEG_LABEL, "index": "1", "expected": "float32 of shape (3,)",
                                 "got": "float32 of shape (4,)"}


def test_an_unread_input_is_blamed_on_the_method() -> None:
    program = dataclasses.replace(
        TWO_INPUTS, instructions=TWO_INPUTS.instructions[:1], outputs=(2,), output_debug_handles=(20,)
    )
    with pytest.raises(InputError) as info:
        run(plan_of(program), [A.astype(np.float16), B])
    assert (
        str(info.value)
        == "method 'forward': input 0: expected float32 of shape (2, ?), got float16 of shape (2, 3)"
    )
    assert info.value.debug_handle == -1


def test_a_dynamic_dim_that_breaks_a_kernel_names_the_instruction() -> None:
    with pytest.raises(ExecutionError) as info:
        run(plan_of(TWO_INPUTS), [np.ones((2, 4), np.float32), B])
    assert str(info.value).startswith(
        f"{ADD_LABEL}: operands could not be broadcast together with shapes (2,4) (3,)"
    )
    assert info.value.debug_handle == 21
    assert isinstance(info.value.__cause__, ValueError)


F32 = np.float32
# (id, op, attrs, inputs, weights, message after the instruction label)
KERNEL_CASES: list[tuple[str, OpCode, object, list[np.ndarray], list[np.ndarray], str]] = [
    (
        "linear",
        OpCode.LINEAR,
        FusedAttrs(),
        [np.ones((2, 5), F32)],
        [np.ones((4, 3), F32)],
        "input of shape (2, 5) and weight of shape (4, 3) do not match "
        "(expected weight [out_features, in_features] with in_features == input.shape[-1])",
    ),
    (
        "matmul",
        OpCode.MATMUL,
        None,
        [np.ones((2, 3), F32), np.ones((4, 5), F32)],
        [],
        "shapes (2, 3) and (4, 5) cannot be multiplied",
    ),
    (
        "matmul-0d",
        OpCode.MATMUL,
        None,
        [np.ones((), F32), np.ones((4,), F32)],
        [],
        "matmul needs arguments of at least 1-D, got shapes () and (4,)",
    ),
    (
        "reshape",
        OpCode.RESHAPE,
        ShapeAttrs((2, -1)),
        [np.ones(5, F32)],
        [],
        "shape (2, -1) is invalid for an input of shape (5,)",
    ),
    (
        "transpose",
        OpCode.TRANSPOSE,
        PermuteAttrs((1, 0)),
        [np.ones((2, 3, 4), F32)],
        [],
        "permutation (1, 0) does not fit an input of shape (2, 3, 4)",
    ),
    (
        "conv-channels",
        OpCode.CONV2D,
        Conv2dAttrs(groups=2),
        [np.ones((1, 3, 5, 5), F32)],
        [np.ones((4, 2, 3, 3), F32)],
        "input of shape (1, 3, 5, 5) does not fit weight of shape (4, 2, 3, 3) with groups=2 "
        "(expected 4 input channels and output channels divisible by groups)",
    ),
    (
        "conv-rank",
        OpCode.CONV2D,
        None,
        [np.ones((5, 5), F32)],
        [np.ones((1, 1, 3, 3), F32)],
        "conv2d expects a 3-D (CHW) or 4-D (NCHW) input, got shape (5, 5)",
    ),
    (
        "conv-too-small",
        OpCode.CONV2D,
        None,
        [np.ones((1, 1, 2, 5), F32)],
        [np.ones((1, 1, 3, 3), F32)],
        "conv2d input of spatial size (2, 5) is too small: output size would be (0, 3)",
    ),
    (
        "max-pool-too-small",
        OpCode.MAX_POOL2D,
        Pool2dAttrs((3, 3), (1, 1)),
        [np.ones((1, 1, 2, 2), F32)],
        [],
        "max_pool2d input of spatial size (2, 2) is too small: output size would be (0, 0)",
    ),
    (
        "channel-affine",
        OpCode.CHANNEL_AFFINE,
        None,
        [np.ones((2, 3, 4), F32)],
        [np.ones(2, F32), np.ones(2, F32)],
        "input of shape (2, 3, 4) needs scale and shift of shape (3,), got (2,) and (2,)",
    ),
    (
        "layer-norm-weight",
        OpCode.LAYER_NORM,
        LayerNormAttrs(1, 1e-5),
        [np.ones((2, 3), F32)],
        [np.ones(2, F32)],
        "weight of shape (2,) is not the normalized shape (3,)",
    ),
    (
        "flatten",
        OpCode.FLATTEN,
        FlattenAttrs(0, 5),
        [np.ones((2, 3), F32)],
        [],
        "flatten dims (0, 5) are out of range for shape (2, 3)",
    ),
]


@pytest.mark.parametrize(
    ("op", "attrs", "inputs", "weights", "message"),
    [c[1:] for c in KERNEL_CASES],
    ids=[c[0] for c in KERNEL_CASES],
)
def test_kernel_failures_name_the_instruction(
    op: OpCode, attrs: object, inputs: list[np.ndarray], weights: list[np.ndarray], message: str
) -> None:
    # inputs of a declared rank and sizes known only at run time: the kernel is the one to fail
    shapes = [(-1,) * x.ndim for x in inputs]
    program = one_op_program(op, attrs, shapes, len(weights), debug_handle=7)
    slots = list(range(len(inputs) + len(weights)))
    label = f"instruction #0 {op.name} (slots {slots} -> [{len(slots)}])"
    with pytest.raises(ExecutionError) as info:
        run(plan_of(program, weights), inputs)
    assert str(info.value) == f"{label}: {message}"
    assert info.value.debug_handle == 7
    assert info.value.code == "KERNEL_FAILED"
    assert info.value.fields == {"instruction": label, "reason": message}


_ONE_INPUT = [c for c in KERNEL_CASES if len(c[3]) == 1]
_SEVERAL_INPUTS = [c for c in KERNEL_CASES if len(c[3]) > 1]


@pytest.mark.parametrize(
    ("op", "attrs", "inputs", "weights", "message"),
    [c[1:] for c in _SEVERAL_INPUTS],
    ids=[c[0] for c in _SEVERAL_INPUTS],
)
def test_undeclared_inputs_that_misfit_each_other_are_the_calls_failure(
    op: OpCode, attrs: object, inputs: list[np.ndarray], weights: list[np.ndarray], message: str
) -> None:
    """Where two undeclared inputs meet (x @ y), the program cannot tell which one misfits: the
    failure stays the call's (KERNEL_FAILED, exit 7), as torch's lite interpreter reports it."""
    program = one_op_program(op, attrs, [None] * len(inputs), len(weights), debug_handle=7)  # type: ignore[arg-type]
    with pytest.raises(ExecutionError) as info:
        run(plan_of(program, weights), inputs)
    assert info.value.code == "KERNEL_FAILED" and info.value.exit_code == 7
    assert str(info.value).endswith(message)


@pytest.mark.parametrize(
    ("op", "attrs", "inputs", "weights", "message"),
    [c[1:] for c in _ONE_INPUT],
    ids=[c[0] for c in _ONE_INPUT],
)
def test_an_undeclared_input_shape_a_kernel_refuses_is_an_input_error(
    op: OpCode, attrs: object, inputs: list[np.ndarray], weights: list[np.ndarray], message: str
) -> None:
    """A program that declares no shape for its inputs (exported without --input-shape) cannot check
    them before it runs: the instruction that cannot take them is the check, exit 6 as for a
    program that declares them (INPUT_UNFIT, the kernel's words as its reason)."""
    program = one_op_program(op, attrs, [None] * len(inputs), len(weights), debug_handle=7)  # type: ignore[arg-type]
    slots = list(range(len(inputs) + len(weights)))
    label = f"instruction #0 {op.name} (slots {slots} -> [{len(slots)}])"
    with pytest.raises(InputError) as info:
        run(plan_of(program, weights), inputs)
    got = f"float32 of shape {tuple(inputs[0].shape)}"
    assert info.value.code == "INPUT_UNFIT"
    assert info.value.fields == {"instruction": label, "index": "0", "got": got, "reason": message}
    assert str(info.value) == f"{label}: input 0 ({got}) does not fit the model: {message}"
    assert info.value.debug_handle == 7 and info.value.exit_code == 6


def test_an_input_unfit_names_the_undeclared_input_the_instruction_depends_on() -> None:
    # forward(a[?], b[?]): c = neg(b) rewrites slot 0 ... the failing MATMUL reads only b's line
    program = Program(
        method="forward",
        num_slots=4,
        inputs=(ValueInfo(None), ValueInfo(None)),
        constants=(),
        instructions=(
            Instruction(OpCode.NEG, (1,), (2,), None, 30),
            Instruction(OpCode.NEG, (2,), (0,), None, 31),  # slot 0 now holds -(-b): a is gone
            Instruction(OpCode.MATMUL, (0, 2), (3,), None, 32),
        ),
        outputs=(3,),
        output_debug_handles=(32,),
    )
    with pytest.raises(InputError) as info:
        run(plan_of(program), [np.ones((2, 2), F32), np.ones((), F32)])
    assert info.value.code == "INPUT_UNFIT"
    assert info.value.fields["index"] == "1" and info.value.fields["got"] == "float32 of shape ()"
    assert info.value.debug_handle == 32


def test_an_input_slot_rewritten_before_it_is_read_blames_the_method() -> None:
    program = dataclasses.replace(
        TWO_INPUTS,
        instructions=(
            Instruction(OpCode.NEG, (1,), (0,), None, 20),
            Instruction(OpCode.ADD, (0, 1), (3,), None, 21),
        ),
    )
    with pytest.raises(InputError) as info:
        run(plan_of(program), [A.astype(np.float64), B])
    assert str(info.value).startswith("method 'forward': input 0: expected float32")
    assert info.value.debug_handle == -1
