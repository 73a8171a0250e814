"""Limits on bytecode the interpreter runs: a hostile bundle's load-time code (LoadBudget) and,
when the caller asks, a method call at run time (RunBudget)."""

from __future__ import annotations

import sys
import time
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from runtime_py.errors import ExecutionError, FormatError, LiteExportError
from runtime_py.quantized_tensor import QuantizedTensor

if TYPE_CHECKING:
    from runtime_py.interpreter import Code, Frame


class LoadBudget:
    """Limits for code run while a bundle loads (``__setstate__`` and what it calls): a bundle
    is hostile, so its load-time code gets an instruction budget proportional to the bundle's
    size, a call-depth limit and a cap on the size of any value an operator produces.
    Running out is a FormatError (the file is at fault, not an input)."""

    MAX_CALL_DEPTH = 64

    def __init__(self, instructions: int, max_value_size: int) -> None:
        self.instructions_left = instructions
        self.instructions = instructions
        self.max_value_size = max_value_size
        self.depth = 0

    def refill(self, f: Frame) -> None:
        """Called when ``instructions_left`` goes below 0: raise, or allow more instructions."""
        raise FormatError(f"load-time code exceeded the instruction budget of {self.instructions} "
                          f"instructions (at pc {f.pc} of function {f.code.qn}) at load: an endless loop?",
                          where=f"{f.code.qn}.instructions[{f.pc}]")

    def too_deep(self, code: Code) -> LiteExportError:
        return FormatError(f"load-time code exceeded the call-depth limit of {self.MAX_CALL_DEPTH} "
                           f"(calling {code.qn}) at load", where=code.qn)

    def out_of_memory(self, code: Code, pc: int) -> LiteExportError:
        return FormatError(f"load-time code ran out of memory at pc {pc} of function {code.qn}",
                           where=f"{code.qn}.instructions[{pc}]")

    def check_value(self, value: Any, where: str) -> None:
        """Refuse a value larger than the budget allows (a tensor's bytes, a container's length)."""
        if isinstance(value, QuantizedTensor):  # its integers
            value = value.int_repr
        if isinstance(value, np.ndarray):
            size = value.size * value.itemsize if value.size else 0
        elif isinstance(value, tuple):  # walked as a tree by hash and ==: shared items count each time
            size = 8 * tuple_tree_size(value, self.max_value_size // 8 + 1)
        elif isinstance(value, (list, dict)):
            size = 8 * len(value)  # a pointer per item at least
        elif isinstance(value, (str, bytes)):
            size = len(value)
        else:
            return
        if size > self.max_value_size:
            raise FormatError(f"load-time code built a value of {size} bytes, more than the "
                              f"{self.max_value_size} the bundle's size allows", where=where)


class RunLimitExceeded(ExecutionError):
    """A method call ran past the instruction budget, time limit or memory budget of its call."""


DEFAULT_MAX_MEMORY = 2 << 30  # bytes of live values a call may hold (inputs included, weights not)


@dataclass(frozen=True)
class ProgramLimits:
    """What bounds a compiled program's run (``runtime_py.backends.demo.executor``): the bytes of
    live values, checked from shapes before each instruction allocates, and the deadline of the
    call, checked between instructions and within long matrix products. Set per call by
    ``Module.run_method`` (``max_memory=``, ``timeout=``) through PROGRAM_LIMITS."""

    max_memory: int = DEFAULT_MAX_MEMORY
    deadline: float | None = None  # time.monotonic() value
    timeout: float | None = None  # seconds, for the message

    def past_deadline(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def timed_out(self, where: str, debug_handle: int) -> RunLimitExceeded:
        return RunLimitExceeded(f"ran longer than the time limit of {self.timeout:g} s ({where}) (raise it with "
                                "--timeout / timeout=)", debug_handle=debug_handle)

    def out_of_memory(self, where: str, need: int, live: int, debug_handle: int) -> RunLimitExceeded:
        return RunLimitExceeded(f"{where} would allocate up to {need} bytes while {live} are live: more than the "
                                f"memory budget of {self.max_memory} bytes (raise it with --max-memory / "
                                "max_memory=)", debug_handle=debug_handle)

    def below_plan(self, method: str, planned: int, dims: str) -> RunLimitExceeded:
        return RunLimitExceeded(f"method '{method}' is planned to hold up to {planned} bytes of results at the upper "
                                f"bounds of {dims}: more than the memory budget of {self.max_memory} bytes (raise it "
                                "with --max-memory / max_memory=)", debug_handle=-1)


# the default is frozen: sharing it is safe
PROGRAM_LIMITS: ContextVar[ProgramLimits] = ContextVar("runtime_py_program_limits", default=ProgramLimits())  # noqa: B039


class RunBudget(LoadBudget):
    """Optional limits of one method call at run time (``runtime_py.load(path, max_instructions=...,
    timeout=...)``, ``liteexport run --max-instructions/--timeout``): a hostile bundle's bytecode can
    jump to itself or loop 2**62 times. The loop counts down ``instructions_left`` as at load; each
    time it runs out (every CHECK_EVERY instructions when a timeout is set) ``refill`` checks the
    clock and the total. Values are not capped (inputs may be large), calls nest up to
    MAX_CALL_DEPTH (TorchScript has no recursion). Exceeding a limit is a RunLimitExceeded (exit 7)."""

    MAX_CALL_DEPTH = 256
    CHECK_EVERY = 4096
    MAX_TUPLE_TREE = 1 << 24

    def __init__(self, max_instructions: int | None = None, timeout: float | None = None,
                 max_memory: int = DEFAULT_MAX_MEMORY) -> None:
        super().__init__(max_instructions if max_instructions is not None else sys.maxsize, sys.maxsize)
        self.max_memory = max_memory
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout if timeout is not None else None
        self.total_left = self.instructions  # not yet handed out to instructions_left
        self.instructions_left = 0
        self._hand_out()

    def _hand_out(self) -> None:
        chunk = min(self.total_left, self.CHECK_EVERY) if self.deadline is not None else self.total_left
        self.total_left -= chunk
        self.instructions_left += chunk

    def refill(self, f: Frame) -> None:
        where = f"at pc {f.pc} of function {f.code.qn}"
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise RunLimitExceeded(f"ran longer than the time limit of {self.timeout:g} s ({where}): an endless "
                                   "loop? (raise it with --timeout / timeout=)")
        if self.total_left <= 0:
            raise RunLimitExceeded(f"exceeded the instruction budget of {self.instructions} instructions ({where}): "
                                   "an endless loop? (raise it with --max-instructions / max_instructions=)")
        self._hand_out()

    def check_value(self, value: Any, where: str) -> None:
        """Tuples: hashing or comparing one walks it as a tree, in C, where no time limit reaches
        (sixty TUPLE_CONSTRUCTs of the previous tuple twice make a 2**60 walk); tensors: up to the
        memory budget. Other values are the inputs' business."""
        if type(value) is QuantizedTensor:  # its integers
            value = value.int_repr
        if type(value) is np.ndarray and value.nbytes > self.max_memory:
            raise RunLimitExceeded(f"built a tensor of {value.nbytes} bytes, more than the memory budget of "
                                   f"{self.max_memory} bytes ({where}) (raise it with --max-memory / max_memory=)")
        if type(value) is tuple and tuple_tree_size(value, self.MAX_TUPLE_TREE + 1) > self.MAX_TUPLE_TREE:
            raise RunLimitExceeded(f"built a tuple that holds more than {self.MAX_TUPLE_TREE} items counted as a "
                                   f"tree (it holds shared tuples many times over) ({where})")

    def too_deep(self, code: Code) -> LiteExportError:
        return RunLimitExceeded(f"calls nested deeper than {self.MAX_CALL_DEPTH} (calling {code.qn})")

    def out_of_memory(self, code: Code, pc: int) -> LiteExportError:
        return ExecutionError(f"out of memory at pc {pc} of function {code.qn}", debug_handle=code.debug_handle(pc))


def tuple_tree_size(value: tuple[Any, ...], stop: int) -> int:
    """Items of ``value`` counted as hash and == walk it (nested tuples expanded, a shared one each
    time it is met), up to ``stop``. Computed on the distinct tuples, children first: the cost is
    the tuples' number and lengths, not the (maybe 2**60) count."""
    sizes: dict[int, int] = {}  # id -> size, for tuples reachable from value (alive while it is)
    stack: list[tuple[tuple[Any, ...], bool]] = [(value, False)]
    while stack:
        item, children_done = stack.pop()
        if children_done:
            sizes[id(item)] = min(stop, 1 + sum([sizes[id(c)] if type(c) is tuple else 1 for c in item]))
        elif id(item) not in sizes:
            stack.append((item, True))
            stack.extend([(c, False) for c in item if type(c) is tuple and id(c) not in sizes])
    return sizes[id(value)]
