"""The one bounds-checked reader of untrusted FlatBuffers bytes, shared by every codec.

The flatbuffers Python runtime trusts its input: an offset that points outside the buffer gives
``IndexError``/``struct.error`` or silently reads garbage. A :class:`TableReader` therefore reads
a buffer in one pass, every read checking its own bounds with precompiled ``struct`` formats: the
table's vtable and inline extent, each present field's extent, every uoffset's target, vector and
string extents, NUL terminator and UTF-8, under a work budget proportional to the buffer's size
(so offsets that share objects, a DAG, cannot make reading take more than linear time). Every
violation is a ``FormatError`` whose ``where`` is ``<path>, byte <pos>``.

Byte layout checked here (all little-endian; see flatbuffers' ``internals.md``)::

    buffer[0:4]          uoffset (u32) of the root table, relative to byte 0
    buffer[4:8]          file identifier
    table at T           soffset (i32) s; its vtable sits at V = T - s
    vtable at V          u16 vtable size (bytes, >= 4, even), u16 table inline size,
                         then one u16 per field id: the field's offset from T (0 = absent)
    offset field at F    uoffset (u32) u; the object it references starts at F + u
    vector at P          u32 element count n, then n elements (an offset vector holds
                         uoffsets relative to each element's own position)
    string at P          u32 byte length n, n bytes of UTF-8, one NUL byte

The table layouts are flatc's reading of schema/*.fbs (``_generated/layouts.py``, made by
``scripts/generate_schema_code.py``): :func:`spec` gives one, never restated by hand.

Work that cannot find anything new is skipped within one buffer: a string or a vtable met again
(the writer stores a repeated string once, and tables of one layout share a vtable) is not
re-checked. Nothing is remembered across buffers: every load pays for its own checks.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NoReturn, TypeVar

import numpy as np

from bundle_format._generated import layouts
from bundle_format.errors import FormatError, InternalError

T = TypeVar("T")

Buffer = bytes | bytearray | memoryview | np.ndarray

UOFFSET_SIZE = 4  # uoffset_t / vector length / string length
SOFFSET_SIZE = 4  # soffset_t, the first field of every table
VOFFSET_SIZE = 2  # voffset_t, the entries of a vtable
IDENTIFIER_SIZE = 4
DEFAULT_MAX_DEPTH = 64
DEFAULT_WORK_FACTOR = 8  # work budget = factor * buffer size + WORK_SLACK
WORK_SLACK = 4096

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
    for field, kind, size, _type in layouts.TABLES[schema][name]:
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







_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_VTABLE_HEADER = struct.Struct("<HH")  # vtable size, table inline size

# the scalar formats codecs read with TableReader.scalar
BOOL = struct.Struct("<?")
I8 = struct.Struct("<b")
U8 = struct.Struct("<B")
U16 = struct.Struct("<H")
I32 = _I32
U32 = _U32
I64 = struct.Struct("<q")
U64 = struct.Struct("<Q")
F64 = struct.Struct("<d")
_SIZES = {code: struct.calcsize(code) for code in "?bBhHiIqQfd"}  # element sizes for TableReader.scalars


@dataclass(frozen=True, eq=False)  # hashed by identity: a cheap key for the vtable cache
class Layout:
    """What the reader needs of a ``TableSpec``: per field id, its name and inline width."""

    name: str
    names: tuple[str, ...]
    widths: tuple[int, ...]  # 0: deprecated (ignored)
    entries: tuple[struct.Struct, ...]  # entries[n] reads the first n vtable entries at once
    absent: tuple[tuple[int, ...], ...]  # absent[n]: the zero offsets of the fields after the first n


def layout(spec: TableSpec) -> Layout:
    """The reader's view of ``spec``, made once per table type."""
    widths = tuple(
        0 if f.kind is Kind.DEPRECATED else f.size if f.kind is Kind.SCALAR else UOFFSET_SIZE
        for f in spec.fields
    )
    entries = tuple(struct.Struct(f"<{n}H") for n in range(len(widths) + 1))
    absent = tuple((0,) * (len(widths) - n) for n in range(len(widths) + 1))
    return Layout(spec.name, tuple(f.name for f in spec.fields), widths, entries, absent)


_VtableFacts = tuple[int, int, tuple[int, ...]]  # table inline size, work units, field offsets (0: absent)


