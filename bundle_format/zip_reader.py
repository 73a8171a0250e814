"""Read a zip-format lite model (``.ptl`` of bytecode 5..8) into the ``ptmf.Module`` mirror.

Archive layout (torch/csrc/jit/mobile/import.cpp): every record sits under one folder
``<name>/``: ``bytecode.pkl`` (functions), ``data.pkl`` + ``data/<key>`` (the module's
state and its tensors), ``constants/<key>`` (tensors of bytecode constants), ``extra/<name>``
(extra files), optionally ``mobile_debug_handles.pkl``, ``callstack_debug_map.pkl`` and
``code/**.debug_pkl`` (debug info). Pickles go through the restricted unpickler only.
Tensor bytes are used in place: torch stores those records uncompressed, so each is a
numpy view of the (memory-mapped) file.
"""

from __future__ import annotations

import io
import mmap
import struct
import zipfile
import zlib
from typing import Any

import numpy as np

from bundle_format import ptmf, zip_bytecode, zip_debug_info
from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE
from bundle_format.debug_table_codec import encode_debug_table
from bundle_format.errors import FormatError
from bundle_format.fb_reader import hostile_input
from bundle_format.restricted_unpickler import PickledObject, restricted_loads

MIN_ZIP_BYTECODE_VERSION = 5
MAX_ZIP_BYTECODE_VERSION = 8
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # zip local file header (30 bytes)
_LOCAL_HEADER_MAGIC = b"PK\x03\x04"
_ZIP_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, struct.error, NotImplementedError,
               ValueError, KeyError, IndexError, OverflowError)

Buffer = bytes | bytearray | memoryview | mmap.mmap

# Zip bombs: the records read (decompressed) from one archive may total at most this many
# times the archive's size plus a fixed allowance; a record's declared size is checked
# against that before anything is decompressed (torch stores records uncompressed anyway).
READ_FACTOR = 4
READ_SLACK = 1 << 20


class _BufferFile(io.RawIOBase):
    """A read-only, seekable file over a buffer without copying it (zipfile needs a file;
    ``io.BytesIO`` would copy a memory-mapped model and mmap is not a full file object)."""

    def __init__(self, buf: Buffer) -> None:
        super().__init__()
        self._view = memoryview(buf).cast("B")
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: len(self._view)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, b: Any) -> int:
        chunk = self._view[self._pos:self._pos + len(b)]
        b[:len(chunk)] = chunk
        self._pos += len(chunk)
        return len(chunk)


