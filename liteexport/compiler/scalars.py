"""Compile-time evaluation of nodes over Python-level values (ints, floats, bools, strings,
None, lists): the scalar arithmetic, comparisons and list helpers TorchScript emits around
tensor code (``if self.training``, ``if bias is not None``, ``padding_mode != 'zeros'``,
``x.size(0) * 2``, ...). Each entry folds one node kind; a node whose inputs are all known
folds to a known value."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from liteexport.compiler.symbolic import SymSize

ScalarFold = Callable[..., Any]


def _div(a: Any, b: Any) -> float:
    return float(a) / float(b)


def _list_with_default(out_size: list[Any], defaults: list[Any]) -> list[Any]:
    # torch.nn.modules.utils._list_with_default: None entries take the input's size.
    if isinstance(out_size, int):
        return [out_size]
    offset = len(defaults) - len(out_size)
    return [defaults[offset + i] if v is None else v for i, v in enumerate(out_size)]


# c10::ScalarType numbers -> how a number converts to that dtype (torch's Tensor.to: toward zero to
# an integer type, nonzero to True)
_NUMBER_CASTS: dict[int, Callable[[Any], Any]] = {
    **dict.fromkeys((0, 1, 2, 3, 4), int), **dict.fromkeys((5, 6, 7, 15), float), 11: bool}


def _to(x: Any, *args: Any) -> Any:
    """aten::to of a number: a traced 0-d tensor of a size (transformers' torch_int(ceil(h / p) * p),
    prim::NumToTensor) that the walk holds as its number. The first int argument is the dtype (after
    a device, in that overload); none: a device or memory format alone, the number itself."""
    dtype = next((a for a in args if isinstance(a, int) and not isinstance(a, bool)), None)
    if dtype is None:
        return x
    if isinstance(x, SymSize):
        if _NUMBER_CASTS.get(dtype) is int:
            return x  # a size known at run time stays one, as aten::Int's
        raise TypeError(f"the size {x}, known only at run time, converted to c10::ScalarType {dtype}")
    if dtype not in _NUMBER_CASTS:
        raise TypeError(f"c10::ScalarType {dtype} is not a number type")
    return _NUMBER_CASTS[dtype](x)


SCALAR_FOLDS: dict[str, ScalarFold] = {
    # int/float/str/list addition; a traced tensor add of numbers (prim::NumToTensor's seq_length + 0)
    # keeps its alpha argument
    "aten::add": lambda a, b, alpha=1: operator.add(a, b) if alpha == 1 else a + alpha * b,
    "aten::sub": lambda a, b, alpha=1: operator.sub(a, b) if alpha == 1 else a - alpha * b,
    "aten::mul": operator.mul,
    "aten::div": _div,  # Python 3 true division
    "aten::floordiv": operator.floordiv,
    # traced tensor ops on numbers (prim::NumToTensor's sizes): Python's // rounds toward -inf, as
    # torch's floor_divide (aten::remainder already folds as %)
    "aten::floor_divide": operator.floordiv,
    "aten::remainder": operator.mod,
    "aten::pow": operator.pow,
    "aten::neg": operator.neg,
    "aten::eq": operator.eq,
    "aten::ne": operator.ne,
    "aten::lt": operator.lt,
    "aten::le": operator.le,
    "aten::gt": operator.gt,
    "aten::ge": operator.ge,
    "aten::__not__": operator.not_,
    "aten::__and__": operator.and_,
    "aten::__or__": operator.or_,
    "aten::__is__": operator.is_,
    "aten::__isnot__": operator.is_not,
    "aten::__contains__": lambda seq, item: item in seq,
    "aten::any": any,  # over a list of bools
    "aten::all": all,
    # `for i in range(start, stop, step)`: the trip count, and the i-th value
    "aten::__range_length": lambda lo, hi, step: len(range(lo, hi, step)),
    "aten::__derive_index": lambda index, start, step: start + index * step,
    "aten::Int": lambda x: x if isinstance(x, SymSize) else int(x),  # a size known at run time stays one
    "aten::Float": float,
    "aten::to": _to,
    "aten::Bool": bool,
    "aten::ScalarImplicit": lambda x: x,
    "aten::item": lambda x: x,  # of a one-element constant, read as its number by the walk
    "aten::is_nonzero": bool,
    "prim::NumToTensor": lambda x: x,  # a 0-dim tensor of a known number acts as the number
    "aten::sqrt": math.sqrt,
    "aten::floor": math.floor,
    "aten::ceil": math.ceil,
    "prim::min": min,
    "prim::max": max,
    "prim::abs": abs,
    "aten::list": list,
    "aten::copy": lambda seq: type(seq)(seq),  # list.copy() / dict.copy()
    "aten::sum": sum,  # of a number list
    "aten::slice": lambda seq, start=None, end=None, step=1: seq[start:end:step],  # of a list
    "aten::list_with_default": _list_with_default,
    "aten::format": lambda fmt, *args: fmt.format(*args),
    "aten::str": str,
}
