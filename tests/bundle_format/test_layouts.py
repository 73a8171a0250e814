"""The checker's generated table layouts (_generated/layouts.py, from flatc's reflection of
schema/*.fbs) agree with flatc's own generated Python readers, field by field: the vtable
offset of each field id, the width of each scalar, the element size of each vector and the
kind of each offset field. A hand-retyped or stale layout fails here (and the freshness test
regenerates layouts.py from the schemas)."""

from __future__ import annotations

import importlib
import inspect
import re

import flatbuffers.number_types as nt
import pytest

from bundle_format import debug_table_codec, fb_reader, program_codec, ptmf_reader
from bundle_format._generated import layouts

_FLAGS = re.compile(r"number_types\.(\w+Flags), o \+ self\._tab\.Pos")
_ELEMENT = re.compile(r"\bj\)? \* (\d+)")

CASES = [(schema, table, i, field) for schema, tables in layouts.TABLES.items()
         for table, fields in tables.items() for i, field in enumerate(fields)]


def _camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


@pytest.mark.parametrize(("schema", "table", "field_id", "field"), CASES,
                         ids=[f"{s}.{t}.{f[0]}" for s, t, _, f in CASES])
def test_layout_matches_flatc_python(schema: str, table: str, field_id: int,
                                     field: tuple[str, str, int, str]) -> None:
    name, kind, size, type_name = field
    reader = getattr(importlib.import_module(f"bundle_format._generated.{schema}_generated"), table)
    source = inspect.getsource(getattr(reader, _camel(name)))
    assert f"self._tab.Offset({4 + 2 * field_id})" in source
    if kind == "scalar":
        flags = _FLAGS.search(source)
        if flags is None:  # an inline struct: flatc reads it as an object at the field
            assert "obj.Init(self._tab.Bytes, x)" in source
        else:
            assert getattr(nt, flags.group(1)).bytewidth == size
    elif kind == "string":
        assert "self._tab.String(" in source
    elif kind == "table":
        if type_name in layouts.UNIONS[schema]:
            assert "self._tab.Union(" in source
        else:
            assert "self._tab.Indirect(" in source and f"obj = {type_name}()" in source
    elif kind == "vector":
        assert [int(n) for n in _ELEMENT.findall(source)] == [size]
        assert "self._tab.Indirect(" not in source
    elif kind == "string_vector":
        assert "self._tab.String(" in source and "self._tab.Vector(o)" in source
    else:
        assert kind == "table_vector"
        assert "self._tab.Indirect(x)" in source and f"obj = {type_name}()" in source


def test_every_table_flatc_generates_has_a_layout() -> None:
    for schema, tables in layouts.TABLES.items():
        module = importlib.import_module(f"bundle_format._generated.{schema}_generated")
        generated = {name for name, obj in vars(module).items()
                     if inspect.isclass(obj) and obj.__module__ == module.__name__
                     and "GetRootAs" in vars(obj) and "SizeOf" not in vars(obj)}
        assert generated == set(tables), schema


def test_union_struct_members_have_their_generated_sizes() -> None:
    module = importlib.import_module("bundle_format._generated.mobile_bytecode_generated")
    for _tag, member, kind, size in layouts.UNIONS["mobile_bytecode"]["IValueUnion"]:
        if kind == "struct":
            assert getattr(module, member).SizeOf() == size


def test_codecs_use_the_generated_layouts() -> None:
    """Each codec's table layouts are the generated ones (nothing restated by hand)."""
    for schema, module in (("mobile_bytecode", ptmf_reader), ("demo_program", program_codec),
                           ("debug_table", debug_table_codec)):
        specs = [v for v in vars(module).values() if isinstance(v, fb_reader.TableSpec)]
        assert specs
        for spec in specs:
            binary = tuple(f.name for f in spec.fields if spec.name == "ExtraFile" and f.name == "content")
            assert spec == fb_reader.spec(schema, spec.name, binary=binary)
