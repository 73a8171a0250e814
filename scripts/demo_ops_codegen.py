"""The demo backend's specs -> code for every language (used by generate_schema_code.py):
schema/demo_ops.toml -> the opcode enum and op table, schema/demo_errors.toml -> the error
codes and their templates.

The spec owns the opcodes and the attribute tables: the OpCode enum, the attribute enums and
tables and the Attributes union of schema/demo_program.fbs are rendered from it
(``fbs_with_opcodes``), so adding an op is one line of the spec and adding an attribute one
field entry. The attribute part lives in demo_attrs_codegen.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import demo_attrs_codegen as attrs_codegen
import tomllib

PY_HEADER = (
    "# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_ops.toml\n"
    "# ruff: noqa\n"
)
CPP_HEADER = "// GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_ops.toml\n"


@dataclass(frozen=True)
class Op:
    name: str  # OpCode member in runtime_py and C++ ("LOG_SOFTMAX")
    code: int
    fbs: str  # member in demo_program.fbs ("LogSoftmax")
    min_inputs: int
    max_inputs: int | None  # None: any number
    attrs: str | None  # Attributes union member, None: no attributes
    alias: bool
    doc: str
    operands: tuple[str, ...]  # names, in order (the last repeats for "any number")
    dtypes: tuple[str, ...]  # element types every operand and the result may have


@dataclass(frozen=True)
class Spec:
    attributes: dict[str, bool]  # union member -> every field has a default; tag order from 1
    ops: tuple[Op, ...]  # in opcode order, numbered 0..n-1
    enums: dict[str, attrs_codegen.Enum]
    tables: dict[str, attrs_codegen.Table]  # union member -> its fields and constraints, tag order


class SpecError(Exception):
    pass


def load(spec_path: Path, fbs_path: Path) -> Spec:
    """The spec in ``spec_path``, checked for consistency and against the fbs schema."""
    raw = tomllib.loads(spec_path.read_text())
    try:
        enums, tables = attrs_codegen.load(raw, set(raw["ops"]))
    except attrs_codegen.AttrSpecError as exc:
        raise SpecError(str(exc)) from None
    attributes = {name: table.optional for name, table in tables.items()}
    default_dtypes = tuple(raw.get("defaults", {}).get("dtypes", ("float32",)))
    ops = []
    for name, entry in raw["ops"].items():
        unknown = set(entry) - {"code", "fbs", "inputs", "attrs", "alias", "doc", "operands", "dtypes"}
        if unknown:
            raise SpecError(f"op {name}: unknown keys {sorted(unknown)}")
        low, high = entry["inputs"]
        attrs = entry.get("attrs")
        if attrs is not None and attrs not in attributes:
            raise SpecError(f"op {name}: attrs {attrs!r} is not listed under [attributes]")
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name) or low < 0 or (high != -1 and high < low):
            raise SpecError(f"op {name}: bad name or inputs {entry['inputs']}")
        ops.append(Op(name, int(entry["code"]), entry["fbs"], low, None if high == -1 else high, attrs,
                      bool(entry.get("alias", False)), entry["doc"], tuple(entry.get("operands", ())),
                      tuple(entry.get("dtypes", default_dtypes))))
    if [op.code for op in ops] != list(range(len(ops))):
        raise SpecError("[ops] must be listed in opcode order, numbered 0, 1, 2, ... without gaps")
    return Spec(attributes, tuple(ops), enums, tables)


def _enum_members(text: str, pattern: str) -> list[tuple[str, int]]:
    """(member, value) of the fbs enum or union matching ``pattern``, implicit values counted on."""
    match = re.search(pattern + r"\s*\{([^}]*)\}", text)
    if match is None:
        raise SpecError(f"{pattern!r} not found in the fbs schema")
    body = re.sub(r"//[^\n]*", "", match.group(1))
    members, value = [], 0
    for item in (part.strip() for part in body.split(",")):
        if not item:
            continue
        name, _, explicit = (s.strip() for s in item.partition("="))
        value = int(explicit) if explicit else value
        members.append((name, value))
        value += 1
    return members


_OPCODE_ENUM = re.compile(r"(enum\s+OpCode\s*:\s*\w+\s*\{)[^}]*(\})")


def fbs_with_opcodes(fbs: str, spec: Spec) -> str:
    """``fbs`` with its OpCode enum rendered from the spec (explicit numbers: the wire format)."""
    width = max(len(op.fbs) for op in spec.ops) + len(" = 00,")
    lines = [f"  {f'{op.fbs} = {op.code},':<{width}}  // {op.doc}" + (f"; attrs: {op.attrs}" if op.attrs else "")
             for op in spec.ops]
    body = ("\n  // GENERATED from schema/demo_ops.toml by scripts/generate_schema_code.py: edit the spec.\n"
            + "\n".join(lines) + "\n")
    rendered, count = _OPCODE_ENUM.subn(lambda m: m.group(1) + body + m.group(2), fbs)
    if count != 1:
        raise SpecError("enum OpCode not found in the fbs schema")
    try:
        return attrs_codegen.fbs_with_attributes(rendered, spec.enums, spec.tables)
    except attrs_codegen.AttrSpecError as exc:
        raise SpecError(str(exc)) from None


def python_attrs(spec: Spec) -> str:
    return attrs_codegen.python_module(spec.enums, spec.tables, PY_HEADER)


def cpp_attrs(spec: Spec) -> str:
    return attrs_codegen.cpp_header(spec.enums, spec.tables, {op.name: op.code for op in spec.ops}, CPP_HEADER)


def python_module(spec: Spec) -> str:
    enum_lines = "\n".join(f"    {op.name} = {op.code}  # {op.doc}" for op in spec.ops)
    table_lines = "\n".join(
        f"    OpCode.{op.name}: OpSpec({op.min_inputs}, {op.max_inputs}, {op.attrs!r}, "
        f"{bool(op.attrs) and spec.attributes[op.attrs or '']}, {op.alias}, {op.operands!r}, {op.dtypes!r}),"
        for op in spec.ops)
    tags = ", ".join(f"{name!r}: {tag}" for tag, name in enumerate(spec.attributes, start=1))
    return PY_HEADER + f'''"""The demo instruction set (schema/demo_ops.toml): opcodes and their operands."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class OpCode(enum.IntEnum):
    """The instruction set. Numbering is the wire format: append, never reorder."""

