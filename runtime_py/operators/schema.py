"""Parse TorchScript operator schemas as torch prints them.

``aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`` becomes a
`Schema` with the name, the overload, each argument's type and default, and how many
values the operator pushes (-1: as many as the returned tuple holds, ``-> ...``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# defaults written as identifiers in schemas -> their value at run time
_NAMED_DEFAULTS: dict[str, Any] = {
    "None": None, "True": True, "False": False,
    "contiguous_format": 0, "preserve_format": 1, "channels_last": 2, "channels_last_3d": 3,
    "Mean": 1, "Sum": 2, "inf": float("inf"), "-inf": float("-inf"), "nan": float("nan"),
}
_FIXED_LIST = re.compile(r"^(?:SymInt|int|float|bool)\[(\d+)\]\??$")


@dataclass(frozen=True)
class Argument:
    name: str
    type: str  # without alias annotations: "Tensor", "int[2]", "Tensor?[]", "Dict(str, t)"
    has_default: bool
    default: Any
    kwarg_only: bool


@dataclass(frozen=True)
class Schema:
    text: str
    name: str  # "aten::add"
    overload: str  # "Tensor" or ""
    arguments: tuple[Argument, ...]
    varargs: bool  # "..." after the arguments: the caller pushes the count on top
    returns: tuple[str, ...]  # types of the pushed values; () for "-> ()"
    varret: bool  # "-> ...": pushes every element of the returned tuple

    @property
    def key(self) -> str:
        return f"{self.name}.{self.overload}" if self.overload else self.name


def _split_top(text: str) -> list[str]:
    """Split at commas outside brackets and quotes."""
    parts, depth, quote, start = [], 0, "", 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    tail = text[start:].strip()
    if tail:
        parts.append(tail)
    return parts


def _closing(text: str, open_at: int) -> int:
    depth, quote = 0, ""
    for i in range(open_at, len(text)):
        ch = text[i]
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced parentheses in schema {text!r}")


def _strip_alias(type_str: str) -> str:
    """``Tensor(a!)`` -> ``Tensor``, ``t[](a)`` -> ``t[]``; keeps ``Dict(str, t)``."""
    return re.sub(r"\((?:[a-z]!?|[a-z]!? -> \*|\*|[a-z]\|[a-z]|[a-z] -> \*)\)", "", type_str)


def parse_default(type_str: str, text: str) -> Any:
    """The run-time value of a default as written in a schema (``[0, 0]``, ``1.``, ``"none"``...)."""
    text = text.strip()
    if text in _NAMED_DEFAULTS:
        value = _NAMED_DEFAULTS[text]
    elif text.startswith(("'", '"')):
        value = ast.literal_eval(text)
    elif text.startswith("["):
        value = [parse_default(type_str.split("[")[0], item) for item in _split_top(text[1:-1])]
    elif re.fullmatch(r"-?\d+", text):
        value = int(text)
    else:
        value = float(text)  # "1.", "1e-05", "0.01"
    fixed = _FIXED_LIST.match(type_str)
    if fixed and isinstance(value, int | float) and not isinstance(value, bool):
        value = [value] * int(fixed.group(1))  # "int[2] padding=0" means [0, 0]
    if type_str.startswith("float") and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    return value


def _parse_argument(text: str, kwarg_only: bool) -> Argument:
    decl, eq, default = text.partition("=")
    type_str, _, name = decl.strip().rpartition(" ")
    type_str = _strip_alias(type_str.strip())
    return Argument(name, type_str, bool(eq), parse_default(type_str, default) if eq else None, kwarg_only)


def parse_schema(text: str) -> Schema:
    """Parse one schema string; raises ValueError on a malformed one."""
    open_at = text.index("(")
    close_at = _closing(text, open_at)
    full_name = text[:open_at]
    name, _, overload = full_name.partition(".")
    if "::" not in name:
        raise ValueError(f"schema {text!r} has no namespace")
    arguments: list[Argument] = []
    varargs = kwarg_only = False
    for part in _split_top(text[open_at + 1:close_at]):
        if part == "*":
            kwarg_only = True
        elif part == "...":
            varargs = True
        else:
            arguments.append(_parse_argument(part, kwarg_only))
    arrow = text[close_at + 1:].strip()
    if not arrow.startswith("->"):
        raise ValueError(f"schema {text!r} has no '->'")
    ret = arrow[2:].strip()
    varret = ret == "..."
    if varret:
        returns: tuple[str, ...] = ()
    elif ret.startswith("(") and _closing(ret, 0) == len(ret) - 1:
        returns = tuple(_strip_alias(r.rsplit(" ", 1)[0] if " " in r and not r.startswith(("(", "Dict"))
                                     else r) for r in _split_top(ret[1:-1]))
    else:
        returns = (_strip_alias(ret),)
    return Schema(text, name, overload, tuple(arguments), varargs, returns, varret)


# --- arguments against their declared types -----------------------------------------------------

def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | complex) and not isinstance(value, bool)


# a schema's base type -> whether a value has it; types missing here (t, Any, Storage...) take any value
_BASE_TYPES: dict[str, Any] = {
    "Tensor": lambda v: type(v).__name__ in ("ndarray", "QuantizedTensor"),
    "int": _is_int, "SymInt": _is_int, "ScalarType": _is_int, "Layout": _is_int, "MemoryFormat": _is_int,
    "float": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "Device": lambda v: isinstance(v, str),
    "Scalar": lambda v: isinstance(v, int | float | complex),
    "Generator": lambda v: v is None,
}
_LIST_TYPE = re.compile(r"^(.*)\[(\d*)\]$")


def has_type(type_str: str, value: Any) -> bool:
    """Whether ``value`` is of schema type ``type_str`` (``Tensor?``, ``int[2]``, ``Dict(str, t)``...),
    as far as runtime_py's values tell: type variables (``t``) and types it does not know match anything."""
    if type_str.endswith("?"):
        return value is None or has_type(type_str[:-1], value)
    listed = _LIST_TYPE.match(type_str)
    if listed:
        element, size = listed.groups()
        if size and has_type(element, value) and element in ("int", "SymInt", "float", "bool"):
            return True  # int[2] takes one int for both, as torch's schema matcher does
        return isinstance(value, list | tuple) and all(has_type(element, v) for v in value)
    if type_str.startswith("Dict("):
        return isinstance(value, dict)
    check = _BASE_TYPES.get(type_str)
    return True if check is None else bool(check(value))


def describe_value(value: Any) -> str:
    """``Tensor``, ``int``, ``List[...]``...: a value's type in the words of a schema."""
    if type(value).__name__ == "ndarray":
        return "Tensor"
    if isinstance(value, list | tuple):
        return f"{type(value).__name__} of {', '.join(sorted({describe_value(v) for v in value})) or 'nothing'}"
    return "None" if value is None else type(value).__name__


def argument_mismatch(schema: Schema, args: Sequence[Any]) -> str | None:
    """Why ``args`` (every argument, defaults filled in) do not fit ``schema``, or None when they do.
    The bytecode that pushes an operator's arguments is the bundle's: nobody type-checked it."""
    declared = schema.arguments
    if not schema.varargs and len(args) != len(declared):
        return f"called with {len(args)} arguments, its schema takes {len(declared)}"
    for argument, value in zip(declared, args, strict=False):
        if not has_type(argument.type, value):
            return f"argument '{argument.name}' must be {argument.type}, got {describe_value(value)}"
    return None
