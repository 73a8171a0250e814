"""Malformed programs (FormatError): each refusal's exact message, its code and fields, checked by
runtime_py when a program is planned."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bundle_format.error_codes import render
from bundle_format.program import (
    AxisAttrs,
    BinaryAttrs,
    Constant,
    Conv2dAttrs,
    DType,
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
from runtime_py.errors import FormatError
from tests.runtime_py.backends.demo_backend_helpers import plan_of

# --- malformed programs ---
# forward(x[?, 4]) -> relu(linear(x, W, b))
GOOD = Program(
    method="forward",
    num_slots=5,
    inputs=(ValueInfo((-1, 4)),),
    constants=(Constant(1, 0), Constant(2, 1)),
    instructions=(
        Instruction(OpCode.LINEAR, (0, 1, 2), (3,), FusedAttrs(), 5),
        Instruction(OpCode.RELU, (3,), (4,), None, 6),
    ),
    outputs=(4,),
    output_debug_handles=(6,),
)
WEIGHTS = [np.ones((3, 4), np.float32), np.ones(3, np.float32)]
AT = "(at demo program of method 'forward')"


def second(op: OpCode, inputs: tuple[int, ...], attrs: object, outputs: tuple[int, ...] = (4,)) -> Program:
    """GOOD with instruction #1 replaced."""
    instruction = Instruction(op, inputs, outputs, attrs, 6)  # type: ignore[arg-type]
    return dataclasses.replace(GOOD, instructions=(GOOD.instructions[0], instruction))


def at1(label: str) -> str:
    return f"(at demo program of method 'forward', instruction #1 {label})"


