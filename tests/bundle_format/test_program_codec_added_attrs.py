"""The attribute tables added for real models (Clamp, Reduce, Slice): defaults on the wire and
a bound without its flag."""

from __future__ import annotations

import numpy as np
import pytest
from flatbuffers import Builder

from bundle_format._generated import demo_program_generated as g
from bundle_format.program import (
    SLICE_END,
    ClampAttrs,
    Instruction,
    OpCode,
    Program,
    ReduceAttrs,
    SliceAttrs,
    ValueInfo,
)
from bundle_format.program_codec import decode_program, encode_program
from runtime_py.errors import FormatError


def _program(attrs: object, op: OpCode) -> Program:
    return Program("forward", 2, (ValueInfo((2, 3)),), (), (Instruction(op, (0,), (1,), attrs, 0),), (1,), (0,))  # type: ignore[arg-type]


@pytest.mark.parametrize(("op", "attrs"), [
    (OpCode.CLAMP, ClampAttrs(min=None, max=0.0)),  # a bound of 0.0 is written (its flag says so)
    (OpCode.CLAMP, ClampAttrs(min=-0.0, max=None)),
    (OpCode.SUM, ReduceAttrs(())),
    (OpCode.SLICE, SliceAttrs(0)),  # start 0, end SLICE_END and step 1 are the schema's defaults
    (OpCode.SLICE, SliceAttrs(-1, -(2**63), SLICE_END - 1, 2**40)),
])
def test_round_trip(op: OpCode, attrs: object) -> None:
    program = _program(attrs, op)
    assert decode_program(encode_program(program)) == program


def _clamp_without_flag() -> bytes:
    """A Clamp table holding min but not has_min (hand-written: the encoder never does this)."""
    b = Builder(256)
    g.ClampStart(b)
    g.ClampAddMin(b, 1.5)
    clamp = g.ClampEnd(b)
    inputs = b.CreateNumpyVector(np.array([0], "uint32"))
    outputs = b.CreateNumpyVector(np.array([1], "uint32"))
    g.InstructionStart(b)
    g.InstructionAddOp(b, int(OpCode.CLAMP))
    g.InstructionAddInputs(b, inputs)
    g.InstructionAddOutputs(b, outputs)
    g.InstructionAddAttributesType(b, g.Attributes.Clamp)
    g.InstructionAddAttributes(b, clamp)
    instruction = g.InstructionEnd(b)
    g.ProgramStartInstructionsVector(b, 1)
    b.PrependUOffsetTRelative(instruction)
    instructions = b.EndVector()
    method = b.CreateString("forward")
    g.ProgramStart(b)
    g.ProgramAddFormatVersion(b, 1)
    g.ProgramAddMethod(b, method)
    g.ProgramAddNumSlots(b, 2)
    g.ProgramAddInstructions(b, instructions)
    b.Finish(g.ProgramEnd(b), b"LXDP")
    return bytes(b.Output())


def test_a_bound_without_its_flag_is_malformed() -> None:
    with pytest.raises(FormatError, match=r"min given but has_min is false \(at Program.instructions\[0\]"
                                          r".attributes.min"):
        decode_program(_clamp_without_flag())
