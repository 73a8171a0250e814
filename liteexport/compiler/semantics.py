"""What each opcode computes, written with torch: the compiler's own use of the IR.

The compiler needs the meaning of an instruction twice: to infer static shapes (run on
"meta" tensors, which carry shapes and no data) and to fold instructions whose inputs are
all compile-time constants. One table serves both.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from bundle_format._generated.demo_traits import ORACLE, SHAPE_RULE
from bundle_format.program import (
    OP_SPECS,
    Activation,
    ArangeLikeAttrs,
    ArgReduceAttrs,
    AttentionAttrs,
    AxisAttrs,
    BinaryAttrs,
    CastAttrs,
    ClampAttrs,
    Conv2dAttrs,
    DiagonalAttrs,
    DType,
    FillAttrs,
    FlattenAttrs,
    FusedAttrs,
    GeluAttrs,
    LayerNormAttrs,
    OpCode,
    PermuteAttrs,
    Pool2dAttrs,
    QuantizeAttrs,
    ReduceAttrs,
    ResizeAttrs,
    ShapeAttrs,
    SliceAttrs,
    TopKAttrs,
)
from bundle_format.shape_arithmetic import fill_sizes
from liteexport.compiler.dtypes import TORCH_DTYPES
from runtime_py.errors import InternalError

Tensors = Sequence["torch.Tensor | None"]
Semantics = Callable[[Any, Tensors], torch.Tensor]  # (attributes, inputs) -> output


def _binary(fn: Callable[[Any, Any, Any], torch.Tensor]) -> Semantics:
    def run(attrs: object, xs: Tensors) -> torch.Tensor:
        assert isinstance(attrs, BinaryAttrs) and xs[0] is not None
        # integer operands keep their dtype: whole scalars and alpha are Python ints then, as
        # torch's int64 + 1 (a float would give a float32 result)
        integral = not xs[0].dtype.is_floating_point

        def number(v: float) -> float | int:
            return int(v) if integral and float(v).is_integer() else v

        a: object = xs[0]
        b: object = number(attrs.scalar) if attrs.scalar is not None else xs[1]
        if attrs.reverse:
            a, b = b, a
        return fn(a, b, number(attrs.alpha))
    return run


def _activate(y: torch.Tensor, activation: Activation) -> torch.Tensor:
    return torch.relu(y) if activation == Activation.RELU else y


def _linear(attrs: object, xs: Tensors) -> torch.Tensor:
    assert isinstance(attrs, FusedAttrs) and xs[0] is not None and xs[1] is not None
    return _activate(F.linear(xs[0], xs[1], xs[2] if len(xs) > 2 else None), attrs.activation)


def _conv2d(attrs: object, xs: Tensors) -> torch.Tensor:
    assert isinstance(attrs, Conv2dAttrs) and xs[0] is not None and xs[1] is not None
    y = F.conv2d(xs[0], xs[1], xs[2] if len(xs) > 2 else None, attrs.stride, attrs.padding,
                 attrs.dilation, attrs.groups)
    return _activate(y, attrs.activation)


def _channel_affine(attrs: object, xs: Tensors) -> torch.Tensor:
    x, scale, shift = xs
    assert x is not None and scale is not None and shift is not None
    view = [1, -1] + [1] * (x.dim() - 2)
    return x * scale.reshape(view) + shift.reshape(view)


def _layer_norm(attrs: object, xs: Tensors) -> torch.Tensor:
    assert isinstance(attrs, LayerNormAttrs) and xs[0] is not None
    x = xs[0]
    shape = list(x.shape[x.dim() - attrs.normalized_ndim:])
    return F.layer_norm(x, shape, xs[1] if len(xs) > 1 else None, xs[2] if len(xs) > 2 else None, attrs.eps)


def _max_pool(attrs: object, xs: Tensors) -> torch.Tensor:
    assert isinstance(attrs, Pool2dAttrs) and xs[0] is not None
    return F.max_pool2d(xs[0], attrs.kernel, attrs.stride, attrs.padding, attrs.dilation,
                        ceil_mode=attrs.ceil_mode)


def _avg_pool(attrs: object, xs: Tensors) -> torch.Tensor:
    assert isinstance(attrs, Pool2dAttrs) and xs[0] is not None
    return F.avg_pool2d(xs[0], attrs.kernel, attrs.stride, attrs.padding, attrs.ceil_mode,
                        attrs.count_include_pad, attrs.divisor_override)


def _attrs_of(cls: type, fn: Callable[[torch.Tensor, Any], torch.Tensor]) -> Semantics:
    def run(attrs: object, xs: Tensors) -> torch.Tensor:
        assert isinstance(attrs, cls) and xs[0] is not None
        return fn(xs[0], attrs)
    return run


def _cat(attrs: object, xs: Tensors) -> torch.Tensor:
    assert isinstance(attrs, AxisAttrs)
    return torch.cat([x for x in xs if x is not None], attrs.axis)


def _matmul(attrs: object, xs: Tensors) -> torch.Tensor:
    assert xs[0] is not None and xs[1] is not None
    return torch.matmul(xs[0], xs[1])


def _reduce(fn: Callable[..., torch.Tensor]) -> Semantics:
    def run(attrs: object, xs: Tensors) -> torch.Tensor:
        assert isinstance(attrs, ReduceAttrs) and xs[0] is not None
        axes = list(attrs.axes) if attrs.axes else list(range(xs[0].dim()))
        return fn(xs[0], axes, keepdim=attrs.keepdim)
    return run


def _full(attrs: object, xs: Tensors) -> torch.Tensor:
    """The value expanded over the sizes (on meta tensors too, where .item() has no value)."""
    value, reference = xs
    assert isinstance(attrs, FillAttrs) and value is not None and reference is not None
    return value.reshape(()).expand(fill_sizes(attrs, tuple(reference.shape))).clone()


def _embedding(attrs: object, xs: Tensors) -> torch.Tensor:
    weight, indices = xs
    assert weight is not None and indices is not None
    return F.embedding(indices, weight)


def _slice(x: torch.Tensor, a: SliceAttrs) -> torch.Tensor:
    return x[(slice(None),) * (a.axis % x.dim()) + (slice(a.start, a.end, a.step),)]


def oracle(op: OpCode) -> Callable[..., torch.Tensor]:
    """The torch function the op spec names as ``op``'s oracle (schema/demo_ops.toml `torch`)."""
    root, *path = ORACLE[op].split(".")
    if root != "torch":
        raise InternalError(f"{op.name}'s oracle {ORACLE[op]!r} is not a torch function")
    fn: Callable[..., torch.Tensor] = functools.reduce(getattr, path, torch)
    return fn


