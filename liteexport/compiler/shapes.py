"""Static shape inference: each opcode's output shape, computed from its input shapes in
plain Python (the same rules torch applies).

Dynamic dimensions (-1) are tried with two different stand-in sizes; an output dimension
that comes out equal both times does not depend on them and is static.

Running the instructions on torch "meta" tensors would give the same answers, but a meta
``linear`` or ``conv2d`` goes through torch's Python decompositions, whose first use
imports torch._dynamo and sympy: seconds of export time and tens of MB of memory for
what is a few integer operations.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from bundle_format._generated.demo_traits import SHAPE_RULE
from bundle_format.program import (
    ArangeLikeAttrs,
    ArgReduceAttrs,
    AxisAttrs,
    Conv2dAttrs,
    FillAttrs,
    FlattenAttrs,
    OpCode,
    PermuteAttrs,
    Pool2dAttrs,
    ReduceAttrs,
    ResizeAttrs,
    ShapeAttrs,
    SliceAttrs,
    TopKAttrs,
)
from bundle_format.shape_arithmetic import expanded_shape, fill_sizes, output_size
from liteexport.compiler.symbolic import SymSize
from liteexport.compiler.values import Sym, TensorConst
from runtime_py.errors import InternalError

# Stand-ins for dynamic dims: large enough for kernels, divisible for reshapes.
_STAND_INS = (48, 96)

Shape = tuple[int, ...]
Shapes = Sequence["Shape | None"]
ShapeRule = Callable[[object, Shapes], Shape]


def _rule(op: OpCode) -> ShapeRule:
    """``op``'s shape rule. InternalError for an opcode without one (tests/test_op_coverage.py checks
    that every opcode has one): a bug of ours, never an unknown shape by default."""
    rule = _RULES.get(op)
    if rule is None:
        raise InternalError(f"opcode {op!r} has no shape rule (liteexport/compiler/shapes.py _RULES)")
    return rule


def infer_shape(op: OpCode, attrs: object,
                inputs: Sequence[Sym | TensorConst | None]) -> tuple[int, ...] | None:
    """The output shape of ``op`` (with -1 for dynamic dims), or None if unknown."""
    rule = _rule(op)
    known: list[Shape | None] = []
    for value in inputs:
        if value is None:
            known.append(None)
        elif isinstance(value, TensorConst):
            known.append(tuple(value.tensor.shape))
        elif value.shape is None:
            return None
        else:
            known.append(value.shape)
    dynamic = any(s is not None and -1 in s for s in known)
    results = []
    for stand_in in _STAND_INS if dynamic else _STAND_INS[:1]:
        concrete = [None if s is None else tuple(stand_in if d < 0 else d for d in s) for s in known]
        try:
            results.append(tuple(rule(attrs, concrete)))
        except (ValueError, IndexError, TypeError, ZeroDivisionError):
            return None
    if not dynamic:
        return results[0]
    first, second = results
    if len(first) != len(second):
        return None
    return tuple(a if a == b else -1 for a, b in zip(first, second, strict=True))


# Stand-ins a named dim takes in turn to find how a result dim follows it (three: two find the line,
# the third checks it is one), and the value unnamed dynamic dims take to check they do not matter.
_SYMBOL_STAND_INS = (48, 72, 96)
_UNNAMED_STAND_IN = 60


def infer_symbols(op: OpCode, attrs: object, inputs: Sequence[Sym | TensorConst | None],
                  shape: tuple[int, ...] | None) -> dict[int, SymSize]:
    """The dynamic dims of the result (-1 in ``shape``) that are ``scale * S + offset`` of one named
    dim S of the inputs (symbolic.py), by axis: the shape rule runs with each named dim at three
    stand-ins in turn, every other dynamic dim held; a result dim that follows it on a line, and
    moves with no other named or unnamed dim, is that expression."""
    rule = _rule(op)
    if shape is None or -1 not in shape:
        return {}
    sizes: list[tuple[int | SymSize, ...] | None] = []
    named: dict[str, SymSize] = {}  # one SymSize per named dim: its source
    for value in inputs:
        if value is None or isinstance(value, TensorConst):
            sizes.append(None if value is None else tuple(value.tensor.shape))
        elif value.shape is None:
            return {}
        else:
            sizes.append(tuple(value.symbols.get(i, d) for i, d in enumerate(value.shape)))
            for symbol in value.symbols.values():
                named.setdefault(symbol.dim, symbol)
    if not named:
        return {}
    held = {name: _SYMBOL_STAND_INS[0] for name in named}

    def run(values: dict[str, int], unnamed: int = _STAND_INS[0]) -> Shape | None:
        concrete = [None if s is None else tuple(d.at(values[d.dim]) if isinstance(d, SymSize) else
                                                 unnamed if d < 0 else d for d in s) for s in sizes]
        try:
            result = tuple(rule(attrs, concrete))
        except (ValueError, IndexError, TypeError, ZeroDivisionError):
            return None
        return result if len(result) == len(shape) else None

    points = {name: [run({**held, name: v}) for v in _SYMBOL_STAND_INS] for name in named}
    unnamed_moved = run(held, _UNNAMED_STAND_IN)
    if unnamed_moved is None or any(p is None for ps in points.values() for p in ps):
        return {}
    symbols: dict[int, SymSize] = {}
    for axis in (a for a, d in enumerate(shape) if d < 0):
        values = {name: [p[axis] for p in ps] for name, ps in points.items()}  # type: ignore[index]
        moving = [name for name, vs in values.items() if len(set(vs)) > 1]
        if len(moving) != 1 or unnamed_moved[axis] != values[moving[0]][0]:
            continue  # follows no named dim, several, or an unnamed one too
        line = _on_a_line(named[moving[0]], values[moving[0]])
        if line is not None:
            symbols[axis] = line
    return symbols


def _on_a_line(symbol: SymSize, values: list[int]) -> SymSize | None:
    """``scale * S + offset`` through the points (stand-in, value), or None (not affine, or constant)."""
    (x0, x1, x2), (y0, y1, y2) = _SYMBOL_STAND_INS, values
    scale, remainder = divmod(y1 - y0, x1 - x0)
    if remainder or not scale or y2 != y0 + scale * (x2 - x0):
        return None
    return replace(symbol, scale=scale, offset=y0 - scale * x0)


def _fail(message: str) -> ValueError:
    return ValueError(message)


def broadcast(a: Shape, b: Shape) -> Shape:
    """numpy/torch broadcasting of two shapes."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + a
    b = (1,) * (rank - len(b)) + b
    out = []
    for x, y in zip(a, b, strict=True):
        if x != y and x != 1 and y != 1:
            raise _fail(f"cannot broadcast {a} and {b}")
        out.append(y if x == 1 else x)
    return tuple(out)


