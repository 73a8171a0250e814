"""TorchScript's Python-level number ops (int/float/Scalar arithmetic, comparisons, math),
conversions between numbers and tensors (Int/Float/Bool/item), str()/format(), and the
prim:: helpers (min/max, TupleUnpack, unchecked_cast, grad-mode queries)."""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import INT64_MIN, op, register_schema, wrap_int64
from runtime_py.operators.tensors import scalar_value

# overload -> (argument list, result type when the operator keeps the operands' type)
_BINARY_OVERLOADS = {
    "int": ("int a, int b", "int"), "float": ("float a, float b", "float"),
    "int_float": ("int a, float b", "float"), "float_int": ("float a, int b", "float"),
    "": ("Scalar a, Scalar b", "Scalar"),
}


def _key(name: str, overload: str) -> str:
    return f"{name}.{overload}" if overload else name


def _int_div(a: int, b: int) -> int:
    if b == 0:
        raise ExecutionError("ZeroDivisionError: integer division by zero")
    return a // b


def _c_remainder(a: int, b: int) -> int:
    """C's ``a % b`` (truncating: the sign of ``a``)."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _int_mod(a: int, b: int) -> int:
    """torch's int remainder, ``(a % b + b) % b`` in C, where the sum wraps around int64: not
    Python's ``a % b`` when ``b`` is near the int64 limits (``1 % INT64_MAX`` is -1)."""
    if b == 0:
        raise ExecutionError("ZeroDivisionError: integer modulo by zero")
    return _c_remainder(wrap_int64(_c_remainder(a, b) + b), b)


def _true_div(a: Any, b: Any) -> float:
    if b == 0:
        raise ExecutionError("ZeroDivisionError: division by zero")
    return a / b


def _floordiv(a: Any, b: Any) -> Any:
    return _int_div(a, b) if isinstance(a, int) and isinstance(b, int) else math.floor(_true_div(a, b)) * 1.0


def _mod(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int):
        return _int_mod(a, b)
    if b == 0:
        return math.nan
    return a - b * math.floor(a / b)


def _pow(a: Any, b: Any) -> float:
    """torch computes number powers in doubles (C's pow), ints included: ``2 ** 64`` is 1.8e19 and
    ``10 ** 2**40`` is inf, in O(1), where Python's exact int power would never end."""
    if a == 0 and b < 0:
        raise ExecutionError("ZeroDivisionError: 0.0 cannot be raised to a negative power")
    if isinstance(a, int) and isinstance(b, int):
        with np.errstate(over="ignore"):
            return float(np.power(np.float64(a), np.float64(b)))
    return float(a ** b)


def _shift_count(b: int) -> int:
    return b & 63  # what x86's shift instructions do with torch's (undefined) count outside 0..63


def _float_to_int(value: float) -> int:
    """``int(x)``: truncation; a value outside int64 (inf and nan included) gives INT64_MIN, as
    torch's static_cast does on x86."""
    if not math.isfinite(value) or not -9.223372036854775808e18 <= value < 9.223372036854775808e18:
        return INT64_MIN
    return int(value)


def _rounded_to_int(fn: Callable[[float], int]) -> Callable[[float], int]:
    """math.floor/ceil of a float, refusing what int64 cannot hold with torch's message."""
    def impl(value: float) -> int:
        if not math.isfinite(value) or not -9.223372036854775808e18 <= value < 9.223372036854775808e18:
            raise ExecutionError(f"Cannot convert float {value:f} to integer")
        return fn(value)

    return impl


