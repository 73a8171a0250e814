"""Per-instruction timing of compiled programs, for ``liteexport profile``.

While a `Profiler` is active (``with profiler.active():``), the demo backend hands the executor
an observer that reads the clock after every step; a step's time is the clock since the step
before it (or since the program started), so the observer's own cost (a clock read and two dict
updates, well under a microsecond) is counted in the step it follows. What the bundle's
TorchScript bytecode spends around the compiled programs (the wrapper, unlowered code) is the
call's time minus the programs' time.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field

from bundle_format.program import Instruction

_ACTIVE: ContextVar[Profiler | None] = ContextVar("liteexport_profiler", default=None)


@dataclass(frozen=True)
class ProfiledProgram:
    """A compiled program that ran while profiling: the backend's handle of it (one per lowered
    module and method: two lowered submodules' ``forward`` are two programs), its method and
    instructions."""

    handle: object
    method: str
    instructions: Sequence[Instruction]


@dataclass
class Profiler:
    """Seconds and calls per (program, instruction index) of every compiled program run while
    active; a program is its number in ``programs``."""

    seconds: dict[tuple[int, int], float] = field(default_factory=dict)
    calls: dict[tuple[int, int], int] = field(default_factory=dict)
    program_seconds: float = 0.0  # in compiled programs, all steps together
    programs: list[ProfiledProgram] = field(default_factory=list)  # in the order they first ran
    _numbers: dict[int, int] = field(default_factory=dict)  # id(handle) -> its number (programs keeps it alive)

    @contextlib.contextmanager
    def active(self) -> Iterator[Profiler]:
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)

    def observer(self, handle: object, method: str, instructions: Sequence[Instruction]) -> tuple[
            Callable[[int, object], None], Callable[[], None]]:
        """(observe, finish) for one run of ``method``'s program ``handle`` (its ``instructions``,
        which the observed indices index): ``observe(index, value)`` after each step, ``finish()``
        when the run ends (normally or not)."""
        number = self._numbers.get(id(handle))
        if number is None:
            number = self._numbers[id(handle)] = len(self.programs)
            self.programs.append(ProfiledProgram(handle, method, instructions))
        start = last = time.perf_counter()
        seconds, calls = self.seconds, self.calls

        def observe(index: int, value: object) -> None:
            nonlocal last
            now = time.perf_counter()
            key = (number, index)
            seconds[key] = seconds.get(key, 0.0) + (now - last)
            calls[key] = calls.get(key, 0) + 1
            last = now

        def finish() -> None:
            self.program_seconds += last - start

        return observe, finish


def active_profiler() -> Profiler | None:
    """The profiler of the current context, if any (the demo backend asks before each run)."""
    return _ACTIVE.get()


__all__ = ["ProfiledProgram", "Profiler", "active_profiler"]
