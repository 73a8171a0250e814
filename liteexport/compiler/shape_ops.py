"""Lowering of indexing, splitting and shape-changing nodes, and of tensor factories (see
ops.py for the conventions).

Most of this is compile-time work over static shapes: squeeze/unsqueeze become RESHAPE,
chunk/split/select/narrow become SLICEs, roll and constant padding become SLICEs and a CAT,
and zeros/ones/full/arange become constants. Only a dimension a node actually needs must be
static; the others may stay dynamic.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

from bundle_format.program import (
    SLICE_END,
    AxisAttrs,
    BinaryAttrs,
    FlattenAttrs,
    OpCode,
    PermuteAttrs,
    ShapeAttrs,
    SliceAttrs,
)
from liteexport.compiler.dtypes import dtype_of
from liteexport.compiler.ops import (
    _FLOAT32_SCALAR_TYPE,
    SHAPES_HINT,
    Emitter,
    Lowering,
    is_number,
    rank_of,
    shape_of,
    tensor,
)
from liteexport.compiler.symbolic import SymSize, size_of
from liteexport.compiler.values import Sym, TensorConst, TensorValue, Unsupported

# c10::ScalarType numbers TorchScript passes as dtype, for the factories.
_DTYPES = {3: torch.int32, 4: torch.int64, 6: torch.float32, 7: torch.float64, 11: torch.bool}


# --- helpers -------------------------------------------------------------------------------------

def static_shape(x: TensorValue) -> tuple[int, ...]:
    shape = shape_of(x)
    if shape is None:
        raise Unsupported(f"the input's rank is not known; {SHAPES_HINT}")
    return shape


def axis_index(dim: Any, rank: int) -> int:
    """``dim`` as an index 0..rank-1 (negative counts from the end)."""
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise Unsupported("the dim must be an int known at compile time")
    if not -rank <= dim < rank:
        raise Unsupported(f"dim {dim} is out of range for rank {rank}")
    return dim % rank


def static_size(x: TensorValue, axis: int) -> int:
    size = static_shape(x)[axis]
    if size < 0:
        raise Unsupported(f"dimension {axis} is dynamic and its size is needed; {SHAPES_HINT}")
    return size


def reshape_to(b: Emitter, x: TensorValue, shape: Sequence[int]) -> TensorValue:
    """``x`` reshaped to ``shape`` (-1: a dynamic size, allowed once). A reshape of a reshape
    reads the first one's input (unsqueeze then squeeze is no instruction)."""
    shape = tuple(shape)
    if shape == shape_of(x):
        return x
    while isinstance(x, Sym) and x.producer is not None and x.producer.op in (OpCode.RESHAPE, OpCode.FLATTEN):
        source = x.producer.inputs[0]
        assert source is not None
        x = source
        if shape == shape_of(x):
            return x
    if shape.count(-1) > 1:
        return _unit_dims_to(b, x, shape)
    return b.emit(OpCode.RESHAPE, [x], ShapeAttrs(dims=shape))


def _unit_dims_to(b: Emitter, x: TensorValue, shape: tuple[int, ...]) -> TensorValue:
    """``x`` reshaped to ``shape`` with several dynamic dims, which a RESHAPE (one -1) cannot say:
    only size-1 dims may come or go (squeeze, unsqueeze of a [S, S] mask). Each size-1 dim of x is
    merged into a neighbour (FLATTEN), then the result's are added in front (EXPAND) and moved into
    place (TRANSPOSE)."""
    source = static_shape(x)
    if [d for d in source if d != 1] != [d for d in shape if d != 1]:
        raise Unsupported(f"reshaping {source} to {shape}: several dynamic dims; {SHAPES_HINT}")
    for axis in reversed([a for a, d in enumerate(source) if d == 1]):
        rank = len(static_shape(x))
        first = axis if axis + 1 < rank else axis - 1
        x = b.emit(OpCode.FLATTEN, [x], FlattenAttrs(start_dim=first, end_dim=first + 1))
    ones = [a for a, d in enumerate(shape) if d == 1]
    if not ones:
        return x
    x = b.emit(OpCode.EXPAND, [x], ShapeAttrs(dims=(1,) * len(ones) + (-1,) * (len(shape) - len(ones))))
    rest = iter(range(len(ones), len(shape)))
    perm = [ones.index(a) if a in ones else next(rest) for a in range(len(shape))]
    return x if perm == sorted(perm) else b.emit(OpCode.TRANSPOSE, [x], PermuteAttrs(perm=tuple(perm)))