{enum_lines}


@dataclass(frozen=True)
class OpSpec:
    min_inputs: int
    max_inputs: int | None  # None: any number
    attrs: str | None  # the Attributes union member it carries (fbs table name); None: none
    attrs_optional: bool  # every attribute field has a default: the instruction may omit them
    may_alias_input: bool  # the result may be a view of input 0
    operands: tuple[str, ...] = ()  # names, in order (the last repeats for "any number")
    dtypes: tuple[str, ...] = ("float32",)  # element types every operand and the result may have


OP_SPECS: dict[OpCode, OpSpec] = {{
{table_lines}
}}

# Attributes union member -> its tag
ATTRIBUTE_TAGS: dict[str, int] = {{{tags}}}
'''


def cpp_header(spec: Spec) -> str:
    enum_lines = "\n".join(f"  {op.name} = {op.code},  // {op.doc}" for op in spec.ops)
    tags = {name: tag for tag, name in enumerate(spec.attributes, start=1)}
    table_lines = "\n".join(
        f"    {{\"{op.name}\", {op.min_inputs}, {'kAnyNumber' if op.max_inputs is None else op.max_inputs}, "
        f"{tags[op.attrs] if op.attrs else 0}, {str(bool(op.attrs) and spec.attributes[op.attrs or '']).lower()}, "
        f"{str(op.alias).lower()}}},"
        for op in spec.ops)
    attr_names = ", ".join(['"none"'] + [f'"{name}Attrs"' for name in spec.attributes])
    return CPP_HEADER + f"""// The demo instruction set: the opcode enum (numbered as schema/demo_program.fbs's OpCode)
// and each opcode's operands, for the program decoder and the kernel tables of every executor.
#pragma once

#include <cstddef>
#include <cstdint>

namespace liteexport::demo_ops {{

enum class Op : uint16_t {{
{enum_lines}
}};

constexpr size_t kNumOps = {len(spec.ops)};
constexpr size_t kNumAttributeTypes = {len(spec.attributes)};  // union tags 1..kNumAttributeTypes
constexpr size_t kAnyNumber = SIZE_MAX;

struct OpInfo {{
  const char* name;       // "LOG_SOFTMAX": how messages name the op
  size_t min_inputs;
  size_t max_inputs;      // kAnyNumber: any number
  uint8_t attrs;          // the Attributes union tag it carries, 0: none
  bool attrs_optional;    // every attribute field has a default: the instruction may omit them
  bool may_alias_input;   // the result may be a view of input 0
}};

// indexed by opcode
constexpr OpInfo kOps[kNumOps] = {{
{table_lines}
}};

// runtime_py's attribute class names, indexed by union tag ("none" for 0)
constexpr const char* kAttributeNames[kNumAttributeTypes + 1] = {{{attr_names}}};

// nullptr for a number outside the instruction set
inline const OpInfo* op_info(uint16_t op) {{ return op < kNumOps ? &kOps[op] : nullptr; }}

}}  // namespace liteexport::demo_ops
"""


# --- errors (schema/demo_errors.toml) ---

ERROR_KINDS = ("format", "execution")


def load_errors(path: Path) -> dict[str, dict[str, str]]:
    """kind ("format", "execution") -> code -> template; codes are unique across kinds."""
    raw = tomllib.loads(path.read_text())
    if set(raw) != set(ERROR_KINDS):
        raise SpecError(f"{path.name} must have the sections {list(ERROR_KINDS)}, found {list(raw)}")
    seen: set[str] = set()
    for codes in raw.values():
        for code, template in codes.items():
            if code in seen or not re.fullmatch(r"[A-Z][A-Z0-9_]*", code):
                raise SpecError(f"{path.name}: bad or repeated code {code}")
            if re.search(r"[{}]", re.sub(r"\{[a-z_]+\}", "", template)):
                raise SpecError(f"{path.name}: {code}: braces may only name a field, as {{field}}")
            seen.add(code)
    return {kind: dict(raw[kind]) for kind in ERROR_KINDS}


def python_errors(errors: dict[str, dict[str, str]]) -> str:
    lines = []
    for kind, codes in errors.items():
        lines.append(f"    # {kind}")
        lines += [f"    {code!r}: {template!r}," for code, template in codes.items()]
    body = "\n".join(lines)
    kinds = ", ".join(f"{code!r}: {kind!r}" for kind, codes in errors.items() for code in codes)
    header = PY_HEADER.replace("demo_ops.toml", "demo_errors.toml")
    return header + f'''"""The demo backend's error codes and their templates (schema/demo_errors.toml)."""

TEMPLATES: dict[str, str] = {{
{body}
}}

KINDS: dict[str, str] = {{{kinds}}}
'''


def _cpp_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def cpp_errors(errors: dict[str, dict[str, str]]) -> str:
    codes = [(code, template) for kind in ERROR_KINDS for code, template in errors[kind].items()]
    enum_lines = "\n".join(f"  {code}," for code, _ in codes)
    names = "\n".join(f"    {_cpp_string(code)}," for code, _ in codes)
    templates = "\n".join(f"    {_cpp_string(template)}," for _, template in codes)
    header = CPP_HEADER.replace("demo_ops.toml", "demo_errors.toml")
    return header + f"""// The demo backend's error codes and their templates;
// native_format/decoder/demo_error.h renders them.
#pragma once

#include <cstddef>

namespace liteexport::demo_errors {{

enum class Code {{
{enum_lines}
}};

constexpr size_t kNumCodes = {len(codes)};

// indexed by Code
constexpr const char* kCodeNames[kNumCodes] = {{
{names}
}};

// indexed by Code; {{field}} marks where a field's value goes
constexpr const char* kTemplates[kNumCodes] = {{
{templates}
}};

}}  // namespace liteexport::demo_errors
"""
