"""The attribute constraints of schema/demo_ops.toml, checked by one loop.

Each attribute table carries its constraints as data (``AttrRule`` rows, generated into
``_generated/demo_attrs.py``): a check (min, equals, length, max_count, distinct, any_present)
on a field, optionally only for some opcodes, with the problem text it reports; the few rules
that span fields or operands are named and implemented once here (and once in
native_format/decoder/demo_program.h, which loops over the same rows). A rule with an error ``code``
is the decoder's (a FormatError of its own); the others give INVALID_ATTRIBUTES's problem.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from bundle_format.attr_rows import AttrRule
from bundle_format.program import ATTRIBUTE_TABLES, DType

_RULES_OF = {table.cls: table.rules for table in ATTRIBUTE_TABLES}

# values for a text's placeholders when the rule is broken, None when it holds


def _padding_at_most_half_kernel(attrs: Any, n_inputs: int) -> dict[str, object] | None:
    padding, kernel = attrs.padding, attrs.kernel  # torch's rule, on the undilated kernel
    if padding[0] > kernel[0] // 2 or padding[1] > kernel[1] // 2:
        return {"padding": padding, "kernel": kernel}
    return None


def _scalar_iff_one_input(attrs: Any, n_inputs: int) -> dict[str, object] | None:
    return {} if (n_inputs == 1) != (attrs.scalar is not None) else None


def _permutation(attrs: Any, n_inputs: int) -> dict[str, object] | None:
    perm = tuple(attrs.perm)
    return None if sorted(perm) == list(range(len(perm))) else {"got": perm, "last": len(perm) - 1}


def _known_dtype(attrs: Any, n_inputs: int) -> dict[str, object] | None:
    return None if attrs.dtype in _DTYPE_CODES else {"got": attrs.dtype}


_DTYPE_CODES = frozenset(int(d) for d in DType)


def _quantize_range(attrs: Any, n_inputs: int) -> dict[str, object] | None:
    if math.isfinite(attrs.scale) and attrs.scale > 0 and attrs.quant_min <= attrs.zero_point <= attrs.quant_max:
        return None
    return {"scale": attrs.scale, "zero_point": attrs.zero_point, "quant_min": attrs.quant_min,
            "quant_max": attrs.quant_max}


def _fill_sizes(attrs: Any, n_inputs: int) -> dict[str, object] | None:
    dims, axes = tuple(attrs.dims), tuple(attrs.axes)
    if len(dims) == len(axes) and all(d >= 0 for d, a in zip(dims, axes, strict=True) if a == -1):
        return None
    return {"dims": dims, "axes": axes}


NAMED_RULES: dict[str, Callable[[Any, int], dict[str, object] | None]] = {
    "padding_at_most_half_kernel": _padding_at_most_half_kernel,
    "scalar_iff_one_input": _scalar_iff_one_input,
    "permutation": _permutation,
    "known_dtype": _known_dtype,
    "quantize_range": _quantize_range,
    "fill_sizes": _fill_sizes,
}


def _items(value: object) -> tuple[Any, ...]:
    return tuple(value) if isinstance(value, tuple) else (value,)


def _broken(rule: AttrRule, attrs: Any, n_inputs: int) -> dict[str, object] | None:
    """The placeholders of ``rule``'s text when ``attrs`` break it, else None."""
    if rule.check == "rule":
        return NAMED_RULES[str(rule.rule)](attrs, n_inputs)
    if rule.check == "any_present":
        return {} if all(getattr(attrs, name) is None for name in rule.fields) else None
    name = rule.fields[0]
    value = getattr(attrs, name)
    if value is None:  # an absent optional field obeys every rule
        return None
    items, bound, other = _items(value), float(rule.value or 0), rule.other
    if rule.check == "min":
        broken = any(x < bound and x != other for x in items)
    elif rule.check == "equals":
        broken = any(x != bound for x in items)
    elif rule.check == "length":
        broken = len(items) != bound
    elif rule.check == "max_count":
        broken = items.count(other) > bound
    else:  # distinct
        broken = len(set(items)) != len(items)
    return {"field": name, "got": value, "found": len(items)} if broken else None


def _first(op_name: str, attrs: object, n_inputs: int, coded: bool) -> tuple[AttrRule, dict[str, object]] | None:
    for rule in _RULES_OF.get(type(attrs), ()):
        if (rule.code is not None) != coded or (rule.ops and op_name not in rule.ops):
            continue
        values = _broken(rule, attrs, n_inputs)
        if values is not None:
            return rule, values
    return None


def attribute_problem(op_name: str, attrs: object, n_inputs: int) -> str | None:
    """The INVALID_ATTRIBUTES problem of ``attrs`` on an instruction of ``op_name`` with
    ``n_inputs`` operands (the first rule broken, in spec order), None when they are valid."""
    found = _first(op_name, attrs, n_inputs, coded=False)
    return None if found is None else str(found[0].text).format_map(found[1])


def coded_problem(op_name: str, attrs: object) -> tuple[str, dict[str, object], str] | None:
    """(code, fields, field name) of the first decoder rule ``attrs`` break, None when none is."""
    found = _first(op_name, attrs, 0, coded=True)
    if found is None:
        return None
    rule, values = found
    return str(rule.code), {"op": op_name, "found": values["found"]}, rule.fields[0]
