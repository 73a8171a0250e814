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
import demo_traits_codegen as traits_codegen
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
    dtypes: tuple[str, ...]  # element types of the operands not in operand_dtypes (they share one: T)
    operand_dtypes: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (operand name, its own dtypes)
    result: str = "same"  # the result's dtype rule (RESULT_RULES or a dtype name)
    traits: traits_codegen.Traits | None = None  # family, lowering, shape, memory, ... (demo_traits_codegen.py)

    def operand_masks(self, dtypes: dict[str, int]) -> tuple[int, ...]:
        """Per named operand, the allowed dtypes as a bit mask over their codes (1 << code)."""
        own = dict(self.operand_dtypes)
        return tuple(sum(1 << dtypes[d] for d in own.get(name, self.dtypes)) for name in self.operands)

    def shared(self) -> tuple[bool, ...]:
        """Per named operand, whether it has the op's dtype T (not a list of its own)."""
        own = dict(self.operand_dtypes)
        return tuple(name not in own for name in self.operands)


RESULT_RULES = ("same", "attr", "widen_int")  # besides a dtype name


@dataclass(frozen=True)
class Spec:
    attributes: dict[str, bool]  # union member -> every field has a default; tag order from 1
    ops: tuple[Op, ...]  # in opcode order, numbered 0..n-1
    enums: dict[str, attrs_codegen.Enum]
    tables: dict[str, attrs_codegen.Table]  # union member -> its fields and constraints, tag order
    dtypes: dict[str, int]  # [dtypes]: name -> c10::ScalarType number, in code order
    quantized: dict[str, str]  # [quantized]: ATen names lowered to no op, by what they do to a grid


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
    dtypes = dict(sorted(raw.get("dtypes", {"float32": 6}).items(), key=lambda item: item[1]))
    if not all(isinstance(code, int) and 0 <= code < 16 for code in dtypes.values()):  # C++ masks are 16 bits
        raise SpecError(f"[dtypes]: codes must be c10::ScalarType numbers below 16, got {dtypes}")
    ops = []
    for name, entry in raw["ops"].items():
        unknown = set(entry) - {"code", "fbs", "inputs", "attrs", "alias", "doc", "operands", "dtypes",
                                "operand_dtypes", "result", *traits_codegen.KEYS}
        if unknown:
            raise SpecError(f"op {name}: unknown keys {sorted(unknown)}")
        _check_dtypes(name, entry, dtypes, default_dtypes)
        low, high = entry["inputs"]
        attrs = entry.get("attrs")
        if attrs is not None and attrs not in attributes:
            raise SpecError(f"op {name}: attrs {attrs!r} is not listed under [attributes]")
        if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name) or low < 0 or (high != -1 and high < low):
            raise SpecError(f"op {name}: bad name or inputs {entry['inputs']}")
        alias = bool(entry.get("alias", False))
        try:
            traits = traits_codegen.load(name, entry, attrs, (low, high), alias)
        except traits_codegen.TraitError as exc:
            raise SpecError(str(exc)) from None
        ops.append(Op(name, int(entry["code"]), entry["fbs"], low, None if high == -1 else high, attrs,
                      alias, entry["doc"], tuple(entry.get("operands", ())),
                      tuple(entry.get("dtypes", default_dtypes)),
                      tuple((k, tuple(v)) for k, v in entry.get("operand_dtypes", {}).items()),
                      entry.get("result", "same"), traits))
    if [op.code for op in ops] != list(range(len(ops))):
        raise SpecError("[ops] must be listed in opcode order, numbered 0, 1, 2, ... without gaps")
    quantized = dict(raw.get("quantized", {}))
    if not set(quantized.values()) <= set(traits_codegen.QUANTIZED):
        raise SpecError(f"[quantized]: each rule must be one of {list(traits_codegen.QUANTIZED)}")
    return Spec(attributes, tuple(ops), enums, tables, dtypes, quantized)


