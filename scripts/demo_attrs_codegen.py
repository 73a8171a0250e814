"""The attribute tables of schema/demo_ops.toml -> every language's structs, field descriptors
and constraint tables (used by demo_ops_codegen.py, driven by generate_schema_code.py).

Every renderer emits data (one row per field, one row per constraint) that a hand-written loop
per language interprets: bundle_format/program_codec.py and attribute_rules.py, and
native_format/decoder/demo_program.h. Only the struct declarations are spelled out per field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

REQUIRED = object()  # a field without a default: the dataclass field is required

# type -> (fbs type, Python annotation, C++ member type, wire kind shared by the codec loops)
TYPES: dict[str, tuple[str, str, str, str]] = {
    "int32": ("int", "int", "int64_t", "i32"),
    "int64": ("long", "int", "int64_t", "i64"),
    "double": ("double", "float", "double", "f64"),
    "bool": ("bool", "bool", "bool", "bool"),
    "pair": ("[int]", "tuple[int, int]", "Pair", "pair"),
    "int32_list": ("[int]", "tuple[int, ...]", "std::vector<int64_t>", "i32s"),
    "int64_list": ("[long]", "tuple[int, ...]", "std::vector<int64_t>", "i64s"),
    "optional_double": ("double", "float | None", "std::optional<double>", "opt_f64"),
    "optional_int32": ("int", "int | None", "std::optional<int64_t>", "opt_i32"),
    "flag": ("bool", "", "", "flag"),
}
CHECKS = ("min", "equals", "length", "max_count", "distinct", "any_present", "rule")
RULES = ("padding_at_most_half_kernel", "scalar_iff_one_input", "permutation", "known_dtype", "quantize_range",
         "fill_sizes")
FIELD_KEYS = {"name", "type", "default", "flag", "none", "doc"}
CONSTRAINT_KEYS = {"check", "field", "fields", "value", "except", "of", "ops", "text", "code", "name"}


class AttrSpecError(Exception):
    pass


@dataclass(frozen=True)
class Enum:
    name: str
    base: str  # fbs base type
    members: tuple[str, ...]  # fbs names, value = index


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # a TYPES key or an [enums] name
    slot: int  # fbs field id
    default: Any  # REQUIRED, None ("none"), or a value
    flag: str | None  # optional_double: its presence field
    none: int | None  # optional_int32: the wire value meaning None
    doc: str


@dataclass(frozen=True)
class Constraint:
    check: str
    fields: tuple[str, ...]  # the field(s) checked (any_present: several; rule: none)
    value: float | None
    other: int | None  # min: the excepted value; max_count: the value counted
    ops: tuple[str, ...]  # empty: every op carrying the table
    text: str | None  # INVALID_ATTRIBUTES problem template
    code: str | None  # or: a demo_errors.toml code (fields op, found)
    rule: str | None  # check "rule": its name


@dataclass(frozen=True)
class Table:
    name: str
    tag: int
    optional: bool
    doc: str
    fields: tuple[Field, ...]  # fbs order, flags included
    constraints: tuple[Constraint, ...]

    @property
    def values(self) -> tuple[Field, ...]:
        """The fields every language's struct has (presence flags are wire-only)."""
        return tuple(f for f in self.fields if f.type != "flag")


def load(raw: dict[str, Any], op_names: set[str]) -> tuple[dict[str, Enum], dict[str, Table]]:
    enums = {name: Enum(name, e["type"], tuple(e["members"])) for name, e in raw.get("enums", {}).items()}
    tables = {}
    for tag, (name, entry) in enumerate(raw["attributes"].items(), start=1):
        fields = tuple(_field(name, slot, f, enums) for slot, f in enumerate(entry["fields"]))
        table = Table(name, tag, bool(entry["optional"]), entry.get("doc", ""), fields,
                      tuple(_constraint(name, c, op_names) for c in entry.get("constraints", ())))
        _check_table(table, enums)
        tables[name] = table
    return enums, tables


