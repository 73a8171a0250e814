"""Builders of small demo Programs for the backend tests (no codec involved)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bundle_format.program import Attributes, Constant, Instruction, OpCode, Program, ValueInfo
from runtime_py.backends.demo.executor import run
from runtime_py.backends.demo.plan import MethodPlan, build_plan


def one_op_program(
    op: OpCode,
    attrs: Attributes,
    input_shapes: Sequence[tuple[int, ...] | None],
    n_weights: int = 0,
    debug_handle: int = 7,
) -> Program:
    """``op`` reading the method inputs, then weights 0..n_weights-1 (as constants)."""
    n_inputs = len(input_shapes)
    weight_slots = tuple(range(n_inputs, n_inputs + n_weights))
    out = n_inputs + n_weights
    return Program(
        method="forward",
        num_slots=out + 1,
        inputs=tuple(ValueInfo(shape) for shape in input_shapes),
        constants=tuple(Constant(slot, i) for i, slot in enumerate(weight_slots)),
        instructions=(Instruction(op, (*range(n_inputs), *weight_slots), (out,), attrs, debug_handle),),
        outputs=(out,),
        output_debug_handles=(debug_handle,),
    )


def run_op(
    op: OpCode, attrs: Attributes, inputs: Sequence[np.ndarray], weights: Sequence[np.ndarray] = ()
) -> np.ndarray:
    """Runs ``op`` once: ``inputs`` are method inputs of unknown rank, ``weights`` constants."""
    program = one_op_program(op, attrs, [None] * len(inputs), len(weights))
    (result,) = run(build_plan(program, list(weights)), list(inputs))
    return result


def plan_of(program: Program, weights: Sequence[np.ndarray] = ()) -> MethodPlan:
    return build_plan(program, list(weights))