def _check_dtypes(name: str, entry: dict[str, object], dtypes: dict[str, int], default: tuple[str, ...]) -> None:
    lists = [entry.get("dtypes", default), *dict(entry.get("operand_dtypes", {})).values()]  # type: ignore[call-overload]
    for names in lists:
        if not names or not set(names) <= set(dtypes):
            raise SpecError(f"op {name}: dtypes {names} must be a non-empty list from [dtypes] {list(dtypes)}")
    operands = list(entry.get("operands", ()))  # type: ignore[call-overload]
    if not set(dict(entry.get("operand_dtypes", {}))) <= set(operands):  # type: ignore[call-overload]
        raise SpecError(f"op {name}: operand_dtypes names operands not in {operands}")
    result = entry.get("result", "same")
    if result not in RESULT_RULES and result not in dtypes:
        raise SpecError(f"op {name}: result {result!r} is none of {RESULT_RULES} or a [dtypes] name")
    if result == "attr" and entry.get("attrs") != "Cast":
        raise SpecError(f"op {name}: result \"attr\" reads the Cast attributes, "
                        f"but the op carries {entry.get('attrs')}")


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
_DTYPE_ENUM = re.compile(r"(enum\s+DType\s*:\s*\w+\s*\{)[^}]*(\})")


def fbs_dtype_name(name: str) -> str:
    """The fbs (and flatc) member of a [dtypes] name: "int64" -> "Int64"."""
    return name[:1].upper() + name[1:]


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
    dtype_lines = "\n".join(f"  {fbs_dtype_name(name)} = {code}," for name, code in spec.dtypes.items())
    dtype_body = ("\n  // GENERATED from schema/demo_ops.toml [dtypes]: c10::ScalarType numbering.\n"
                  + dtype_lines + "\n")
    rendered, count = _DTYPE_ENUM.subn(lambda m: m.group(1) + dtype_body + m.group(2), rendered)
    if count != 1:
        raise SpecError("enum DType not found in the fbs schema")
    try:
        return attrs_codegen.fbs_with_attributes(rendered, spec.enums, spec.tables)
    except attrs_codegen.AttrSpecError as exc:
        raise SpecError(str(exc)) from None


def python_attrs(spec: Spec) -> str:
    return attrs_codegen.python_module(spec.enums, spec.tables, PY_HEADER)


def cpp_attrs(spec: Spec) -> str:
    return attrs_codegen.cpp_header(spec.enums, spec.tables, {op.name: op.code for op in spec.ops}, CPP_HEADER)


def _traits(spec: Spec) -> list[tuple[str, traits_codegen.Traits]]:
    return [(op.name, op.traits) for op in spec.ops if op.traits is not None]


def python_traits(spec: Spec) -> str:
    return traits_codegen.python_module(_traits(spec), spec.quantized, PY_HEADER)


def cpp_traits(spec: Spec) -> str:
    return traits_codegen.cpp_header(_traits(spec), CPP_HEADER)


