"""Table layouts for the Python flatbuffer checker, made by flatc from the .fbs files.

``flatc -b --schema`` compiles a schema into its binary reflection form (.bfbs, described by
flatbuffers' ``reflection.fbs``): every object with its fields, their ids, vtable offsets and
types (base type, element type, sizes), every enum and union with its members. That is flatc's
own reading of the schema, so nothing here parses ``.fbs`` text. :func:`python_module` turns
the reflection data of each schema into ``bundle_format/_generated/layouts.py``: per table,
its fields in id order as ``(name, kind, size)``, and per union, its members by tag.

The .bfbs is flatc's trusted output, read with the flatbuffers runtime's ``Table``; the slots
below are those of ``reflection.fbs`` (flatbuffers' ``reflection_generated.h``: ``VT_*``).
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from flatbuffers import encode, number_types
from flatbuffers.table import Table

# reflection.fbs: vtable slot of each field used here
_SCHEMA_OBJECTS, _SCHEMA_ENUMS = 4, 6
_OBJECT_NAME, _OBJECT_FIELDS, _OBJECT_IS_STRUCT, _OBJECT_BYTESIZE = 4, 6, 8, 12
_FIELD_NAME, _FIELD_TYPE, _FIELD_ID, _FIELD_OFFSET, _FIELD_DEPRECATED = 4, 6, 8, 10, 16
_TYPE_BASE, _TYPE_ELEMENT, _TYPE_INDEX, _TYPE_BASE_SIZE, _TYPE_ELEMENT_SIZE = 4, 6, 8, 12, 14
_ENUM_NAME, _ENUM_VALUES, _ENUM_IS_UNION = 4, 6, 8
_ENUMVAL_NAME, _ENUMVAL_VALUE, _ENUMVAL_UNION_TYPE = 4, 6, 10
# reflection.fbs: enum BaseType
_UTYPE, _STRING, _VECTOR, _OBJ, _UNION = 1, 13, 14, 15, 16
_SCALARS = range(1, 13)  # UType, Bool, Byte ... Double

HEADER = (
    "# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py (scripts/fb_layouts_codegen.py)\n"
    "# from flatc's reflection of schema/*.fbs\n"
)


class SchemaError(Exception):
    """The schema uses a construct the Python checker has no kind for."""


def _scalar(t: Table, slot: int, flags: type, default: int) -> int:
    o = t.Offset(slot)
    return int(t.Get(flags, o + t.Pos)) if o else default


def _string(t: Table, slot: int) -> str:
    o = t.Offset(slot)
    return bytes(t.String(o + t.Pos)).decode("utf-8") if o else ""


def _child(t: Table, slot: int) -> Table | None:
    o = t.Offset(slot)
    return Table(t.Bytes, t.Indirect(o + t.Pos)) if o else None


def _children(t: Table, slot: int) -> list[Table]:
    o = t.Offset(slot)
    if not o:
        return []
    start = t.Vector(o)
    return [Table(t.Bytes, t.Indirect(start + 4 * i)) for i in range(t.VectorLen(o))]


@dataclass(frozen=True)
class _Type:
    base: int
    element: int
    index: int
    base_size: int
    element_size: int


def _type(t: Table) -> _Type:
    ty = _child(t, _FIELD_TYPE)
    if ty is None:
        raise SchemaError("field without a type")
    return _Type(_scalar(ty, _TYPE_BASE, number_types.Int8Flags, 0),
                 _scalar(ty, _TYPE_ELEMENT, number_types.Int8Flags, 0),
                 _scalar(ty, _TYPE_INDEX, number_types.Int32Flags, -1),
                 _scalar(ty, _TYPE_BASE_SIZE, number_types.Uint32Flags, 4),
                 _scalar(ty, _TYPE_ELEMENT_SIZE, number_types.Uint32Flags, 0))


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


Layout = tuple[tuple[str, str, int, str], ...]  # (field name, kind, size, table/union type) per field id
Union = tuple[tuple[int, str, str, int], ...]  # (tag, member, "table" | "struct", struct size)


def layouts(bfbs: bytes) -> tuple[dict[str, Layout], dict[str, Union]]:
    """Each table's fields in id order, and each union's members, from a schema's .bfbs."""
    root = Table(bytearray(bfbs), encode.Get(number_types.UOffsetTFlags.packer_type, bfbs, 0))
    objects = _children(root, _SCHEMA_OBJECTS)
    is_struct = [bool(_scalar(o, _OBJECT_IS_STRUCT, number_types.BoolFlags, 0)) for o in objects]
    sizes = [_scalar(o, _OBJECT_BYTESIZE, number_types.Int32Flags, 0) for o in objects]
    enums = _children(root, _SCHEMA_ENUMS)
    tables: dict[str, Layout] = {}
    for obj, struct_ in zip(objects, is_struct, strict=True):
        if struct_:
            continue
        fields: dict[int, tuple[str, str, int, str]] = {}
        for f in _children(obj, _OBJECT_FIELDS):
            name = _string(f, _FIELD_NAME)
            field_id = _scalar(f, _FIELD_ID, number_types.Uint16Flags, 0)
            if _scalar(f, _FIELD_OFFSET, number_types.Uint16Flags, 0) != 4 + 2 * field_id:
                raise SchemaError(f"{name}: vtable offset does not follow from its id")
            t = _type(f)
            if _scalar(f, _FIELD_DEPRECATED, number_types.BoolFlags, 0):
                fields[field_id] = (name, "deprecated", 0, "")
            elif t.base in _SCALARS:
                fields[field_id] = (name, "scalar", t.base_size, "")
            elif t.base == _OBJ:
                target = _short(_string(objects[t.index], _OBJECT_NAME))
                fields[field_id] = (name, "scalar", sizes[t.index], target) if is_struct[t.index] else (
                    name, "table", 4, target)
            elif t.base == _STRING:
                fields[field_id] = (name, "string", 4, "")
            elif t.base == _UNION:
                fields[field_id] = (name, "table", 4, _short(_string(enums[t.index], _ENUM_NAME)))
            elif t.base == _VECTOR and t.element == _STRING:
                fields[field_id] = (name, "string_vector", 4, "")
            elif t.base == _VECTOR and t.element == _OBJ and not is_struct[t.index]:
                fields[field_id] = (name, "table_vector", 4, _short(_string(objects[t.index], _OBJECT_NAME)))
            elif t.base == _VECTOR and t.element != _UNION:
                fields[field_id] = (name, "vector", t.element_size, "")
            else:
                raise SchemaError(f"{_short(_string(obj, _OBJECT_NAME))}.{name}: base type {t.base} is not supported")
        if sorted(fields) != list(range(len(fields))):
            raise SchemaError(f"{_string(obj, _OBJECT_NAME)}: field ids are not 0..n-1")
        tables[_short(_string(obj, _OBJECT_NAME))] = tuple(fields[i] for i in range(len(fields)))
    unions: dict[str, Union] = {}
    for enum in enums:
        if not _scalar(enum, _ENUM_IS_UNION, number_types.BoolFlags, 0):
            continue
        members = []
        for val in _children(enum, _ENUM_VALUES):
            tag = _scalar(val, _ENUMVAL_VALUE, number_types.Int64Flags, 0)
            if tag == 0:
                continue  # NONE
            ty = _child(val, _ENUMVAL_UNION_TYPE)
            index = -1 if ty is None else _scalar(ty, _TYPE_INDEX, number_types.Int32Flags, -1)
            if index < 0:
                raise SchemaError(f"{_string(enum, _ENUM_NAME)}: member {tag} has no type")
            kind = "struct" if is_struct[index] else "table"
            members.append((tag, _short(_string(objects[index], _OBJECT_NAME)), kind,
                            sizes[index] if is_struct[index] else 0))
        unions[_short(_string(enum, _ENUM_NAME))] = tuple(sorted(members))
    return tables, unions


