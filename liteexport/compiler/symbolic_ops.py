"""Lowering of nodes whose size arguments are known only at run time (symbolic.py's SymSize): where
such a size must reach the program, as few new instructions as possible carry it.

* ``view``/``reshape`` with one symbolic size: that entry becomes -1 (a -1 beside it is resolved
  at compile time when it does not depend on the named dims, as ``view(1, S, -1, 8)``'s);
* ``expand`` to a symbolic size a dim already has: -1 (keep it);
* ``x[..., a:S+c]`` of a dim that is S: the static slice ``a:c`` (c <= 0) counted from the end;
  of another dim (``position_ids[:, :S]`` of a buffer): an INDEX_SELECT of ``ARANGE_LIKE``;
* ``arange(a, S + c)``: ``ARANGE_LIKE`` of the method input the named dim S comes from;
* ``zeros``/``ones``/``full``/``new_*`` of sizes ``S + c`` (causal masks, ``torch.ones(S, S).triu(1)``):
  one ``FULL`` of a 0-d constant over sizes read from the method input S comes from;
* ``x[i, j]`` with run-time index tensors (HF's causal masks index the padding mask with an
  arange of S): one INDEX_SELECT of the flattened x.

Every other wrapped node lowers as before (the original lowering is called); a symbolic size a
lowering cannot place is reported with the node, naming the size.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from bundle_format.program import SLICE_END, ArangeLikeAttrs, AxisAttrs, BinaryAttrs, FillAttrs, OpCode
from liteexport.compiler import ops, shape_ops, typed_ops
from liteexport.compiler.dtypes import dtype_of
from liteexport.compiler.ops import Emitter, Lowering, tensor
from liteexport.compiler.scalars import SCALAR_FOLDS
from liteexport.compiler.shape_ops import axis_index, reshape_to, slice_of
from liteexport.compiler.symbolic import SymSize, has_symbolic, size_of
from liteexport.compiler.values import Sym, TensorConst, TensorValue, Unsupported

_STAND_INS = (48, 72, 96)  # values of the named dims at which a -1 beside symbolic sizes is resolved


def _arange_like(b: Emitter, start: int, end: SymSize) -> TensorValue:
    """int64 start, start + 1, ..., end - 1, read from the input ``end``'s named dim comes from."""
    if end.scale != 1 or end.source is None:
        raise Unsupported(f"a range up to {end} is not compiled (only up to S + a constant)")
    source, axis = end.source
    return b.emit(OpCode.ARANGE_LIKE, [source], ArangeLikeAttrs(axis=axis, start=start, end_offset=end.offset))


def _arange(b: Emitter, args: list[Any]) -> Any:
    """aten::arange(end, ...), (start, end, ...), (start, end, step, ...) with a symbolic end; the
    trailing 4 arguments are dtype, layout, device, pin_memory."""
    numbers, dtype = list(args[:-4]), args[-4]
    if not has_symbolic(numbers):
        return shape_ops.FACTORY_FOLDS["aten::arange"](*args)
    start, end, step = (0, numbers[0], 1) if len(numbers) == 1 else (*numbers, 1)[:3]
    if not isinstance(end, SymSize) or isinstance(start, SymSize) or step != 1:
        raise Unsupported(f"arange({', '.join(map(str, numbers))}) is not compiled: only arange(start, S + c) "
                          "with a static start and step 1 for a size S known only at run time")
    values = _arange_like(b, int(start), end)
    return values if dtype is None else b.cast(values, ops._scalar_type_number(int(dtype)))


def _full(b: Emitter, sizes: Any, value: Any, dtype: Any) -> TensorValue:
    """A FULL of ``value`` (a 0-d constant of torch.full's dtype) over ``sizes``, each static or
    ``S + c``: the sizes known only at run time are read from the method input S comes from."""
    sizes = list(sizes) if isinstance(sizes, (list, tuple)) else [sizes]
    sources: dict[str, tuple[Sym, int]] = {}
    dims, axes = [], []
    for size in sizes:
        if not isinstance(size, SymSize):
            dims.append(int(size))
            axes.append(-1)
            continue
        if size.scale != 1 or size.source is None:
            raise Unsupported(f"a tensor of size {_text(sizes)} is not compiled: a size known only at run time "
                              "must be S + a constant")
        source = sources.setdefault(size.dim, size.source)
        dims.append(size.offset)
        axes.append(source[1])
    reference = {id(s[0]): s[0] for s in sources.values()}
    if len(reference) != 1:
        raise Unsupported(f"a tensor of size {_text(sizes)} is not compiled: its sizes known only at run time "
                          "come from different inputs")
    return b.emit(OpCode.FULL, [shape_ops.fill_value(value, dtype), *reference.values()],
                  FillAttrs(dims=tuple(dims), axes=tuple(axes)))