class ZipArchive:
    """The records of one torch archive, by path relative to its top folder."""

    def __init__(self, buf: Buffer, name: str) -> None:
        self.buf = buf
        self.name = name
        try:
            self.zip = zipfile.ZipFile(io.BufferedReader(_BufferFile(buf)))
            infos = self.zip.infolist()
        except _ZIP_ERRORS as exc:
            raise FormatError(f"{name} starts like a zip-format lite model but is not a readable zip "
                              f"archive: {exc}", where=f"{name}, zip central directory") from exc
        roots = {info.filename.split("/", 1)[0] for info in infos if "/" in info.filename}
        prefix = next((r for r in sorted(roots) if f"{r}/bytecode.pkl" in self.zip.NameToInfo), None)
        if prefix is None:
            raise FormatError(f"{name} is a zip archive without bytecode.pkl: not a lite-interpreter model "
                              "(was it saved with torch.jit.save instead of _save_for_lite_interpreter?)",
                              where=f"{name}, zip central directory")
        self.prefix = prefix + "/"
        self.records = {info.filename[len(self.prefix):]: info for info in infos
                        if info.filename.startswith(self.prefix)}
        self.read_left = READ_FACTOR * len(buf) + READ_SLACK

    def _check_sizes(self, record: str, info: zipfile.ZipInfo) -> None:
        """Refuse a record whose declared sizes cannot be right or would exceed the read budget."""
        where = f"{record}, central directory entry at byte {info.header_offset}"
        if info.compress_size > len(self.buf) or info.header_offset > len(self.buf):
            raise FormatError(f"record {record} claims {info.compress_size} bytes at byte {info.header_offset} "
                              f"of a {len(self.buf)}-byte archive", where=where)
        if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size:
            raise FormatError(f"stored record {record} has size {info.file_size} but takes "
                              f"{info.compress_size} bytes", where=where)
        if info.file_size > self.read_left:
            raise FormatError(f"record {record} claims {info.file_size} uncompressed bytes: more than the "
                              f"{len(self.buf)}-byte archive may expand to (a zip bomb?)", where=where)
        self.read_left -= info.file_size

    def has(self, record: str) -> bool:
        return record in self.records

    def read(self, record: str) -> bytes:
        """The record's bytes. Inflated here, not by zipfile: zipfile trusts the declared size and
        may inflate far more before cutting the result to it; this never holds more than the
        declared size plus one byte (which proves the record inflates past its size)."""
        info = self.records.get(record)
        if info is None:
            raise FormatError(f"{self.name} has no record {record}", where=f"{self.name} central directory")
        self._check_sizes(record, info)
        raw = self._stored_bytes(record, info)
        where = f"{record}, data at byte {info.header_offset}"
        if info.flag_bits & 1:
            raise FormatError(f"record {record} is encrypted", where=where)
        if info.compress_type == zipfile.ZIP_STORED:
            data = bytes(raw)
        elif info.compress_type == zipfile.ZIP_DEFLATED:
            inflater = zlib.decompressobj(-zlib.MAX_WBITS)
            try:
                data = inflater.decompress(raw, info.file_size + 1)
            except zlib.error as exc:
                raise FormatError(f"record {record} does not inflate: {exc}", where=where) from exc
            if len(data) > info.file_size:
                raise FormatError(f"record {record} inflates past its declared {info.file_size} bytes "
                                  "(a zip bomb?)", where=where)
            if len(data) < info.file_size or not inflater.eof:
                raise FormatError(f"record {record} inflates to {len(data)} bytes, not the declared "
                                  f"{info.file_size}", where=where)
        else:
            raise FormatError(f"record {record} uses zip compression method {info.compress_type}: torch "
                              "writes records stored or deflated", where=where)
        if zlib.crc32(data) != info.CRC:
            raise FormatError(f"record {record} does not match its CRC-32", where=where)
        return data

    def _stored_bytes(self, record: str, info: zipfile.ZipInfo) -> memoryview:
        """The record's bytes as stored in the file (after its local header), without copying."""
        offset = info.header_offset
        try:
            header = _LOCAL_HEADER.unpack_from(self.buf, offset)
        except struct.error as exc:
            raise FormatError(f"truncated zip header of {record}", where=f"byte {offset}") from exc
        if header[0] != _LOCAL_HEADER_MAGIC:
            raise FormatError(f"bad zip local header of {record}", where=f"byte {offset}")
        start = offset + _LOCAL_HEADER.size + header[9] + header[10]  # + name and extra-field lengths
        if start + info.compress_size > len(self.buf):
            raise FormatError(f"record {record} runs past the end of the file", where=f"byte {offset}")
        return memoryview(self.buf)[start:start + info.compress_size]

    def array(self, record: str) -> np.ndarray:
        """The record's bytes as uint8: a view of the file when stored uncompressed."""
        info = self.records.get(record)
        if info is None:
            raise FormatError(f"{self.name} has no tensor data record {record}",
                              where=f"{self.name} central directory")
        if info.compress_type != zipfile.ZIP_STORED:
            return np.frombuffer(self.read(record), dtype=np.uint8)
        if info.file_size != info.compress_size:
            raise FormatError(f"stored record {record} has size {info.file_size} but takes "
                              f"{info.compress_size} bytes", where=f"byte {info.header_offset}")
        return np.frombuffer(self._stored_bytes(record, info), dtype=np.uint8)

    def unpickle(self, record: str, tensor_folder: str | None = None,
                 storage: _StorageTable | None = None) -> Any:
        loader = None
        if tensor_folder is not None and storage is not None:
            def loader(key: str, scalar_type: int, numel: int) -> int:
                return storage.index(f"{tensor_folder}/{key}", scalar_type, numel)
        return restricted_loads(self.read(record), record, loader)


