"""How close a quantized model's compiled program must come to torch's quantized engine.

The program computes each quantized op in float32 and rounds the result to the op's grid
(FAKE_QUANTIZE, liteexport/compiler/quantized_ops.py); torch sums int8 products in int32 and
requantizes with a float multiplier. Given the same inputs the two results differ by at most one
quantum of the op's grid, where the roundings part; through a deep network such a step can move
the next layer's rounding too. The self-check and the tests therefore allow QUANTA quanta of the
output's grid (torchvision's six quantized classifiers measure 1 to 3 against qnnpack).
"""

from __future__ import annotations

import numpy as np

from bundle_format.program import OpCode, Program, QuantizeAttrs

QUANTA = 3
# ops that pass values through unchanged (views; dequantize compiles to a FLATTEN of one dim)
_KEEPS_VALUES = frozenset({OpCode.FLATTEN, OpCode.RESHAPE, OpCode.TRANSPOSE, OpCode.SLICE})


def output_quantum(program: Program, output: int) -> float | None:
    """The scale of the grid output ``output`` of ``program`` sits on, or None when it is not a
    quantized value (no FAKE_QUANTIZE produces it)."""
    slot = program.outputs[output]
    for ins in reversed(program.instructions):
        if slot not in ins.outputs:
            continue
        if ins.op == OpCode.FAKE_QUANTIZE and isinstance(ins.attributes, QuantizeAttrs):
            return float(ins.attributes.scale)
        if ins.op not in _KEEPS_VALUES:
            return None
        slot = ins.inputs[0]
    return None


def quanta_apart(got: np.ndarray, expected: np.ndarray, quantum: float) -> float:
    """The largest difference, in quanta (0 for empty arrays)."""
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    return float(diff.max(initial=0.0)) / quantum
