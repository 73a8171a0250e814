"""The working memory of a compiled method, planned at export for the upper bounds of its named dims
(issue 20: "the program is compiled once, with symbolic sizes; memory is planned for the upper
bounds").

The figure is runtime_py's own accounting (backends/demo/memory.py, what its memory budget checks)
evaluated without running anything: every slot's shape follows from the inputs' shapes by the
compiler's shape rules, so with each named dim at its upper bound the pass walks the instructions
as the demo executor does, and before each one adds what the slots keep alive (instruction results,
and the buffers views of them keep; inputs and weights are not counted) to what the instruction may
allocate. The most of that is the figure: runtime_py counts each buffer a slot keeps alive once, and
a view here counts both its own bytes and its input's buffers, so the figure bounds what a run at
the upper bounds holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bundle_format.program import OP_SPECS, Program
from liteexport.compiler.shapes import infer_shape
from liteexport.compiler.values import Sym
from runtime_py.backends.demo.arrays import NUMPY_DTYPES
from runtime_py.backends.demo.memory import output_bound


def upper_bound_shapes(program: Program) -> list[tuple[int, ...]] | None:
    """The inputs' shapes with every named dim at its upper bound; None when one has no upper bound
    or an input has a dynamic dim that is not named (nothing bounds it)."""
    if not program.symbolic_dims or any(d.hi < 0 for d in program.symbolic_dims):
        return None
    shapes = []
    for info in program.inputs:
        if info.shape is None:
            return None
        symbols = info.dim_symbols or (-1,) * len(info.shape)
        shape = tuple(program.symbolic_dims[s].hi if s >= 0 else d for d, s in zip(info.shape, symbols, strict=True))
        if any(d < 0 for d in shape):
            return None
        shapes.append(shape)
    return shapes


def plan_working_memory(program: Program, weight_shapes: Sequence[tuple[int, ...]]) -> int:
    """Bytes ``program`` needs at once at the upper bounds of its named dims (see the module's
    docstring); 0 when it has no named dims with upper bounds or a shape is not known."""
    inputs = upper_bound_shapes(program)
    if inputs is None:
        return 0
    shapes: dict[int, tuple[int, ...]] = dict(enumerate(inputs))
    for constant in program.constants:
        shapes[constant.slot] = tuple(weight_shapes[constant.weight])
    # the buffers each slot keeps alive (inputs and weights: none counted), each buffer's bytes; a
    # view (an op whose result may alias input 0: a slice of a chunk) keeps its input's buffers
    # alive after their own slots are rewritten, and counts its own bytes too (a kernel may copy)
    keeps: dict[int, frozenset[int]] = {}
    buffer_bytes: list[int] = []
    peak = 0
    for instruction in program.instructions:
        if any(slot not in shapes for slot in instruction.inputs):
            return 0
        # arrays of the operands' shapes and dtypes that take no memory: the bounds read only those
        args = [np.broadcast_to(np.zeros((), NUMPY_DTYPES[program.slot_dtype(slot)]), shapes[slot])
                for slot in instruction.inputs]
        held = sum(buffer_bytes[b] for b in frozenset().union(*keeps.values()))
        peak = max(peak, held + output_bound(instruction.op, instruction.attributes)(args))
        result = infer_shape(instruction.op, instruction.attributes,
                             [Sym(shapes[slot], dtype=program.slot_dtype(slot)) for slot in instruction.inputs])
        if result is None or -1 in result:
            return 0
        (out,) = instruction.outputs
        shapes[out] = result
        buffer_bytes.append(math.prod(result) * NUMPY_DTYPES[program.slot_dtype(out)].itemsize)
        view = OP_SPECS[instruction.op].may_alias_input
        keeps[out] = (keeps.get(instruction.inputs[0], frozenset()) if view else frozenset()) | {len(buffer_bytes) - 1}
    return peak