FORMAT_CASES: list[tuple[str, Program, str]] = [
    (
        "version",
        dataclasses.replace(GOOD, format_version=4),
        f"unsupported program format version 4 (this runtime reads version 1 or 2 or 3) {AT}",
    ),
    (
        "inputs-exceed-slots",
        dataclasses.replace(GOOD, num_slots=0),
        f"the inputs need 1 slots, num_slots is 0 {AT}",
    ),
    (
        "input-dtype",
        dataclasses.replace(GOOD, inputs=(ValueInfo((-1, 4), DType.INT64),)),
        f"input 0 is declared int64, but its slot holds float32 values {AT}",
    ),
    (
        "unknown-dtype",
        dataclasses.replace(GOOD, inputs=(ValueInfo((-1, 4), 7),)),  # type: ignore[arg-type]
        f"unknown DType value 7 {AT}",
    ),
    (
        "constant-slot",
        dataclasses.replace(GOOD, constants=(Constant(9, 0), Constant(2, 1))),
        f"constant for slot 9 (weight 0): slot is out of range (num_slots is 5) {AT}",
    ),
    (
        "constant-on-input",
        dataclasses.replace(GOOD, constants=(Constant(0, 0), Constant(2, 1))),
        f"constant for slot 0 (weight 0): slot already holds an input or another constant {AT}",
    ),
    (
        "constant-twice",
        dataclasses.replace(GOOD, constants=(Constant(1, 0), Constant(1, 1))),
        f"constant for slot 1 (weight 1): slot already holds an input or another constant {AT}",
    ),
    (
        "weight-index",
        dataclasses.replace(GOOD, constants=(Constant(1, 5), Constant(2, 1))),
        f"constant for slot 1 (weight 5): weight index is out of range (there are 2) {AT}",
    ),
    (
        "unknown-opcode",
        second(99, (3,), None),  # type: ignore[arg-type]
        "unknown OpCode value 99 (at demo program of method 'forward', instruction #1)",
    ),
    (
        "arity-one",
        second(OpCode.RELU, (3, 3), None),
        f"takes 1 input, got 2 {at1('RELU (slots [3, 3] -> [4])')}",
    ),
    (
        "arity-range",
        second(OpCode.LINEAR, (3,), None),
        f"takes 2 to 3 inputs, got 1 {at1('LINEAR (slots [3] -> [4])')}",
    ),
    (
        "arity-at-least",
        second(OpCode.CAT, (), AxisAttrs(0)),
        f"takes at least 1 input, got 0 {at1('CAT (slots [] -> [4])')}",
    ),
    (
        "two-outputs",
        second(OpCode.RELU, (3,), None, (4, 4)),
        f"writes 1 output, got 2 {at1('RELU (slots [3] -> [4, 4])')}",
    ),
    (
        "attrs-unexpected",
        second(OpCode.RELU, (3,), AxisAttrs(0)),
        f"RELU takes no attributes, found AxisAttrs {at1('RELU (slots [3] -> [4])')}",
    ),
    (
        "attrs-missing",
        second(OpCode.SOFTMAX, (3,), None),
        f"SOFTMAX takes AxisAttrs, found none {at1('SOFTMAX (slots [3] -> [4])')}",
    ),
    (
        "attrs-wrong",
        second(OpCode.LINEAR, (3, 1), Conv2dAttrs()),
        f"LINEAR takes FusedAttrs, found Conv2dAttrs {at1('LINEAR (slots [3, 1] -> [4])')}",
    ),
    (
        "slot-range",
        second(OpCode.RELU, (9,), None),
        f"slot 9 is out of range (num_slots is 5) {at1('RELU (slots [9] -> [4])')}",
    ),
    (
        "output-slot-range",
        second(OpCode.RELU, (3,), None, (5,)),
        f"slot 5 is out of range (num_slots is 5) {at1('RELU (slots [3] -> [5])')}",
    ),
    (
        "read-before-write",
        second(OpCode.RELU, (4,), None),
        f"reads slot 4 before anything writes it {at1('RELU (slots [4] -> [4])')}",
    ),
    (
        "program-output-range",
        dataclasses.replace(GOOD, outputs=(7,)),
        f"output 0: slot 7 is out of range {AT}",
    ),
    (
        "program-output-unwritten",
        dataclasses.replace(GOOD, num_slots=6, outputs=(5,)),
        f"output 0: slot 5 is never written {AT}",
    ),
    (
        "output-handles",
        dataclasses.replace(GOOD, output_debug_handles=()),
        f"1 outputs but 0 output debug handles {AT}",
    ),
    (
        "mul-alpha",
        second(OpCode.MUL, (3, 3), BinaryAttrs(alpha=2.0)),
        f"invalid attributes: alpha=2.0 is only allowed for ADD and SUB {at1('MUL (slots [3, 3] -> [4])')}",
    ),
    (
        "binary-no-scalar",
        second(OpCode.ADD, (3,), BinaryAttrs()),
        "invalid attributes: a scalar operand is needed with exactly one input, and only then "
        f"{at1('ADD (slots [3] -> [4])')}",
    ),
    (
        "binary-extra-scalar",
        second(OpCode.ADD, (3, 3), BinaryAttrs(scalar=1.0)),
        "invalid attributes: a scalar operand is needed with exactly one input, and only then "
        f"{at1('ADD (slots [3, 3] -> [4])')}",
    ),
    (
        "perm",
        second(OpCode.TRANSPOSE, (3,), PermuteAttrs((0, 0))),
        "invalid attributes: (0, 0) is not a permutation of the axes 0..1 "
        f"{at1('TRANSPOSE (slots [3] -> [4])')}",
    ),
    (
        "reshape",
        second(OpCode.RESHAPE, (3,), ShapeAttrs((-1, -1))),
        "invalid attributes: shape (-1, -1) may hold one -1 and otherwise sizes >= 0 "
        f"{at1('RESHAPE (slots [3] -> [4])')}",
    ),
    (
        "conv-stride",
        second(OpCode.CONV2D, (3, 1), Conv2dAttrs(stride=(0, 1))),
        f"invalid attributes: stride must be positive, got (0, 1) {at1('CONV2D (slots [3, 1] -> [4])')}",
    ),
    (
        "conv-groups",
        second(OpCode.CONV2D, (3, 1), Conv2dAttrs(groups=0)),
        f"invalid attributes: groups must be positive, got 0 {at1('CONV2D (slots [3, 1] -> [4])')}",
    ),
    (
        "pool-padding",
        second(OpCode.MAX_POOL2D, (3,), Pool2dAttrs((3, 3), (1, 1), (2, 1))),
        "invalid attributes: padding (2, 1) should be at most half of the kernel size (3, 3) "
        f"{at1('MAX_POOL2D (slots [3] -> [4])')}",
    ),
    (
        "avg-pool-dilation",
        second(OpCode.AVG_POOL2D, (3,), Pool2dAttrs((2, 2), (2, 2), dilation=(2, 2))),
        f"invalid attributes: avg_pool2d has no dilation, got (2, 2) {at1('AVG_POOL2D (slots [3] -> [4])')}",
    ),
    (
        "adaptive-dims",
        second(OpCode.ADAPTIVE_AVG_POOL2D, (3,), ShapeAttrs((1, 1, 1))),
        "invalid attributes: output size must be 2 positive sizes (or -1), got (1, 1, 1) "
        f"{at1('ADAPTIVE_AVG_POOL2D (slots [3] -> [4])')}",
    ),
    (
        "layer-norm-ndim",
        second(OpCode.LAYER_NORM, (3,), LayerNormAttrs(0, 1e-5)),
        f"invalid attributes: normalized_ndim must be positive, got 0 {at1('LAYER_NORM (slots [3] -> [4])')}",
    ),
]


