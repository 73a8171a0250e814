"""How close a quantized model's compiled program must come to torch's quantized engine.

The program computes each quantized op in float32 and rounds the result to the op's grid
(FAKE_QUANTIZE, liteexport/compiler/quantized_ops.py); torch sums int8 products in int32 and
requantizes with a float multiplier. Given the same inputs the two results differ by at most one
quantum of the op's grid, where the roundings part; through a deep network such a step can move
the next layer's rounding too. The self-check and the tests therefore allow QUANTA quanta of the
output's grid (torchvision's six quantized classifiers measure 1 to 3 against qnnpack; fbgemm's
saturating depthwise sums are compiled as such, liteexport/compiler/int16_pairs.py, and measure 0
to 1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bundle_format._generated.demo_traits import VIEWS
from bundle_format.program import OpCode, Program, QuantizeAttrs
from runtime_py.quantized_tensor import QuantizedTensor

QUANTA = 3
# quantized::linear_dynamic compiles to a float LINEAR (liteexport/compiler/quantized_ops.py): torch
# rounds its input to 8 bits (a step of 1/255 of the input's range) before the int8 product, we do
# not. Summed over a layer's inputs that rounding stays around 1% of the output's magnitude (measured
# on MLPs and LSTM-free text heads); 5e-2, the bound --quantize dynamic-int8 holds its weights to
# against the float model, leaves room for a few such layers and still catches a wrong program.
DYNAMIC_TOLERANCE = 5e-2


def output_quantum(program: Program, output: int) -> float | None:
    """The scale of the grid output ``output`` of ``program`` sits on, or None when it is not a
    quantized value (no FAKE_QUANTIZE produces it)."""
    return _quantum(program, len(program.instructions), program.outputs[output])


def _quantum(program: Program, before: int, slot: int) -> float | None:
    """The grid scale of the value ``slot`` holds when instruction ``before`` runs, or None."""
    for ins in reversed(program.instructions[:before]):
        if slot not in ins.outputs:
            continue
        if ins.op == OpCode.FAKE_QUANTIZE and isinstance(ins.attributes, QuantizeAttrs):
            return float(ins.attributes.scale)
        if ins.op not in VIEWS:  # views pass values through (dequantize compiles to a FLATTEN of one dim)
            return None
        slot = ins.inputs[0]
    return None


def dynamic_linears(program: Program, weights: Sequence[object]) -> int:
    """How many LINEARs of ``program`` have an int8 weight and a float input (off any grid): torch's
    quantize_dynamic layers, which torch computes on its input rounded to 8 bits at run time."""
    stored = {c.slot for c in program.constants if isinstance(weights[c.weight], QuantizedTensor)}
    return sum(ins.op == OpCode.LINEAR and len(ins.inputs) > 1 and ins.inputs[1] in stored
               and _quantum(program, index, ins.inputs[0]) is None for index, ins in enumerate(program.instructions))


def quanta_apart(got: np.ndarray, expected: np.ndarray, quantum: float) -> float:
    """The largest difference, in quanta (0 for empty arrays)."""
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    return float(diff.max(initial=0.0)) / quantum