def _first(attrs: object, xs: Shapes) -> Shape:
    assert xs[0] is not None
    return xs[0]


def _broadcast_all(attrs: object, xs: Shapes) -> Shape:
    """Every operand broadcast together (one operand: its shape; a binary op with a scalar)."""
    assert xs[0] is not None
    shape = xs[0]
    for x in xs[1:]:
        assert x is not None
        shape = broadcast(shape, x)
    return shape


def _axis_op(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, AxisAttrs) and xs[0] is not None
    rank = max(len(xs[0]), 1)
    if not -rank <= attrs.axis < rank:
        raise IndexError("axis out of range")
    return xs[0]


def matmul_shape(a: Shape, b: Shape) -> Shape:
    """torch.matmul's result shape (1-D promotion, batch broadcasting)."""
    if not a or not b:
        raise _fail("matmul needs at least 1-D operands")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise _fail("inner dimensions differ")
    batch = broadcast(a2[:-2], b2[:-2])
    out = (*batch, a2[-2], b2[-1])
    if len(b) == 1:
        out = out[:-1]
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    return out


def _matmul(attrs: object, xs: Shapes) -> Shape:
    assert xs[0] is not None and xs[1] is not None
    return matmul_shape(xs[0], xs[1])


def _linear(attrs: object, xs: Shapes) -> Shape:
    x, w = xs[0], xs[1]
    assert x is not None and w is not None
    if not x or not 1 <= len(w) <= 2 or x[-1] != w[-1]:
        raise _fail("linear shapes do not match")
    out = x[:-1] + ((w[0],) if len(w) == 2 else ())
    bias = xs[2] if len(xs) > 2 else None
    if bias is not None:
        broadcast(out, bias)
    return out


