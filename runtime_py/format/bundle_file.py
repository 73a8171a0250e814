"""Open a bundle file: memory-map it, tell the formats apart (zip or PTMF), decode and verify it."""

from __future__ import annotations

import mmap
import os
from dataclasses import replace
from pathlib import Path

from runtime_py.errors import FormatError
from runtime_py.format import ptmf
from runtime_py.format.ptmf_reader import read_module
from runtime_py.format.ptmf_verify import verify_module
from runtime_py.format.zip_reader import read_zip_module

ZIP_MAGIC = b"PK\x03\x04"


def map_file(path: str | Path) -> mmap.mmap:
    """The file's bytes, memory-mapped read-only (weights are then used in place)."""
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                raise FormatError(f"{path} is empty, not a bundle file", where=str(path))
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except IsADirectoryError:
        raise FormatError(f"{path} is a directory, not a bundle file", where=str(path)) from None
    except OSError as exc:
        raise FormatError(f"cannot read {path}: {exc.strerror or exc}", where=str(path)) from exc


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
    """Memory-map, decode and verify the bundle at ``path``, every function's instructions
    included: this is for tools that describe a whole bundle (``liteexport inspect``), where
    loading to run (``runtime_py.load``) checks a function's instructions when first used."""
    module = read_bundle_bytes(map_file(path), str(path))
    for value in module.ivalues:
        if isinstance(value, ptmf.Function):
            tuple(value.instructions)  # ptmf.LazyInstructions: decoding checks them
    return module


def file_size(path: str | Path) -> int:
    return Path(path).stat().st_size
