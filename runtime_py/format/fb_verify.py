"""Bounds-checked reading of untrusted FlatBuffers bytes, shared by every codec.

The flatbuffers Python runtime trusts its input: an offset that points outside the
buffer gives ``IndexError``/``struct.error`` or silently reads garbage. A codec therefore
walks the buffer with a :class:`Verifier` first, one table at a time, and only then reads
the checked table through the generated reader classes.

Byte layout checked here (all little-endian; see flatbuffers' ``internals.md``)::

    buffer[0:4]          uoffset (u32) of the root table, relative to byte 0
    buffer[4:8]          file identifier (when the schema declares one)
    table at T           soffset (i32) s; its vtable sits at V = T - s
    vtable at V          u16 vtable size (bytes, >= 4, even), u16 table inline size,
                         then one u16 per field id: the field's offset from T (0 = absent)
    offset field at F    uoffset (u32) u; the object it references starts at F + u
    vector at P          u32 element count n, then n elements (an offset vector holds
                         uoffsets relative to each element's own position)
    string at P          u32 byte length n, n bytes of UTF-8, one NUL byte

A :class:`TableSpec` lists a table's fields by schema id; :meth:`Verifier.table` checks a
table's vtable, every scalar field's extent and every referenced string/vector (and the
offsets inside offset vectors) in one step, returning a :class:`CheckedTable` that knows
where the child tables are. Descending into a child table is the caller's business
(:meth:`Verifier.child`, :meth:`Verifier.children`; nesting is limited). Every check charges a work budget
proportional to the buffer size, so buffers whose offsets share objects (a DAG) cannot make
decoding take more than linear time. Every violation raises :class:`FormatError`.

The bottom of the module holds the small helpers the codecs share for reading the checked
values into dataclasses and for writing buffers.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NoReturn

import numpy as np
from flatbuffers import Builder as Builder  # re-exported: the codecs build with it

from runtime_py.errors import FormatError, InternalError
from runtime_py.format._generated import layouts

Buffer = bytes | bytearray | memoryview | np.ndarray

UOFFSET_SIZE = 4  # uoffset_t / vector length / string length
SOFFSET_SIZE = 4  # soffset_t, the first field of every table
VOFFSET_SIZE = 2  # voffset_t, the entries of a vtable
IDENTIFIER_SIZE = 4
DEFAULT_MAX_DEPTH = 64
DEFAULT_WORK_FACTOR = 8  # work budget = factor * buffer size + WORK_SLACK
WORK_SLACK = 4096

_U16 = struct.Struct("<H")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")


class Kind(enum.Enum):
    """What a table field holds, as far as bounds checking is concerned."""

    SCALAR = "scalar"  # inline scalar or struct of `size` bytes (union type tags: size 1)
    STRING = "string"  # uoffset to a UTF-8 string
    VECTOR = "vector"  # uoffset to a vector of `size`-byte scalars or structs
    STRING_VECTOR = "string_vector"  # uoffset to a vector of uoffsets to strings
    TABLE = "table"  # uoffset to a table (union values too); checked when descended into
    TABLE_VECTOR = "table_vector"  # uoffset to a vector of uoffsets to tables
    DEPRECATED = "deprecated"  # an id the schema no longer uses; ignored


@dataclass(frozen=True)
class Field:
    """One field of a table; its position in :attr:`TableSpec.fields` is its schema id."""

    name: str
    kind: Kind
    size: int = 0  # SCALAR: byte size; VECTOR: element byte size


def scalar(name: str, size: int) -> Field:
    """An inline scalar (or struct) field of ``size`` bytes."""
    return Field(name, Kind.SCALAR, size)


def vector(name: str, elem_size: int) -> Field:
    """A vector of fixed-size elements (scalars or structs)."""
    return Field(name, Kind.VECTOR, elem_size)


def string(name: str) -> Field:
    """A UTF-8 string."""
    return Field(name, Kind.STRING, UOFFSET_SIZE)


def table(name: str) -> Field:
    """A sub-table, or the value of a union (its type tag is a ``scalar(name, 1)``)."""
    return Field(name, Kind.TABLE, UOFFSET_SIZE)


def tables(name: str) -> Field:
    """A vector of sub-tables."""
    return Field(name, Kind.TABLE_VECTOR, UOFFSET_SIZE)


def strings(name: str) -> Field:
    """A vector of strings."""
    return Field(name, Kind.STRING_VECTOR, UOFFSET_SIZE)




@dataclass(frozen=True)
class TableSpec:
    """The fields of one table type, in schema id order (field id i: vtable entry 4 + 2*i)."""

    name: str
    fields: tuple[Field, ...]


def spec(schema: str, name: str, *, binary: tuple[str, ...] = ()) -> TableSpec:
    """The layout of table ``name`` of ``schema/{schema}.fbs``, as flatc compiled it (generated
    into ``_generated/layouts.py``). ``binary``: string fields that hold arbitrary bytes, checked
    as byte vectors (not as UTF-8)."""
    fields = []
    for field, kind, size in layouts.TABLES[schema][name]:
        if field in binary:
            if kind != Kind.STRING.value:
                raise InternalError(f"{schema}.{name}.{field} is {kind}, not a string")
            kind, size = Kind.VECTOR.value, 1
        fields.append(Field(field, Kind(kind), size))
    return TableSpec(name, tuple(fields))


def union_members(schema: str, union: str) -> dict[int, tuple[str, int]]:
    """Union tag -> (member name, struct size; 0 for a table member) of ``union`` of ``schema``."""
    return {tag: (member, size) for tag, member, _kind, size in layouts.UNIONS[schema][union]}


def location(path: str, pos: int) -> str:
    """The ``where`` of an error: a path such as ``Program.instructions[3].inputs`` and a byte."""
    return f"{path}, byte {pos}"


@dataclass(frozen=True)
class CheckedTable:
    """A table whose own bytes (vtable, scalars, strings, vectors) have been checked.

    ``fields`` maps each present field's name to its absolute position in the buffer;
    ``targets`` maps each present offset field to the position of the object it references
    (a vector's or string's length prefix, a table's start); ``elements`` maps each
    TABLE_VECTOR/STRING_VECTOR field to the positions of its elements.
    """

    pos: int
    path: str
    depth: int  # 0 for the root table
    fields: dict[str, int]
    targets: dict[str, int]
    elements: dict[str, tuple[int, ...]]

    def has(self, name: str) -> bool:
        """Whether the field is present in the buffer (not defaulted)."""
        return name in self.fields

    def child(self, name: str) -> int | None:
        """Position of the table a TABLE field references, None when absent (unchecked)."""
        return self.targets.get(name)

    def children(self, name: str) -> tuple[int, ...]:
        """Positions of the tables (or strings) a vector field references; () when absent."""
        return self.elements.get(name, ())

    def loc(self, name: str | None = None, index: int | None = None) -> str:
        """``where`` text for the table, one of its fields, or an element of a vector field."""
        if name is None:
            return location(self.path, self.pos)
        path = f"{self.path}.{name}" + ("" if index is None else f"[{index}]")
        if index is not None and name in self.elements:
            return location(path, self.elements[name][index])
        return location(path, self.fields.get(name, self.pos))


class Verifier:
    """Checks untrusted FlatBuffers bytes before the generated readers touch them.

    ``buf`` is normalized to a flat read-only ``memoryview`` of bytes (no copy; a uint8
    ``np.ndarray`` view into a memory-mapped file works); pass :attr:`buf` to the generated
    reader classes. Typical use::

        v = Verifier(data)
        root = v.table(v.root(b"LXDP", "Program"), PROGRAM_SPEC, "Program")
        for inst in v.children(root, "instructions", INSTRUCTION_SPEC):
            reader = generated.Instruction()
            reader.Init(v.buf, inst.pos)  # safe now: inst's own fields are checked
    """

    def __init__(
        self,
        buf: Buffer,
        *,
        max_depth: int = DEFAULT_MAX_DEPTH,
        work_factor: int = DEFAULT_WORK_FACTOR,
    ) -> None:
        self.buf = as_byte_view(buf)
        self.size = len(self.buf)
        self.max_depth = max_depth
        self.depth = 0
        self.work_left = work_factor * self.size + WORK_SLACK

    # --- primitive reads (callers have checked the range) ---

    def _u16(self, pos: int) -> int:
        return int(_U16.unpack_from(self.buf, pos)[0])

    def _i32(self, pos: int) -> int:
        return int(_I32.unpack_from(self.buf, pos)[0])

    def _u32(self, pos: int) -> int:
        return int(_U32.unpack_from(self.buf, pos)[0])

    # --- bookkeeping ---

    def fail(self, message: str, path: str, pos: int) -> NoReturn:
        """Raise the FormatError for a violation at ``pos``."""
        raise FormatError(message, where=location(path, pos))

    def charge(self, units: int, path: str, pos: int) -> None:
        """Spend ``units`` of the work budget (roughly: bytes examined)."""
        self.work_left -= max(units, 1)
        if self.work_left < 0:
            self.fail("buffer needs more work to read than its size allows (shared or cyclic offsets?)",
                      path, pos)

    def check_range(self, pos: int, length: int, what: str, path: str) -> None:
        """``length`` bytes from ``pos`` must lie inside the buffer."""
        if pos < 0 or length < 0 or pos + length > self.size:
            self.fail(f"{what} ({length} bytes at byte {pos}) lies outside the {self.size}-byte buffer",
                      path, max(pos, 0))

    # --- structure ---

    def root(self, identifier: bytes | None, path: str) -> int:
        """Check the buffer's header (length, file identifier) and return the root table's position."""
        header = UOFFSET_SIZE + (IDENTIFIER_SIZE if identifier is not None else 0)
        if self.size < header:
            self.fail(f"buffer of {self.size} bytes is too short for a flatbuffer (needs at least {header})",
                      path, 0)
        if identifier is not None:
            found = bytes(self.buf[UOFFSET_SIZE:UOFFSET_SIZE + IDENTIFIER_SIZE])
            if found != identifier:
                self.fail(f"file identifier is {found!r}, expected {identifier!r}", path, UOFFSET_SIZE)
        return self.offset_target(0, path)

    def offset_target(self, pos: int, path: str) -> int:
        """Follow the uoffset stored at ``pos``; the target must leave room for a length/soffset."""
        self.check_range(pos, UOFFSET_SIZE, "offset", path)
        target = pos + self._u32(pos)
        if target + UOFFSET_SIZE > self.size:
            self.fail(f"offset at byte {pos} points to byte {target}, past the end of the "
                      f"{self.size}-byte buffer", path, pos)
        return target

    def table(self, pos: int, spec: TableSpec, path: str, depth: int = 0) -> CheckedTable:
        """Check the table at ``pos`` against ``spec`` (not its child tables); ``depth``: its nesting."""
        if depth > self.max_depth:
            self.fail(f"tables nested deeper than {self.max_depth} levels", path, pos)
        self.check_range(pos, SOFFSET_SIZE, "table", path)
        vt = pos - self._i32(pos)
        self.check_range(vt, 2 * VOFFSET_SIZE, "vtable header", path)
        vt_size, inline_size = self._u16(vt), self._u16(vt + VOFFSET_SIZE)
        if vt_size < 2 * VOFFSET_SIZE or vt_size % VOFFSET_SIZE:
            self.fail(f"vtable at byte {vt} has invalid size {vt_size}", path, pos)
        self.check_range(vt, vt_size, "vtable", path)
        if inline_size < SOFFSET_SIZE:
            self.fail(f"table inline size {inline_size} is smaller than its soffset", path, pos)
        self.check_range(pos, inline_size, "table", path)
        self.charge(vt_size + inline_size, path, pos)
        fields: dict[str, int] = {}
        targets: dict[str, int] = {}
        elements: dict[str, tuple[int, ...]] = {}
        for field_id, field in enumerate(spec.fields):
            entry = 2 * VOFFSET_SIZE + field_id * VOFFSET_SIZE
            if field.kind is Kind.DEPRECATED or entry + VOFFSET_SIZE > vt_size:
                continue
            offset = self._u16(vt + entry)
            if offset == 0:
                continue
            fpath = f"{path}.{field.name}"
            width = field.size if field.kind is Kind.SCALAR else UOFFSET_SIZE
            if offset < SOFFSET_SIZE or offset + width > inline_size:
                self.fail(f"field at table offset {offset} ({width} bytes) lies outside the table's "
                          f"{inline_size} inline bytes", fpath, pos)
            fpos = pos + offset
            fields[field.name] = fpos
            if field.kind is Kind.SCALAR:
                continue
            target = self.offset_target(fpos, fpath)
            targets[field.name] = target
            if field.kind is Kind.STRING:
                self.string(target, fpath)
            elif field.kind is Kind.VECTOR:
                self.vector(target, field.size, fpath)
            elif field.kind is Kind.TABLE_VECTOR:
                elements[field.name] = self.offset_vector(target, fpath)
            elif field.kind is Kind.STRING_VECTOR:
                elements[field.name] = items = self.offset_vector(target, fpath)
                for i, item in enumerate(items):
                    self.string(item, f"{fpath}[{i}]")
        return CheckedTable(pos, path, depth, fields, targets, elements)

    def child(self, parent: CheckedTable, name: str, spec: TableSpec) -> CheckedTable | None:
        """Check the table a TABLE (or union value) field of ``parent`` references; None when absent."""
        pos = parent.child(name)
        if pos is None:
            return None
        return self.table(pos, spec, f"{parent.path}.{name}", parent.depth + 1)

    def children(self, parent: CheckedTable, name: str, spec: TableSpec) -> Iterator[CheckedTable]:
        """Check, one by one, the tables a TABLE_VECTOR field of ``parent`` references."""
        for i, pos in enumerate(parent.children(name)):
            yield self.table(pos, spec, f"{parent.path}.{name}[{i}]", parent.depth + 1)

    def vector(self, pos: int, elem_size: int, path: str) -> int:
        """Check the vector whose length prefix is at ``pos``; return its element count."""
        self.check_range(pos, UOFFSET_SIZE, "vector length", path)
        count = self._u32(pos)
        self.check_range(pos + UOFFSET_SIZE, count * elem_size, f"vector of {count} elements", path)
        self.charge(count * elem_size, path, pos)
        return count

    def offset_vector(self, pos: int, path: str) -> tuple[int, ...]:
        """Check a vector of uoffsets at ``pos``; return the positions its elements point to."""
        count = self.vector(pos, UOFFSET_SIZE, path)
        start = pos + UOFFSET_SIZE
        rel = np.frombuffer(self.buf, dtype="<u4", count=count, offset=start).astype(np.int64)
        absolute = rel + start + UOFFSET_SIZE * np.arange(count, dtype=np.int64)
        bad = np.flatnonzero(absolute + UOFFSET_SIZE > self.size)
        if bad.size:
            i = int(bad[0])
            self.fail(f"element {i} points to byte {int(absolute[i])}, past the end of the "
                      f"{self.size}-byte buffer", f"{path}[{i}]", start + UOFFSET_SIZE * i)
        return tuple(absolute.tolist())

    def string(self, pos: int, path: str) -> str:
        """Check the string at ``pos`` (length, NUL terminator, UTF-8) and return it."""
        self.check_range(pos, UOFFSET_SIZE, "string length", path)
        length = self._u32(pos)
        start = pos + UOFFSET_SIZE
        self.check_range(start, length + 1, f"string of {length} bytes", path)
        if self.buf[start + length] != 0:
            self.fail("string is not NUL-terminated", path, pos)
        self.charge(length, path, pos)
        try:
            return bytes(self.buf[start:start + length]).decode("utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"string is not valid UTF-8 ({e.reason} at byte {start + e.start})", path, pos)


def as_byte_view(buf: Buffer) -> memoryview:
    """A flat, read-only byte view of ``buf`` without copying; FormatError if it has none."""
    if isinstance(buf, np.ndarray) and buf.dtype != np.uint8:
        raise FormatError(f"expected a uint8 array, got {buf.dtype}", where="the buffer to decode")
    try:
        view = buf.data if isinstance(buf, np.ndarray) else memoryview(buf)
    except TypeError as e:
        raise FormatError(f"expected bytes, got {type(buf).__name__}", where="the buffer to decode") from e
    if not view.c_contiguous:
        raise FormatError("expected a contiguous byte buffer", where="the buffer to decode")
    return view.cast("B").toreadonly() if view.format != "B" or view.ndim != 1 else view.toreadonly()


# --- helpers the codecs share for turning checked tables into dataclasses ---

@contextmanager
def hostile_input(what: str, where: str = "") -> Iterator[None]:
    """Turn any exception other than FormatError raised while decoding into a FormatError (at
    ``where``, by default ``what`` itself: a reader bug cannot say which table it was in).

    The verifier should make these impossible; this is the backstop that keeps a reader bug
    from surfacing as ``IndexError`` on a malformed file.
    """
    try:
        yield
    except FormatError:
        raise
    except Exception as e:  # RecursionError, MemoryError, IndexError, struct.error...
        raise FormatError(f"malformed {what}: {type(e).__name__}: {e}", where=where or what) from e


def check_version(found: int, accepted: int, what: str, where: str) -> None:
    """A runtime reads exactly the format version it knows."""
    if found != accepted:
        raise FormatError(f"unsupported {what} format version {found}; this runtime reads version {accepted}",
                          where=where)






def required_str(raw: bytes | None, checked: CheckedTable, name: str) -> str:
    """A string field the writer always sets; its bytes were checked as UTF-8 by the verifier."""
    if raw is None:
        raise FormatError("required string is missing", where=checked.loc(name))
    return raw.decode("utf-8")


# --- helpers the codecs share for writing ---

def write_scalars(builder: Builder, start: Callable[[Builder, int], object],
                  prepend: Callable[[int], None], values: Sequence[int]) -> int:
    """Write a vector of scalars with a generated ``XStartYVector`` and a builder ``PrependZ``."""
    start(builder, len(values))
    for value in reversed(values):
        prepend(value)
    return int(builder.EndVector())


def write_offsets(builder: Builder, start: Callable[[Builder, int], object], offsets: Sequence[int]) -> int:
    """Write a vector of already-built tables or strings (their builder offsets, in order)."""
    start(builder, len(offsets))
    for offset in reversed(offsets):
        builder.PrependUOffsetTRelative(offset)
    return int(builder.EndVector())


def finish(builder: Builder, root: int, identifier: bytes) -> bytes:
    """Finish the buffer with its file identifier and return its bytes."""
    builder.Finish(root, file_identifier=identifier)
    return bytes(builder.Output())


@contextmanager
def encoding(what: str) -> Iterator[None]:
    """Report a value the schema cannot hold (a negative uint, a lone surrogate...) as our bug."""
    try:
        yield
    except (TypeError, ValueError, OverflowError, struct.error) as e:
        raise InternalError(f"cannot encode {what}: {type(e).__name__}: {e}") from e
