"""The row types of the generated attribute tables (``_generated/demo_attrs.py``, from
schema/demo_ops.toml): one field as the codec loops see it, one constraint as
``attribute_rules`` checks it, and one table. native_format/decoder/demo_attr_rows.h is the C++ twin."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AttrField:
    """One field of an attribute table as the codec loops see it."""

    name: str  # the dataclass field
    kind: str  # wire kind: i32 i64 f64 bool enum pair i32s i64s opt_f64 opt_i32
    slot: int  # fbs field id
    default: object  # the value of an absent field
    flag: str  # opt_f64: the presence field's name
    flag_slot: int  # opt_f64: the presence field's id, else -1
    enum: type | None  # kind enum: the IntEnum


@dataclass(frozen=True)
class AttrRule:
    """One constraint (schema/demo_ops.toml); attribute_rules.py interprets it."""

    check: str  # min equals length max_count distinct any_present rule
    fields: tuple[str, ...]
    value: float | None
    other: int | None  # min: the excepted value; max_count: the value counted
    ops: frozenset[str]  # empty: every op carrying the table
    text: str | None  # INVALID_ATTRIBUTES problem template ({field}, {got})
    code: str | None  # or: the error code the decoder raises (fields op, found)
    rule: str | None


@dataclass(frozen=True)
class AttrTable:
    name: str  # fbs table and union member
    tag: int  # union tag
    cls: type
    num_slots: int  # fbs fields, presence flags included
    fields: tuple[AttrField, ...]
    rules: tuple[AttrRule, ...]
