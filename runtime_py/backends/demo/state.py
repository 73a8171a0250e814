"""Program state: the tensors a loaded module keeps across calls (a KV cache), and the two
instructions that write them in place (INDEX_COPY, STATE_WRITE).

One :class:`ModuleState` per loaded module (``DemoBackend.compile``), shared by all of its
methods' plans: a ``prefill`` and a ``decode``, or an encoder filling a cache its decoder reads,
work on one copy. Each program declares the states it uses (``Program.states``: name, slot,
dtype, shape, initial value); declarations of one name must agree across methods.

A call's writes are journaled: each saves what it overwrites (the rows it touches, or the whole
state for STATE_WRITE), and a call that fails restores them in reverse order, so a failed call
leaves the state exactly as it was before it. A write at a position outside the state is
refused before it writes (an InputError naming the position and the size, exit 6).
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from bundle_format.error_codes import format_error
from bundle_format.program import DTYPE_NAMES, AxisAttrs, OpCode, Program, State
from runtime_py.backends.demo.arrays import NUMPY_DTYPES, Array, Kernel
from runtime_py.backends.demo.typed import checked_axis

__all__ = ["ModuleState", "StatePositionError", "make_index_copy", "make_state_write"]

# (the state array, the index along axis 0 of its moved view or None for all of it, axis, saved)
_Undo = tuple[np.ndarray, Any, int, np.ndarray]
_JOURNAL: contextvars.ContextVar[list[_Undo] | None] = contextvars.ContextVar("state_journal", default=None)


class StatePositionError(ValueError):
    """A write into a state at a position outside it: the caller's input (the executor renders it
    as STATE_POSITION with the state's name and the instruction)."""

    def __init__(self, position: int, size: int, axis: int) -> None:
        super().__init__(f"position {position} is outside the state's {size} positions along axis {axis}")
        self.position, self.size, self.axis = position, size, axis


class ModuleState:
    """The state tensors of one loaded module, by name; created empty, filled by ``declare``."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._initial: dict[str, np.ndarray | None] = {}  # None: zeros
        self._declared_by: dict[str, tuple[str, State]] = {}  # name -> (first method, its declaration)
        # one call at a time writes a module's state: two calls in flight would interleave writes
        self.lock = threading.RLock()

    def declare(self, program: Program, weights: Sequence[object]) -> dict[int, np.ndarray]:
        """Checks ``program``'s state declarations against each other, the weights and earlier
        methods', allocates the new ones, and returns {slot: its state array}. FormatError."""
        where = f"demo program of method '{program.method}'"
        slots: dict[int, np.ndarray] = {}
        names: set[str] = set()
        for state in program.states:
            problem = _declaration_problem(program, state, weights, names, set(slots))
            if problem is not None:
                raise format_error("STATE_DECLARATION", where=where, name=state.name, problem=problem)
            names.add(state.name)
            earlier = self._declared_by.get(state.name)
            if earlier is not None:
                other, declared = earlier
                mine, theirs = _describe(state), _describe(declared)
                if mine != theirs:
                    raise format_error("STATE_MISMATCH", where=where, name=state.name, got=mine,
                                       method=program.method, expected=theirs, other=other)
            else:
                self._declared_by[state.name] = (program.method, state)
                initial = None if state.initial < 0 else np.asarray(weights[state.initial])
                self._initial[state.name] = initial
                array = np.zeros(state.shape, dtype=NUMPY_DTYPES[state.dtype])
                if initial is not None:
                    np.copyto(array, initial)
                self.arrays[state.name] = array
            slots[state.slot] = self.arrays[state.name]
        return slots

    def reset(self) -> None:
        """Every state back to its initial value, in place (the plans hold these arrays)."""
        with self.lock:
            for name, array in self.arrays.items():
                initial = self._initial[name]
                if initial is None:
                    array.fill(0)
                else:
                    np.copyto(array, initial)

    @contextlib.contextmanager
    def call(self) -> Iterator[None]:
        """One call's writes: undone, last first, if the call raises."""
        with self.lock:
            journal: list[_Undo] = []
            token = _JOURNAL.set(journal)
            try:
                yield
            except BaseException:
                for array, index, axis, saved in reversed(journal):
                    if index is None:
                        np.copyto(array, saved)
                    else:
                        np.moveaxis(array, axis, 0)[index] = saved
                raise
            finally:
                _JOURNAL.reset(token)


