"""Open a bundle file: read it, tell the formats apart (zip or PTMF), decode and verify it."""

from __future__ import annotations

import mmap
import os
import stat
from dataclasses import replace
from pathlib import Path

from bundle_format import ptmf
from bundle_format.errors import FormatError
from bundle_format.ptmf_reader import read_module
from bundle_format.ptmf_verify import verify_module
from bundle_format.zip_reader import read_zip_module

ZIP_MAGIC = b"PK\x03\x04"


def read_file(path: str | Path) -> bytes:
    """The file's bytes, read once into memory, whose weights are then used in place.

    Not memory-mapped, although that would save the copy: a mapped file truncated by another
    process kills the reader with SIGBUS, which Python cannot catch, and one overwritten in place
    changes a loaded model's weights under it. A read gives the bundle as it was when loaded.
    Anything but a regular file (a FIFO, a device, a directory) is refused before a read can
    block on it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise FormatError(f"{path} is a directory, not a bundle file", where=str(path)) from None
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}", where=str(path)) from exc
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise FormatError(f"{path} is {_file_kind(info.st_mode)}, not a bundle file (only regular files are read)",
                          where=str(path))
    with os.fdopen(fd, "rb") as f:
        if info.st_size == 0:
            raise FormatError(f"{path} is empty, not a bundle file", where=str(path))
        try:
            data = f.read(info.st_size + 1)
        except OSError as exc:
            raise FormatError(f"cannot read {path}: {exc.strerror or exc}", where=str(path)) from exc
    if len(data) != info.st_size:
        raise FormatError(f"{path} changed size while it was read ({info.st_size} bytes, then {len(data)}): "
                          "another process is writing it", where=str(path))
    return data


def _file_kind(mode: int) -> str:
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def is_zip(buf: bytes | bytearray | memoryview | mmap.mmap) -> bool:
    """Whether ``buf`` is a zip-format lite model (torch tells the formats apart the same way)."""
    return len(buf) >= 4 and buf[0:4] == ZIP_MAGIC


def check_identifier(buf: bytes | bytearray | memoryview | mmap.mmap, name: str) -> None:
    """Reject anything that is not a PTMF flatbuffer, saying what it looks like instead."""
    if len(buf) < 8:
        raise FormatError(f"{name} is too short ({len(buf)} bytes) to be a lite-interpreter model",
                          where=f"{name}, byte {len(buf)}")
    if buf[4:8] != ptmf.PTMF_FILE_IDENTIFIER:
        raise FormatError(f"{name} is not a PTMF bundle: file identifier is {bytes(buf[4:8])!r}, "
                          f"expected {ptmf.PTMF_FILE_IDENTIFIER!r}", where="bytes 4..7")


def read_bundle_bytes(buf: bytes | bytearray | memoryview | mmap.mmap, name: str = "bundle") -> ptmf.Module:
    """Decode and verify a lite model: a zip archive (bytecode 5..8) or a PTMF flatbuffer
    (bytecode 9), told apart by their magic bytes. Storage arrays are views into ``buf``."""
    if is_zip(buf):
        module = read_zip_module(buf, name)
        # The index checks do not depend on the format; the zip reader checked its own version range.
        verify_module(replace(module, bytecode_version=ptmf.BYTECODE_VERSION))
        return module
    check_identifier(buf, name)
    module = read_module(buf)
    verify_module(module)
    return module


def read_bundle_file(path: str | Path) -> ptmf.Module:
    """Read, decode and verify the bundle at ``path``, every function's instructions
    included: this is for tools that describe a whole bundle (``liteexport inspect``), where
    loading to run (``runtime_py.load``) checks a function's instructions when first used."""
    module = read_bundle_bytes(read_file(path), str(path))
    for value in module.ivalues:
        if isinstance(value, ptmf.Function):
            tuple(value.instructions)  # ptmf.LazyInstructions: decoding checks them
    return module


def file_size(path: str | Path) -> int:
    return Path(path).stat().st_size