def _call(fn: Callable[..., torch.Tensor]) -> Semantics:
    def run(attrs: object, xs: Tensors) -> torch.Tensor:
        return fn(*xs)
    return run


# ops without attributes whose shape is their operands' (same or broadcast): their oracle on their
# operands, from the spec; the others are written out below
_CALLS = {op for op, rule in SHAPE_RULE.items() if rule in ("same", "broadcast") and op in ORACLE
          and OP_SPECS[op].attrs is None}
OWN_SEMANTICS: dict[OpCode, Semantics] = {
    OpCode.ADD: _binary(lambda a, b, alpha: a + alpha * b),
    OpCode.SUB: _binary(lambda a, b, alpha: a - alpha * b),
    OpCode.MUL: _binary(lambda a, b, alpha: a * b),
    OpCode.DIV: _binary(lambda a, b, alpha: a / b),
    OpCode.GELU: _attrs_of(GeluAttrs, lambda x, a: F.gelu(
        x, approximate="tanh" if a.tanh_approximation else "none")),
    OpCode.SOFTMAX: _attrs_of(AxisAttrs, lambda x, a: torch.softmax(x, a.axis)),
    OpCode.LOG_SOFTMAX: _attrs_of(AxisAttrs, lambda x, a: torch.log_softmax(x, a.axis)),
    OpCode.MATMUL: _matmul,
    OpCode.LINEAR: _linear,
    OpCode.CONV2D: _conv2d,
    OpCode.CHANNEL_AFFINE: _channel_affine,
    OpCode.LAYER_NORM: _layer_norm,
    OpCode.MAX_POOL2D: _max_pool,
    OpCode.AVG_POOL2D: _avg_pool,
    OpCode.ADAPTIVE_AVG_POOL2D: _attrs_of(ShapeAttrs, lambda x, a: F.adaptive_avg_pool2d(
        x, list(a.dims))),
    OpCode.TRANSPOSE: _attrs_of(PermuteAttrs, lambda x, a: x.permute(*a.perm)),
    OpCode.RESHAPE: _attrs_of(ShapeAttrs, lambda x, a: x.reshape(*a.dims)),
    OpCode.FLATTEN: _attrs_of(FlattenAttrs, lambda x, a: x.flatten(a.start_dim, a.end_dim)),
    OpCode.CAT: _cat,
    OpCode.CLAMP: _attrs_of(ClampAttrs, lambda x, a: torch.clamp(x, a.min, a.max)),
    OpCode.MEAN: _reduce(torch.mean),
    OpCode.SUM: _reduce(torch.sum),
    OpCode.SLICE: _attrs_of(SliceAttrs, _slice),
    OpCode.EXPAND: _attrs_of(ShapeAttrs, lambda x, a: x.expand(*a.dims)),
    OpCode.POW: _binary(lambda a, b, alpha: torch.pow(a, b)),
    OpCode.EMBEDDING: _embedding,
    OpCode.CAST: _attrs_of(CastAttrs, lambda x, a: x.to(TORCH_DTYPES[DType(a.dtype)])),
    OpCode.GATHER: lambda attrs, xs: torch.gather(_present(xs[0]), _axis(attrs), _present(xs[1])),
    OpCode.INDEX_SELECT: lambda attrs, xs: torch.index_select(_present(xs[0]), _axis(attrs), _present(xs[1])),
    OpCode.EQ: _binary(lambda a, b, alpha: operator.eq(a, b)),
    OpCode.NE: _binary(lambda a, b, alpha: operator.ne(a, b)),
    OpCode.LT: _binary(lambda a, b, alpha: operator.lt(a, b)),
    OpCode.LE: _binary(lambda a, b, alpha: operator.le(a, b)),
    OpCode.GT: _binary(lambda a, b, alpha: operator.gt(a, b)),
    OpCode.GE: _binary(lambda a, b, alpha: operator.ge(a, b)),
    OpCode.CUMSUM: _attrs_of(AxisAttrs, lambda x, a: torch.cumsum(x, a.axis)),
    OpCode.RESIZE2D: _attrs_of(ResizeAttrs, lambda x, a: _resize(x, a)),
    OpCode.FAKE_QUANTIZE: _attrs_of(QuantizeAttrs, lambda x, a: torch.fake_quantize_per_tensor_affine(
        x, a.scale, a.zero_point, a.quant_min, a.quant_max)),
    OpCode.ARANGE_LIKE: _attrs_of(ArangeLikeAttrs, lambda x, a: torch.arange(
        a.start, x.shape[a.axis] + a.end_offset, dtype=torch.int64, device=x.device)),
    OpCode.TRIU: _attrs_of(DiagonalAttrs, lambda x, a: torch.triu(x, a.diagonal)),
    OpCode.TRIL: _attrs_of(DiagonalAttrs, lambda x, a: torch.tril(x, a.diagonal)),
    OpCode.ARGMAX: _attrs_of(ArgReduceAttrs, lambda x, a: torch.argmax(x, a.axis, a.keepdim)),
    OpCode.ARGMIN: _attrs_of(ArgReduceAttrs, lambda x, a: torch.argmin(x, a.axis, a.keepdim)),
    OpCode.FULL: _full,
    OpCode.TOPK: _attrs_of(TopKAttrs, lambda x, a: torch.topk(x, a.k, a.axis, a.largest, sorted=True).indices),
    OpCode.FLOOR_DIV: _binary(lambda a, b, alpha: torch.div(*_tensors(a, b), rounding_mode="floor")),
    OpCode.TRUNC_DIV: _binary(lambda a, b, alpha: torch.div(*_tensors(a, b), rounding_mode="trunc")),
    OpCode.REMAINDER: _binary(lambda a, b, alpha: torch.remainder(*_tensors(a, b))),
    # the state writes' values, out of place (the runtimes write the state in place)
    OpCode.INDEX_COPY: lambda attrs, xs: torch.index_copy(_present(xs[0]), _axis(attrs), _present(xs[1]),
                                                          _present(xs[2])),
    OpCode.STATE_WRITE: lambda attrs, xs: _present(xs[1]).to(_present(xs[0]).dtype).expand_as(_present(xs[0])),
    OpCode.ATTENTION: lambda attrs, xs: _attention(attrs, xs),
}
SEMANTICS: dict[OpCode, Semantics] = {**{op: _call(oracle(op)) for op in _CALLS}, **OWN_SEMANTICS}


