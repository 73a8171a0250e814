"""Write files so that readers only ever see the old file or the complete new one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from runtime_py.errors import OutputError


def write_atomic(path: str | Path, data: bytes | memoryview) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder, fsync, rename.

    On any failure the temporary file is removed and an existing file at ``path`` is
    left untouched; an unwritable destination raises OutputError.
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"cannot write {target}: it is a directory")
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as tmp:
            tmp.write(data)
            tmp.flush()
            os.fsync(tmp.fileno())
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from exc
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable where the OS allows it
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
