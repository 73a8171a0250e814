"""A watchdog for tests of things that once hung (a loop the budgets missed, a read blocked on a
FIFO): the test fails with ``what`` after ``seconds`` instead of hanging the run. Far above any
real run time: not a speed check."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def watchdog(seconds: int, what: str) -> Iterator[None]:
    def expired(signum: int, frame: object) -> None:
        raise AssertionError(f"did not finish in {seconds} s: {what}")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
