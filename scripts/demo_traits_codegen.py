"""The op traits of schema/demo_ops.toml -> the per-op glue of every language (used by
demo_ops_codegen.py): what each op is, said once in its spec entry, instead of hand-kept sets
and rows in the compiler, the runtimes and the executors.

Python (bundle_format/_generated/demo_traits.py): the plain lowering rows and in-place names,
the shape and memory rule names, the torch oracles and the trait sets (views, value carriers,
the static int8 pass's grid keepers, the row-split ops, the quantized ATen names by what they do
to the grid). C++ (native_format/generated/demo_traits_generated.h): one X-macro per kernel
family listing its ops, so the kernel tables and the family switches of the native core and the
torch extension dispatch from the spec, and the XNNPACK UnaryStep set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# the kernel families: ops computed by one kernel function that switches on the op
FAMILIES = ("binary", "unary", "math", "compare", "bitwise", "rounding", "own")
SHAPES = ("same", "broadcast", "axis", "reduce", "own")
MEMORY = ("broadcast", "rounding", "largest_input", "widest", "own")
XNNPACK = ("step", "unary")
VALUES = ("view", "moved", "converted")
QUANTIZED = ("keeps_grid", "requantizes")
KEYS = ("family", "aten", "inplace", "torch", "shape", "xnnpack", "int8", "quantized", "values", "memory",
        "row_split", "kernel")


class TraitError(Exception):
    pass


@dataclass(frozen=True)
class Traits:
    family: str
    shape: str
    memory: str
    aten: tuple[str, ...] = ()  # ATen names lowered by the plain lowering (unary or binary)
    inplace: tuple[str, ...] = ()  # ATen names whose in-place form (name_) compiles as the op
    torch: str | None = None  # the dotted torch function that is the op's oracle
    xnnpack: str | None = None  # "step" | "unary" | None: no XNNPACK path
    int8: str | None = None  # "keeps_grid": the static int8 pass keeps the input's grid through it
    quantized: tuple[tuple[str, object], ...] = ()  # (ATen name, "keeps_grid" | "requantizes" | (scale, zp))
    values: str | None = None  # "view" | "moved" | "converted" | None: computed
    row_split: bool = False
    kernel: str | None = None  # math family: the C++ scalar function's name (math_kernels::NAME)


def _choice(op: str, entry: dict[str, Any], key: str, choices: tuple[str, ...], required: bool) -> str | None:
    value = entry.get(key)
    if value is None and not required:
        return None
    if value not in choices:
        raise TraitError(f"op {op}: {key} {value!r} must be one of {list(choices)}")
    return str(value)


def _quantized(op: str, table: dict[str, Any]) -> tuple[tuple[str, object], ...]:
    rows: list[tuple[str, object]] = []
    for name, rule in table.items():
        if isinstance(rule, dict):
            if set(rule) != {"scale", "zero_point"}:
                raise TraitError(f"op {op}: quantized.{name} needs scale and zero_point, got {sorted(rule)}")
            rows.append((name, (float(rule["scale"]), int(rule["zero_point"]))))
        elif rule in QUANTIZED:
            rows.append((name, rule))
        else:
            raise TraitError(f"op {op}: quantized.{name} {rule!r} is none of {list(QUANTIZED)} or a fixed grid")
    return tuple(rows)


def load(op: str, entry: dict[str, Any], attrs: str | None, inputs: tuple[int, int], alias: bool) -> Traits:
    """The traits of one [ops] entry, checked against the op's arity and attributes."""
    family = _choice(op, entry, "family", FAMILIES, True)
    traits = Traits(
        family=str(family), shape=str(_choice(op, entry, "shape", SHAPES, True)),
        memory=str(_choice(op, entry, "memory", MEMORY, True)),
        aten=tuple(entry.get("aten", ())), inplace=tuple(entry.get("inplace", ())), torch=entry.get("torch"),
        xnnpack=_choice(op, entry, "xnnpack", XNNPACK, False), int8=_choice(op, entry, "int8", ("keeps_grid",), False),
        quantized=_quantized(op, dict(entry.get("quantized", {}))),
        values=_choice(op, entry, "values", VALUES, False), row_split=bool(entry.get("row_split", False)),
        kernel=entry.get("kernel"))
    if traits.aten and not (attrs == "Binary" or (inputs == (1, 1) and attrs is None)):
        raise TraitError(f"op {op}: aten names take the plain unary or binary lowering, so the op needs one "
                         "operand and no attributes, or Binary attributes")
    if alias != (traits.values == "view"):
        raise TraitError(f"op {op}: values \"view\" and alias = true go together (alias {alias})")
    if (family == "math") != (traits.kernel is not None):
        raise TraitError(f"op {op}: the math family's ops, and only they, name their C++ kernel (kernel)")
    if family in ("unary", "math") and (attrs is not None or inputs != (1, 1) or traits.shape != "same"):
        raise TraitError(f"op {op}: the {family} family computes one operand elementwise, without attributes")
    return traits


# --- Python ---