def bfbs(flatc: str, name: str, text: str) -> bytes:
    """flatc's binary reflection of the schema ``text`` (schema/{name}.fbs as generated)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{name}.fbs"
        src.write_text(text)
        subprocess.run([flatc, "-b", "--schema", "-o", tmp, str(src)], check=True)
        return (Path(tmp) / f"{name}.bfbs").read_bytes()


def python_module(schemas: dict[str, bytes]) -> str:
    """``layouts.py``: TABLES[schema][table] and UNIONS[schema][union] for each schema's .bfbs."""
    lines = [HEADER, '"""Field layouts of every table and union of schema/*.fbs, by schema; read through',
             'bundle_format.fb_reader.spec (never restated by hand)."""', "",
             "from __future__ import annotations", "",
             "# (field name, kind, size, type) in field id order; kind: scalar (size: bytes; structs too),",
             "# string, vector (size: element bytes), string_vector, table (union values too), table_vector,",
             "# deprecated; type: the table (or union, or struct) the field holds, '' for the others",
             "TABLES: dict[str, dict[str, tuple[tuple[str, str, int, str], ...]]] = {"]
    union_lines = ["# (tag, member, 'table' or 'struct', struct bytes) by union",
                   "UNIONS: dict[str, dict[str, tuple[tuple[int, str, str, int], ...]]] = {"]
    for name, data in schemas.items():
        tables, unions = layouts(data)
        lines += _dict_block(name, tables)
        union_lines += _dict_block(name, unions)
    return "\n".join([*lines, "}", "", *union_lines, "}", ""])


def _dict_block(schema: str, entries: dict[str, Layout] | dict[str, Union]) -> list[str]:
    """The lines of ``schema: {name: (row, ...), ...}`` inside TABLES or UNIONS."""
    lines = [f"    {schema!r}: {{"]
    for name, rows in sorted(entries.items()):
        lines += [f"        {name!r}: (", *(f"            {row!r}," for row in rows), "        ),"]
    return [*lines, "    },"]