def window_out(size: int, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool) -> int:
    """Torch's output length of a sliding window (conv and pooling), as the runtime computes it."""
    out = output_size(size, kernel, stride, padding, dilation, ceil_mode)
    if out < 1:
        raise _fail("the window does not fit")
    return out


def _spatial(x: Shape) -> tuple[Shape, int, int]:
    if len(x) not in (3, 4):
        raise _fail("expected a 3-D or 4-D input")
    return x[:-2], x[-2], x[-1]


def _conv2d(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, Conv2dAttrs)
    x, w = xs[0], xs[1]
    assert x is not None and w is not None
    lead, h, wd = _spatial(x)
    if len(w) != 4 or lead[-1] != w[1] * attrs.groups or w[0] % attrs.groups:
        raise _fail("conv2d weight does not fit the input")
    oh = window_out(h, w[2], attrs.stride[0], attrs.padding[0], attrs.dilation[0], False)
    ow = window_out(wd, w[3], attrs.stride[1], attrs.padding[1], attrs.dilation[1], False)
    return (*lead[:-1], w[0], oh, ow)


def _pool2d(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, Pool2dAttrs) and xs[0] is not None
    lead, h, w = _spatial(xs[0])
    k, s, p, d = attrs.kernel, attrs.stride, attrs.padding, attrs.dilation
    if p[0] > k[0] // 2 or p[1] > k[1] // 2:
        raise _fail("padding should be at most half of the kernel")
    return (*lead, window_out(h, k[0], s[0], p[0], d[0], attrs.ceil_mode),
            window_out(w, k[1], s[1], p[1], d[1], attrs.ceil_mode))


def _adaptive_pool(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, ShapeAttrs) and xs[0] is not None
    lead, h, w = _spatial(xs[0])
    oh, ow = attrs.dims
    return (*lead, h if oh == -1 else oh, w if ow == -1 else ow)


def _resize(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, ResizeAttrs) and xs[0] is not None
    if len(xs[0]) != 4:
        raise _fail("expected a 4-D (NCHW) input")
    return (*xs[0][:2], *attrs.size)


def _transpose(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, PermuteAttrs) and xs[0] is not None
    x = xs[0]
    if sorted(attrs.perm) != list(range(len(x))):
        raise _fail("not a permutation of the axes")
    return tuple(x[p] for p in attrs.perm)


