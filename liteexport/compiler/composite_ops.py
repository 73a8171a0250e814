"""Ops compiled as other ATen ops: each lowering here calls the lowerings of the ops it is made of,
by their ATen names and schema arguments, so it needs no instruction, kernel or shape rule of its
own and runs on every engine the ops it is made of run on. Values match torch's, NaN included.

    isnan(x)                        x != x
    amax / amin(x, dims, keepdim)   max.dim / min.dim's values over each dim in turn
    any / all(x[, dim, keepdim])    amax / amin of (x != 0), as bool
    var / std(x, dims, ...)         sum((x - mean)^2) / (N - correction), and its sqrt
    flip(x, dims)                   index_select of each dim with its indices reversed
    log10 / log2(x)                 log(x) / ln(10), / ln(2)
    logical_xor(a, b)               (a != 0) != (b != 0)

``lowerings.py`` builds the table over the merged one (``composite_lowerings(LOWERINGS)``), so a
part's constant folding and quantized-grid handling apply as they do when the user writes it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import torch

from bundle_format.program import DType
from liteexport.compiler.dtypes import dtype_of
from liteexport.compiler.ops import Emitter, Lowering, tensor
from liteexport.compiler.shape_ops import axis_index, reshape_to, static_shape, static_size
from liteexport.compiler.values import TensorConst, TensorValue, Unsupported

__all__ = ["composite_lowerings"]


def composite_lowerings(table: Mapping[str, Lowering]) -> dict[str, Lowering]:
    """The composite lowerings, calling ``table``'s lowerings (looked up at each call, so the
    wrappers ``lowerings.py`` puts on the table apply)."""

    def call(kind: str, b: Emitter, *args: Any) -> Any:
        return table[kind](b, list(args))

    def axes_of(x: TensorValue, dims: Any) -> list[int]:
        rank = max(len(static_shape(x)), 1)
        if dims is None or dims == []:
            return list(range(len(static_shape(x))))
        listed = dims if isinstance(dims, (list, tuple)) else [dims]
        axes = [axis_index(d, rank) for d in listed]
        if len(set(axes)) != len(axes):
            raise Unsupported(f"dims {list(listed)} name a dim twice")
        return axes

    def kept_out(b: Emitter, x: TensorValue, reduced: TensorValue, axes: list[int], keepdim: bool) -> TensorValue:
        """``reduced`` (its ``axes`` of size 1) with them dropped unless ``keepdim``."""
        if keepdim or not axes:
            return reduced
        return reshape_to(b, reduced, [size for i, size in enumerate(static_shape(x)) if i not in axes])

    def truthy(b: Emitter, value: Any) -> TensorValue:
        """``value != 0`` as bool (a bool tensor as it is)."""
        x = tensor(value)
        return x if dtype_of(x) == DType.BOOL else call("aten::ne", b, x, 0)

    def extreme(largest: bool) -> Lowering:
        """amax/amin(x, dim=[], keepdim=False): a NaN is the extreme, as torch's."""
        def lower(b: Emitter, args: list[Any]) -> Any:
            x = tensor(args[0])
            axes = axes_of(x, args[1] if len(args) > 1 else None)
            keepdim = bool(args[2]) if len(args) > 2 else False
            if not static_shape(x):  # a 0-d tensor is its own extreme
                return x
            reduced = x
            for axis in axes:
                reduced = call("aten::max" if largest else "aten::min", b, reduced, axis, True)[0]
            return kept_out(b, x, reduced, axes, keepdim)
        return lower

    def truth(every: bool) -> Lowering:
        """any/all(x) and (x, dim, keepdim): whether any (every) element is nonzero; NaN is nonzero."""
        def lower(b: Emitter, args: list[Any]) -> Any:
            x = tensor(args[0])
            as_float = b.cast(truthy(b, x), DType.FLOAT32)
            dims = args[1] if len(args) > 1 else None
            reduced = extreme(not every)(b, [as_float, dims, bool(args[2]) if len(args) > 2 else False])
            return call("aten::ne", b, reduced, 0)
        return lower

    def spread(root: bool) -> Lowering:
        """var/std(x, unbiased) | (x, dims, unbiased, keepdim) | (x, dims, correction, keepdim)."""
        def lower(b: Emitter, args: list[Any]) -> Any:
            x = tensor(args[0])
            if len(args) == 2:
                dims, correction, keepdim = None, 1.0 if args[1] else 0.0, False
            else:
                dims, keepdim = args[1], bool(args[3]) if len(args) > 3 else False
                setting = args[2]
                correction = (1.0 if setting else 0.0) if isinstance(setting, bool) else \
                    1.0 if setting is None else float(setting)
            axes = axes_of(x, dims)
            count = math.prod(static_size(x, axis) for axis in axes)
            mean = call("aten::mean", b, x, axes, True, None)
            deviation = call("aten::sub", b, x, mean, 1)
            squares = call("aten::sum", b, call("aten::mul", b, deviation, deviation), axes, keepdim, None)
            # N - correction <= 0 divides by zero or less, as torch does (inf or nan)
            variance = call("aten::div", b, squares, float(count) - correction)
            return call("aten::sqrt", b, variance) if root else variance
        return lower

    def flip(b: Emitter, args: list[Any]) -> Any:
        """flip(x, dims): each dim read back to front."""
        x = tensor(args[0])
        for axis in axes_of(x, args[1]):
            size = static_size(x, axis)
            x = call("aten::index_select", b, x, axis, TensorConst(torch.arange(size - 1, -1, -1)))
        return x

    found: dict[str, Callable[[Emitter, list[Any]], Any]] = {
        "aten::isnan": lambda b, args: call("aten::ne", b, tensor(args[0]), tensor(args[0])),
        "aten::amax": extreme(True),
        "aten::amin": extreme(False),
        "aten::any": truth(False),
        "aten::all": truth(True),
        "aten::var": spread(False),
        "aten::std": spread(True),
        "aten::flip": flip,
        # log in another base: ln(x) times a constant, within an ulp of torch's own
        "aten::log10": lambda b, args: call("aten::mul", b, call("aten::log", b, tensor(args[0])), 1 / math.log(10)),
        "aten::log2": lambda b, args: call("aten::mul", b, call("aten::log", b, tensor(args[0])), 1 / math.log(2)),
        "aten::logical_xor": lambda b, args: call("aten::ne", b, truthy(b, args[0]), truthy(b, args[1])),
    }
    return found