class _StorageTable:
    """Distinct tensor-data records, in first-use order (``Module.storage_data``)."""

    def __init__(self, archive: ZipArchive) -> None:
        self.archive = archive
        self.arrays: list[np.ndarray] = []
        self._index: dict[str, int] = {}

    def index(self, record: str, scalar_type: int, numel: int) -> int:
        if record not in self._index:
            data = self.archive.array(record)
            dtype = ptmf.storage_dtype(scalar_type)
            if dtype is None:
                raise FormatError(f"unsupported tensor scalar type {scalar_type}", where=record)
            if data.nbytes < numel * dtype.itemsize:
                raise FormatError(f"storage of {numel} elements has only {data.nbytes} bytes", where=record)
            self._index[record] = len(self.arrays)
            self.arrays.append(data)
        return self._index[record]


def bytecode_version(raw: Any) -> int:
    if not isinstance(raw, tuple) or not raw or not isinstance(raw[0], int) or isinstance(raw[0], bool):
        raise FormatError("bytecode.pkl does not start with a bytecode version", where="bytecode.pkl")
    version = raw[0]
    if not MIN_ZIP_BYTECODE_VERSION <= version <= MAX_ZIP_BYTECODE_VERSION:
        raise FormatError(f"unsupported bytecode version {version}: runtime_py reads zip-format models of "
                          f"bytecode versions {MIN_ZIP_BYTECODE_VERSION}..{MAX_ZIP_BYTECODE_VERSION} "
                          f"(and flatbuffer models of version {ptmf.BYTECODE_VERSION})", where="bytecode.pkl")
    return version


def _extra_files(archive: ZipArchive) -> list[ptmf.ExtraFile]:
    return [ptmf.ExtraFile(record[len("extra/"):], archive.read(record))
            for record in sorted(archive.records) if record.startswith("extra/") and not record.endswith("/")]


def _debug_extra_file(archive: ZipArchive, root: PickledObject) -> ptmf.ExtraFile | None:
    """The model's zip debug info, encoded as our own debug table (so both formats map errors alike)."""
    if not archive.has("callstack_debug_map.pkl"):
        return None
    callstack_map = archive.unpickle("callstack_debug_map.pkl")
    debug_pkls = [archive.unpickle(r) for r in sorted(archive.records) if r.endswith(".debug_pkl")]
    table = zip_debug_info.debug_table(callstack_map, debug_pkls, root.type_name)
    return ptmf.ExtraFile(DEBUG_TABLE_EXTRA_FILE, encode_debug_table(table)) if table is not None else None


def read_zip_module(buf: Buffer, name: str = "model") -> ptmf.Module:
    """Decode a zip lite model; storage arrays are views into ``buf`` where possible.
    Raises FormatError for anything malformed, and nothing else."""
    with hostile_input("zip-format lite model"):
        return _read_zip_module(buf, name)


def _read_zip_module(buf: Buffer, name: str) -> ptmf.Module:
    archive = ZipArchive(buf, name)
    storage = _StorageTable(archive)
    raw_bytecode = archive.unpickle("bytecode.pkl", "constants", storage)
    version = bytecode_version(raw_bytecode)
    handles = (zip_bytecode.function_debug_handles(archive.unpickle("mobile_debug_handles.pkl"))
               if archive.has("mobile_debug_handles.pkl") else {})
    table = zip_bytecode.IValueTable()
    functions = [zip_bytecode.function(raw, table, handles) for raw in raw_bytecode[1:]]
    root = archive.unpickle("data.pkl", "data", storage)
    extra = _extra_files(archive)
    if isinstance(root, PickledObject) and not any(e.name == DEBUG_TABLE_EXTRA_FILE for e in extra):
        debug = _debug_extra_file(archive, root)
        if debug is not None:
            extra.append(debug)
    return zip_bytecode.build_module(version, functions, root, storage.arrays, tuple(extra), table)