# (name, function, overloads, fixed result type or None to keep the operands')
_ARITHMETIC: list[tuple[str, Callable[[Any, Any], Any], tuple[str, ...], str | None]] = [
    ("add", operator.add, ("int", "float", "int_float", "float_int", ""), None),
    ("sub", operator.sub, ("int", "float", "int_float", "float_int", ""), None),
    ("mul", operator.mul, ("int", "float", "int_float", "float_int", ""), None),
    ("div", _true_div, ("int", "float", ""), "float"),
    ("floordiv", _floordiv, ("int", "float", "int_float", "float_int", ""), None),
    ("remainder", _mod, ("int", "float", "int_float", "float_int", ""), None),
    ("pow", _pow, ("int", "float", "int_float", "float_int"), "float"),
    ("eq", operator.eq, ("int", "float", "int_float", "float_int", ""), "bool"),
    ("ne", operator.ne, ("int", "float", "int_float", "float_int", ""), "bool"),
    ("lt", operator.lt, ("int", "float", "int_float", "float_int", ""), "bool"),
    ("le", operator.le, ("int", "float", "int_float", "float_int", ""), "bool"),
    ("gt", operator.gt, ("int", "float", "int_float", "float_int", ""), "bool"),
    ("ge", operator.ge, ("int", "float", "int_float", "float_int", ""), "bool"),
]
for _name, _fn, _overloads, _ret in _ARITHMETIC:
    for _ov in _overloads:
        _args, _kept = _BINARY_OVERLOADS[_ov]
        register_schema(f"aten::{_key(_name, _ov)}({_args}) -> {_ret or _kept}", _fn)

register_schema("aten::pow.Scalar_Scalar(Scalar a, Scalar b) -> float", _pow)
register_schema("aten::pow.int_to_int(int a, int b) -> int", _pow)  # torch pushes a double, despite "-> int"
register_schema("aten::mathremainder.int(int a, int b) -> float", lambda a, b: math.remainder(a, b))
register_schema("aten::mathremainder.float(float a, float b) -> float", math.remainder)
register_schema("aten::divmod.int(int x, int y) -> (int, int)", lambda a, b: (_int_div(a, b), _int_mod(a, b)))
register_schema("aten::divmod.float(float x, float y) -> (float, float)",
                lambda a, b: (_floordiv(a, b), _mod(a, b)))

# comparisons of other types
for _name, _fn in (("eq", operator.eq), ("ne", operator.ne), ("lt", operator.lt), ("le", operator.le),
                   ("gt", operator.gt), ("ge", operator.ge)):
    register_schema(f"aten::{_name}.str(str a, str b) -> bool", _fn)
register_schema("aten::eq.bool(bool a, bool b) -> bool", operator.eq)
register_schema("aten::ne.bool(bool a, bool b) -> bool", operator.ne)
register_schema("aten::eq.device(Device a, Device b) -> bool", operator.eq)
register_schema("aten::ne.device(Device a, Device b) -> bool", operator.ne)

# int bit operations and bool logic
for _name, _fn in (("__and__", operator.and_), ("__or__", operator.or_), ("__xor__", operator.xor)):
    register_schema(f"aten::{_name}.int(int a, int b) -> int", _fn)
    register_schema(f"aten::{_name}.bool(bool a, bool b) -> bool", _fn)
register_schema("aten::__lshift__.int(int a, int b) -> int", lambda a, b: a << _shift_count(b))
register_schema("aten::__rshift__.int(int a, int b) -> int", lambda a, b: a >> _shift_count(b))
register_schema("aten::__not__(bool self) -> bool", operator.not_)
register_schema("aten::__is__(t1 self, t2 obj) -> bool", operator.is_)
register_schema("aten::__isnot__(t1 self, t2 obj) -> bool", operator.is_not)

# unary number ops
register_schema("aten::neg.int(int a) -> int", operator.neg)
register_schema("aten::neg.float(float a) -> float", operator.neg)
register_schema("aten::neg.Scalar(Scalar a) -> Scalar", operator.neg)
register_schema("prim::abs.int(int a) -> int", abs)
register_schema("prim::abs.float(float a) -> float", abs)
register_schema("prim::abs.Scalar(Scalar a) -> Scalar", abs)
register_schema("aten::floor.int(int a) -> int", lambda a: a)
register_schema("aten::floor.float(float a) -> int", _rounded_to_int(math.floor))
register_schema("aten::floor.Scalar(Scalar a) -> Scalar",
                lambda a: a if isinstance(a, int) else _rounded_to_int(math.floor)(a))
