"""The one exception hierarchy of liteexport, runtime_py and the bundle format they share.

Errors are split into the user's errors (a bad bundle, a bad input; the exporter's own
ones, a bad model or an unsupported node, are in liteexport/errors.py) and our bugs
(`InternalError`). Every error keeps structured fields and formats its message once; the
CLI catches `LiteExportError` in one place, prints ``Error: <message>`` and exits with the
error's ``exit_code``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType


class LiteExportError(Exception):
    """Base of every error liteexport and runtime_py raise on purpose."""

    exit_code = 1
    # the structured form of the demo backend's errors (bundle_format/error_codes.py): a code of
    # schema/demo_errors.toml and its fields as text; "" and none for other errors
    code: str = ""
    fields: Mapping[str, str] = MappingProxyType({})

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UserError(LiteExportError):
    """Something the user gave us is wrong: fixable on their side."""

    exit_code = 1




class FormatError(UserError):
    """A bundle (or one of the encodings inside it) is malformed or of an unknown version."""

    exit_code = 5

    def __init__(self, message: str, *, where: str = "") -> None:
        self.where = where
        super().__init__(f"{message} (at {where})" if where else message)

    def at(self, where: str) -> FormatError:
        """This error, or, when it does not say where, the same one located at ``where`` (for a
        caller that knows the table or record a lower layer was reading)."""
        if self.where:
            return self
        located = type(self)(self.message, where=where)
        located.code, located.fields = self.code, self.fields
        return located


class InputError(UserError):
    """Inputs given to `run` cannot be read or do not fit the method."""

    exit_code = 6
    debug_handle = -1  # the compiled instruction that reads a misfit input first, when one does


class ExecutionError(UserError):
    """A method failed while running; when the failure is inside a compiled program the
    message names the instruction and maps its debug handle to the model's source."""

    exit_code = 7

    def __init__(self, message: str, *, debug_handle: int = -1) -> None:
        self.debug_handle = debug_handle
        # the handle of the instruction each bytecode frame was running, innermost first, as
        # torch's lite interpreter stacks them (runtime_py.delegate_trace renders the stack)
        self.outer_handles: list[int] = []
        super().__init__(message)




class InternalError(LiteExportError):
    """A bug in liteexport itself: please report it. ``where`` names the place in the bundle
    being run when it happened (instruction, pc, function, debug handle), if any."""

    exit_code = 70

    def __init__(self, message: str, *, where: str = "") -> None:
        self.detail = message
        self.where = where
        located = f"{where}: {message}" if where else message
        super().__init__(f"internal error (a bug in liteexport, please report it): {located}")
