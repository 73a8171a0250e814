"""The errors only the exporter raises, on top of runtime_py's common hierarchy.

They subclass `runtime_py.errors.UserError` (so `LiteExportError`), so the CLI's one catch
site prints ``Error: <message>`` and exits with each one's ``exit_code``; runtime_py (the
loader and interpreter) never raises or needs them.
"""

from __future__ import annotations

from runtime_py.errors import UserError


class ModelError(UserError):
    """The model cannot be loaded, constructed or scripted."""

    exit_code = 3


class UnsupportedNodesError(UserError):
    """The demo compiler met nodes it cannot compile; lists every one of them."""

    exit_code = 4

    def __init__(self, reports: list[str], *, summary: str = "", counts: dict[str, int] | None = None,
                 reasons: dict[str, str] | None = None) -> None:
        self.reports = tuple(reports)
        self.counts = dict(counts or {})  # node kind -> number of sites
        self.reasons = dict(reasons or {})  # node kind -> why its first site did not compile ("": no lowering)
        super().__init__("\n\n".join(([summary] if summary else []) + reports))


class OutputError(UserError):
    """An output file cannot be written."""

    exit_code = 8


class VerificationError(UserError):
    """``liteexport verify``: an engine's outputs differ from the stored expected ones."""

    exit_code = 9