register_schema("aten::ceil.int(int a) -> int", lambda a: a)
register_schema("aten::ceil.float(float a) -> int", _rounded_to_int(math.ceil))
register_schema("aten::ceil.Scalar(Scalar a) -> Scalar",
                lambda a: a if isinstance(a, int) else _rounded_to_int(math.ceil)(a))
register_schema("aten::round.int(int a) -> float", float)
register_schema("aten::round.float(float a) -> float", lambda a: float(np.round(a)))  # half to even, like torch


def _float_math(fn: Callable[[float], float]) -> Callable[[Any], float]:
    def impl(a: Any) -> float:
        try:
            return float(fn(a))
        except (ValueError, OverflowError):
            return float(np.asarray(fn(np.float64(a))))  # nan/inf as C's math library gives them

    return impl


# math.* on numbers
for _name, _fn in (("sqrt", math.sqrt), ("log", math.log), ("exp", math.exp), ("log10", math.log10),
                   ("log1p", math.log1p), ("sin", math.sin), ("cos", math.cos), ("tan", math.tan),
                   ("tanh", math.tanh), ("atan", math.atan), ("erf", math.erf), ("fabs", math.fabs)):
    _np = {"sqrt": np.sqrt, "log": np.log, "exp": np.exp, "log10": np.log10, "log1p": np.log1p}.get(_name)
    _impl = _float_math(_np if _np is not None else _fn)
    register_schema(f"aten::{_name}.int(int a) -> float", _impl)
    register_schema(f"aten::{_name}.float(float a) -> float", _impl)
    register_schema(f"aten::{_name}.Scalar(Scalar a) -> Scalar", _impl)
register_schema("aten::isnan.float(float a) -> bool", math.isnan)
register_schema("aten::isinf.float(float a) -> bool", math.isinf)

# prim::min/max of two numbers or of a list
for _name, _fn in (("min", min), ("max", max)):
    for _ov, (_args, _ret) in _BINARY_OVERLOADS.items():
        register_schema(f"prim::{_key(_name, _ov)}({_args}) -> {_ret}", _fn)
    register_schema(f"prim::{_name}.self_int(int[] self) -> int", _fn)
    register_schema(f"prim::{_name}.self_float(float[] self) -> float", _fn)
    register_schema(f"prim::{_name}.int_list(int[] l, int[] r) -> int[]", lambda a, b, f=_fn: list(f(a, b)))


# ---- numbers <-> tensors -----------------------------------------------------------------------

def _tensor_number(kind: Callable[[Any], Any]) -> Callable[[np.ndarray], Any]:
    def impl(x: np.ndarray) -> Any:
        value = scalar_value(x)
        if isinstance(value, complex) and kind is not bool:
            raise ExecutionError(f"a complex tensor has no {'float' if kind is float else 'int'} value")
        return kind(value)

    return impl


def _to_int(value: Any) -> int:
    return _float_to_int(value) if isinstance(value, float) else int(value)


def _scalar_to_int(value: Any) -> int:
    """``int(Scalar)``: torch converts a float Scalar through a checked C int (32 bits)."""
    if isinstance(value, float) and not -2147483648.0 <= value <= 2147483647.0:  # nan too
        raise ExecutionError("value cannot be converted to type int without overflow")
    return int(value)


