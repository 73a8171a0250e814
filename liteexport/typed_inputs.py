"""Inputs a compiled method can run on, per declared dtype (the self-check's random inputs):
float32 inputs are standard normal; an int64/int32 input that reaches an embedding table holds
ids in [0, rows) of the smallest table it reaches (found by following the program's slots),
any other integer input is a padding mask of ones then zeros (attention masks), bool inputs
likewise. numpy only: the runtime side (``liteexport run``) can use it too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bundle_format._generated.demo_traits import CARRIES_VALUES
from bundle_format.program import DType, OpCode, Program
from runtime_py.quantized_tensor import QuantizedTensor

# op -> the operand that indexes, and the operand whose dim 0 (or the axis) it indexes
_INDEXING = {OpCode.EMBEDDING: (1, 0)}

_NUMPY = {DType.FLOAT32: np.float32, DType.INT64: np.int64, DType.INT32: np.int32, DType.BOOL: np.bool_}


def index_bounds(program: Program, weights: Sequence[np.ndarray | QuantizedTensor]) -> dict[int, int]:
    """Input index -> the number of rows of the smallest embedding table its values index
    (only inputs that reach one through value-carrying ops)."""
    origin: dict[int, set[int]] = {slot: {slot} for slot in range(len(program.inputs))}
    constant_of = {c.slot: c.weight for c in program.constants}
    bounds: dict[int, int] = {}
    for ins in program.instructions:
        op = OpCode(ins.op)
        indexing = _INDEXING.get(op)
        if indexing is not None and len(ins.inputs) > max(indexing):
            index_slot, table_slot = ins.inputs[indexing[0]], ins.inputs[indexing[1]]
            weight = constant_of.get(table_slot)
            if weight is not None and weight < len(weights) and np.ndim(weights[weight]) >= 1:
                rows = int(np.shape(weights[weight])[0])
                for source in origin.get(index_slot, ()):
                    bounds[source] = min(bounds.get(source, rows), rows)
        (out,) = ins.outputs
        # ops whose result carries input 0's values (the spec's `values`: viewed, moved or converted):
        # ids stay ids through them
        carried = set().union(*(origin.get(s, set()) for s in ins.inputs[:1])) if op in CARRIES_VALUES else set()
        if op == OpCode.CAT:
            carried = set().union(*(origin.get(s, set()) for s in ins.inputs))
        origin[out] = carried  # a rewritten slot forgets what it held
    return bounds


def typed_input(shape: Sequence[int], dtype: DType, bound: int | None, rng: np.random.Generator) -> np.ndarray:
    """One input of ``shape`` (-1: 2) and ``dtype``: ids below ``bound``, or a mask, or normal floats."""
    sizes = [2 if d < 0 else int(d) for d in shape]
    if dtype == DType.FLOAT32:
        return rng.standard_normal(sizes).astype(np.float32)
    if bound is not None and dtype != DType.BOOL:
        return rng.integers(0, max(bound, 1), size=sizes).astype(_NUMPY[dtype])
    # a padding mask along the last dim: ones, then a random tail of zeros (at most half), never a
    # row of zeros only (a fully masked attention row is NaN in torch too, and in no real batch)
    mask = np.ones(sizes, dtype=np.bool_)
    if sizes and sizes[-1] > 1:
        rows = mask.reshape(-1, sizes[-1])
        for row in rows:
            row[sizes[-1] - int(rng.integers(0, sizes[-1] // 2 + 1)):] = False
    return mask.astype(_NUMPY[dtype])


def method_inputs(program: Program, weights: Sequence[np.ndarray | QuantizedTensor], shapes: Sequence[Sequence[int]],
                  seed: int) -> list[np.ndarray]:
    """Inputs of the declared dtypes of ``program`` (its ValueInfo) and the given shapes."""
    rng = np.random.default_rng(seed)
    bounds = index_bounds(program, weights)
    return [typed_input(shape, DType(program.inputs[i].dtype) if i < len(program.inputs) else DType.FLOAT32,
                        bounds.get(i), rng) for i, shape in enumerate(shapes)]
