"""Test-only: walk every table, vector, string and union member of a flatbuffer, driven by the
generated layouts (bundle_format/_generated/layouts.py), with the one checker
(:class:`fb_reader.TableReader`). No value checks: the decoders' reading of the same bytes is the
other half (tests check that a decoder accepts no layout this walk rejects), and the fuzz harness
records through :class:`FbPoints` where a valid buffer keeps its offsets, lengths and scalars.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bundle_format import fb_reader as fr
from bundle_format._generated import layouts

# schema -> (file identifier, root table, string fields that hold bytes)
SCHEMAS = {
    "program": ("demo_program", b"LXDP", "Program", ()),
    "ptmf": ("mobile_bytecode", b"PTMF", "Module", ("content",)),
    "debug": ("debug_table", b"LXDT", "DebugTable", ()),
}


@dataclass
class FbPoints:
    """Where a valid flatbuffer keeps its uoffsets, lengths, scalars and vector elements."""

    offsets: set[int] = field(default_factory=set)  # positions of uoffsets (incl. vector elements)
    lengths: set[int] = field(default_factory=set)  # positions of vector/string length prefixes
    tables: set[int] = field(default_factory=set)  # table starts (their soffset to the vtable)
    scalars: set[tuple[int, int]] = field(default_factory=set)  # (position, byte size)
    elements: set[tuple[int, int]] = field(default_factory=set)  # (position, byte size) of scalar vector items


class _Walk:
    def __init__(self, data: object, schema: str, binary: tuple[str, ...], points: FbPoints) -> None:
        self.r = fr.TableReader(data)  # type: ignore[arg-type]
        self.schema, self.binary, self.points = schema, binary, points
        self.tables = layouts.TABLES[schema]
        self.unions = layouts.UNIONS[schema]
        self._layouts = {name: fr.layout(fr.spec(schema, name)) for name in self.tables}

    def target(self, at: int, path: str) -> int:
        self.points.offsets.add(at)
        return self.r.target(at, path)

    def vector(self, at: int, elem_size: int, path: str) -> tuple[int, int]:
        start, count = self.r._vector(at, elem_size, path)
        self.points.offsets.add(at)
        self.points.lengths.add(start - fr.UOFFSET_SIZE)
        if elem_size in (1, 2, 4, 8):
            self.points.elements.update((start + i * elem_size, elem_size) for i in range(min(count, 64)))
        return start, count

    def string(self, at: int, path: str) -> None:
        self.points.offsets.add(at)
        self.points.lengths.add(self.r.target(at, path))
        self.r.string(at, path)

    def table(self, pos: int, name: str, path: str, depth: int) -> None:
        if depth > fr.DEFAULT_MAX_DEPTH:
            self.r.fail(f"tables nested deeper than {fr.DEFAULT_MAX_DEPTH} levels", path, pos)
        self.points.tables.add(pos)
        positions = self.r.table(pos, self._layouts[name], path)
        fields = self.tables[name]
        for (fname, kind, size, type_name), at in zip(fields, positions, strict=True):
            fpath = f"{path}.{fname}"
            if type_name in self.unions:
                self.union(positions, fields, at, type_name, fpath, pos, depth)
                continue
            if not at:
                continue
            if kind == "scalar":
                self.points.scalars.add((at, size))
            elif kind == "string" and fname in self.binary:
                self.vector(at, 1, fpath)
            elif kind == "string":
                self.string(at, fpath)
            elif kind == "vector":
                self.vector(at, size, fpath)
            elif kind == "string_vector":
                start, count = self.vector(at, fr.UOFFSET_SIZE, fpath)
                for i in range(count):
                    self.string(start + fr.UOFFSET_SIZE * i, f"{fpath}[{i}]")
            elif kind == "table_vector":
                start, count = self.vector(at, fr.UOFFSET_SIZE, fpath)
                for i in range(count):
                    item = f"{fpath}[{i}]"
                    self.table(self.target(start + fr.UOFFSET_SIZE * i, item), type_name, item, depth + 1)
            else:
                self.table(self.target(at, fpath), type_name, fpath, depth + 1)

    def union(self, positions: list[int], fields: tuple[tuple[str, str, int, str], ...], at: int,
              union: str, path: str, pos: int, depth: int) -> None:
        tag_at = positions[[f[0] for f in fields].index(path.rsplit(".", 1)[1] + "_type")]
        tag = self.r.buf[tag_at] if tag_at else 0
        if tag == 0:
            return
        if not at:
            self.r.fail(f"{union} union tag {tag} has no value", path, pos)
        target = self.target(at, path)
        member = fr.union_members(self.schema, union).get(tag)
        if member is None:
            self.r.fail(f"unknown {union} union tag {tag}", path + "_type", tag_at)
        name, struct_size = member
        if struct_size:
            if target + struct_size > self.r.size:
                self.r.fail(f"struct ({struct_size} bytes at byte {target}) lies outside the "
                            f"{self.r.size}-byte buffer", path, target)
            return
        self.table(target, name, path, depth + 1)


def verify_structure(data: object, kind: str, points: FbPoints | None = None) -> FbPoints:
    """Check every table, vector, string and union member of a ``kind`` buffer (program, ptmf,
    debug) lies inside it; FormatError when one does not. Returns where the buffer keeps them."""
    schema, identifier, root, binary = SCHEMAS[kind]
    walk = _Walk(data, schema, binary, points if points is not None else FbPoints())
    with fr.hostile_input(root):
        walk.table(walk.r.root(identifier, root), root, root, 0)
    return walk.points


def table_fields(data: bytes, kind: str, path: tuple[tuple[str, int], ...]) -> dict[str, int]:
    """The positions of the present fields of the table reached from the root by ``path``
    (pairs of a table field name and, for a table vector, an index; -1 for a plain table)."""
    schema, identifier, name, _ = SCHEMAS[kind]
    r = fr.TableReader(data)
    pos = r.root(identifier, name)
    for fname, index in path:
        fields = layouts.TABLES[schema][name]
        positions = r.table(pos, fr.layout(fr.spec(schema, name)), name)
        i = [f[0] for f in fields].index(fname)
        at, type_name = positions[i], fields[i][3]
        if index >= 0:
            start, _count = r._vector(at, fr.UOFFSET_SIZE, fname)
            at = start + fr.UOFFSET_SIZE * index
        pos = r.target(at, fname)
        if type_name in layouts.UNIONS[schema]:
            tag = r.buf[positions[i - 1]]
            type_name = fr.union_members(schema, type_name)[tag][0]
        name = type_name
    fields = layouts.TABLES[schema][name]
    positions = r.table(pos, fr.layout(fr.spec(schema, name)), name)
    return {f[0]: at for f, at in zip(fields, positions, strict=True) if at}