register_schema("aten::Int.Tensor(Tensor a) -> int", _tensor_number(_to_int))
register_schema("aten::Float.Tensor(Tensor a) -> float", _tensor_number(float))
register_schema("aten::Bool.Tensor(Tensor a) -> bool", _tensor_number(bool))
register_schema("aten::IntImplicit(Tensor a) -> int", _tensor_number(_to_int))
register_schema("aten::FloatImplicit(Tensor a) -> float", _tensor_number(float))
register_schema("aten::ScalarImplicit(Tensor a) -> Scalar", scalar_value)
register_schema("aten::item(Tensor self) -> Scalar", scalar_value)
register_schema("aten::Int.float(float a) -> int", _float_to_int)
register_schema("aten::Int.Scalar(Scalar a) -> int", _scalar_to_int)
register_schema("aten::Int.bool(bool a) -> int", int)
register_schema("aten::Float.Scalar(Scalar a) -> float", float)
register_schema("aten::Float.int(int a) -> float", float)
register_schema("aten::Float.bool(bool a) -> float", float)
register_schema("aten::Bool.int(int a) -> bool", bool)
register_schema("aten::Bool.float(float a) -> bool", bool)


@op("aten::Int.str(str a) -> int")
def int_of_str(s: str) -> int:
    try:
        return int(s)
    except ValueError as exc:
        raise ExecutionError(f"invalid literal for int(): '{s}'") from exc


@op("aten::Float.str(str a) -> float")
def float_of_str(s: str) -> float:
    try:
        return float(s)
    except ValueError as exc:
        raise ExecutionError(f"could not convert string to float: '{s}'") from exc


# ---- str() and format() ------------------------------------------------------------------------

def format_float(value: float) -> str:
    """TorchScript's float printing: 17 significant digits, ``1.`` for integral values."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.17g}"
    if text.lstrip("-").isdigit():
        text += "."
    return text


def _format_tensor(x: np.ndarray) -> str:
    return np.array2string(x, separator=", ")


def format_value(value: Any) -> str:
    """``str(value)`` as TorchScript prints it (strings inside containers are not quoted)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        return format_float(value)
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(format_value(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{format_value(k)}: {format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, np.ndarray):
        return _format_tensor(value)
    return str(value)


register_schema("aten::str(t elem) -> str", format_value)


@op("aten::format(str self, ...) -> str")  # "{}" placeholders filled in order
def format_string(template: str, *args: Any) -> str:
    parts = template.split("{}")
    if len(parts) - 1 > len(args):
        raise ExecutionError(f"too few arguments for format string: {template!r}")
    out = [parts[0]]
    for value, part in zip(args, parts[1:], strict=False):
        out += [format_value(value), part]
    return "".join(out)


@op("aten::warn(str message, int stacklevel=2) -> ()")
def warn(message: str, stacklevel: int) -> None:
    warnings.warn(message, UserWarning, stacklevel=2)


@op("prim::RaiseException(str msg, str? cls=None) -> ()")
def raise_exception(message: str, cls: str | None) -> None:
    raise ExecutionError(f"{cls}: {message}" if cls else message)


@op("prim::Print(...) -> ()")
def print_values(*values: Any) -> None:
    print(" ".join(format_value(v) for v in values))


# ---- prim helpers ------------------------------------------------------------------------------
register_schema("prim::unchecked_cast(t x) -> t", lambda x: x)  # type refinement, no run-time work
register_schema("prim::TupleUnpack(Any tup) -> ...", tuple)  # pushes every element
register_schema("prim::Uninitialized() -> Any", lambda: None)
register_schema("aten::is_grad_enabled() -> bool", lambda: False)  # runtime_py runs in inference mode
register_schema("aten::is_autocast_enabled() -> bool", lambda: False)
register_schema("aten::__range_length(int lo, int hi, int step) -> int",
                lambda lo, hi, step: _range_length(lo, hi, step))
register_schema("aten::__derive_index(int index, int start, int step) -> int",
                lambda index, start, step: start + index * step)


def _range_length(lo: int, hi: int, step: int) -> int:
    if step == 0:
        raise ExecutionError("range() arg 3 must not be zero")
    return len(range(lo, hi, step))
