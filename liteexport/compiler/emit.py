"""Turn optimized instructions-to-be into plain data: Programs, the weight list and the
debug table. One :class:`ModuleEmitter` serves all methods of a module, so weights are
shared and debug handles are unique across the module."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from bundle_format.debug_table import DebugEntry, DebugTable
from bundle_format.program import (
    PROGRAM_FORMAT_VERSION,
    STATE_FORMAT_VERSION,
    Constant,
    DType,
    Instruction,
    OpCode,
    Program,
    State,
    ValueInfo,
)
from bundle_format.ptmf import ScalarType
from liteexport.compiler.dtypes import dtype_of
from liteexport.compiler.state_ops import StateBinding
from liteexport.compiler.values import NodeSite, OpNode, Sym, TensorConst, TensorValue
from liteexport.errors import ModelError
from liteexport.slot_plan import plan_slots
from runtime_py.errors import InternalError
from runtime_py.quantized_tensor import QuantizedTensor

_SAMPLE = 64  # values sampled, evenly spaced, to tell weights of the same shape apart
_CHUNK = 1 << 20  # values compared at a time: stops at the first differing chunk, no big temporaries


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two arrays of the same shape and dtype hold the same bits (so NaN equals itself)."""
    if a.ctypes.data == b.ctypes.data:  # the same memory: a shared parameter
        return True
    x, y = a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8)
    return all(np.array_equal(x[i:i + _CHUNK], y[i:i + _CHUNK]) for i in range(0, x.size, _CHUNK))


def _as_quantized(q: torch.Tensor) -> QuantizedTensor:
    """torch's quantized tensor as the bundle writer (and runtime_py) holds one."""
    values = np.ascontiguousarray(q.int_repr().numpy())
    scalar_type = {torch.qint8: ScalarType.QINT8, torch.quint8: ScalarType.QUINT8}[q.dtype]
    if q.qscheme() == torch.per_tensor_affine:
        return QuantizedTensor(values, scalar_type, q.q_scale(), q.q_zero_point())
    return QuantizedTensor(values, scalar_type, scales=q.q_per_channel_scales().numpy(),
                           zero_points=q.q_per_channel_zero_points().numpy(), axis=q.q_per_channel_axis())