def python_module(ops: list[tuple[str, Traits]], quantized_extra: dict[str, str], header: str) -> str:
    rows = "".join(
        f"    OpCode.{n}: OpTraits({t.family!r}, {t.shape!r}, {t.memory!r}, {t.torch!r}, {t.xnnpack!r}, "
        f"{t.int8!r}, {t.values!r}, {t.row_split!r}),\n" for n, t in ops)
    plain_rows = "".join(f"    'aten::{a}': OpCode.{n},\n" for n, t in ops for a in t.aten)
    inplace = tuple(sorted(f"aten::{a}" for _, t in ops for a in t.inplace))
    quantized = sorted([(f"aten::{a}", rule) for _, t in ops for a, rule in t.quantized]
                       + [(f"aten::{a}", rule) for a, rule in quantized_extra.items()], key=lambda r: r[0])
    keeps = [a for a, rule in quantized if rule == "keeps_grid"]
    requantizes = [a for a, rule in quantized if rule == "requantizes"]
    fixed = {a: rule for a, rule in quantized if isinstance(rule, tuple)}
    return header + f'''"""The op traits of schema/demo_ops.toml: what each op is, for the compiler and the runtimes
(the keys are documented in the spec's header)."""

from __future__ import annotations

from typing import NamedTuple

from bundle_format._generated.demo_ops import OpCode


class OpTraits(NamedTuple):
    family: str  # the kernel function computing it: binary | unary | math | compare | bitwise | rounding | own
    shape: str  # shape rule: same | broadcast | axis | reduce | own (compiler/shapes.py)
    memory: str  # memory bound: broadcast | rounding | largest_input | widest | own (runtime_py memory.py)
    oracle: str | None  # the dotted torch function it computes
    xnnpack: str | None  # "step" (a fast step of its own) | "unary" (a UnaryStep) | None
    int8: str | None  # "keeps_grid": static int8 keeps the input's grid through it
    values: str | None  # "view" | "moved" | "converted": the result carries input 0's values
    row_split: bool  # rows of the result depend on the same rows of input 0


OP_TRAITS: dict[OpCode, OpTraits] = {{
{rows}}}

FAMILY = {{op: t.family for op, t in OP_TRAITS.items()}}
SHAPE_RULE = {{op: t.shape for op, t in OP_TRAITS.items()}}
MEMORY_RULE = {{op: t.memory for op, t in OP_TRAITS.items()}}
ORACLE = {{op: t.oracle for op, t in OP_TRAITS.items() if t.oracle is not None}}
XNNPACK = {{op: t.xnnpack for op, t in OP_TRAITS.items() if t.xnnpack is not None}}
VIEWS = frozenset(op for op, t in OP_TRAITS.items() if t.values == "view")
CARRIES_VALUES = frozenset(op for op, t in OP_TRAITS.items() if t.values is not None)
INT8_KEEPS_GRID = frozenset(op for op, t in OP_TRAITS.items() if t.int8 == "keeps_grid")
ROW_SPLIT_OPS = tuple(op for op, t in OP_TRAITS.items() if t.row_split)

# ATen name -> the op its plain lowering emits (one operand: unary; Binary attributes: binary)
PLAIN_LOWERINGS: dict[str, OpCode] = {{
{plain_rows}}}

# ATen names whose in-place form (name_) compiles as the out-of-place op
INPLACE: tuple[str, ...] = {inplace!r}

# ATen ops torch runs on a quantized tensor, by what they do to its grid
QUANTIZED_KEEPS_GRID = frozenset({keeps!r})  # the result's values are the input's, or chosen among them
QUANTIZED_REQUANTIZES = frozenset({requantizes!r})  # torch rounds the result to the input's grid
QUANTIZED_FIXED_GRID: dict[str, tuple[float, int]] = {fixed!r}  # torch's fixed output grid (quint8 inputs)
'''


# --- C++ ---

def cpp_header(ops: list[tuple[str, Traits]], header: str) -> str:
    def xmacro(family: str, with_kernel: bool = False) -> str:
        members = [(n, t) for n, t in ops if t.family == family]
        items = " ".join(f"X({n}, {t.kernel})" if with_kernel else f"X({n})" for n, t in members)
        return f"#define LITEEXPORT_DEMO_{family.upper()}_OPS(X) {items}"

    families = "\n".join(xmacro(f, f == "math") for f in FAMILIES if f != "own")
    torch_calls = " ".join(f"X({n}, {t.torch.rsplit('.', 1)[1]})" for n, t in ops
                           if t.family in ("unary", "math") and t.torch)
    unary_steps = "\n".join(f"    {str(t.xnnpack == 'unary').lower()},  // {n}" for n, t in ops)
    return header + f"""// The op traits of schema/demo_ops.toml for C++: each kernel family's members as an X-macro
// (X(OP) or, for math, X(OP, kernel)), so the kernel tables (native/src/demo/kernels.cpp,
// liteexport/torch_backend/aten_kernels.h) and the family switches list the spec's ops.
#pragma once

#include "demo_ops_generated.h"

{families}

// the unary and math ops whose torch backend kernel is at::NAME(x): X(OP, NAME)
#define LITEEXPORT_DEMO_TORCH_UNARY_OPS(X) {torch_calls}

namespace liteexport::demo_ops {{

// indexed by opcode: a float step of the op runs as an XNNPACK UnaryStep on its input's layout
// (xnnpack = "unary"; an NHWC value stays NHWC)
constexpr bool kXnnpackUnaryStep[kNumOps] = {{
{unary_steps}
}};

}}  // namespace liteexport::demo_ops
"""