def slice_of(b: Emitter, x: TensorValue, axis: int, start: int, end: int, step: int = 1) -> TensorValue:
    """``x[..., start:end:step, ...]``: no instruction when it is all of a static axis."""
    size = static_shape(x)[axis]
    if step < 1:
        raise Unsupported(f"slice step must be positive, got {step}")
    if size >= 0 and slice(start, end, step).indices(size) == (0, size, 1):
        return x
    return b.emit(OpCode.SLICE, [x], SliceAttrs(axis=axis, start=start, end=end, step=step))


def cat(b: Emitter, parts: list[TensorValue], axis: int) -> TensorValue:
    return parts[0] if len(parts) == 1 else b.emit(OpCode.CAT, parts, AxisAttrs(axis=axis))


def _int(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        known = f", not the size {value} known only at run time" if isinstance(value, SymSize) else ""
        raise Unsupported(f"{what} must be an int known at compile time{known}")
    return value


# --- squeeze, unsqueeze, select, slice ------------------------------------------------------------

def _squeeze(b: Emitter, args: list[Any]) -> Any:
    """aten::squeeze(x), squeeze(x, dim), squeeze(x, dims): drops size-1 dims."""
    x = tensor(args[0])
    shape = static_shape(x)
    if len(args) == 1:
        if -1 in shape:
            raise Unsupported(f"squeeze() of a dynamic dim is not known to drop it or not; {SHAPES_HINT}")
        axes = {i for i, d in enumerate(shape) if d == 1}
    else:
        dims = args[1] if isinstance(args[1], list) else [args[1]]
        rank = max(len(shape), 1)
        axes = {axis_index(d, rank) for d in dims}
        if any(shape and shape[a] < 0 for a in axes):
            raise Unsupported(f"squeeze of a dynamic dim; {SHAPES_HINT}")
        axes = {a for a in axes if shape and shape[a] == 1}
    return reshape_to(b, x, [d for i, d in enumerate(shape) if i not in axes])


def _unsqueeze(b: Emitter, args: list[Any]) -> Any:
    x = tensor(args[0])
    shape = static_shape(x)
    axis = axis_index(args[1], len(shape) + 1)
    return reshape_to(b, x, [*shape[:axis], 1, *shape[axis:]])


def _unflatten(b: Emitter, args: list[Any]) -> Any:
    """aten::unflatten(x, dim, sizes): dim split into sizes (one may be -1)."""
    x = tensor(args[0])
    shape = static_shape(x)
    axis = axis_index(args[1], len(shape))
    sizes = [_int(s, "the sizes") for s in args[2]]
    if -1 in sizes:
        known = math.prod(s for s in sizes if s != -1)
        size = static_size(x, axis)
        if known == 0 or size % known:
            raise Unsupported(f"sizes {sizes} do not split dim {axis} of size {size}")
        sizes = [size // known if s == -1 else s for s in sizes]
    return reshape_to(b, x, [*shape[:axis], *sizes, *shape[axis + 1:]])


def _select(b: Emitter, args: list[Any]) -> Any:
    """aten::select(x, dim, index): x[..., index, ...] without that dim."""
    x = tensor(args[0])
    shape = static_shape(x)
    axis = axis_index(args[1], len(shape))
    index = _int(args[2], "the index")
    if shape[axis] >= 0:
        size = shape[axis]
        if not -size <= index < size:
            raise Unsupported(f"index {index} is out of range for dim {axis} of size {size}")
        part = slice_of(b, x, axis, index % size, index % size + 1)
    else:  # a named dim: an index every size its bounds allow has (h[:, 0], h[:, -1]), as a slice from either end
        symbol = size_of(x, axis)
        least = symbol.least() if isinstance(symbol, SymSize) else None
        if least is None:
            static_size(x, axis)  # raises: the size is not known at all
        assert least is not None
        if not -least <= index < least:
            raise Unsupported(f"index {index} of dim {axis} (of size {symbol}, at least {least}) is out of range for "
                              "some sizes the dim's bounds allow")
        part = slice_of(b, x, axis, index, SLICE_END if index == -1 else index + 1)
    return reshape_to(b, part, shape[:axis] + shape[axis + 1:])


def _slice(b: Emitter, args: list[Any]) -> Any:
    """aten::slice(x, dim, start, end, step)."""
    x = tensor(args[0])
    axis = axis_index(args[1], rank_of(x))
    start = 0 if args[2] is None else _int(args[2], "the start")
    end = SLICE_END if args[3] is None else min(_int(args[3], "the end"), SLICE_END)
    return slice_of(b, x, axis, start, end, _int(args[4], "the step"))


def _narrow(b: Emitter, args: list[Any]) -> Any:
    x = tensor(args[0])
    axis = axis_index(args[1], rank_of(x))
    start, length = _int(args[2], "the start"), _int(args[3], "the length")
    if start < 0:
        start += static_size(x, axis)
    return slice_of(b, x, axis, start, start + length)


# --- splitting and joining --------------------------------------------------------------------

def _pieces(b: Emitter, x: TensorValue, axis: int, sizes: list[int]) -> list[TensorValue]:
    out, start = [], 0
    for size in sizes:
        out.append(slice_of(b, x, axis, start, start + size))
        start += size
    return out


def _chunk(b: Emitter, args: list[Any]) -> Any:
    """aten::chunk(x, chunks, dim): pieces of ceil(size / chunks), the last one smaller."""
    x = tensor(args[0])
    axis = axis_index(args[2], rank_of(x))
    size, chunks = static_size(x, axis), _int(args[1], "chunks")
    if chunks < 1:
        raise Unsupported("chunks must be positive")
    step = max(math.ceil(size / chunks), 1)
    return _pieces(b, x, axis, [min(step, size - s) for s in range(0, size, step)] or [0])


def _split(b: Emitter, args: list[Any]) -> Any:
    """aten::split(x, split_size | sizes, dim) and split_with_sizes."""
    x = tensor(args[0])
    axis = axis_index(args[2], rank_of(x))
    size = static_size(x, axis)
    if isinstance(args[1], list):
        sizes = [_int(s, "split sizes") for s in args[1]]
        if sum(sizes) != size:
            raise Unsupported(f"split sizes {sizes} do not add up to {size}")
    else:
        step = _int(args[1], "the split size")
        if step < 1:
            raise Unsupported("the split size must be positive")
        sizes = [min(step, size - s) for s in range(0, size, step)] or [0]
    return _pieces(b, x, axis, sizes)


def _unbind(b: Emitter, args: list[Any]) -> Any:
    x = tensor(args[0])
    axis = axis_index(args[1], rank_of(x))
    return [_select(b, [x, axis, i]) for i in range(static_size(x, axis))]


def _stack(b: Emitter, args: list[Any]) -> Any:
    parts = [tensor(v) for v in args[0]]
    if not parts:
        raise Unsupported("stack of no tensors")
    axis = axis_index(args[1], rank_of(parts[0]) + 1)
    return cat(b, [_unsqueeze(b, [p, axis]) for p in parts], axis)


def _roll(b: Emitter, args: list[Any]) -> Any:
    """aten::roll(x, shifts, dims): per dim, the last `shift` entries move to the front."""
    x = tensor(args[0])
    shifts = args[1] if isinstance(args[1], list) else [args[1]]
    dims = args[2] if isinstance(args[2], list) else [args[2]]
    if not dims or len(dims) != len(shifts):
        raise Unsupported("roll needs one dim per shift (a roll of the flattened tensor is not compiled)")
    rank = rank_of(x)
    for shift, dim in zip(shifts, dims, strict=True):
        axis = axis_index(dim, rank)
        size = static_size(x, axis)
        moved = _int(shift, "the shift") % size if size else 0
        if moved:
            x = cat(b, [slice_of(b, x, axis, size - moved, size), slice_of(b, x, axis, 0, size - moved)], axis)
    return x


def _constant_pad(b: Emitter, args: list[Any]) -> Any:
    """aten::constant_pad_nd(x, pad, value) and aten::pad(x, pad, 'constant', value): constant
    blocks concatenated around x (negative pads crop)."""
    x = tensor(args[0])
    pad = [_int(p, "the padding") for p in args[1]]
    if len(args) > 3:
        if args[2] in _EDGE_MODES:
            return _edge_pad(b, x, pad, args[2])
        if args[2] != "constant":
            raise Unsupported(f"padding mode {args[2]!r} is not compiled (only 'constant', 'reflect' and 'replicate')")
        value = args[3]
    else:
        value = args[2] if len(args) > 2 else 0.0
    value = 0.0 if value is None else value
    if not is_number(value):
        raise Unsupported("the padding value must be a number")
    for axis, before, after in _pad_axes(x, pad):
        if before < 0 or after < 0:
            size = static_size(x, axis)
            x = slice_of(b, x, axis, max(-before, 0), size - max(-after, 0))
        block = list(static_shape(x))
        if (before > 0 or after > 0) and -1 in block:
            raise Unsupported(f"padding a tensor with dynamic dims; {SHAPES_HINT}")
        parts = [x]
        if before > 0:
            parts.insert(0, TensorConst(torch.full([*block[:axis], before, *block[axis + 1:]], float(value))))
        if after > 0:
            parts.append(TensorConst(torch.full([*block[:axis], after, *block[axis + 1:]], float(value))))
        x = cat(b, parts, axis)
    return x


def _pad_axes(x: TensorValue, pad: list[int]) -> list[tuple[int, int, int]]:
    """torch's pad list as (axis, before, after), last dim first (Unsupported when it does not fit x)."""
    rank = len(static_shape(x))
    if len(pad) % 2 or len(pad) // 2 > rank:
        raise Unsupported(f"padding {pad} does not fit rank {rank}")
    return [(rank - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(len(pad) // 2)]


_EDGE_MODES = ("reflect", "replicate")


def _edge_pad(b: Emitter, x: TensorValue, pad: list[int], mode: str) -> TensorValue:
    """Reflect or replicate padding of the last ``len(pad) // 2`` dims, as torch pads them: each
    pad is single-element slices of x's edge (mirrored without the edge itself, or the edge
    repeated) concatenated around it, so every engine runs it with slice and cat."""
    for axis, before, after in _pad_axes(x, pad):
        if before < 0 or after < 0:
            raise Unsupported(f"{mode} padding by a negative amount ({pad}) is not compiled")
        if not before and not after:
            continue
        size = static_size(x, axis)
        if size < 0:
            raise Unsupported(f"{mode} padding a dim of dynamic size; {SHAPES_HINT}")
        if mode == "reflect" and max(before, after) >= size:
            raise Unsupported(f"reflect padding {max(before, after)} must be less than the dim's size {size}")
        if mode == "reflect":
            head = [1 + k for k in range(before)][::-1]  # x[before], ..., x[1]
            tail = [size - 2 - k for k in range(after)]  # x[size-2], ..., x[size-1-after]
        else:
            head, tail = [0] * before, [size - 1] * after
        parts = [slice_of(b, x, axis, k, k + 1) for k in head] + [x] + \
            [slice_of(b, x, axis, k, k + 1) for k in tail]
        x = cat(b, parts, axis)
    return x


def _edge_pad_op(mode: str) -> Callable[[Emitter, list[Any]], Any]:
    """aten::reflection_padNd / replication_padNd(x, padding)."""
    return lambda b, args: _edge_pad(b, tensor(args[0]), [_int(p, "the padding") for p in args[1]], mode)


# --- broadcasting and factories -----------------------------------------------------------------

def expand_to(b: Emitter, x: TensorValue, dims: list[int]) -> TensorValue:
    shape = static_shape(x)
    lead = len(dims) - len(shape)
    if lead < 0:
        raise Unsupported(f"cannot expand shape {shape} to {dims}")
    if all(d == -1 or d == shape[i - lead] for i, d in enumerate(dims) if i >= lead) and lead == 0:
        return x
    if any(d < 0 for d in dims[:lead]):
        raise Unsupported(f"expand to a dynamic size {dims}; {SHAPES_HINT}")
    return b.emit(OpCode.EXPAND, [x], ShapeAttrs(dims=tuple(dims)))


def _expand(b: Emitter, args: list[Any]) -> Any:
    return expand_to(b, tensor(args[0]), [_int(d, "expand sizes") for d in args[1]])


def _expand_as(b: Emitter, args: list[Any]) -> Any:
    return expand_to(b, tensor(args[0]), list(static_shape(tensor(args[1]))))


def _reshape_as(b: Emitter, args: list[Any]) -> Any:
    """aten::reshape_as/view_as(x, other): the reshape to other's (static) shape."""
    dims = tuple(static_shape(tensor(args[1])))
    return b.emit(OpCode.RESHAPE, [tensor(args[0])], ShapeAttrs(dims=dims))


def _dtype(dtype: Any, default: torch.dtype = torch.float32) -> torch.dtype:
    if dtype is None:
        return default
    if dtype not in _DTYPES:
        raise Unsupported(f"dtype {dtype} is not compiled")
    return _DTYPES[dtype]


def _fill(shape: Any, value: Any, dtype: Any) -> TensorConst:
    sizes = [_int(s, "the size") for s in (shape if isinstance(shape, list) else [shape])]
    if any(s < 0 for s in sizes):
        raise Unsupported(f"the size {sizes} is not static; {SHAPES_HINT}")
    default = torch.float32 if isinstance(value, float) or dtype == _FLOAT32_SCALAR_TYPE else \
        torch.bool if isinstance(value, bool) else torch.int64
    return TensorConst(torch.full(sizes, value, dtype=_dtype(dtype, default)))


def fill_value(value: Any, dtype: Any) -> TensorConst:
    """The 0-d constant a factory fills with, in the dtype torch.full would give (symbolic_ops' FULL)."""
    return _fill([], value, dtype)


def _like(value: float | None) -> Lowering:
    """aten::zeros_like/ones_like(x, dtype, ...) and full_like(x, fill, dtype, ...)."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        x = tensor(args[0])
        fill, dtype = (args[1], args[2]) if value is None else (value, args[1])
        # without a dtype, torch's *_like keeps x's (an int64 position tensor gives int64 zeros)
        dtype = int(dtype_of(x)) if dtype is None else dtype
        shape = static_shape(x)
        if -1 not in shape:
            return _fill(list(shape), fill, dtype)
        # a shape known only at run time (T5's relative positions over S): the fill broadcast to x's
        # shape by a WHERE whose branches are both the fill (x == x only gives the shape, NaN or not)
        constant = _fill([], fill, dtype)
        return b.emit(OpCode.WHERE, [b.emit(OpCode.EQ, [x, x], BinaryAttrs()), constant, constant], None)
    return lower


def _new(value: float | None) -> Lowering:
    """aten::new_zeros/new_ones(x, size, dtype, ...) and new_full(x, size, fill, dtype, ...)."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        x = tensor(args[0])
        fill, dtype = (args[2], args[3]) if value is None else (value, args[2])
        return _fill(args[1], fill, int(dtype_of(x)) if dtype is None else dtype)
    return lower


def _arange(*args: Any) -> TensorConst:
    """aten::arange(end, ...), arange(start, end, ...), arange(start, end, step, ...): the
    trailing 4 arguments are dtype, layout, device, pin_memory."""
    numbers, dtype = list(args[:-4]), args[-4]
    if not all(is_number(n) for n in numbers):
        raise Unsupported("arange bounds must be known at compile time")
    floating = any(isinstance(n, float) for n in numbers)
    return TensorConst(torch.arange(*numbers, dtype=_dtype(dtype, torch.float32 if floating else torch.int64)))


def _tensor_of(data: Any, dtype: Any = None, *rest: Any) -> TensorConst:
    """aten::tensor(data, dtype, device, requires_grad): torch.tensor of a compile-time value
    (a float32 tensor from floats, int64 from ints, as torch infers)."""
    try:
        default = torch.tensor(data).dtype
        if default == torch.float64:
            default = torch.float32
        return TensorConst(torch.tensor(data, dtype=_dtype(dtype, default)))
    except (TypeError, ValueError, RuntimeError) as exc:
        raise Unsupported(f"cannot build the tensor at compile time: {exc}") from exc


Fold = Callable[..., Any]

# Factories take no tensor: the walk evaluates them with the scalar folds.
FACTORY_FOLDS: dict[str, Fold] = {
    "aten::zeros": lambda size, dtype=None, *rest: _fill(size, 0.0, dtype),
    "aten::ones": lambda size, dtype=None, *rest: _fill(size, 1.0, dtype),
    "aten::full": lambda size, value, dtype=None, *rest: _fill(size, value, dtype),
    "aten::arange": _arange,
    "aten::tensor": _tensor_of,
}

LOWERINGS: dict[str, Lowering] = {
    "aten::squeeze": _squeeze,
    "aten::unsqueeze": _unsqueeze,
    "aten::unflatten": _unflatten,
    "aten::select": _select,
    "aten::slice": _slice,
    "aten::narrow": _narrow,
    "aten::chunk": _chunk,
    "aten::unsafe_chunk": _chunk,
    "aten::split": _split,
    "aten::unsafe_split": _split,
    "aten::split_with_sizes": _split,
    "aten::unbind": _unbind,
    "aten::stack": _stack,
    "aten::roll": _roll,
    "aten::constant_pad_nd": _constant_pad,
    "aten::pad": _constant_pad,
    **{f"aten::reflection_pad{n}d": _edge_pad_op("reflect") for n in (1, 2, 3)},
    **{f"aten::replication_pad{n}d": _edge_pad_op("replicate") for n in (1, 2, 3)},
    "aten::expand": _expand,
    "aten::expand_as": _expand_as,
    "aten::reshape_as": _reshape_as,
    "aten::view_as": _reshape_as,
    "aten::zeros_like": _like(0.0),
    "aten::ones_like": _like(1.0),
    "aten::full_like": _like(None),
    "aten::new_zeros": _new(0.0),
    "aten::new_ones": _new(1.0),
    "aten::new_full": _new(None),
}