def _field(table: str, slot: int, raw: dict[str, Any], enums: dict[str, Enum]) -> Field:
    where = f"attributes.{table}.{raw.get('name')}"
    if set(raw) - FIELD_KEYS or raw.get("type") not in (*TYPES, *enums):
        raise AttrSpecError(f"{where}: unknown keys {sorted(set(raw) - FIELD_KEYS)} or type {raw.get('type')!r}")
    default = raw.get("default", REQUIRED)
    if default == "none":
        default = None
    return Field(raw["name"], raw["type"], slot, default, raw.get("flag"), raw.get("none"), raw.get("doc", ""))


def _constraint(table: str, raw: dict[str, Any], op_names: set[str]) -> Constraint:
    where = f"attributes.{table} constraint {raw}"
    if set(raw) - CONSTRAINT_KEYS or raw.get("check") not in CHECKS:
        raise AttrSpecError(f"{where}: unknown keys or check")
    if (raw.get("text") is None) == (raw.get("code") is None) or not set(raw.get("ops", ())) <= op_names:
        raise AttrSpecError(f"{where}: needs exactly one of text and code, and known ops")
    if raw["check"] == "rule" and raw.get("name") not in RULES:
        raise AttrSpecError(f"{where}: unknown rule (known: {', '.join(RULES)})")
    fields = tuple(raw.get("fields", ())) or ((raw["field"],) if "field" in raw else ())
    other = raw.get("except", raw.get("of"))
    return Constraint(raw["check"], fields, raw.get("value"), other, tuple(raw.get("ops", ())), raw.get("text"),
                      raw.get("code"), raw.get("name"))


def _check_table(table: Table, enums: dict[str, Enum]) -> None:
    names = {f.name for f in table.fields}
    for f in table.fields:
        if (f.type == "optional_double") != (f.flag is not None) or (f.flag and f.flag not in names):
            raise AttrSpecError(f"attributes.{table.name}.{f.name}: optional_double needs a listed flag field")
        if f.type == "optional_int32" and f.none != 0:  # the readers of both languages take 0 as None
            raise AttrSpecError(f"attributes.{table.name}.{f.name}: optional_int32 supports none = 0 only")
        if table.optional and f.default is REQUIRED and f.type != "flag":
            raise AttrSpecError(f"attributes.{table.name}.{f.name}: an optional table needs defaults everywhere")
    for c in table.constraints:
        if not set(c.fields) <= names:
            raise AttrSpecError(f"attributes.{table.name}: constraint on unknown field(s) {c.fields}")
    order = [f.default is REQUIRED for f in table.values]
    if order != sorted(order, reverse=True):
        raise AttrSpecError(f"attributes.{table.name}: required fields must come before fields with defaults")


# --- fbs ---

# from the first attribute enum (or the marker before it) to the end of the Attributes union
_ATTR_BLOCK = r"(?:// GENERATED attribute types[^\n]*\n)?enum\s+{first}\b.*?union\s+Attributes\s*\{{[^}}]*\}}"


def _fbs_default(f: Field, enums: dict[str, Enum]) -> str:
    if f.default is REQUIRED or f.default is None or f.type in ("pair", "int32_list", "int64_list"):
        return ""
    if f.type in enums:
        return "" if enums[f.type].members.index(f.default) == 0 else f" = {f.default}"
    if f.type == "bool":
        return " = true" if f.default else ""
    return "" if f.default == 0 else f" = {f.default}"


def fbs_block(enums: dict[str, Enum], tables: dict[str, Table]) -> str:
    out = ["// GENERATED attribute types, from schema/demo_ops.toml by scripts/generate_schema_code.py: edit the spec."]
    for e in enums.values():
        out += [f"enum {e.name} : {e.base} {{", *(f"  {m} = {i}," for i, m in enumerate(e.members)), "}", ""]
    for t in tables.values():
        out.append(f"table {t.name} {{")
        for f in t.fields:
            fbs_type = TYPES[f.type][0] if f.type in TYPES else f.type
            line = f"  {f.name}:{fbs_type}{_fbs_default(f, enums)};"
            doc = f.doc or (f"presence of {_flag_owner(t, f.name)}" if f.type == "flag" else "")
            out.append(f"{line:<32}  // {doc}" if doc else line)
        out += ["}", ""]
    out += ["union Attributes {", *(f"  {name}," for name in tables), "}"]
    return "\n".join(out)