class ModuleEmitter:
    def __init__(self) -> None:
        self.weights: list[np.ndarray | QuantizedTensor] = []
        self._weight_index: dict[tuple[object, ...], list[int]] = {}  # (shape, sample) -> indexes
        self._entries: list[DebugEntry] = []
        self._stored_index: dict[int, tuple[int, torch.Tensor]] = {}  # id(quantized weight) -> (index, it)

    def weight(self, tensor: torch.Tensor, stored: torch.Tensor | None = None) -> int:
        """Index of ``tensor`` in the weight list. Equal contents are stored once: a shared
        parameter, one used by two methods, or the same fold (``self.w.t()``) done twice.
        ``stored``: the quantized tensor ``tensor`` is the float values of, which the bundle holds."""
        if stored is not None:
            if id(stored) not in self._stored_index:
                self._stored_index[id(stored)] = (len(self.weights), stored)  # kept alive: ids stay unique
                self.weights.append(_as_quantized(stored))
            return self._stored_index[id(stored)][0]
        # a view of the tensor's memory when it is a contiguous CPU tensor (a parameter,
        # usually): the bundle writer reads it straight from there. Read-only, so nothing
        # downstream can change the model. Its dtype is kept (index buffers are int64).
        dtype_of(TensorConst(tensor))  # a compiled dtype (the lowerings checked it)
        # reshaped: numpy's ascontiguousarray makes a 0-d array 1-d (a 0-d constant output came
        # out with shape (1,))
        array = np.ascontiguousarray(tensor.detach().cpu().numpy()).reshape(tuple(tensor.shape))
        array.flags.writeable = False
        # Candidates share the shape, dtype and a small sample of the values; only they are
        # compared in full. Hashing every weight instead reads all of its bytes, even for unique ones.
        flat = array.reshape(-1)
        key = (array.shape, array.dtype.str, flat[::max(1, flat.size // _SAMPLE)].tobytes())
        candidates = self._weight_index.setdefault(key, [])
        for index in candidates:
            candidate = self.weights[index]  # candidates are plain arrays: stored ones have no key
            if isinstance(candidate, np.ndarray) and _same_bits(candidate, array):
                return index
        candidates.append(len(self.weights))
        self.weights.append(array)
        return candidates[-1]

    def handle(self, site: NodeSite) -> int:
        handle = len(self._entries)
        self._entries.append(DebugEntry(handle, site.method, site.kind, site.hierarchy, site.frames))
        return handle

    def debug_table(self) -> DebugTable:
        return DebugTable(tuple(self._entries))

    def program(self, method: str, inputs: list[Sym], nodes: list[OpNode],
                outputs: list[TensorValue], states: Sequence[StateBinding] = ()) -> Program:
        slots: dict[int, int] = {id(v): i for i, v in enumerate(inputs)}
        constants: list[Constant] = []
        const_slots: dict[int, int] = {}  # weight index -> slot
        slot_dtypes: list[DType] = [v.dtype for v in inputs]  # every slot holds values of one dtype
        # layout: inputs, then states, then constants (in order of first use), then instruction results
        declared: list[State] = []
        for binding in states:
            slots[id(binding.value)] = len(slot_dtypes)
            initial = -1 if not binding.initial.any() else self.weight(binding.initial)
            declared.append(State(binding.name, len(slot_dtypes), binding.value.dtype,
                                  tuple(binding.initial.shape), initial))
            slot_dtypes.append(binding.value.dtype)
        check_state_writes(method, nodes, outputs)

        def new_slot(dtype: DType) -> int:
            slot_dtypes.append(dtype)
            return len(slot_dtypes) - 1

        def slot_of(value: TensorValue) -> int:
            if isinstance(value, TensorConst):
                index = self.weight(value.tensor, value.stored)
                if index not in const_slots:
                    const_slots[index] = new_slot(dtype_of(value))
                    constants.append(Constant(const_slots[index], index))
                return const_slots[index]
            if id(value) not in slots:
                raise InternalError(f"value read before it is written in {method}")
            return slots[id(value)]

        for v in [v for node in nodes for v in node.inputs] + list(outputs):
            if isinstance(v, TensorConst):
                slot_of(v)
        # Optional inputs are positional: an absent bias is only allowed last.
        for node in nodes:
            if None in node.inputs and any(v is not None for v in node.inputs[node.inputs.index(None):]):
                raise InternalError(f"absent input before a present one in {node.site.kind}")

        def key(value: TensorValue) -> object:  # a constant by its slot, a run-time value by itself
            return ("constant", slot_of(value)) if isinstance(value, TensorConst) else id(value)

        placed: dict[object, int] = {key(v): slots[id(v)] for v in inputs}
        placed.update({id(binding.value): slots[id(binding.value)] for binding in states})
        placed.update({("constant", slot): slot for slot in const_slots.values()})
        for node in nodes:  # a write into a state is its result, in the state's own slot
            if node.op in STATE_WRITES:
                placed[id(node.output)] = placed[key(node.inputs[0])]  # type: ignore[arg-type]
        steps = [(tuple(key(v) for v in node.inputs if v is not None), id(node.output), node.output.dtype)
                 for node in nodes]
        planned = plan_slots(slot_dtypes, placed, steps, [key(v) for v in outputs], method)
        instructions: list[Instruction] = []
        handles: dict[int, int] = {}  # id(OpNode) -> handle
        for node, (reads, out) in zip(nodes, planned, strict=True):
            slots[id(node.output)] = out
            handles[id(node)] = self.handle(node.site)
            instructions.append(Instruction(node.op, reads, (out,), node.attrs, handles[id(node)]))
        out_slots = tuple(slot_of(v) for v in outputs)
        out_handles = tuple(
            handles[id(v.producer)] if isinstance(v, Sym) and v.producer is not None else -1
            for v in outputs)
        return Program(
            method=method,
            num_slots=len(slot_dtypes),
            slot_dtypes=tuple(slot_dtypes),
            inputs=tuple(ValueInfo(shape=v.shape, dtype=v.dtype) for v in inputs),
            constants=tuple(constants),
            instructions=tuple(instructions),
            outputs=out_slots,
            output_debug_handles=out_handles,
            states=tuple(declared),
            format_version=STATE_FORMAT_VERSION if declared else PROGRAM_FORMAT_VERSION,
        )


STATE_WRITES = frozenset({OpCode.INDEX_COPY, OpCode.STATE_WRITE})  # results written into their input 0's slot


def check_state_writes(method: str, nodes: Sequence[OpNode], outputs: Sequence[TensorValue]) -> None:
    """A write into a state changes its value in place, so nothing may read the value it
    overwrites after it (torch's graph may, when it keeps the old contents): ModelError."""
    last_read: dict[int, int] = {}
    for position, node in enumerate(nodes):
        for value in node.inputs:
            if value is not None:
                last_read[id(value)] = position
    for value in outputs:
        last_read[id(value)] = len(nodes)
    for position, node in enumerate(nodes):
        if node.op in STATE_WRITES and last_read.get(id(node.inputs[0]), -1) > position:
            state = node.output.state
            frame = node.site.frames[-1] if node.site.frames else None
            where = f" ({frame})" if frame is not None else ""
            raise ModelError(f"method {method!r} reads state {state!r} (a buffer it writes in place) after "
                             f"writing it{where}, expecting the old contents: keep a copy (x.clone()) before the "
                             "write, or read it before")