def _attention(attrs: object, xs: Tensors) -> torch.Tensor:
    """torch's math attention with the kv heads repeated for grouped queries; a query whose keys
    are all masked gives zeros."""
    assert isinstance(attrs, AttentionAttrs)
    q, k, v = _present(xs[0]), _present(xs[1]), _present(xs[2])
    groups = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
    scores = (q * attrs.scale) @ k.transpose(-1, -2)
    mask = xs[3] if len(xs) > 3 else None
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf")) if mask.dtype == torch.bool else scores + mask
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(torch.isinf(scores).all(dim=-1, keepdim=True) & (scores < 0).all(dim=-1, keepdim=True),
                          torch.zeros_like(weights), weights)
    return weights @ v


def _tensors(a: object, b: object) -> tuple[Any, Any]:
    """A number operand first as a 0-d tensor (torch.div and remainder take a Tensor first; a 0-d
    tensor promotes as the number would)."""
    return (a if isinstance(a, torch.Tensor) else torch.tensor(a, device=_device(b))), b


def _resize(x: torch.Tensor, a: ResizeAttrs) -> torch.Tensor:
    """ATen's own upsample kernels with the scales they map coordinates with (F.interpolate
    would recompute them from the sizes)."""
    if not a.bilinear:
        return torch.ops.aten.upsample_nearest2d(x, list(a.size), a.scale_h, a.scale_w)
    return torch.ops.aten.upsample_bilinear2d(x, list(a.size), a.align_corners, a.scale_h, a.scale_w)


def _device(value: object) -> Any:
    return value.device if isinstance(value, torch.Tensor) else None


def _present(x: torch.Tensor | None) -> torch.Tensor:
    assert x is not None
    return x


def _axis(attrs: object) -> int:
    assert isinstance(attrs, AxisAttrs)
    return attrs.axis


def run_op(op: OpCode, attrs: object, inputs: Tensors) -> torch.Tensor:
    """Compute one instruction with torch (real or meta tensors)."""
    return SEMANTICS[op](attrs, inputs)
