"""Checks of --quantize int8 programs shared by the tests (tests/liteexport/test_static_int8.py,
tests/compiler/test_static_int8_models.py)."""

from __future__ import annotations

from collections.abc import Sequence

from bundle_format.program import OpCode, Program, QuantizeAttrs
from liteexport.static_int8 import program_values
from runtime_py.quantized_tensor import QuantizedTensor


def fake_quantize_grids(program: Program) -> list[tuple[float, int]]:
    """(scale, zero point) of every FAKE_QUANTIZE, in program order."""
    return [(ins.attributes.scale, ins.attributes.zero_point) for ins in program.instructions
            if ins.op == OpCode.FAKE_QUANTIZE and isinstance(ins.attributes, QuantizeAttrs)]


def assert_int8_contract(program: Program, weights: Sequence[object]) -> int:
    """The shape the native core's int8 kernels recognize (liteexport/static_int8.py): every conv or
    linear with an int8 weight reads a FAKE_QUANTIZE'd input and its only reader, directly or
    through one RELU/CLAMP, is a FAKE_QUANTIZE; so is an ADD's of two FAKE_QUANTIZE'd values.
    Returns how many such layers there are."""
    reads, _ = program_values(program)
    ops = [ins.op for ins in program.instructions]
    readers: dict[object, list[int]] = {}
    for index, operands in enumerate(reads):
        for key in dict.fromkeys(operands):
            readers.setdefault(key, []).append(index)
    int8 = {("constant", c.slot) for c in program.constants if isinstance(weights[c.weight], QuantizedTensor)}

    def fake_quantized(key: object) -> bool:
        return isinstance(key, int) and ops[key] == OpCode.FAKE_QUANTIZE

    def quantized_after(index: int) -> bool:
        after = readers.get(index, [])
        if len(after) == 1 and ops[after[0]] in (OpCode.RELU, OpCode.CLAMP):
            after = readers.get(after[0], [])
        return len(after) == 1 and ops[after[0]] == OpCode.FAKE_QUANTIZE

    layers = 0
    for index, operands in enumerate(reads):
        if ops[index] in (OpCode.CONV2D, OpCode.LINEAR) and operands[1] in int8:
            assert fake_quantized(operands[0]) and quantized_after(index), (index, ops[index])
            layers += 1
        if ops[index] == OpCode.ADD and len(operands) == 2 and all(fake_quantized(o) for o in operands):
            assert quantized_after(index), index
    for ins in program.instructions:
        if isinstance(ins.attributes, QuantizeAttrs):
            assert (ins.attributes.quant_min, ins.attributes.quant_max) == (-128, 127)
    return layers
