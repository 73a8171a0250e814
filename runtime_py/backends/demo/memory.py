"""What each instruction of a compiled program may allocate, known from its inputs' shapes before
it runs: the run-time memory budget (``runtime_py.load(..., max_memory=...)``, ``--max-memory``)
is checked against it, so a hostile program never allocates past the budget (issue 18: a 17.8 KB
bundle broadcasting to 4.25 GB).

A bound is the bytes of the result (float32) plus the kernel's own temporaries, from the shapes of
the arrays it reads; an op whose result is never larger than its largest input (elementwise on one
input, reductions, layout ops, slices) is bounded by that input. Shapes that do not fit give 0:
the kernel itself then refuses them with its own message.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bundle_format._generated.demo_traits import MEMORY_RULE
from bundle_format.program import (
    ArangeLikeAttrs,
    AxisAttrs,
    Conv2dAttrs,
    FillAttrs,
    OpCode,
    Pool2dAttrs,
    ResizeAttrs,
    ShapeAttrs,
)
from bundle_format.shape_arithmetic import fill_sizes
from runtime_py.backends.demo.rounding import TEMPORARIES
from runtime_py.errors import InternalError

Bound = Callable[[Sequence[object]], int]  # the kernel's arguments -> bytes it may allocate
_ITEM = 4  # float32


def _shape(value: object) -> tuple[int, ...]:
    return value.shape if isinstance(value, np.ndarray) else ()


def _bytes(shape: Sequence[int]) -> int:
    return _ITEM * math.prod(shape)


def _largest_input(args: Sequence[object]) -> int:
    return max((a.nbytes for a in args if isinstance(a, np.ndarray)), default=0)


def _itemsize(args: Sequence[object]) -> int:
    """The widest element of the arguments (int64 operands give 8-byte results)."""
    return max((a.itemsize for a in args if isinstance(a, np.ndarray)), default=_ITEM)


def _broadcast(args: Sequence[object]) -> int:
    try:
        return math.prod(np.broadcast_shapes(*[_shape(a) for a in args])) * max(_ITEM, _itemsize(args))
    except ValueError:
        return 0


def _embedding(args: Sequence[object]) -> int:
    table, indices = _shape(args[0]), args[1]
    if len(table) != 2 or not isinstance(indices, np.ndarray) or not isinstance(args[0], np.ndarray):
        return 0
    return indices.size * table[1] * args[0].itemsize


def _widest(args: Sequence[object]) -> int:
    """A result with the input's element count in up to 8-byte elements (casts, cumsum to int64)."""
    return 8 * max((a.size for a in args if isinstance(a, np.ndarray)), default=0)


def _nbytes(value: object) -> int:
    return value.nbytes if isinstance(value, np.ndarray) else 0


def _attention(args: Sequence[object]) -> int:
    """The scores and their weights (S x L per head, float32) and the result."""
    q, k, v = (_shape(a) for a in args[:3])
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        return 0
    return 4 * q[0] * q[1] * q[2] * (2 * k[2] + v[3])


def _gather(args: Sequence[object]) -> int:
    x, index = args[0], args[1]
    if not isinstance(x, np.ndarray) or not isinstance(index, np.ndarray):
        return 0
    return index.size * x.itemsize


