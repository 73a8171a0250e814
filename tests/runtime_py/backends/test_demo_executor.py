"""The executor on small hand-built programs: constants, several outputs, aliasing."""

from __future__ import annotations

import numpy as np
import pytest

from bundle_format.program import (
    Activation,
    BinaryAttrs,
    Constant,
    FusedAttrs,
    Instruction,
    OpCode,
    PermuteAttrs,
    Program,
    ShapeAttrs,
    ValueInfo,
)
from runtime_py.backends.demo.executor import run
from tests.runtime_py.backends.demo_backend_helpers import one_op_program, plan_of

WEIGHT = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 10
BIAS = np.array([0.5, -0.25, 0.0], dtype=np.float32)

# forward(x[?, 4]) -> (relu(linear(x)) + 1, x, relu(linear(x)), W.reshape(12), W)
PROGRAM = Program(
    method="forward",
    num_slots=6,
    inputs=(ValueInfo((-1, 4)),),
    constants=(Constant(1, 0), Constant(2, 1)),
    instructions=(
        Instruction(OpCode.LINEAR, (0, 1, 2), (3,), FusedAttrs(Activation.RELU), 10),
        Instruction(OpCode.ADD, (3,), (4,), BinaryAttrs(scalar=1.0), 11),
        Instruction(OpCode.RESHAPE, (1,), (5,), ShapeAttrs((12,)), 12),
    ),
    outputs=(4, 0, 3, 5, 1),
    output_debug_handles=(11, -1, 10, 12, -1),
)


def expected_linear_relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x @ WEIGHT.T + BIAS, 0)


@pytest.mark.parametrize("batch", [1, 5])
def test_constants_and_several_outputs(batch: int) -> None:
    x = np.linspace(-2, 2, batch * 4, dtype=np.float32).reshape(batch, 4)
    plus_one, same, linear_relu, flat_weight, weight = run(plan_of(PROGRAM, [WEIGHT, BIAS]), [x])
    np.testing.assert_allclose(linear_relu, expected_linear_relu(x), rtol=1e-6)
    np.testing.assert_allclose(plus_one, expected_linear_relu(x) + 1, rtol=1e-6)
    assert same is x  # an output that is an input is that very array
    np.testing.assert_array_equal(flat_weight, WEIGHT.reshape(12))
    np.testing.assert_array_equal(weight, WEIGHT)
    assert all(output.dtype == np.float32 for output in (plus_one, linear_relu, flat_weight, weight))


def test_outputs_never_alias_weights() -> None:
    weight, bias = WEIGHT.copy(), BIAS.copy()
    plan = plan_of(PROGRAM, [weight, bias])
    x = np.ones((2, 4), dtype=np.float32)
    first = run(plan, [x])
    for output in first[2:]:
        assert not np.shares_memory(output, weight)
        output[...] = 42.0  # the caller owns its outputs
    np.testing.assert_array_equal(weight, WEIGHT)
    second = run(plan, [x])
    for a, b in zip(second, run(plan_of(PROGRAM, [WEIGHT, BIAS]), [x]), strict=True):
        np.testing.assert_array_equal(a, b)


def test_transposed_weight_output_is_copied_but_transposed_input_may_be_a_view() -> None:
    program = Program(
        method="forward",
        num_slots=4,
        inputs=(ValueInfo((3, 4)),),
        constants=(Constant(1, 0),),
        instructions=(
            Instruction(OpCode.TRANSPOSE, (1,), (2,), PermuteAttrs((1, 0)), 1),
            Instruction(OpCode.TRANSPOSE, (0,), (3,), PermuteAttrs((1, 0)), 2),
        ),
        outputs=(2, 3),
        output_debug_handles=(1, 2),
    )
    x = np.ones((3, 4), dtype=np.float32)
    weight_t, x_t = run(plan_of(program, [WEIGHT]), [x])
    np.testing.assert_array_equal(weight_t, WEIGHT.T)
    assert not np.shares_memory(weight_t, WEIGHT)
    assert np.shares_memory(x_t, x)


def test_the_caller_keeps_its_weights_writable() -> None:
    weight = WEIGHT.copy()
    plan_of(PROGRAM, [weight, BIAS])
    assert weight.flags.writeable


def test_a_slot_can_be_rewritten() -> None:
    program = Program(
        method="forward",
        num_slots=2,
        inputs=(ValueInfo((3,)),),
        constants=(),
        instructions=(
            Instruction(OpCode.NEG, (0,), (1,), None, 1),
            Instruction(OpCode.MUL, (1,), (1,), BinaryAttrs(scalar=3.0), 2),
        ),
        outputs=(1,),
        output_debug_handles=(2,),
    )
    x = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    (y,) = run(plan_of(program), [x])
    np.testing.assert_array_equal(y, -3 * x)


@pytest.mark.parametrize(
    ("shape", "value_shape"), [(None, (2, 3, 4)), (None, ()), ((-1, -1), (5, 1)), ((), ())]
)
def test_unknown_rank_and_dynamic_dims_accept_any_size(
    shape: tuple[int, ...] | None, value_shape: tuple[int, ...]
) -> None:
    x = np.full(value_shape, 2.0, dtype=np.float32)
    (y,) = run(plan_of(one_op_program(OpCode.SIGMOID, None, [shape])), [x])
    assert isinstance(y, np.ndarray) and y.shape == value_shape and y.dtype == np.float32
    np.testing.assert_allclose(y, 1 / (1 + np.exp(-2.0)), rtol=1e-6)


def test_zero_dim_results_are_arrays() -> None:
    a, b = np.array(1.5, dtype=np.float32), np.array(2.0, dtype=np.float32)
    (y,) = run(plan_of(one_op_program(OpCode.ADD, None, [(), ()])), [a, b])
    assert type(y) is np.ndarray and y.shape == () and y.dtype == np.float32 and y == 3.5


def test_float_errors_are_silent_like_torch() -> None:
    x = np.array([0.0, 1.0, -1.0], dtype=np.float32)
    with np.errstate(all="raise"):
        (y,) = run(plan_of(one_op_program(OpCode.DIV, BinaryAttrs(scalar=1.0, reverse=True), [(3,)])), [x])
    np.testing.assert_array_equal(y, [np.inf, 1.0, -1.0])


def test_slot_memory_follows_the_slots_used_not_num_slots() -> None:
    # A hostile program declares 150M slots and numbers its few slots far apart: the plan keeps
    # one entry per slot used (renumbered densely), and runs exactly as the compact program.
    far = 150_000_000
    renumber = {0: 0, 1: far - 7, 2: 1234, 3: far - 1, 4: 99, 5: 5}
    sparse = Program(
        method="forward", num_slots=far, inputs=PROGRAM.inputs,
        constants=tuple(Constant(renumber[c.slot], c.weight) for c in PROGRAM.constants),
        instructions=tuple(Instruction(i.op, tuple(renumber[s] for s in i.inputs),
                                       tuple(renumber[s] for s in i.outputs), i.attributes, i.debug_handle)
                           for i in PROGRAM.instructions),
        outputs=tuple(renumber[s] for s in PROGRAM.outputs), output_debug_handles=PROGRAM.output_debug_handles)
    plan = plan_of(sparse, [WEIGHT, BIAS])
    assert plan.num_slots == 6 and len(plan.slot_template) == 6
    x = np.linspace(-2, 2, 8, dtype=np.float32).reshape(2, 4)
    for got, want in zip(run(plan, [x]), run(plan_of(PROGRAM, [WEIGHT, BIAS]), [x]), strict=True):
        np.testing.assert_array_equal(got, want)