def _factory(fill: float | None) -> Lowering:
    """aten::zeros/ones(size, dtype, ...) and full(size, value, dtype, ...) with a symbolic size."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        value, dtype = (args[1], args[2]) if fill is None else (fill, args[1])
        if not has_symbolic(args[0]):
            return shape_ops.FACTORY_FOLDS["aten::full"](args[0], value, dtype)
        return _full(b, args[0], value, dtype)
    return lower


def _new(lowering: Lowering, fill: float | None) -> Lowering:
    """aten::new_zeros/new_ones(x, size, dtype, ...) and new_full(x, size, value, dtype, ...) with a
    symbolic size: x's dtype unless one is given, as torch."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        if not has_symbolic(args[1]):
            return lowering(b, args)
        value, dtype = (args[2], args[3]) if fill is None else (fill, args[2])
        return _full(b, args[1], value, int(dtype_of(tensor(args[0]))) if dtype is None else dtype)
    return lower


def _bound(x: TensorValue, axis: int, bound: Any, default: int) -> int | SymSize:
    """A slice bound: an int, or a symbolic bound of the axis's own size S as the static offset
    from its end (``S - 1`` -> -1, ``S`` -> the end)."""
    if bound is None:
        return default
    size = size_of(x, axis)
    if isinstance(bound, SymSize) and isinstance(size, SymSize) and (bound.dim, bound.scale) == (size.dim, size.scale):
        offset = bound.offset - size.offset
        return offset if offset < 0 else SLICE_END
    return bound  # type: ignore[no-any-return]


def _slice(lowering: Lowering) -> Lowering:
    def lower(b: Emitter, args: list[Any]) -> Any:
        """aten::slice(x, dim, start, end, step) with a symbolic bound."""
        if not has_symbolic(args[2:4]):
            return lowering(b, args)
        x = tensor(args[0])
        axis = axis_index(args[1], ops.rank_of(x))
        start, end = _bound(x, axis, args[2], 0), _bound(x, axis, args[3], SLICE_END)
        step = args[4]
        if not isinstance(start, SymSize) and not isinstance(end, SymSize):
            return slice_of(b, x, axis, start, end, step)
        if isinstance(start, SymSize) or not isinstance(end, SymSize) or step != 1 or start < 0:
            raise Unsupported(f"slice [{args[2]}:{args[3]}:{step}] of a dim of size {size_of(x, axis)} is not "
                              "compiled: only [a:S + c] with a static a >= 0 and step 1 for a size S known at run time")
        # a dim of another size (a buffer of max_position_embeddings positions): the entries
        # start..S+c-1 are picked; past the end of the dim that is an index error at run time
        # (where Python slicing would stop short)
        return b.emit(OpCode.INDEX_SELECT, [x, _arange_like(b, start, end)], AxisAttrs(axis=axis))
    return lower


def _static_when_named_dims_are(x: TensorValue, dims: list[int | SymSize], value: int) -> list[int]:
    """``dims`` with every named dim at ``value``, the -1 entry resolved against x's element count then."""
    shape = []
    for axis in range(ops.rank_of(x)):
        size = size_of(x, axis)
        if size is None:
            raise Unsupported(f"a reshape to {_text(dims)} of a tensor with a dynamic dim that is not a named dim")
        shape.append(size.at(value) if isinstance(size, SymSize) else size)
    concrete = [d.at(value) if isinstance(d, SymSize) else d for d in dims]
    if -1 in concrete:
        known = math.prod(d for d in concrete if d != -1)
        concrete[concrete.index(-1)] = math.prod(shape) // known if known else -1
    return concrete


def _text(dims: list[Any]) -> str:
    return f"({', '.join(str(d) for d in dims)})"


def _reshape(lowering: Lowering) -> Lowering:
    def lower(b: Emitter, args: list[Any]) -> Any:
        """aten::reshape/view(x, sizes) with symbolic sizes: the one that stays symbolic is -1."""
        if not has_symbolic(args[1]):
            return lowering(b, args)
        x, dims = tensor(args[0]), list(args[1])
        if sum(1 for d in dims if not isinstance(d, SymSize) and d == -1) > 1:
            raise Unsupported(f"a reshape to {_text(dims)} has several -1")
        resolved = [_static_when_named_dims_are(x, dims, v) for v in _STAND_INS]
        target = [d if isinstance(d, SymSize) else
                  resolved[0][i] if all(r[i] == resolved[0][i] for r in resolved) else -1
                  for i, d in enumerate(dims)]
        run_time = [i for i, d in enumerate(target) if isinstance(d, SymSize) or d == -1]
        if len(run_time) > 1:
            raise Unsupported(f"a reshape to {_text(dims)} has {len(run_time)} sizes known only at run time; "
                              "a reshape instruction takes one (-1)")
        return reshape_to(b, x, [-1 if i in run_time else d for i, d in enumerate(target)])  # type: ignore[misc]
    return lower


def _expand(lowering: Lowering) -> Lowering:
    def lower(b: Emitter, args: list[Any]) -> Any:
        """aten::expand(x, sizes, implicit) with symbolic sizes: -1 where x's dim is that size."""
        if not has_symbolic(args[1]):
            return lowering(b, args)
        x, dims = tensor(args[0]), list(args[1])
        lead = len(dims) - ops.rank_of(x)
        sizes = []
        for i, d in enumerate(dims):
            if isinstance(d, SymSize):
                have = size_of(x, i - lead) if i >= lead else None
                if not (isinstance(have, SymSize) and have == d):
                    what = "a new dim" if have is None else f"a dim of size {have}"
                    raise Unsupported(f"expand to {_text(dims)}: broadcasting {what} to the size {d}, known only at "
                                      "run time, is not compiled")
                d = -1
            sizes.append(d)
        return lowering(b, [x, sizes, *args[2:]])
    return lower