@pytest.mark.parametrize(
    ("program", "message"), [c[1:] for c in FORMAT_CASES], ids=[c[0] for c in FORMAT_CASES]
)
def test_malformed_programs(program: Program, message: str) -> None:
    with pytest.raises(FormatError) as info:
        plan_of(program, WEIGHTS)
    assert str(info.value) == message
    # the structured form renders to the same text (bundle_format/error_codes.py)
    assert f"{render(info.value.code, info.value.fields)} (at {info.value.where})" == message


# the code of each case (schema/demo_errors.toml): the contract the C++ executors share
FORMAT_CODES = {
    "version": "UNSUPPORTED_VERSION", "inputs-exceed-slots": "INPUTS_EXCEED_SLOTS", "input-dtype": "INPUT_DTYPE",
    "unknown-dtype": "UNKNOWN_ENUM",
    "constant-slot": "CONSTANT_SLOT_RANGE", "constant-on-input": "CONSTANT_SLOT_TAKEN",
    "constant-twice": "CONSTANT_SLOT_TAKEN", "weight-index": "WEIGHT_INDEX_RANGE", "unknown-opcode": "UNKNOWN_ENUM",
    "arity-one": "ARITY", "arity-range": "ARITY", "arity-at-least": "ARITY", "two-outputs": "OUTPUT_COUNT",
    "attrs-unexpected": "ATTRIBUTE_TYPE", "attrs-missing": "ATTRIBUTE_TYPE", "attrs-wrong": "ATTRIBUTE_TYPE",
    "slot-range": "SLOT_RANGE", "output-slot-range": "SLOT_RANGE", "read-before-write": "READ_BEFORE_WRITE",
    "program-output-range": "OUTPUT_SLOT_RANGE", "program-output-unwritten": "OUTPUT_NEVER_WRITTEN",
    "output-handles": "OUTPUT_HANDLES",
}


@pytest.mark.parametrize(("case_id", "program"), [c[:2] for c in FORMAT_CASES], ids=[c[0] for c in FORMAT_CASES])
def test_malformed_programs_have_their_code(case_id: str, program: Program) -> None:
    with pytest.raises(FormatError) as info:
        plan_of(program, WEIGHTS)
    assert info.value.code == FORMAT_CODES.get(case_id, "INVALID_ATTRIBUTES")


@pytest.mark.parametrize(("weight", "got"), [(np.ones((3, 4), np.float64), "float64"), ([1.0], "list")])
def test_weights_must_be_arrays_of_a_compiled_dtype(weight: object, got: str) -> None:
    with pytest.raises(FormatError) as info:
        plan_of(GOOD, [weight, WEIGHTS[1]])  # type: ignore[list-item]
    assert str(info.value) == ("constant for slot 1 (weight 0): weight must be an array of a compiled dtype "
                               f"(float32, int64, int32, bool), got {got} {AT}")


def test_a_weight_has_the_dtype_of_its_slot() -> None:
    with pytest.raises(FormatError) as info:
        plan_of(GOOD, [np.ones((3, 4), np.int64), WEIGHTS[1]])
    assert info.value.code == "WEIGHT_DTYPE"
    assert str(info.value) == f"constant for slot 1 (weight 0): the slot holds float32 values, the weight is int64 {AT}"


def test_operands_must_have_the_dtypes_their_op_takes() -> None:
    typed = dataclasses.replace(GOOD, inputs=(ValueInfo((-1, 4), DType.INT64),),
                                slot_dtypes=(DType.INT64, *[DType.FLOAT32] * (GOOD.num_slots - 1)))
    with pytest.raises(FormatError) as info:
        plan_of(typed, WEIGHTS)
    assert info.value.code == "OPERAND_DTYPE"
    assert "operand 0 (x) is int64, but LINEAR takes float32" in str(info.value)


def test_a_result_must_have_the_dtype_of_the_slot_it_writes() -> None:
    typed = dataclasses.replace(GOOD, slot_dtypes=(*[DType.FLOAT32] * (GOOD.num_slots - 1), DType.BOOL))
    with pytest.raises(FormatError) as info:
        plan_of(typed, WEIGHTS)
    assert info.value.code == "RESULT_DTYPE"


def test_the_good_program_is_good() -> None:
    (y,) = run(plan_of(GOOD, WEIGHTS), [np.ones((2, 4), np.float32)])
    np.testing.assert_array_equal(y, np.full((2, 3), 5.0))
