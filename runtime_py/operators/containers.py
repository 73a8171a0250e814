"""TorchScript lists (mutable, shared), dicts and strings: indexing, length, membership,
mutation (append/insert/pop/_set_item...), slicing and the str methods scripts use."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op, register_schema


def _index(length: int, i: int, what: str) -> int:
    if not -length <= i < length:
        raise ExecutionError(f"{what} index out of range")
    return i % length if length else i


# ---- lists -------------------------------------------------------------------------------------

@op("aten::__getitem__.t(t[](a) list, int idx) -> t(*)")
def list_getitem(items: list[Any], i: int) -> Any:
    return items[_index(len(items), i, "list")]


@op("aten::_set_item.t(t[](a!) l, int idx, t(b -> *) el) -> t[](a!)")
def list_setitem(items: list[Any], i: int, value: Any) -> list[Any]:
    items[_index(len(items), i, "list")] = value
    return items


@op("aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)")
def append(items: list[Any], value: Any) -> list[Any]:
    items.append(value)
    return items


@op("aten::pop.t(t[](a!) self, int idx=-1) -> t(*)")
def pop(items: list[Any], i: int) -> Any:
    if not items:
        raise ExecutionError("pop from empty list")
    return items.pop(_index(len(items), i, "pop"))


@op("aten::add_.t(t[](a!) self, t[] b) -> t[]")  # `l += other`
def list_iadd(items: list[Any], other: list[Any]) -> list[Any]:
    items.extend(other)
    return items


@op("aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]")
def list_slice(items: list[Any], start: int | None, end: int | None, step: int) -> list[Any]:
    if step == 0:
        raise ExecutionError("slice step cannot be zero")
    return items[start:end:step]


def _remove(items: list[Any], value: Any) -> None:
    if value not in items:
        raise ExecutionError("list.remove(x): x not in list")
    items.remove(value)


def _list_index(items: list[Any], value: Any) -> int:
    if value not in items:
        raise ExecutionError("'list.index(x)': x not in list")
    return items.index(value)


register_schema("aten::len.t(t[] a) -> int", len)
register_schema("aten::len.any(Any[] a) -> int", len)
register_schema("aten::extend.t(t[](a!) self, t[] other) -> ()", lambda items, other: items.extend(list(other)))
register_schema("aten::insert.t(t[](a!) self, int idx, t(b -> *) el) -> ()", lambda items, i, v: items.insert(i, v))
register_schema("aten::clear.t(t[](a!) self) -> ()", lambda items: items.clear())
register_schema("aten::reverse.t(t[](a!) self) -> ()", lambda items: items.reverse())
register_schema("aten::add.t(t[] a, t[] b) -> t[]", lambda a, b: list(a) + list(b))  # new list
register_schema("aten::mul.left_t(t[] l, int n) -> t[]", lambda items, n: list(items) * n)
register_schema("aten::mul.right_(int n, t[] l) -> t[]", lambda n, items: list(items) * n)
register_schema("aten::copy.t(t[](a) self) -> t[]", list)
register_schema("aten::list.t(t[] l) -> t[]", list)
register_schema("aten::sorted.int(int[](a) input) -> int[]", sorted)
register_schema("aten::sorted.float(float[](a) input) -> float[]", sorted)
register_schema("aten::sorted.str(str[](a) input) -> str[]", sorted)
register_schema("aten::sort.int(int[](a!) self, bool reverse=False) -> ()", lambda items, r: items.sort(reverse=r))
register_schema("aten::sort.float(float[](a!) self, bool reverse=False) -> ()",
                lambda items, r: items.sort(reverse=r))
register_schema("aten::sort.str(str[](a!) self, bool reverse=False) -> ()", lambda items, r: items.sort(reverse=r))
register_schema("aten::sum.int(int[] self) -> int", sum)
register_schema("aten::sum.float(float[] self) -> float", lambda items: float(sum(items)))
register_schema("aten::sum.bool(bool[] self) -> int", lambda items: int(sum(items)))
register_schema("aten::count.int(int[] self, int el) -> int", lambda items, v: items.count(v))
register_schema("aten::count.float(float[] self, float el) -> int", lambda items, v: items.count(v))
register_schema("aten::count.str(str[] self, str el) -> int", lambda items, v: items.count(v))
register_schema("aten::remove.int(int[](a!) self, int el) -> ()", _remove)
register_schema("aten::remove.float(float[](a!) self, float el) -> ()", _remove)
register_schema("aten::remove.str(str[](a!) self, str el) -> ()", _remove)
register_schema("aten::index.list_int(int[] self, int el) -> int", _list_index)
register_schema("aten::index.list_float(float[] self, float el) -> int", _list_index)
register_schema("aten::index.list_str(str[] self, str el) -> int", _list_index)
for _kind in ("bool", "int"):  # any()/all() of a list
    register_schema(f"aten::any.{_kind}({_kind}[] self) -> bool", lambda items: any(items))
    register_schema(f"aten::all.{_kind}({_kind}[] self) -> bool", lambda items: all(items))
for _kind in ("int", "str", "float"):  # `x in l`
    register_schema(f"aten::__contains__.{_kind}_list({_kind}[] l, {_kind} item) -> bool",
                    lambda items, v: v in items)
for _kind in ("int", "float", "str", "bool"):  # list equality
    register_schema(f"aten::eq.{_kind}_list({_kind}[] a, {_kind}[] b) -> bool", lambda a, b: list(a) == list(b))
    register_schema(f"aten::ne.{_kind}_list({_kind}[] a, {_kind}[] b) -> bool", lambda a, b: list(a) != list(b))


# ---- dicts (keys: str, int, float, bool) -------------------------------------------------------

def _dict_getitem(d: dict[Any, Any], key: Any) -> Any:
    if key not in d:
        raise ExecutionError(f"KeyError: {key!r}")
    return d[key]


def _dict_pop(d: dict[Any, Any], key: Any) -> Any:
    if key not in d:
        raise ExecutionError(f"KeyError: {key!r}")
    return d.pop(key)


def _dict_setitem(d: dict[Any, Any], key: Any, value: Any) -> None:
    d[key] = value


for _kt, _ov in (("str", "str"), ("int", "int"), ("float", "float"), ("bool", "bool")):
    _d = f"Dict({_kt}, t)"
    register_schema(f"aten::__getitem__.Dict_{_ov}({_d} self, {_kt} key) -> t(*)", _dict_getitem)
    register_schema(f"aten::len.Dict_{_ov}({_d} self) -> int", len)
    register_schema(f"aten::__contains__.{_ov}({_d} dict, {_kt} key) -> bool", operator.contains)
    register_schema(f"aten::_set_item.{_ov}({_d}(a!) l, {_kt}(b -> *) idx, t(c -> *) v) -> ()", _dict_setitem)
    register_schema(f"aten::keys.{_ov}({_d} self) -> {_kt}[](*)", lambda d: list(d.keys()))
    register_schema(f"aten::values.{_ov}({_d} self) -> t[](*)", lambda d: list(d.values()))
    register_schema(f"aten::items.{_ov}({_d} self) -> (({_kt}, t)[])", lambda d: list(d.items()))
    register_schema(f"aten::get.{_ov}({_d} self, {_kt} key) -> t(*)?", lambda d, k: d.get(k))
    register_schema(f"aten::get.default_{_ov}({_d} self, {_kt} key, t default_value) -> t(*)",
                    lambda d, k, default: d.get(k, default))
    register_schema(f"aten::pop.Dict_{_ov}({_d}(a!) self, {_kt} key) -> t(*)", _dict_pop)
    register_schema(f"aten::Delete.Dict_{_ov}({_d}(a!) self, {_kt} key) -> ()", _dict_pop)
    register_schema(f"aten::copy.Dict_{_ov}({_d}(a) self) -> {_d}", dict)
    register_schema(f"aten::clear.{_ov}({_d}(a!) self) -> ()", lambda d: d.clear())
    register_schema(f"aten::setdefault.{_ov}({_d}(a!) self, {_kt}(b -> *) key, t(c -> *) default_value) -> t(*)",
                    lambda d, k, default: d.setdefault(k, default))
    register_schema(f"aten::update.{_ov}({_d}(a!) self, {_d}(a!) to_add) -> ()", lambda d, other: d.update(other))
register_schema("aten::dict() -> Dict(str, Tensor)", dict)


# ---- strings -----------------------------------------------------------------------------------

@op("aten::__getitem__.str(str s, int index) -> str")
def str_getitem(s: str, i: int) -> str:
    return s[_index(len(s), i, "string")]


def _str_range(s: str, start: int, end: int) -> tuple[int, int]:
    return start, (len(s) + 1 + end if end < 0 else end)  # TorchScript's end=-1 means "to the end"


@op("aten::split.str(str self, str? separator=None, int max=-1) -> str[]")
def str_split(s: str, separator: str | None, maxsplit: int) -> list[str]:
    return s.split(separator, maxsplit)


register_schema("aten::len.str(str s) -> int", len)
register_schema("aten::add.str(str a, str b) -> str", operator.add)
register_schema("aten::slice.str(str string, int? start=None, int? end=None, int step=1) -> str",
                lambda s, start, end, step: s[start:end:step])
register_schema("aten::join(str self, str[] values) -> str", lambda sep, values: sep.join(values))
register_schema("aten::list(str t) -> str[]", list)
register_schema("aten::lower(str self) -> str", str.lower)
register_schema("aten::upper(str self) -> str", str.upper)
register_schema("aten::capitalize(str self) -> str", str.capitalize)
for _name in ("isupper", "islower", "isdigit", "isalpha", "isspace"):
    register_schema(f"aten::{_name}(str self) -> bool", getattr(str, _name))
register_schema('aten::strip(str self, str chars=" \\n\\t\\f\\v") -> str', str.strip)
register_schema('aten::lstrip(str self, str chars=" \\n\\t\\f\\v") -> str', str.lstrip)
register_schema('aten::rstrip(str self, str chars=" \\n\\t\\f\\v") -> str', str.rstrip)
register_schema("aten::replace(str self, str old, str new, int max=-1) -> str", str.replace)
register_schema("aten::splitlines(str self, bool keepends=False) -> str[]", str.splitlines)
register_schema("aten::zfill(str self, int width) -> str", str.zfill)


def _justify(method: Callable[[str, int, str], str]) -> Callable[[str, int, str], str]:
    def impl(s: str, width: int, fillchar: str) -> str:
        if len(fillchar) != 1:
            raise ExecutionError(f"the fill character must be exactly one character long, got {fillchar!r}")
        return method(s, width, fillchar)

    return impl


def _ord(s: str) -> int:
    if len(s) != 1:
        raise ExecutionError(f"ord() expected a character, but string of length {len(s)} found")
    return ord(s)


register_schema('aten::ljust(str self, int width, str fillchar=" ") -> str', _justify(str.ljust))
register_schema('aten::rjust(str self, int width, str fillchar=" ") -> str', _justify(str.rjust))
register_schema("aten::startswith(str self, str substr, int start=0, int end=-1) -> bool",
                lambda s, sub, start, end: s.startswith(sub, *_str_range(s, start, end)))
register_schema("aten::endswith(str self, str substr, int start=0, int end=-1) -> bool",
                lambda s, sub, start, end: s.endswith(sub, *_str_range(s, start, end)))
register_schema("aten::find(str self, str substr, int start=0, int end=-1) -> int",
                lambda s, sub, start, end: s.find(sub, *_str_range(s, start, end)))
register_schema("aten::rfind(str self, str substr, int start=0, int end=-1) -> int",
                lambda s, sub, start, end: s.rfind(sub, *_str_range(s, start, end)))
register_schema("aten::count(str self, str substr, int start=0, int end=-1) -> int",
                lambda s, sub, start, end: s.count(sub, *_str_range(s, start, end)))
register_schema("aten::ord(str string) -> int", _ord)
register_schema("aten::chr(int i) -> str", chr)
