"""Whether an exported module can generate text, and how: the generation record ``liteexport
export`` stores in the bundle (runtime_py.generation.GenerationSpec, ``liteexport/generation.json``).

A module generates when its ``forward`` takes ``(input_ids, cache_position)``, returns one tensor
(the logits) and keeps program state (its KV cache): what transformers' on-device recipe exports.
The longest chunk a call takes is the upper bound of the ids' named dim; the cache length is
the size of the axis its cache writes index (the smallest, if caches differ).
"""

from __future__ import annotations

from collections.abc import Sequence

from bundle_format.program import OpCode, Program
from liteexport.lowered import CompiledModule
from runtime_py.generation import GenerationSpec

__all__ = ["GENERATION_INPUTS", "generation_spec"]

GENERATION_INPUTS = ("input_ids", "cache_position")


def generation_spec(compiled: CompiledModule, stop_ids: Sequence[int] = ()) -> GenerationSpec | None:
    """The module's generation record, or None when it does not generate."""
    for signature, program in zip(compiled.methods, compiled.programs, strict=True):
        if signature.name != "forward" or tuple(signature.arg_names) != GENERATION_INPUTS \
                or signature.returns_tuple or signature.output_keys or not program.states:
            continue
        length = _cache_length(program)
        chunk = _chunk(program)
        if length is None or chunk is None:
            return None
        return GenerationSpec("forward", min(chunk, length), length, tuple(int(t) for t in stop_ids))
    return None


def _cache_length(program: Program) -> int | None:
    """The positions of the cache: the smallest size along an axis INDEX_COPY writes."""
    shapes = {s.slot: s.shape for s in program.states}
    sizes = [shapes[i.inputs[0]][i.attributes.axis]  # type: ignore[union-attr]
             for i in program.instructions if i.op == OpCode.INDEX_COPY and i.inputs[0] in shapes]
    return min(sizes) if sizes else None


def _chunk(program: Program) -> int | None:
    """The most tokens one call takes: the ids' length (static, or its named dim's upper bound)."""
    ids = program.inputs[0]
    if ids.shape is None or len(ids.shape) != 2 or ids.shape[0] != 1:
        return None
    if ids.shape[1] >= 0:
        return ids.shape[1]
    symbol = ids.dim_symbols[1] if len(ids.dim_symbols) == 2 else -1
    if symbol < 0 or program.symbolic_dims[symbol].hi < 1:
        return None
    return program.symbolic_dims[symbol].hi