def _flag_owner(table: Table, flag: str) -> str:
    return next(f.name for f in table.fields if f.flag == flag)


def fbs_with_attributes(fbs: str, enums: dict[str, Enum], tables: dict[str, Table]) -> str:
    first = next(iter(enums)) if enums else next(iter(tables))
    pattern = re.compile(_ATTR_BLOCK.format(first=re.escape(first)), re.DOTALL)
    rendered, count = pattern.subn(lambda m: fbs_block(enums, tables), fbs, count=1)
    if count != 1:
        raise AttrSpecError("the attribute block (enum Activation ... union Attributes) not found in the fbs")
    return rendered


# --- Python ---

def _py_value(f: Field, enums: dict[str, Enum]) -> str:
    if f.default is None:
        return "None"
    if f.type in enums:
        return f"{f.type}.{f.default.upper()}"
    if isinstance(f.default, list):
        return repr(tuple(f.default))
    return repr(f.default)


def _py_wire_default(f: Field, enums: dict[str, Enum]) -> str:
    """The value a reader takes for an absent field (a required field: the type's zero)."""
    if f.default is not REQUIRED and f.type not in ("optional_double", "optional_int32", "flag"):
        return _py_value(f, enums)
    return {"double": "0.0", "optional_double": "0.0", "bool": "False", "flag": "False", "pair": "()",
            "int32_list": "()", "int64_list": "()"}.get(f.type, "0")


def python_module(enums: dict[str, Enum], tables: dict[str, Table], header: str) -> str:
    parts = [header + '"""The demo attribute tables (schema/demo_ops.toml): frozen dataclasses, the field\n'
             'descriptors program_codec loops over and the constraints attribute_rules checks."""\n\n'
             "from __future__ import annotations\n\nimport enum\nfrom dataclasses import dataclass\n\n"
             "from bundle_format.attr_rows import AttrField, AttrRule, AttrTable\n"]
    for e in enums.values():
        members = "\n".join(f"    {m.upper()} = {i}" for i, m in enumerate(e.members))
        parts.append(f"\n\nclass {e.name}(enum.IntEnum):\n    \"\"\"fbs enum {e.name}.\"\"\"\n\n{members}\n")
    for t in tables.values():
        body = [f'    """{t.doc}"""\n'] if t.doc else []
        for f in t.values:
            annotation = TYPES[f.type][1] if f.type in TYPES else f.type
            default = "" if f.default is REQUIRED else f" = {_py_value(f, enums)}"
            body.append(f"    {f.name}: {annotation}{default}" + (f"  # {f.doc}" if f.doc else ""))
        parts.append(f"\n\n@dataclass(frozen=True)\nclass {t.name}Attrs:\n" + "\n".join(body) + "\n")
    parts.append('''
F, R = AttrField, AttrRule
''')
    rows = []
    for t in tables.values():
        slots = {f.name: f.slot for f in t.fields}
        fields = [f"F({f.name!r}, {_py_kind(f, enums)!r}, {f.slot}, {_py_wire_default(f, enums)}, {f.flag or ''!r}, "
                  f"{slots[f.flag] if f.flag else -1}, {f.type if f.type in enums else None})" for f in t.values]
        rules = [f"R({c.check!r}, {c.fields!r}, {c.value!r}, {c.other!r}, frozenset({list(c.ops)!r}), {c.text!r}, "
                 f"{c.code!r}, {c.rule!r})" for c in t.constraints]
        rows.append(f"    AttrTable({t.name!r}, {t.tag}, {t.name}Attrs, {len(t.fields)}, (\n        "
                    + ",\n        ".join(fields) + ",\n    ), (" + "".join(f"\n        {r}," for r in rules)
                    + ("\n    " if rules else "") + ")),")
    parts.append("\n# in union tag order\nTABLES: tuple[AttrTable, ...] = (\n" + "\n".join(rows) + "\n)\n")
    return "".join(parts)


def _py_kind(f: Field, enums: dict[str, Enum]) -> str:
    return "enum" if f.type in enums else TYPES[f.type][3]


# --- C++ ---