class TableReader:
    """Reads one buffer (bytes, or a uint8 array viewing a mapped bundle; not copied)."""

    __slots__ = ("buf", "size", "work_left", "_checked_vtables", "_strings")

    def __init__(self, buf: Buffer) -> None:
        self.buf = as_byte_view(buf)
        self.size = len(self.buf)
        self.work_left = DEFAULT_WORK_FACTOR * self.size + WORK_SLACK
        self._checked_vtables: dict[tuple[int, Layout], _VtableFacts] = {}
        self._strings: dict[int, str] = {}  # by position: the writer stores a repeated string once

    def fail(self, message: str, path: str, pos: int) -> NoReturn:
        raise FormatError(message, where=location(path, pos))

    def _over_budget(self, path: str, pos: int) -> NoReturn:
        self.fail("buffer needs more work to read than its size allows (shared or cyclic offsets?)", path, pos)

    def root(self, identifier: bytes, path: str) -> int:
        """Check the header (length, file identifier); return the root table's position."""
        header = UOFFSET_SIZE + IDENTIFIER_SIZE
        if self.size < header:
            self.fail(f"buffer of {self.size} bytes is too short for a flatbuffer (needs at least {header})",
                      path, 0)
        found = bytes(self.buf[UOFFSET_SIZE:header])
        if found != identifier:
            self.fail(f"file identifier is {found!r}, expected {identifier!r}", path, UOFFSET_SIZE)
        return self.target(0, path)

    def target(self, pos: int, path: str) -> int:
        """Follow the uoffset at ``pos`` (inside the buffer: a table field or vector element)."""
        target: int = pos + _U32.unpack_from(self.buf, pos)[0]
        if target + UOFFSET_SIZE > self.size:
            self.fail(f"offset at byte {pos} points to byte {target}, past the end of the "
                      f"{self.size}-byte buffer", path, pos)
        return target

    def table(self, pos: int, lay: Layout, path: str) -> list[int]:
        """Check the table at ``pos`` (>= 0, as every uoffset target is); return the absolute
        position of each field by id, 0 for an absent one (no field can sit at byte 0)."""
        size = self.size
        if pos + SOFFSET_SIZE > size:
            self.fail(f"table (4 bytes at byte {pos}) lies outside the {size}-byte buffer", path, pos)
        vt = pos - _I32.unpack_from(self.buf, pos)[0]
        # builders share identical vtables (every Constant of a program has the same): a vtable
        # met again in this buffer needs neither its position nor its bytes checked again
        known = self._checked_vtables.get((vt, lay))
        if known is None:
            known = self._checked_vtables[vt, lay] = self._vtable(vt, lay, path, pos)
        inline_size, units, offsets = known
        if pos + inline_size > size:
            self.fail(f"table inline size {inline_size} at byte {pos} does not fit the {size}-byte buffer",
                      path, pos)
        work_left = self.work_left = self.work_left - units
        if work_left < 0:
            self._over_budget(path, pos)
        return [pos + offset if offset else 0 for offset in offsets]

    def _vtable(self, vt: int, lay: Layout, path: str, pos: int) -> _VtableFacts:
        """(table inline size, work units, each field's offset in the table or 0) of a vtable."""
        size = self.size
        if vt < 0 or vt + 4 > size:
            self.fail(f"vtable header (4 bytes at byte {vt}) lies outside the {size}-byte buffer", path, max(vt, 0))
        vt_size, inline_size = _VTABLE_HEADER.unpack_from(self.buf, vt)
        if vt_size < 4 or vt_size & 1:
            self.fail(f"vtable at byte {vt} has invalid size {vt_size}", path, pos)
        if vt + vt_size > size:
            self.fail(f"vtable ({vt_size} bytes at byte {vt}) lies outside the {size}-byte buffer", path, vt)
        if inline_size < SOFFSET_SIZE:
            self.fail(f"table inline size {inline_size} is smaller than its soffset", path, pos)
        widths = lay.widths
        n = min(len(widths), (vt_size - 4) >> 1)
        # a vtable shorter than the layout leaves the later fields absent
        offsets = lay.entries[n].unpack_from(self.buf, vt + 4) + lay.absent[n]
        if 0 in widths:  # deprecated fields are ignored
            offsets = tuple(o if w else 0 for o, w in zip(offsets, widths, strict=True))
        for i, offset in enumerate(offsets):
            if offset and (offset < SOFFSET_SIZE or offset + widths[i] > inline_size):
                self.fail(f"field at table offset {offset} ({widths[i]} bytes) lies outside the table's "
                          f"{inline_size} inline bytes", f"{path}.{lay.names[i]}", pos)
        return inline_size, vt_size + inline_size, offsets

    def scalar(self, fmt: struct.Struct, pos: int, default: object) -> object:
        """The scalar field at ``pos`` (checked by :meth:`table`), ``default`` when absent."""
        return fmt.unpack_from(self.buf, pos)[0] if pos else default

    def _vector(self, pos: int, elem_size: int, path: str) -> tuple[int, int]:
        """(position of the first element, count) of the vector the uoffset field at ``pos`` references."""
        start: int = pos + _U32.unpack_from(self.buf, pos)[0]  # self.target, inlined: vectors are many
        if start + UOFFSET_SIZE > self.size:
            self.target(pos, path)  # raises
        count = _U32.unpack_from(self.buf, start)[0]
        start += UOFFSET_SIZE
        nbytes = count * elem_size
        if start + nbytes > self.size:
            self.fail(f"vector of {count} elements ({nbytes} bytes at byte {start}) lies outside the "
                      f"{self.size}-byte buffer", path, start - UOFFSET_SIZE)
        self.work_left -= nbytes if nbytes > 1 else 1  # the work budget, charged inline: vectors are many
        if self.work_left < 0:
            self._over_budget(path, start)
        return start, count

    def scalars(self, code: str, pos: int, path: str) -> tuple[int, ...]:
        """The scalar vector field at ``pos`` (``code``: a one-letter struct format), () when absent."""
        if not pos:
            return ()
        start, count = self._vector(pos, _SIZES[code], path)
        return struct.unpack_from(f"<{count}{code}", self.buf, start)

    def each(self, pos: int, path: str, read: Callable[[TableReader, int, str], T]) -> tuple[T, ...]:
        """``read`` (reader, table position, path) applied to each table of the table-vector
        field at ``pos``, () when absent. Each element's target is checked just before it is read."""
        if not pos:
            return ()
        start, count = self._vector(pos, UOFFSET_SIZE, path)
        buf, last, out = self.buf, self.size - UOFFSET_SIZE, []
        # one loop, no intermediate list of positions: table vectors are many
        for i, at in enumerate(range(start, start + UOFFSET_SIZE * count, UOFFSET_SIZE)):
            table: int = at + _U32.unpack_from(buf, at)[0]
            if table > last:
                self.fail(f"element {i} points to byte {table}, past the end of the {self.size}-byte buffer",
                          f"{path}[{i}]", at)
            out.append(read(self, table, f"{path}[{i}]"))
        return tuple(out)

    def string(self, pos: int, path: str) -> str | None:
        """The string field at ``pos`` (length, NUL terminator, UTF-8 checked), None when absent."""
        if not pos:
            return None
        buf, size = self.buf, self.size
        start: int = pos + _U32.unpack_from(buf, pos)[0]  # self.target, inlined: strings are many
        if start + UOFFSET_SIZE > size:
            self.target(pos, path)  # raises
        known = self._strings.get(start)
        if known is not None:  # checked when first read (and charged to the budget then)
            return known
        length = _U32.unpack_from(buf, start)[0]
        start += UOFFSET_SIZE
        if start + length >= size:
            self.fail(f"string of {length} bytes at byte {start} lies outside the {self.size}-byte buffer",
                      path, start - UOFFSET_SIZE)
        if buf[start + length]:
            self.fail("string is not NUL-terminated", path, start - UOFFSET_SIZE)
        self.work_left -= length if length > 1 else 1  # the work budget, charged inline: strings are many
        if self.work_left < 0:
            self._over_budget(path, start)
        try:
            text = self._strings[start - UOFFSET_SIZE] = str(buf[start:start + length], "utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"string is not valid UTF-8 ({e.reason} at byte {start + e.start})", path,
                      start - UOFFSET_SIZE)
        return text

    def required_string(self, pos: int, path: str, table_pos: int) -> str:
        """A string field the writer always sets."""
        value = self.string(pos, path)
        if value is None:
            self.fail("required string is missing", path, table_pos)
        return value