def _index_select(attrs: AxisAttrs) -> Bound:
    def bound(args: Sequence[object]) -> int:
        x, index = args[0], args[1]
        if not isinstance(x, np.ndarray) or not isinstance(index, np.ndarray) or not x.ndim \
                or not -x.ndim <= attrs.axis < x.ndim:
            return 0
        return int(x.nbytes // max(x.shape[attrs.axis], 1) * index.size)

    return bound


def _arange_like(attrs: ArangeLikeAttrs) -> Bound:
    """int64 values up to the reference's size plus end_offset (the reference's values are not read;
    an end before the start is the kernel's error)."""
    def bound(args: Sequence[object]) -> int:
        x = _shape(args[0])
        if not -len(x) <= attrs.axis < len(x):
            return 0
        return 8 * max(x[attrs.axis] + attrs.end_offset - attrs.start, 0)

    return bound


def _full(attrs: FillAttrs) -> Bound:
    """The result: the value's element repeated over the sizes (bad sizes are the kernel's error)."""
    def bound(args: Sequence[object]) -> int:
        value = args[0]
        try:
            sizes = fill_sizes(attrs, _shape(args[1]))
        except ValueError:
            return 0
        return math.prod(sizes) * (value.itemsize if isinstance(value, np.ndarray) else _ITEM)

    return bound


def _matmul(args: Sequence[object]) -> int:
    a, b = _shape(args[0]), _shape(args[1])
    if not a or not b:
        return 0
    rows = a[-2:-1] if len(a) > 1 else ()
    cols = b[-1:] if len(b) > 1 else ()
    try:
        batch = np.broadcast_shapes(a[:-2], b[:-2])
    except ValueError:
        return 0
    return _bytes((*batch, *rows, *cols))


def _linear(args: Sequence[object]) -> int:
    x, w = _shape(args[0]), _shape(args[1])
    return _bytes((*x[:-1], w[0])) if x and len(w) == 2 else 0


def _window_out(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil: bool = False) -> int:
    span = size + 2 * padding - dilation * (kernel - 1) - 1
    if span < 0 or stride <= 0:
        return 0
    return (-(-span // stride) if ceil else span // stride) + 1


def _conv2d(attrs: Conv2dAttrs) -> Bound:
    def bound(args: Sequence[object]) -> int:
        x, w = _shape(args[0]), _shape(args[1])
        if len(x) not in (3, 4) or len(w) != 4:
            return 0
        batch, (channels, height, width) = x[:-3], x[-3:]
        out_h = _window_out(height, w[2], attrs.stride[0], attrs.padding[0], attrs.dilation[0])
        out_w = _window_out(width, w[3], attrs.stride[1], attrs.padding[1], attrs.dilation[1])
        out = _bytes((*batch, w[0], out_h, out_w))
        # im2col's column matrix (the direct depthwise and 1x1 paths need less) and the padded input
        columns = _bytes((*batch, channels * w[2] * w[3], out_h * out_w))
        padded = _bytes((*batch, channels, height + 2 * attrs.padding[0], width + 2 * attrs.padding[1]))
        return out + columns + padded

    return bound


def _pool2d(attrs: Pool2dAttrs) -> Bound:
    def bound(args: Sequence[object]) -> int:
        x = _shape(args[0])
        if len(x) < 2:
            return 0
        out_h = _window_out(x[-2], attrs.kernel[0], attrs.stride[0], attrs.padding[0], attrs.dilation[0],
                            attrs.ceil_mode)
        out_w = _window_out(x[-1], attrs.kernel[1], attrs.stride[1], attrs.padding[1], attrs.dilation[1],
                            attrs.ceil_mode)
        padded = _bytes((*x[:-2], x[-2] + 2 * attrs.padding[0], x[-1] + 2 * attrs.padding[1]))
        return _bytes((*x[:-2], out_h, out_w)) + padded

    return bound


def _adaptive_pool(attrs: ShapeAttrs) -> Bound:
    return lambda args: _bytes((*_shape(args[0])[:-2], *attrs.dims)) + _largest_input(args)


def _resize2d(attrs: ResizeAttrs) -> Bound:
    """The result, larger than the input when upsampling; bilinear's kernel (resize.py) also holds
    up to 4 arrays the width's pass makes ([N, C, H, out_w]) and 4 of the height's pass."""
    def bound(args: Sequence[object]) -> int:
        x = _shape(args[0])
        if len(x) != 4:
            return 0
        out = _bytes((*x[:2], *attrs.size))
        return 4 * (out + _bytes((*x[:3], attrs.size[1]))) if attrs.bilinear else out

    return bound


def _expand(attrs: ShapeAttrs) -> Bound:
    def bound(args: Sequence[object]) -> int:
        x = _shape(args[0])
        lead = len(attrs.dims) - len(x)
        if lead < 0:
            return 0
        return _bytes([x[i - lead] if d == -1 and i >= lead else max(d, 0) for i, d in enumerate(attrs.dims)])

    return bound


def _cat(args: Sequence[object]) -> int:
    return sum(a.nbytes for a in args if isinstance(a, np.ndarray))


def _rounding(args: Sequence[object]) -> int:
    """The broadcast result and the float formulas' temporaries (rounding.py), each as large."""
    return (1 + TEMPORARIES) * _broadcast(args)


def _topk(args: Sequence[object]) -> int:
    """The full int64 sort order, its rebased copy and the k picked."""
    return 3 * _widest(args)


# an op's bound from its instruction's attributes: the attribute class it reads (None: it reads
# none) and the bound's maker
_Rule = tuple[type | None, Callable[[Any], Bound]]


def _fixed(bound: Bound) -> _Rule:
    return None, lambda attrs: bound


# the spec's memory rules (schema/demo_ops.toml `memory`) but "own": ops whose result is never
# larger than their largest input (elementwise on one input, reductions, layout ops, slices) take
# largest_input
_BY_RULE: dict[str, _Rule] = {"broadcast": _fixed(_broadcast), "rounding": _fixed(_rounding),
                              "largest_input": _fixed(_largest_input), "widest": _fixed(_widest)}
# the ops whose memory rule is "own", each with its bound here (tests/test_op_coverage.py)
OWN_BOUNDS: dict[OpCode, _Rule] = {
    OpCode.MATMUL: _fixed(_matmul),
    OpCode.LINEAR: _fixed(_linear),
    OpCode.CONV2D: (Conv2dAttrs, _conv2d),
    OpCode.MAX_POOL2D: (Pool2dAttrs, _pool2d),
    OpCode.AVG_POOL2D: (Pool2dAttrs, _pool2d),
    OpCode.ADAPTIVE_AVG_POOL2D: (ShapeAttrs, _adaptive_pool),
    OpCode.EXPAND: (ShapeAttrs, _expand),
    OpCode.CAT: _fixed(_cat),
    OpCode.EMBEDDING: _fixed(_embedding),
    OpCode.TOPK: _fixed(_topk),
    OpCode.GATHER: _fixed(_gather),
    OpCode.INDEX_SELECT: (AxisAttrs, _index_select),
    OpCode.ARANGE_LIKE: (ArangeLikeAttrs, _arange_like),
    OpCode.FULL: (FillAttrs, _full),
    OpCode.RESIZE2D: (ResizeAttrs, _resize2d),
    # in place: what the call's journal saves to undo the write (runtime_py/backends/demo/state.py)
    OpCode.INDEX_COPY: _fixed(lambda args: _nbytes(args[2])),
    OpCode.STATE_WRITE: _fixed(lambda args: _nbytes(args[0])),
    OpCode.ATTENTION: _fixed(_attention),
}
# every opcode, so a new one raises (output_bound) until the spec gives it a memory rule
_BOUNDS: dict[OpCode, _Rule] = {
    **{op: _BY_RULE[rule] for op, rule in MEMORY_RULE.items() if rule != "own"},
    **{op: OWN_BOUNDS[op] for op, rule in MEMORY_RULE.items() if rule == "own" and op in OWN_BOUNDS},
}


def output_bound(op: OpCode, attrs: object) -> Bound:
    """The bound of an instruction of ``op`` carrying ``attrs`` (checked against its op already).

    InternalError for an opcode without a bound here, or attributes of another class: a bug of
    ours, never a bound guessed for an op this table does not know."""
    rule = _BOUNDS.get(op)
    if rule is None:
        raise InternalError(f"opcode {op!r} has no memory bound (runtime_py/backends/demo/memory.py _BOUNDS)")
    attrs_class, make = rule
    if attrs_class is not None and not isinstance(attrs, attrs_class):
        raise InternalError(f"the memory bound of {op.name} reads {attrs_class.__name__}, "
                            f"got {type(attrs).__name__}")
    return make(attrs)


def owned_bytes(value: object) -> int:
    """The bytes ``value`` keeps alive: its base array's when it is a view (a view keeps all of its
    base), none for arrays over the bundle's own bytes (weights) or that numpy does not own."""
    if not isinstance(value, np.ndarray):
        return 0
    while isinstance(value.base, np.ndarray):
        value = value.base
    return value.nbytes if value.flags.owndata else 0


def live_bytes(values: Sequence[object]) -> int:
    """The bytes ``values`` keep alive, each buffer counted once (views of one base share it)."""
    roots: dict[int, int] = {}
    for value in values:
        if isinstance(value, np.ndarray):
            while isinstance(value.base, np.ndarray):
                value = value.base
            if value.flags.owndata:
                roots[id(value)] = value.nbytes
    return sum(roots.values())