def python_module(spec: Spec) -> str:
    enum_lines = "\n".join(f"    {op.name} = {op.code}  # {op.doc}" for op in spec.ops)
    table_lines = "\n".join(
        f"    OpCode.{op.name}: OpSpec({op.min_inputs}, {op.max_inputs}, {op.attrs!r}, "
        f"{bool(op.attrs) and spec.attributes[op.attrs or '']}, {op.alias}, {op.operands!r}, {op.dtypes!r}, "
        f"{dict(op.operand_dtypes)!r}, {op.result!r}),"
        for op in spec.ops)
    dtype_lines = "\n".join(f"    {name.upper()} = {code}" for name, code in spec.dtypes.items())
    tags = ", ".join(f"{name!r}: {tag}" for tag, name in enumerate(spec.attributes, start=1))
    return PY_HEADER + f'''"""The demo instruction set (schema/demo_ops.toml): opcodes and their operands."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class OpCode(enum.IntEnum):
    """The instruction set. Numbering is the wire format: append, never reorder."""

{enum_lines}


class DType(enum.IntEnum):
    """Element types of compiled values, numbered as c10::ScalarType ([dtypes])."""

{dtype_lines}


@dataclass(frozen=True)
class OpSpec:
    min_inputs: int
    max_inputs: int | None  # None: any number
    attrs: str | None  # the Attributes union member it carries (fbs table name); None: none
    attrs_optional: bool  # every attribute field has a default: the instruction may omit them
    may_alias_input: bool  # the result may be a view of input 0
    operands: tuple[str, ...] = ()  # names, in order (the last repeats for "any number")
    dtypes: tuple[str, ...] = ("float32",)  # dtypes of the operands not in operand_dtypes (they share one, T)
    operand_dtypes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # operand -> its own dtypes
    result: str = "same"  # the result's dtype: "same" (T), "attr" (Cast.dtype), "widen_int", or a dtype name


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
        f"{str(op.alias).lower()}, {_cpp_result(op, spec)}, {len(op.operands)}, "
        f"{{{', '.join(f'0x{m:04x}' for m in op.operand_masks(spec.dtypes)) or '0'}}}, "
        f"{{{', '.join(str(s).lower() for s in op.shared()) or 'false'}}}}},"
        for op in spec.ops)
    max_operands = max(len(op.operands) for op in spec.ops)
    operand_names = "\n".join(
        "    {" + ", ".join(f'"{name}"' for name in op.operands) + "}," for op in spec.ops)
    dtype_lines = "\n".join(f"  {fbs_dtype_name(name)} = {code}," for name, code in spec.dtypes.items())
    dtype_names = "\n".join(f"    case {code}: return \"{name}\";" for name, code in spec.dtypes.items())
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

// Element types of compiled values ([dtypes]), numbered as c10::ScalarType.
enum class DType : uint8_t {{
{dtype_lines}
}};

// "float32", ..., or nullptr for a number that is not a compiled dtype
inline const char* dtype_name(int code) {{
  switch (code) {{
{dtype_names}
    default: return nullptr;
  }}
}}

// How an instruction's result dtype follows from its operands' (the spec's `result`).
enum class ResultRule : uint8_t {{
  kSame,      // T: the dtype the shared operands have
  kFixed,     // OpInfo::result_dtype
  kAttr,      // the instruction's Cast.dtype
  kWidenInt,  // T, but bool and int32 become int64
}};

constexpr size_t kMaxNamedOperands = {max_operands};

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
  ResultRule result;
  uint8_t result_dtype;   // kFixed: the DType
  size_t num_named;       // operands named in the spec; operand i >= num_named is the last named one
  uint16_t operand_dtypes[kMaxNamedOperands];  // per named operand: allowed dtypes, bit (1 << DType)
  bool shared[kMaxNamedOperands];              // per named operand: it has the op's dtype T
}};

// indexed by opcode
constexpr OpInfo kOps[kNumOps] = {{
{table_lines}
}};

// runtime_py's attribute class names, indexed by union tag ("none" for 0)
constexpr const char* kAttributeNames[kNumAttributeTypes + 1] = {{{attr_names}}};

// nullptr for a number outside the instruction set
inline const OpInfo* op_info(uint16_t op) {{ return op < kNumOps ? &kOps[op] : nullptr; }}

// indexed by opcode: the operands' names in the spec (messages name operands with them)
constexpr const char* kOperandNames[kNumOps][kMaxNamedOperands] = {{
{operand_names}
}};

// The name of operand `index` of `op` (the last named one repeats for "any number").
inline const char* operand_name(Op op, size_t index) {{
  const OpInfo& info = kOps[static_cast<size_t>(op)];
  return kOperandNames[static_cast<size_t>(op)][index < info.num_named ? index : info.num_named - 1];
}}

}}  // namespace liteexport::demo_ops
"""


def _cpp_result(op: Op, spec: Spec) -> str:
    if op.result in spec.dtypes:
        return f"ResultRule::kFixed, {spec.dtypes[op.result]}"
    return {"same": "ResultRule::kSame", "attr": "ResultRule::kAttr", "widen_int": "ResultRule::kWidenInt"}[
        op.result] + ", 0"


# --- errors (schema/demo_errors.toml) ---

ERROR_KINDS = ("format", "input", "execution")


def load_errors(path: Path) -> dict[str, dict[str, str]]:
    """kind ("format", "input", "execution") -> code -> template; codes are unique across kinds."""
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
