"""Single-pass reading of untrusted FlatBuffers bytes: every read checks its own bounds.

:class:`fb_verify.Verifier` checks a whole table, then the generated accessors read it again
(with per-call type checks); for the small tables of a demo program that costs ~60 us each.
A :class:`TableReader` does the same checks as it reads, with precompiled ``struct`` formats:
the table's vtable and inline extent, each present field's extent, every uoffset's target,
vector and string extents, NUL terminator and UTF-8, and the same work budget (so shared
offsets cannot make reading take more than linear time). Every violation is a ``FormatError``
whose ``where`` is ``<path>, byte <pos>``, as fb_verify's. The layouts come from the codecs'
``fb_verify.TableSpec``, the one description of each table.

Work that cannot find anything new is skipped within one buffer: a string or a vtable met again
(the writer stores a repeated string once, and tables of one layout share a vtable) is not
re-checked. Nothing is remembered across buffers: every load pays for its own checks.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn, TypeVar

from runtime_py.errors import FormatError
from runtime_py.format import fb_verify as fv

T = TypeVar("T")

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


def layout(spec: fv.TableSpec) -> Layout:
    """The reader's view of ``spec``, made once per table type."""
    widths = tuple(
        0 if f.kind is fv.Kind.DEPRECATED else f.size if f.kind is fv.Kind.SCALAR else fv.UOFFSET_SIZE
        for f in spec.fields
    )
    entries = tuple(struct.Struct(f"<{n}H") for n in range(len(widths) + 1))
    absent = tuple((0,) * (len(widths) - n) for n in range(len(widths) + 1))
    return Layout(spec.name, tuple(f.name for f in spec.fields), widths, entries, absent)


_VtableFacts = tuple[int, int, tuple[int, ...]]  # table inline size, work units, field offsets (0: absent)


class TableReader:
    """Reads one buffer (bytes, or a uint8 array viewing a mapped bundle; not copied)."""

    __slots__ = ("buf", "size", "work_left", "_checked_vtables", "_strings")

    def __init__(self, buf: fv.Buffer) -> None:
        self.buf = fv.as_byte_view(buf)
        self.size = len(self.buf)
        self.work_left = fv.DEFAULT_WORK_FACTOR * self.size + fv.WORK_SLACK
        self._checked_vtables: dict[tuple[int, Layout], _VtableFacts] = {}
        self._strings: dict[int, str] = {}  # by position: the writer stores a repeated string once

    def fail(self, message: str, path: str, pos: int) -> NoReturn:
        raise FormatError(message, where=fv.location(path, pos))

    def _over_budget(self, path: str, pos: int) -> NoReturn:
        self.fail("buffer needs more work to read than its size allows (shared or cyclic offsets?)", path, pos)

    def root(self, identifier: bytes, path: str) -> int:
        """Check the header (length, file identifier); return the root table's position."""
        header = fv.UOFFSET_SIZE + fv.IDENTIFIER_SIZE
        if self.size < header:
            self.fail(f"buffer of {self.size} bytes is too short for a flatbuffer (needs at least {header})",
                      path, 0)
        found = bytes(self.buf[fv.UOFFSET_SIZE:header])
        if found != identifier:
            self.fail(f"file identifier is {found!r}, expected {identifier!r}", path, fv.UOFFSET_SIZE)
        return self.target(0, path)

    def target(self, pos: int, path: str) -> int:
        """Follow the uoffset at ``pos`` (inside the buffer: a table field or vector element)."""
        target: int = pos + _U32.unpack_from(self.buf, pos)[0]
        if target + fv.UOFFSET_SIZE > self.size:
            self.fail(f"offset at byte {pos} points to byte {target}, past the end of the "
                      f"{self.size}-byte buffer", path, pos)
        return target

    def table(self, pos: int, lay: Layout, path: str) -> list[int]:
        """Check the table at ``pos`` (>= 0, as every uoffset target is); return the absolute
        position of each field by id, 0 for an absent one (no field can sit at byte 0)."""
        size = self.size
        if pos + fv.SOFFSET_SIZE > size:
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
        if inline_size < fv.SOFFSET_SIZE:
            self.fail(f"table inline size {inline_size} is smaller than its soffset", path, pos)
        widths = lay.widths
        n = min(len(widths), (vt_size - 4) >> 1)
        # a vtable shorter than the layout leaves the later fields absent
        offsets = lay.entries[n].unpack_from(self.buf, vt + 4) + lay.absent[n]
        if 0 in widths:  # deprecated fields are ignored
            offsets = tuple(o if w else 0 for o, w in zip(offsets, widths, strict=True))
        for i, offset in enumerate(offsets):
            if offset and (offset < fv.SOFFSET_SIZE or offset + widths[i] > inline_size):
                self.fail(f"field at table offset {offset} ({widths[i]} bytes) lies outside the table's "
                          f"{inline_size} inline bytes", f"{path}.{lay.names[i]}", pos)
        return inline_size, vt_size + inline_size, offsets

    def scalar(self, fmt: struct.Struct, pos: int, default: object) -> object:
        """The scalar field at ``pos`` (checked by :meth:`table`), ``default`` when absent."""
        return fmt.unpack_from(self.buf, pos)[0] if pos else default

    def _vector(self, pos: int, elem_size: int, path: str) -> tuple[int, int]:
        """(position of the first element, count) of the vector the uoffset field at ``pos`` references."""
        start: int = pos + _U32.unpack_from(self.buf, pos)[0]  # self.target, inlined: vectors are many
        if start + fv.UOFFSET_SIZE > self.size:
            self.target(pos, path)  # raises
        count = _U32.unpack_from(self.buf, start)[0]
        start += fv.UOFFSET_SIZE
        nbytes = count * elem_size
        if start + nbytes > self.size:
            self.fail(f"vector of {count} elements ({nbytes} bytes at byte {start}) lies outside the "
                      f"{self.size}-byte buffer", path, start - fv.UOFFSET_SIZE)
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
        start, count = self._vector(pos, fv.UOFFSET_SIZE, path)
        buf, last, out = self.buf, self.size - fv.UOFFSET_SIZE, []
        # one loop, no intermediate list of positions: table vectors are many
        for i, at in enumerate(range(start, start + fv.UOFFSET_SIZE * count, fv.UOFFSET_SIZE)):
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
        if start + fv.UOFFSET_SIZE > size:
            self.target(pos, path)  # raises
        known = self._strings.get(start)
        if known is not None:  # checked when first read (and charged to the budget then)
            return known
        length = _U32.unpack_from(buf, start)[0]
        start += fv.UOFFSET_SIZE
        if start + length >= size:
            self.fail(f"string of {length} bytes at byte {start} lies outside the {self.size}-byte buffer",
                      path, start - fv.UOFFSET_SIZE)
        if buf[start + length]:
            self.fail("string is not NUL-terminated", path, start - fv.UOFFSET_SIZE)
        self.work_left -= length if length > 1 else 1  # the work budget, charged inline: strings are many
        if self.work_left < 0:
            self._over_budget(path, start)
        try:
            text = self._strings[start - fv.UOFFSET_SIZE] = str(buf[start:start + length], "utf-8")
        except UnicodeDecodeError as e:
            self.fail(f"string is not valid UTF-8 ({e.reason} at byte {start + e.start})", path,
                      start - fv.UOFFSET_SIZE)
        return text

    def required_string(self, pos: int, path: str, table_pos: int) -> str:
        """A string field the writer always sets."""
        value = self.string(pos, path)
        if value is None:
            self.fail("required string is missing", path, table_pos)
        return value