def _index(lowering: Lowering) -> Lowering:
    def lower(b: Emitter, args: list[Any]) -> Any:
        """aten::index(x, indices) where one index tensor is known only at run time and the others are
        constant zeros (HF's ``padding_mask[batch_arange, kv_arange]`` for one sequence): the run-time
        index picks entries of x flattened, the zeros pick nothing else."""
        indices = list(args[1])
        if not any(isinstance(i, Sym) for i in indices):
            return lowering(b, args)
        x = tensor(args[0])
        shape = shape_ops.static_shape(x)
        run_time = [axis for axis, i in enumerate(indices) if isinstance(i, Sym)]
        if len(run_time) != 1 or len(indices) != len(shape) or any(
                i is None or (not isinstance(i, Sym) and bool((i.tensor != 0).any())) for i in indices):
            raise Unsupported("indexing with a tensor known only at run time is compiled only for one such index "
                              "beside constant zero indices, one per dim")
        axis = run_time[0]
        if any(d < 0 for d in shape[axis + 1:]):
            raise Unsupported("indexing: the dims after the run-time index must be static")
        index = tensor(indices[axis])
        stride = math.prod(shape[axis + 1:])
        if stride != 1:
            index = b.emit(OpCode.MUL, [index], BinaryAttrs(scalar=float(stride)))
        for zero in (i for i in indices if isinstance(i, TensorConst)):
            if zero.tensor.numel() > 1 or zero.tensor.dim() > ops.rank_of(index):
                # the result has the shape of all indices broadcast, as torch's advanced indexing
                index = b.emit(OpCode.ADD, [index, b.cast(zero, dtype_of(index))], BinaryAttrs())
        flat_index = reshape_to(b, index, [-1])
        flat = reshape_to(b, x, [-1])
        picked = b.emit(OpCode.INDEX_SELECT, [flat, flat_index], AxisAttrs(axis=0))
        return reshape_to(b, picked, shape_ops.static_shape(index))
    return lower


def _size_arithmetic(kind: str, lowering: Lowering) -> Lowering:
    """Arithmetic on a SymSize and a 0-d integer constant (a saved traced archive keeps
    ``seq_length + past_length`` as ``add(NumToTensor(size), tensor(0))``): computed as numbers, as
    the scalar folds do, so the size stays a SymSize."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        if not any(isinstance(a, SymSize) for a in args):
            return lowering(b, args)
        numbers = [a.tensor.item() if isinstance(a, TensorConst) and a.tensor.dim() == 0
                   and not a.tensor.is_floating_point() else a for a in args]
        if any(isinstance(a, (Sym, TensorConst)) for a in numbers):
            # with a tensor (a cache's length + the prompt's): the size as a 0-d int64 tensor
            return lowering(b, [size_tensor(b, a) if isinstance(a, SymSize) else a for a in args])
        return SCALAR_FOLDS[kind](*numbers)
    return lower


def size_tensor(b: Emitter, size: SymSize) -> TensorValue:
    """``S + offset`` as a 0-d int64 tensor computed at run time: the last of 0, 1, ..., S + offset
    (an ARANGE_LIKE reading S from the input it comes from)."""
    if size.scale != 1:
        raise Unsupported(f"arithmetic of the size {size}, known only at run time, with a tensor is not compiled "
                          "(only S + a constant)")
    values = _arange_like(b, 0, replace(size, offset=size.offset + 1))
    return reshape_to(b, slice_of(b, values, 0, -1, SLICE_END), [])


LOWERINGS: dict[str, Lowering] = {
    **{kind: _size_arithmetic(kind, ops.LOWERINGS[kind]) for kind in ("aten::add", "aten::sub", "aten::mul")},
    "aten::arange": _arange,
    "aten::zeros": _factory(0.0),
    "aten::ones": _factory(1.0),
    "aten::full": _factory(None),
    "aten::new_zeros": _new(shape_ops.LOWERINGS["aten::new_zeros"], 0.0),
    "aten::new_ones": _new(shape_ops.LOWERINGS["aten::new_ones"], 1.0),
    "aten::new_full": _new(shape_ops.LOWERINGS["aten::new_full"], None),
    "aten::slice": _slice(shape_ops.LOWERINGS["aten::slice"]),
    "aten::reshape": _reshape(ops.LOWERINGS["aten::reshape"]),
    "aten::view": _reshape(ops.LOWERINGS["aten::view"]),
    "aten::expand": _expand(shape_ops.LOWERINGS["aten::expand"]),
    "aten::index": _index(typed_ops.LOWERINGS["aten::index"]),
}

# Factories: nodes that take no tensor but are lowered (not folded) when a size is symbolic.
FACTORIES = frozenset({"aten::arange", "aten::zeros", "aten::ones", "aten::full"})
