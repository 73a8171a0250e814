"""Turn optimized instructions-to-be into plain data: Programs, the weight list and the
debug table. One :class:`ModuleEmitter` serves all methods of a module, so weights are
shared and debug handles are unique across the module."""

from __future__ import annotations

import hashlib
import heapq

import numpy as np
import torch

from liteexport.compiler.values import NodeSite, OpNode, Sym, TensorConst, TensorValue
from runtime_py.errors import InternalError
from runtime_py.format.debug_table import DebugEntry, DebugTable
from runtime_py.format.program import Constant, Instruction, Program, ValueInfo


class ModuleEmitter:
    def __init__(self) -> None:
        self.weights: list[np.ndarray] = []
        self._weight_index: dict[tuple[object, ...], int] = {}
        self._entries: list[DebugEntry] = []

    def weight(self, tensor: torch.Tensor) -> int:
        """Index of ``tensor`` in the weight list. Equal contents are stored once: a shared
        parameter, one used by two methods, or the same fold (``self.w.t()``) done twice."""
        detached = tensor.detach()
        array = np.ascontiguousarray(detached.cpu().numpy(), dtype=np.float32)
        if array.base is not None or np.shares_memory(array, detached.numpy()):
            # a view of the module's own parameter: no copy (the bundle writer reads it once);
            # read-only, so nothing here can change the model
            array = array.view()
            array.flags.writeable = False
        # hash the buffer in place: tobytes() would copy every weight once more
        key = (array.shape, hashlib.blake2b(array.data.cast("B"), digest_size=16).digest())
        if key not in self._weight_index:
            self._weight_index[key] = len(self.weights)
            self.weights.append(array)
        return self._weight_index[key]

    def handle(self, site: NodeSite) -> int:
        handle = len(self._entries)
        self._entries.append(DebugEntry(handle, site.method, site.kind, site.hierarchy, site.frames))
        return handle

    def debug_table(self) -> DebugTable:
        return DebugTable(tuple(self._entries))

    def program(self, method: str, inputs: list[Sym], nodes: list[OpNode],
                outputs: list[TensorValue]) -> Program:
        slots: dict[int, int] = {id(v): i for i, v in enumerate(inputs)}
        constants: list[Constant] = []
        const_slots: dict[int, int] = {}  # weight index -> slot
        next_slot = [len(inputs)]

        def new_slot() -> int:
            next_slot[0] += 1
            return next_slot[0] - 1

        def slot_of(value: TensorValue) -> int:
            if isinstance(value, TensorConst):
                index = self.weight(value.tensor)
                if index not in const_slots:
                    const_slots[index] = new_slot()
                    constants.append(Constant(const_slots[index], index))
                return const_slots[index]
            if id(value) not in slots:
                raise InternalError(f"value read before it is written in {method}")
            return slots[id(value)]

        # liveness: the last instruction reading each run-time value (outputs live to the end)
        last_use: dict[int, int] = {}
        for position, node in enumerate(nodes):
            for v in node.inputs:
                if isinstance(v, Sym):
                    last_use[id(v)] = position
        for v in outputs:
            if isinstance(v, Sym):
                last_use[id(v)] = len(nodes)
        free: list[int] = []  # slots of dead intermediate values, reused lowest first
        # layout: inputs, then constants (in order of first use), then instruction results
        for v in [v for node in nodes for v in node.inputs] + list(outputs):
            if isinstance(v, TensorConst):
                slot_of(v)

        instructions: list[Instruction] = []
        handles: dict[int, int] = {}  # id(OpNode) -> handle
        intermediate: set[int] = set()  # slots that hold instruction results
        for position, node in enumerate(nodes):
            reads = tuple(slot_of(v) for v in node.inputs if v is not None)
            # Optional inputs are positional: an absent bias is only allowed last.
            if None in node.inputs and any(v is not None for v in node.inputs[node.inputs.index(None):]):
                raise InternalError(f"absent input before a present one in {node.site.kind}")
            # a result never shares a slot with the instruction's own inputs (freed only after)
            out = heapq.heappop(free) if free else new_slot()
            intermediate.add(out)
            slots[id(node.output)] = out
            handles[id(node)] = self.handle(node.site)
            instructions.append(Instruction(node.op, reads, (out,), node.attrs, handles[id(node)]))
            for v in dict.fromkeys(v for v in node.inputs if isinstance(v, Sym)):
                slot = slots[id(v)]
                if last_use.get(id(v)) == position and slot in intermediate and slot != out:
                    heapq.heappush(free, slot)
            if last_use.get(id(node.output), -1) < position:  # a dead result (not expected after DCE)
                heapq.heappush(free, out)
        out_slots = tuple(slot_of(v) for v in outputs)
        out_handles = tuple(
            handles[id(v.producer)] if isinstance(v, Sym) and v.producer is not None else -1
            for v in outputs)
        return Program(
            method=method,
            num_slots=next_slot[0],
            inputs=tuple(ValueInfo(shape=v.shape) for v in inputs),
            constants=tuple(constants),
            instructions=tuple(instructions),
            outputs=out_slots,
            output_debug_handles=out_handles,
        )