def reshape_shape(x: Shape, dims: Sequence[int]) -> Shape:
    numel = math.prod(x)
    if list(dims).count(-1) > 1:
        raise _fail("at most one -1")
    known = math.prod(d for d in dims if d != -1)
    if -1 in dims:
        if known == 0 or numel % known:
            raise _fail("shape is invalid for the input")
        return tuple(numel // known if d == -1 else d for d in dims)
    if known != numel:
        raise _fail("shape is invalid for the input")
    return tuple(dims)


def _reshape(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, ShapeAttrs) and xs[0] is not None
    return reshape_shape(xs[0], attrs.dims)


def _flatten(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, FlattenAttrs) and xs[0] is not None
    x = xs[0]
    if not x:
        return (1,)
    rank = len(x)
    if not (-rank <= attrs.start_dim < rank and -rank <= attrs.end_dim < rank):
        raise IndexError("flatten dims out of range")
    first, last = attrs.start_dim % rank, attrs.end_dim % rank
    if first > last:
        raise _fail("start_dim after end_dim")
    return x[:first] + (math.prod(x[first:last + 1]),) + x[last + 1:]


def _cat(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, AxisAttrs)
    shapes = [s for s in xs if s is not None]
    rank = len(shapes[0])
    if rank == 0 or not -rank <= attrs.axis < rank:
        raise IndexError("axis out of range")
    axis = attrs.axis % rank
    for s in shapes[1:]:
        if len(s) != rank or any(a != b for i, (a, b) in enumerate(zip(s, shapes[0], strict=True)) if i != axis):
            raise _fail("cat shapes differ")
    return shapes[0][:axis] + (sum(s[axis] for s in shapes),) + shapes[0][axis + 1:]


def _layer_norm(attrs: object, xs: Shapes) -> Shape:
    x = xs[0]
    assert x is not None
    ndim = getattr(attrs, "normalized_ndim", 0)
    if ndim < 1 or len(x) < ndim:
        raise _fail("bad normalized_ndim")
    for param in xs[1:]:
        if param is not None and param != x[len(x) - ndim:]:
            raise _fail("weight/bias shape")
    return x


def _channel_affine(attrs: object, xs: Shapes) -> Shape:
    x = xs[0]
    assert x is not None
    if len(x) < 2 or any(s is None or s != (x[1],) for s in xs[1:]):
        raise _fail("scale/shift do not match dim 1")
    return x


def _reduce(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, ReduceAttrs) and xs[0] is not None
    x = xs[0]
    rank = len(x)
    if not all(-rank <= a < rank for a in attrs.axes) or len(set(attrs.axes)) != len(attrs.axes):
        raise IndexError("reduction axes out of range")
    axes = {a % rank for a in attrs.axes} if attrs.axes else set(range(rank))
    if attrs.keepdim:
        return tuple(1 if i in axes else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in axes)


def _slice(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, SliceAttrs) and xs[0] is not None
    x = xs[0]
    if not -len(x) <= attrs.axis < len(x) or attrs.step < 1:
        raise IndexError("slice axis out of range")
    axis = attrs.axis % len(x)
    length = len(range(*slice(attrs.start, attrs.end, attrs.step).indices(x[axis])))
    return x[:axis] + (length,) + x[axis + 1:]


def _expand(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, ShapeAttrs) and xs[0] is not None
    return expanded_shape(xs[0], tuple(attrs.dims))


def _embedding(attrs: object, xs: Shapes) -> Shape:
    weight, indices = xs
    assert weight is not None and indices is not None
    if len(weight) != 2:
        raise _fail("the embedding table must be 2-D")
    return (*indices, weight[1])


def _gather(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, AxisAttrs) and xs[0] is not None and xs[1] is not None
    x, index = xs[0], xs[1]
    rank = max(len(x), 1)
    if not -rank <= attrs.axis < rank or len(index) != len(x):
        raise IndexError("gather axis or index rank")
    axis = attrs.axis % rank
    if any(i > s for d, (i, s) in enumerate(zip(index, x, strict=True)) if d != axis):
        raise _fail("index larger than the input off the axis")
    return index


def _index_select(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, AxisAttrs) and xs[0] is not None and xs[1] is not None
    x, index = xs[0], xs[1]
    if len(index) > 1:
        raise _fail("index_select takes a 1-D index")
    count = math.prod(index)
    if not x:
        return (count,)
    if not -len(x) <= attrs.axis < len(x):
        raise IndexError("axis out of range")
    axis = attrs.axis % len(x)
    return x[:axis] + (count,) + x[axis + 1:]


def _arange_like(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, ArangeLikeAttrs) and xs[0] is not None
    x = xs[0]
    if not -len(x) <= attrs.axis < len(x):
        raise IndexError("axis out of range")
    return (max(x[attrs.axis] + attrs.end_offset - attrs.start, 0),)


def _triangle(attrs: object, xs: Shapes) -> Shape:
    assert xs[0] is not None
    if len(xs[0]) < 2:
        raise _fail("triu/tril need at least 2 dims")
    return xs[0]


def _axis_of(axis: int, x: Shape) -> int:
    """``axis`` from 0 (a 0-d input has one axis)."""
    rank = max(len(x), 1)
    if not -rank <= axis < rank:
        raise IndexError("axis out of range")
    return axis % rank


def _arg_reduce(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, ArgReduceAttrs) and xs[0] is not None
    x = xs[0]
    axis = _axis_of(attrs.axis, x)
    if not x:
        return x
    if x[axis] == 0:
        raise _fail("argmax/argmin of an empty axis")
    return x[:axis] + ((1,) if attrs.keepdim else ()) + x[axis + 1:]


def _topk(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, TopKAttrs) and xs[0] is not None
    x = xs[0]
    axis = _axis_of(attrs.axis, x)
    size = x[axis] if x else 1
    if not 0 <= attrs.k <= size:
        raise _fail(f"k={attrs.k} is out of range for an axis of size {size}")
    return x[:axis] + (attrs.k,) + x[axis + 1:] if x else x


def _full(attrs: object, xs: Shapes) -> Shape:
    assert isinstance(attrs, FillAttrs) and xs[1] is not None
    return fill_sizes(attrs, tuple(xs[1]))


def _attention(attrs: object, xs: Shapes) -> Shape:
    q, k, v = xs[0], xs[1], xs[2]
    if q is None or k is None or v is None or len(q) != 4 or len(k) != 4 or len(v) != 4:
        raise _fail("attention takes 4-D q, k and v [B, H, S, D]")
    if k[1] > 0 and q[1] > 0 and q[1] % k[1]:
        raise _fail(f"{q[1]} query heads are not a multiple of {k[1]} kv heads")
    return (q[0], q[1], q[2], v[3])


# the spec's trivial shape rules (schema/demo_ops.toml `shape`); "own" rules are below
_BY_RULE: dict[str, ShapeRule] = {"same": _first, "broadcast": _broadcast_all, "axis": _axis_op, "reduce": _reduce}
# the ops whose shape rule is "own" (tests/test_op_coverage.py checks each has one here)
OWN_RULES: dict[OpCode, ShapeRule] = {
    OpCode.MATMUL: _matmul,
    OpCode.LINEAR: _linear,
    OpCode.CONV2D: _conv2d,
    OpCode.CHANNEL_AFFINE: _channel_affine,
    OpCode.LAYER_NORM: _layer_norm,
    OpCode.MAX_POOL2D: _pool2d,
    OpCode.AVG_POOL2D: _pool2d,
    OpCode.ADAPTIVE_AVG_POOL2D: _adaptive_pool,
    OpCode.TRANSPOSE: _transpose,
    OpCode.RESHAPE: _reshape,
    OpCode.FLATTEN: _flatten,
    OpCode.CAT: _cat,
    OpCode.SLICE: _slice,
    OpCode.EXPAND: _expand,
    OpCode.EMBEDDING: _embedding,
    OpCode.GATHER: _gather,
    OpCode.INDEX_SELECT: _index_select,
    OpCode.ARANGE_LIKE: _arange_like,
    OpCode.RESIZE2D: _resize,
    OpCode.TRIU: _triangle,
    OpCode.TRIL: _triangle,
    OpCode.ARGMAX: _arg_reduce,
    OpCode.ARGMIN: _arg_reduce,
    OpCode.FULL: _full,
    OpCode.TOPK: _topk,
    OpCode.ATTENTION: _attention,
}
_RULES: dict[OpCode, ShapeRule] = {
    **{op: _BY_RULE[rule] for op, rule in SHAPE_RULE.items() if rule != "own"},
    **{op: OWN_RULES[op] for op, rule in SHAPE_RULE.items() if rule == "own" and op in OWN_RULES},
}