def _cpp_value(f: Field, enums: dict[str, Enum]) -> str:
    if f.default is REQUIRED or f.default is None:
        return "{}"
    if f.type in enums:
        return f"{{{f.type}::{f.default}}}"
    if isinstance(f.default, list):
        return "{" + ", ".join(str(v) for v in f.default) + "}"
    if isinstance(f.default, bool):
        return "{" + str(f.default).lower() + "}"
    return f"{{{f.default!r}}}"


def _cpp_wire(f: Field, enums: dict[str, Enum]) -> str:
    return "Wire::" + ("Enum" if f.type in enums else {
        "i32": "I32", "i64": "I64", "f64": "F64", "bool": "Bool", "pair": "Pair", "i32s": "I32s", "i64s": "I64s",
        "opt_f64": "OptF64", "opt_i32": "OptI32"}[TYPES[f.type][3]])


def _cpp_string(text: str | None) -> str:
    return "nullptr" if text is None else '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cpp_header(enums: dict[str, Enum], tables: dict[str, Table], op_codes: dict[str, int], header: str) -> str:
    words = (len(op_codes) + 63) // 64  # demo_attr_rows.h kOpWords
    structs, traits = [], []
    for t in tables.values():
        members = [f"  {TYPES[f.type][2] if f.type in TYPES else f.type} {f.name}{_cpp_value(f, enums)};"
                   + (f"  // {f.doc}" if f.doc else "") for f in t.values]
        count = f"  static constexpr int kFieldCount = {len(t.values)};"
        structs.append(f"struct {t.name}Attrs {{\n{count}\n" + "\n".join(members) + "\n};")
        index = {f.name: i for i, f in enumerate(t.values)}
        slots = {f.name: f.slot for f in t.fields}
        fields = [f"{{\"{f.name}\", {_cpp_wire(f, enums)}, {4 + 2 * f.slot}, "
                  f"{4 + 2 * slots[f.flag] if f.flag else 0}, {_cpp_string(f.flag)}, &{t.name}Attrs::{f.name}}}"
                  for f in t.values]
        rules = []
        for c in t.constraints:
            mask = [0] * words
            for op in c.ops:
                mask[op_codes[op] // 64] |= 1 << (op_codes[op] % 64)
            picked = [index[n] for n in c.fields] + [-1, -1]
            code = f"static_cast<int>(Code::{c.code})" if c.code else "kNoCode"
            rules.append(f"{{Check::{_camel(c.check)}, {picked[0]}, {picked[1]}, {float(c.value or 0)!r}, "
                         f"{c.other if c.other is not None else 0}, {str(c.other is not None).lower()}, "
                         f"{{{', '.join(f'{m}ull' for m in mask)}}}, {_cpp_string(c.text)}, "
                         f"{code}, NamedRule::{_camel(c.rule or 'none')}}}")
        # a table's rows on one line each (fields, rules): data, not code to read row by row
        traits.append(f"template <>\nstruct Table<{t.name}Attrs> {{\n"
                      f"  static constexpr const char* name = \"{t.name}\";\n"
                      f"  static inline const std::vector<FieldOf<{t.name}Attrs>> fields = {{{', '.join(fields)}}};\n"
                      f"  static inline const std::vector<Rule> rules = {{{', '.join(rules)}}};\n}};")
    alternatives = ", ".join(f"{name}Attrs" for name in tables)
    return header + f"""// The demo attribute tables (schema/demo_ops.toml): one struct per Attributes union member, and
// the field and constraint tables native_format/decoder/demo_program.h reads and checks them with
// (one loop each). Field names, types and defaults are runtime_py's dataclasses'. Each struct's
// kFieldCount is static_asserted next to every XNNPACK guard that reads its fields (xnn*.cpp), so a
// field added to the spec stops the build there until the fast path has been checked against it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "demo_attr_rows.h"

namespace liteexport::demo_attrs {{

{chr(10).join(structs)}

// The variant's index is the fbs union tag (0: no attributes).
using Attrs = std::variant<std::monostate, {alternatives}>;

{chr(10).join(traits)}

}}  // namespace liteexport::demo_attrs
"""


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))
