"""Where the native core's host tool (``liteexport_native_run``) is, and its failures as
liteexport's errors: ``liteexport profile --engine native`` runs bundles through it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

from runtime_py.errors import ExecutionError, FormatError, InputError, UserError

ENV_VARIABLE = "LITEEXPORT_NATIVE_RUN"
# native/build.sh host builds it here: under native/ when the JNI library is built too (a JDK is
# installed), at the top otherwise
_BUILD = Path(__file__).resolve().parent.parent / "native" / "build" / "host"
_CANDIDATES = (_BUILD / "native" / "liteexport_native_run", _BUILD / "liteexport_native_run")


class NativeToolMissing(UserError):
    """The host tool is not built (or LITEEXPORT_NATIVE_RUN names no file)."""

    exit_code = 1


def native_tool() -> Path:
    """The host tool: ``$LITEEXPORT_NATIVE_RUN``, or the checkout's host build."""
    configured = os.environ.get(ENV_VARIABLE)
    if configured:
        if not Path(configured).is_file():
            raise NativeToolMissing(f"{ENV_VARIABLE}={configured}: no such file")
        return Path(configured)
    for candidate in _CANDIDATES:
        if candidate.is_file():
            return candidate
    raise NativeToolMissing("the native engine runs through liteexport_native_run, which is not built: run "
                            f"native/build.sh host in a checkout, or set {ENV_VARIABLE}")


def raise_tool_error(returncode: int, stderr: str) -> NoReturn:
    """The tool's failure as the error of its exit code (5 format, 6 input, 7 execution)."""
    message = stderr.strip()
    message = message[len("Error: "):] if message.startswith("Error: ") else message
    if returncode == 5:
        raise FormatError(message)
    if returncode == 6:
        raise InputError(message)
    if returncode == 7:
        raise ExecutionError(message)
    raise UserError(f"liteexport_native_run failed (exit {returncode}): {message}")
