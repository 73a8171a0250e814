"""Progress of a long export on stderr: quiet for the first second, so quick exports print
nothing but their result, then each stage as it starts, with the time spent so far."""

from __future__ import annotations

import time
from collections.abc import Callable

import click

DELAY = 1.0  # seconds before anything is shown
_MIN_INTERVAL = 0.5  # between two updates of one stage ("compiling forward: N nodes walked")


class Progress:
    """Called with a message for each step (``"stage: detail"``); shown on stderr once the export has taken ``delay``
    seconds (the latest pending step first), never when ``enabled`` is False."""

    def __init__(self, enabled: bool, delay: float = DELAY,
                 echo: Callable[[str], None] = lambda text: click.echo(text, err=True)) -> None:
        self.enabled = enabled
        self.delay = delay
        self._echo = echo
        self._start = time.monotonic()
        self._pending: tuple[str, float] | None = None  # the latest step not shown yet, and its time
        self._last: tuple[str, float] = ("", -_MIN_INTERVAL)  # stage and time of the last message shown

    def __call__(self, message: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic() - self._start
        if now < self.delay:
            self._pending = (message, now)
            return
        if self._pending is not None:
            self._show(*self._pending)
            self._pending = None
        stage, shown_at = self._last
        if message.split(":")[0] == stage and now - shown_at < _MIN_INTERVAL:
            return  # updates of one stage come often: one every half second is enough
        self._show(message, now)

    def _show(self, message: str, now: float) -> None:
        self._last = (message.split(":")[0], now)
        self._echo(f"[{now:5.1f}s] {message}")
