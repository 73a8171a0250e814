"""Value slots of a compiled program: which slot each instruction's result is written to.

One plan for the compiler's emitter (liteexport/compiler/emit.py) and for the passes that rewrite
a compiled program (liteexport/static_int8.py inserts FAKE_QUANTIZE steps): a result takes the
lowest free slot of its dtype (a slot keeps one dtype), a slot is freed after the last instruction
reading its value (outputs live to the end), and a result never shares a slot with the
instruction's own inputs, so no kernel writes over an operand it reads (the native core relies
on that). Inputs, states and constants keep the slots given to them, never reused; a result placed
already (a write into program state, in place) keeps its state's slot.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, MutableMapping, Sequence

from bundle_format.program import DType
from runtime_py.errors import InternalError

Step = tuple[Sequence[Hashable], Hashable, DType]  # (values read, the value written, its dtype)


def plan_slots(slot_dtypes: list[DType], placed: MutableMapping[Hashable, int], steps: Sequence[Step],
               outputs: Sequence[Hashable], where: str = "") -> list[tuple[tuple[int, ...], int]]:
    """(slots read, slot written) per step. ``placed`` holds the inputs' and constants' slots and
    gets every result's; ``slot_dtypes`` (one dtype per slot, for the placed ones) gets the new
    slots'. A value read before any step writes it is an InternalError naming ``where``."""
    last_use: dict[Hashable, int] = {}
    for position, (reads, _, _) in enumerate(steps):
        for key in reads:
            last_use[key] = position
    for key in outputs:
        last_use[key] = len(steps)
    fixed = set(placed.values())
    free: dict[DType, list[int]] = {}  # slots of dead intermediate values, lowest first, per dtype
    planned: list[tuple[tuple[int, ...], int]] = []
    for position, (reads, result, dtype) in enumerate(steps):
        try:
            read_slots = tuple(placed[key] for key in reads)
        except KeyError:
            raise InternalError(f"value read before it is written in {where}") from None
        if result in placed:  # a write into program state: its result is the state's own (fixed) slot
            out = placed[result]
        elif reusable := free.get(dtype):
            out = heapq.heappop(reusable)
        else:
            slot_dtypes.append(dtype)
            out = len(slot_dtypes) - 1
        placed[result] = out
        planned.append((read_slots, out))
        for key in dict.fromkeys(reads):
            slot = placed[key]
            if last_use.get(key) == position and slot not in fixed and slot != out:
                heapq.heappush(free.setdefault(slot_dtypes[slot], []), slot)
        if last_use.get(result, -1) < position and out not in fixed:  # a dead result (a state write's aside)
            heapq.heappush(free.setdefault(dtype, []), out)
    return planned