def _describe(state: State) -> str:
    shape = "x".join(map(str, state.shape)) or "a scalar"
    initial = "zeros" if state.initial < 0 else f"weight {state.initial}"
    return f"{DTYPE_NAMES.get(state.dtype, state.dtype)} {shape} starting as {initial}"


def _declaration_problem(program: Program, state: State, weights: Sequence[object], names: set[str],
                         slots: set[int]) -> str | None:
    if state.name in names:
        return "declared twice"
    if program.format_version < 3:
        return f"program format version {program.format_version} has no state (version 3 does)"
    if not len(program.inputs) <= state.slot < program.num_slots:
        return f"slot {state.slot} is not a free slot (inputs take 0..{len(program.inputs) - 1}, num_slots is " \
               f"{program.num_slots})"
    if state.slot in slots or any(c.slot == state.slot for c in program.constants):
        return f"slot {state.slot} already holds a constant or another state"
    if state.dtype not in NUMPY_DTYPES:
        return f"unknown dtype {int(state.dtype)}"
    if program.slot_dtype(state.slot) != state.dtype:
        held = DTYPE_NAMES[program.slot_dtype(state.slot)]
        return f"is {DTYPE_NAMES[state.dtype]} but slot {state.slot} holds {held}"
    if any(size < 0 for size in state.shape):
        return f"shape {tuple(state.shape)} has a negative size"
    if state.initial >= len(weights):
        return f"initial value is weight {state.initial}, but there are {len(weights)}"
    for index, instruction in enumerate(program.instructions):
        if state.slot in instruction.outputs and not (
                instruction.op in _IN_PLACE and instruction.inputs and instruction.inputs[0] == state.slot):
            return f"instruction #{index} writes its slot {state.slot} (only its in-place writes may)"
    if state.initial >= 0:  # last, as the C++ executors check it (after decoding, against their weights)
        weight = weights[state.initial]
        if not isinstance(weight, np.ndarray) or weight.dtype != NUMPY_DTYPES[state.dtype] \
                or weight.shape != tuple(state.shape):
            got = f"{weight.dtype} {weight.shape}" if isinstance(weight, np.ndarray) else type(weight).__name__
            wanted = f"{DTYPE_NAMES[state.dtype]} {tuple(state.shape)}"
            return f"initial value (weight {state.initial}) is {got}, not {wanted}"
    return None


_IN_PLACE = frozenset({OpCode.INDEX_COPY, OpCode.STATE_WRITE})  # the instructions that write a state's slot


def _journal(entry: _Undo) -> None:
    journal = _JOURNAL.get()
    if journal is not None:
        journal.append(entry)


def make_index_copy(attrs: AxisAttrs, n_inputs: int) -> Kernel:
    def index_copy(state: Array, index: Array, source: Array) -> Array:
        if state.ndim == 0:
            raise ValueError("INDEX_COPY writes positions along an axis, but the state is 0-d")
        axis = checked_axis(attrs.axis, state)
        if index.ndim > 1:
            raise ValueError(f"INDEX_COPY takes a 1-D index, got shape {index.shape}")
        positions = index.reshape(-1)
        expected = state.shape[:axis] + (positions.size,) + state.shape[axis + 1:]
        if source.shape != expected:
            raise ValueError(f"INDEX_COPY: the source has shape {source.shape}, but writing {positions.size} "
                             f"positions along axis {axis} of a state of shape {state.shape} takes {expected}")
        size = state.shape[axis]
        outside = (positions < 0) | (positions >= size)
        if outside.any():
            raise StatePositionError(int(positions[np.argmax(outside)]), size, axis)
        moved = np.moveaxis(state, axis, 0)  # a view: writes land in the state
        _journal((state, positions.copy(), axis, moved[positions].copy()))
        moved[positions] = np.moveaxis(source, axis, 0)  # duplicates: the last one wins, as torch's CPU loop
        return state

    return index_copy


def make_state_write(attrs: None, n_inputs: int) -> Kernel:
    def state_write(state: Array, value: Array) -> Array:
        if value.shape != state.shape:
            raise ValueError(f"STATE_WRITE: the value has shape {value.shape}, the state {state.shape}")
        _journal((state, None, 0, state.copy()))
        np.copyto(state, value)
        return state

    return state_write
