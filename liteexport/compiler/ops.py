"""Lowering of tensor-level TorchScript nodes: a table from node kind to a small function.

Each lowering receives an :class:`Emitter` and the node's inputs as abstract values (in
schema order) and returns the node's abstract output. It raises :class:`Unsupported` for
argument combinations it cannot compile; the walk turns that into a report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from bundle_format._generated.demo_traits import INPLACE as SPEC_INPLACE
from bundle_format._generated.demo_traits import PLAIN_LOWERINGS
from bundle_format.dtype_rules import DTypeProblem, allowed_dtypes, result_dtype
from bundle_format.program import (
    OP_SPECS,
    Attributes,
    AxisAttrs,
    BinaryAttrs,
    CastAttrs,
    Conv2dAttrs,
    DType,
    FlattenAttrs,
    FusedAttrs,
    GeluAttrs,
    LayerNormAttrs,
    OpCode,
    PermuteAttrs,
    Pool2dAttrs,
    ShapeAttrs,
)
from liteexport.compiler.dtypes import COMPILED_NAMES, TORCH_DTYPES, dtype_of, scalar_type, torch_dtype_of
from liteexport.compiler.semantics import run_op
from liteexport.compiler.shapes import infer_shape, infer_symbols
from liteexport.compiler.symbolic import SymSize, size_of
from liteexport.compiler.values import NodeSite, OpNode, Poison, Sym, TensorConst, TensorValue, Unsupported

FLOAT32_ONLY = f"only {COMPILED_NAMES} tensors are compiled"
_FLOAT32_SCALAR_TYPE = 6  # c10::ScalarType::Float, the value TorchScript passes as a dtype

# How a user gets static shapes: said wherever a report comes from a missing shape.
SHAPES_HINT = "give static input shapes (liteexport export --input-shape)"


class Emitter:
    """What a lowering may do: emit instructions for the current node, or poison a value."""

    def __init__(self, nodes: list[OpNode], site: NodeSite,
                 poison: Callable[[str], Poison]) -> None:
        self.nodes = nodes
        self.site = site
        self.poison = poison  # poison(reason): a value reported only if it reaches an output

    def emit(self, op: OpCode, inputs: Sequence[TensorValue | None], attrs: Attributes) -> TensorValue:
        """Append an instruction; when every input is a constant, fold it instead."""
        if all(v is None or isinstance(v, TensorConst) for v in inputs):
            tensors = [None if v is None else v.tensor for v in inputs]  # type: ignore[union-attr]
            with torch.no_grad():
                return TensorConst(run_op(op, attrs, tensors).contiguous())
        try:
            dtype = result_dtype(op, [dtype_of(v) for v in inputs if v is not None], attrs)
        except DTypeProblem as problem:
            f = problem.fields
            raise Unsupported(f"{op.name}'s operand {f['index']} ({f['name']}) is {f['got']}, "
                              f"but it takes {f['allowed']}") from None
        node = OpNode(op, list(inputs), attrs, self.site)
        shape = infer_shape(op, attrs, inputs)
        node.output = Sym(shape, producer=node, dtype=dtype, symbols=infer_symbols(op, attrs, inputs, shape))
        self.nodes.append(node)
        return node.output

    def cast(self, value: TensorValue, dtype: DType) -> TensorValue:
        """``value`` converted to ``dtype`` (itself when it has it already)."""
        if dtype_of(value) == dtype:
            return value
        return self.emit(OpCode.CAST, [value], CastAttrs(dtype=int(dtype)))


def tensor(value: Any) -> TensorValue:
    """``value`` as a compiled tensor operand, or Unsupported."""
    if isinstance(value, Sym):
        return value
    if isinstance(value, TensorConst):
        dtype_of(value)  # a compiled dtype, or Unsupported
        return value
    if isinstance(value, SymSize):
        raise Unsupported(f"a tensor of the size {value}, known only at run time, is not compiled here")
    raise Unsupported(f"expected a tensor, got {type(value).__name__}")


def optional_tensor(value: Any) -> TensorValue | None:
    return None if value is None else tensor(value)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, Sym)


def shape_of(value: TensorValue) -> tuple[int, ...] | None:
    return tuple(value.tensor.shape) if isinstance(value, TensorConst) else value.shape


def rank_of(value: TensorValue) -> int:
    shape = shape_of(value)
    if shape is None:
        raise Unsupported(f"the input's rank is not known; {SHAPES_HINT}")
    return len(shape)


def pair(value: Any) -> tuple[int, int]:
    """An int or a 1- or 2-element int list as (h, w)."""
    if isinstance(value, int):
        return (value, value)
    if not isinstance(value, list | tuple):
        # None where a size is Optional (F.interpolate's unresolved mode branches without shapes)
        raise Unsupported(f"expected 2 spatial sizes known at compile time, got {value!r}")
    items = list(value)
    if len(items) == 1:
        return (int(items[0]), int(items[0]))
    if len(items) != 2:
        raise Unsupported(f"expected 2 spatial dims, got {items}")
    return (int(items[0]), int(items[1]))


# --- elementwise ---------------------------------------------------------------------------------

def _binary(op: OpCode, reverse_op: bool = False) -> Callable[[Emitter, list[Any]], Any]:
    """aten::add/sub/mul/div (Tensor and Scalar forms, alpha) and aten::rsub (reverse_op)."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        a, other = args[0], args[1]
        extra = args[2] if len(args) > 2 else None
        alpha = 1.0
        chosen = op
        if op in (OpCode.ADD, OpCode.SUB) and extra is not None:
            if not is_number(extra):
                raise Unsupported("alpha must be a number")
            alpha = float(extra)
        elif op == OpCode.DIV and extra is not None:
            if extra not in _ROUNDED_DIV:
                raise Unsupported(f"div with rounding_mode={extra!r} is not compiled")
            if all(not isinstance(v, Sym) for v in (a, other)):
                # values known at compile time (edgenext's sin-cos position table:
                # div(arange(d), 2, rounding_mode='floor')): torch computes it now, any dtype
                values = [v.tensor if isinstance(v, TensorConst) else torch.tensor(v) for v in (a, other)]
                return TensorConst(torch.div(*values, rounding_mode=extra).contiguous())
            chosen = _ROUNDED_DIV[extra]
        reverse = reverse_op
        a, other = _as_number_beside(a, other), _as_number_beside(other, a)
        if is_number(a) and not is_number(other):  # number OP tensor
            a, other, reverse = other, a, not reverse
        operands = promoted(b, chosen, [a, other])
        if is_number(other):
            return b.emit(chosen, operands[:1], BinaryAttrs(alpha=alpha, scalar=float(other), reverse=reverse))
        return b.emit(chosen, operands, BinaryAttrs(alpha=alpha, reverse=reverse))
    return lower


# div's rounding modes: integers stay integers, as torch's (true division computes in float32)
_ROUNDED_DIV = {"floor": OpCode.FLOOR_DIV, "trunc": OpCode.TRUNC_DIV}


def _as_number_beside(value: Any, other: Any) -> Any:
    """A 0-d constant of a dtype programs do not hold (a saved traced archive's float64 ``0.5``) as
    its number when the other operand has dims: torch's promotion then ignores its dtype as a number's."""
    if isinstance(value, TensorConst) and value.tensor.dim() == 0 and value.tensor.dtype == torch.float64 \
            and isinstance(other, (Sym, TensorConst)) and shape_of(other) != ():
        return value.tensor.item()
    return value


def _representative(value: Any) -> Any:
    """What torch.result_type sees for an operand: a meta tensor of its dtype and rank (a 0-d tensor
    counts less than a dimensioned one, as in torch), or the number itself."""
    if is_number(value):
        return value
    x = tensor(value)
    shape = shape_of(x)
    return torch.empty(() if shape == () else (1,), dtype=torch_dtype_of(x), device="meta")


def promoted(b: Emitter, op: OpCode, operands: list[Any]) -> list[TensorValue]:
    """The tensor operands of an arithmetic or comparison node converted to the dtype torch computes
    in (int64 + float32 -> float32, int + 2.5 -> float32; true division of integers in float32),
    which must be one the op takes."""
    target = torch.result_type(*[_representative(v) for v in operands]) if len(operands) == 2 else \
        torch_dtype_of(tensor(operands[0]))
    if op == OpCode.POW and not target.is_floating_point:
        # torch raises integers to integer powers exactly, in int64; our kernel computes in float32
        dtype = str(target).removeprefix("torch.")
        raise Unsupported(f"pow of {dtype} tensors is not compiled (it computes in float32): convert the base with "
                          ".float() first")
    if op == OpCode.DIV and not target.is_floating_point:
        target = torch.float32
    dtype = scalar_type(target)
    return [b.cast(tensor(v), dtype) for v in operands if not is_number(v)]


def _unary(op: OpCode) -> Callable[[Emitter, list[Any]], Any]:
    def lower(b: Emitter, args: list[Any]) -> Any:
        x = tensor(args[0])
        # float functions (exp, sin, ...) of integers compute in float32, as torch's; one that
        # torch computes in the integers (relu, abs) is refused rather than answered in float32
        if dtype_of(x) not in allowed_dtypes(op, 0) and DType.FLOAT32 in allowed_dtypes(op, 0):
            if not _float_result_of_integers(op, dtype_of(x)):
                raise Unsupported(f"{op.name.lower()} of an integer ({dtype_of(x).name.lower()}) tensor is not "
                                  "compiled (torch keeps its integer dtype; the kernel computes in float32): "
                                  "convert it with .float() first")
            x = b.cast(x, DType.FLOAT32)
        return b.emit(op, [x], None)
    return lower


def _float_result_of_integers(op: OpCode, dtype: DType) -> bool:
    """Whether torch's ``op`` of a ``dtype`` (integer) tensor gives floats (exp does, relu does not),
    asked of torch's semantics on a meta tensor; True when torch refuses the dtype (as before)."""
    try:
        return bool(run_op(op, None, [torch.zeros(1, dtype=TORCH_DTYPES[dtype], device="meta")])
                    .dtype.is_floating_point)
    except (RuntimeError, TypeError, NotImplementedError):
        return True


def _reciprocal(b: Emitter, args: list[Any]) -> Any:
    # TorchScript writes `number / tensor` as reciprocal(tensor) * number.
    return b.emit(OpCode.DIV, [tensor(args[0])], BinaryAttrs(scalar=1.0, reverse=True))


def _gelu(b: Emitter, args: list[Any]) -> Any:
    approximate = args[1] if len(args) > 1 else "none"
    if approximate not in ("none", "tanh"):
        raise Unsupported(f"approximate={approximate!r}")
    return b.emit(OpCode.GELU, [tensor(args[0])], GeluAttrs(tanh_approximation=approximate == "tanh"))


def _softmax(op: OpCode) -> Callable[[Emitter, list[Any]], Any]:
    def lower(b: Emitter, args: list[Any]) -> Any:
        if len(args) > 2 and args[2] is not None:
            raise Unsupported("a dtype argument is not supported")
        return b.emit(op, [tensor(args[0])], AxisAttrs(axis=int(args[1])))
    return lower


# --- linear algebra ------------------------------------------------------------------------------

def _matmul(b: Emitter, args: list[Any]) -> Any:
    return b.emit(OpCode.MATMUL, [tensor(args[0]), tensor(args[1])], None)


def _linear(b: Emitter, args: list[Any]) -> Any:
    return b.emit(OpCode.LINEAR, [tensor(args[0]), tensor(args[1]), optional_tensor(args[2])], FusedAttrs())


def _addmm(b: Emitter, args: list[Any]) -> Any:
    """bias*beta + alpha*(m1 @ m2): one LINEAR when m2 and a 1-D bias are constants."""
    bias, m1, m2 = tensor(args[0]), tensor(args[1]), tensor(args[2])
    beta = float(args[3]) if len(args) > 3 else 1.0
    alpha = float(args[4]) if len(args) > 4 else 1.0
    if isinstance(m2, TensorConst) and isinstance(bias, TensorConst) and beta == 1.0 and alpha == 1.0 \
            and bias.tensor.dim() == 1:
        weight = TensorConst(m2.tensor.t().contiguous())
        return b.emit(OpCode.LINEAR, [m1, weight, bias], FusedAttrs())
    product = b.emit(OpCode.MATMUL, [m1, m2], None)
    if alpha != 1.0:
        product = b.emit(OpCode.MUL, [product], BinaryAttrs(scalar=alpha))
    return b.emit(OpCode.ADD, [product, bias], BinaryAttrs(alpha=beta))


def _permute_to(b: Emitter, x: TensorValue, perm: list[int]) -> Any:
    if perm == sorted(perm):
        return x
    return b.emit(OpCode.TRANSPOSE, [x], PermuteAttrs(perm=tuple(perm)))


def _t(b: Emitter, args: list[Any]) -> Any:
    x = tensor(args[0])
    return _permute_to(b, x, [1, 0]) if rank_of(x) == 2 else x


def _transpose(b: Emitter, args: list[Any]) -> Any:
    x = tensor(args[0])
    rank = rank_of(x)
    perm = list(range(rank))
    d0, d1 = int(args[1]) % rank, int(args[2]) % rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return _permute_to(b, x, perm)


def _permute(b: Emitter, args: list[Any]) -> Any:
    x = tensor(args[0])
    rank = rank_of(x)
    return _permute_to(b, x, [int(d) % rank for d in args[1]])


# --- convolution, normalization, pooling ---------------------------------------------------------

def _conv_padding(padding: Any, weight: TensorValue, dilation: tuple[int, int],
                  stride: tuple[int, int]) -> tuple[int, int]:
    if padding == "valid":
        return (0, 0)
    if padding == "same":
        shape = shape_of(weight)
        if shape is None or stride != (1, 1):
            raise Unsupported("padding='same' needs a known kernel and stride 1")
        totals = [d * (k - 1) for d, k in zip(dilation, shape[2:], strict=True)]
        if any(t % 2 for t in totals):
            raise Unsupported("padding='same' would be asymmetric")
        return (totals[0] // 2, totals[1] // 2)
    return pair(padding)


def _conv2d(b: Emitter, args: list[Any]) -> Any:
    x, weight, bias = tensor(args[0]), tensor(args[1]), optional_tensor(args[2])
    stride, dilation = pair(args[3]), pair(args[5])
    padding = _conv_padding(args[4], weight, dilation, stride)
    attrs = Conv2dAttrs(stride=stride, padding=padding, dilation=dilation, groups=int(args[6]))
    return b.emit(OpCode.CONV2D, [x, weight, bias], attrs)


def _conv1d(b: Emitter, args: list[Any]) -> Any:
    """aten::conv1d as CONV2D over a height of 1 (Whisper's audio stem): x [N, C, L] viewed as
    [N, C, 1, L], the weight [O, C/g, K] as [O, C/g, 1, K], the result viewed back as [N, O, L']."""
    x, weight, bias, stride, padding, dilation, groups = args[:7]
    shape = shape_of(tensor(x))
    if not isinstance(weight, TensorConst) or shape is None or len(shape) != 3 or any(d < 0 for d in shape[1:]):
        raise Unsupported("conv1d needs a constant weight and static channel and length sizes (give --input-shape)")
    pad = padding if isinstance(padding, str) else _with_height(padding, 0)
    kernel = TensorConst(weight.tensor.unsqueeze(2).contiguous())
    wide = b.emit(OpCode.RESHAPE, [tensor(x)], ShapeAttrs(dims=(-1, shape[1], 1, shape[2])))
    out = _conv2d(b, [wide, kernel, bias, _with_height(stride, 1), pad, _with_height(dilation, 1), groups])
    out_shape = shape_of(out)
    if out_shape is None:
        raise Unsupported("conv1d: the output length is not known at compile time")
    return b.emit(OpCode.RESHAPE, [out], ShapeAttrs(dims=(-1, out_shape[1], out_shape[3])))


def _with_height(value: Any, height: int) -> tuple[int, int]:
    """A conv1d stride, padding or dilation ((s,) or s) as conv2d's (height, s)."""
    return height, int(value[0] if isinstance(value, (list, tuple)) else value)


def _batch_norm(b: Emitter, args: list[Any]) -> Any:
    """Inference batch norm as x * scale + shift per channel (folded later into a producer)."""
    x, weight, bias, mean, var, training, _momentum, eps = args[:8]
    if training is not False:
        raise Unsupported("training mode batch norm is not compiled")
    if not isinstance(mean, TensorConst) or not isinstance(var, TensorConst):
        raise Unsupported("batch norm needs running statistics")
    if not all(isinstance(v, (TensorConst, type(None))) for v in (weight, bias)):
        raise Unsupported("batch norm weight and bias must be constants")
    for value in (weight, bias, mean, var):
        if value is not None:
            tensor(value)  # float32 only
    var64, mean64 = var.tensor.double(), mean.tensor.double()
    w64 = torch.ones_like(var64) if weight is None else weight.tensor.double()
    b64 = torch.zeros_like(var64) if bias is None else bias.tensor.double()
    scale = w64 / torch.sqrt(var64 + float(eps))
    shift = b64 - mean64 * scale
    return b.emit(OpCode.CHANNEL_AFFINE, [tensor(x), TensorConst(scale.float().contiguous()),
                                          TensorConst(shift.float().contiguous())], None)


def _layer_norm(b: Emitter, args: list[Any]) -> Any:
    x, shape, weight, bias, eps = args[:5]
    attrs = LayerNormAttrs(normalized_ndim=len(shape), eps=float(eps))
    return b.emit(OpCode.LAYER_NORM, [tensor(x), optional_tensor(weight), optional_tensor(bias)], attrs)


def _group_norm(b: Emitter, args: list[Any]) -> Any:
    """aten::group_norm with existing instructions: x [N, C, *] viewed as [N, G, C/G * prod(*)],
    LAYER_NORM over that last dim (each group's mean and variance), viewed back, then the
    per-channel weight and bias (CHANNEL_AFFINE)."""
    x, groups, weight, bias, eps = args[:5]
    shape = shape_of(tensor(x))
    if shape is None or len(shape) < 2 or any(d < 0 for d in shape[1:]):
        raise Unsupported("group_norm needs static channel and spatial sizes (give --input-shape)")
    if not isinstance(groups, int) or groups <= 0 or shape[1] % groups:
        raise Unsupported(f"group_norm: {shape[1]} channels do not split into {groups} groups")
    if not all(isinstance(v, (TensorConst, type(None))) for v in (weight, bias)):
        raise Unsupported("group_norm weight and bias must be constants")
    per_group = (shape[1] // groups) * int(torch.tensor(shape[2:], dtype=torch.int64).prod())
    grouped = b.emit(OpCode.RESHAPE, [tensor(x)], ShapeAttrs(dims=(-1, groups, per_group)))
    normalized = b.emit(OpCode.LAYER_NORM, [grouped, None, None], LayerNormAttrs(normalized_ndim=1, eps=float(eps)))
    back = b.emit(OpCode.RESHAPE, [normalized], ShapeAttrs(dims=(-1, *shape[1:])))
    if weight is None and bias is None:
        return back
    scale = torch.ones(shape[1]) if weight is None else weight.tensor  # constants (checked above)
    shift = torch.zeros(shape[1]) if bias is None else bias.tensor
    return b.emit(OpCode.CHANNEL_AFFINE, [back, TensorConst(scale.float().contiguous()),
                                          TensorConst(shift.float().contiguous())], None)


def _max_pool2d(b: Emitter, args: list[Any]) -> Any:
    x, kernel, stride, padding, dilation, ceil_mode = args[:6]
    attrs = Pool2dAttrs(kernel=pair(kernel), stride=pair(stride) if list(stride) else pair(kernel),
                        padding=pair(padding), dilation=pair(dilation), ceil_mode=bool(ceil_mode))
    return b.emit(OpCode.MAX_POOL2D, [tensor(x)], attrs)


def _avg_pool2d(b: Emitter, args: list[Any]) -> Any:
    x, kernel, stride, padding, ceil_mode, count_include_pad, divisor = args[:7]
    attrs = Pool2dAttrs(kernel=pair(kernel), stride=pair(stride) if list(stride) else pair(kernel),
                        padding=pair(padding), ceil_mode=bool(ceil_mode),
                        count_include_pad=bool(count_include_pad),
                        divisor_override=None if divisor is None else int(divisor))
    return b.emit(OpCode.AVG_POOL2D, [tensor(x)], attrs)


def _adaptive_avg_pool2d(b: Emitter, args: list[Any]) -> Any:
    size = args[1]
    dims = pair(size) if not isinstance(size, int) else (size, size)
    return b.emit(OpCode.ADAPTIVE_AVG_POOL2D, [tensor(args[0])], ShapeAttrs(dims=dims))


# --- layout --------------------------------------------------------------------------------------

def _flatten(b: Emitter, args: list[Any]) -> Any:
    attrs = FlattenAttrs(start_dim=int(args[1]), end_dim=int(args[2]))
    return b.emit(OpCode.FLATTEN, [tensor(args[0])], attrs)


def _reshape(b: Emitter, args: list[Any]) -> Any:
    dims = tuple(int(d) for d in args[1])
    return b.emit(OpCode.RESHAPE, [tensor(args[0])], ShapeAttrs(dims=dims))


def _cat(b: Emitter, args: list[Any]) -> Any:
    return b.emit(OpCode.CAT, [tensor(v) for v in args[0]], AxisAttrs(axis=int(args[1])))


# --- identities and static queries ---------------------------------------------------------------

def _identity(b: Emitter, args: list[Any]) -> Any:
    return tensor(args[0])


def _dropout(b: Emitter, args: list[Any]) -> Any:
    if args[2] is not False:
        raise Unsupported("dropout in training mode is not compiled")
    return tensor(args[0])


def _to(b: Emitter, args: list[Any]) -> Any:
    """aten::to (dtype, device-and-dtype and other-tensor forms) as a CAST when the dtype changes;
    a device or memory format alone is the identity."""
    x = tensor(args[0])
    for arg in args[1:]:
        if isinstance(arg, TensorConst | Sym):
            return b.cast(x, dtype_of(arg))
        if isinstance(arg, int) and not isinstance(arg, bool):  # the first int is the dtype
            return b.cast(x, _scalar_type_number(arg))
    return x


def _type_as(b: Emitter, args: list[Any]) -> Any:
    return b.cast(tensor(args[0]), dtype_of(tensor(args[1])))


def _scalar_type_number(number: int) -> DType:
    """A dtype as TorchScript passes it (a c10::ScalarType number) as a DType, or Unsupported."""
    try:
        return DType(number)
    except ValueError:
        name = _SCALAR_TYPE_NAMES.get(number, f"c10::ScalarType {number}")
        raise Unsupported(f"dtype {name} is not compiled (compiled: {COMPILED_NAMES})") from None


# the c10::ScalarType numbers of the dtypes programs do not hold, for messages
_SCALAR_TYPE_NAMES = {0: "uint8", 1: "int8", 2: "int16", 5: "float16", 7: "float64", 15: "bfloat16"}


def _size(b: Emitter, args: list[Any]) -> Any:
    """aten::size folds where static, and is a SymSize (symbolic.py) where a named dim gives the size;
    another dynamic dim poisons only the values that use it."""
    x = tensor(args[0])
    shape = shape_of(x)
    if shape is None:
        return b.poison(f"its result is not static: the input's rank is unknown; {SHAPES_HINT}")
    def dim(i: int) -> Any:
        size = size_of(x, i)
        if size is None:
            return b.poison(f"its result is not static: dimension {i} is dynamic; {SHAPES_HINT}, or name the "
                            "dim (--input-shape forward:1xS --dim S=LO..HI)")
        return size
    if len(args) > 1:
        return dim(int(args[1]) % len(shape))
    return [dim(i) for i in range(len(shape))]


def _dim(b: Emitter, args: list[Any]) -> Any:
    return rank_of(tensor(args[0]))


def _dtype(b: Emitter, args: list[Any]) -> Any:
    return int(dtype_of(tensor(args[0])))  # DType numbers are c10::ScalarType's


Lowering = Callable[[Emitter, list[Any]], Any]

def plain_lowering(op: OpCode) -> Lowering:
    """The lowering of the ATen names the op spec lists in an op's `aten`: the binary one for an op
    with Binary attributes, else the unary one."""
    return _binary(op) if OP_SPECS[op].attrs == "Binary" else _unary(op)


LOWERINGS: dict[str, Lowering] = {
    # the op spec's plain rows (schema/demo_ops.toml `aten`)
    **{kind: plain_lowering(op) for kind, op in PLAIN_LOWERINGS.items()},
    "aten::rsub": _binary(OpCode.SUB, reverse_op=True),  # other - alpha * self
    "aten::reciprocal": _reciprocal,
    "aten::gelu": _gelu,
    "aten::softmax": _softmax(OpCode.SOFTMAX),
    "aten::log_softmax": _softmax(OpCode.LOG_SOFTMAX),
    "aten::matmul": _matmul,
    "aten::mm": _matmul,
    "aten::addmm": _addmm,
    "aten::linear": _linear,
    "aten::t": _t,
    "aten::transpose": _transpose,
    "aten::permute": _permute,
    "aten::conv2d": _conv2d,
    "aten::conv1d": _conv1d,
    "aten::batch_norm": _batch_norm,
    "aten::layer_norm": _layer_norm,
    "aten::group_norm": _group_norm,
    "aten::max_pool2d": _max_pool2d,
    "aten::avg_pool2d": _avg_pool2d,
    "aten::adaptive_avg_pool2d": _adaptive_avg_pool2d,
    "aten::flatten": _flatten,
    "aten::reshape": _reshape,
    "aten::view": _reshape,
    "aten::cat": _cat,
    "aten::dropout": _dropout,  # inference: identity
    "aten::feature_dropout": _dropout,
    "aten::alpha_dropout": _dropout,
    "aten::feature_alpha_dropout": _dropout,
    "aten::contiguous": _identity,
    "aten::to": _to,
    "aten::type_as": _type_as,
    "aten::size": _size,
    "aten::dim": _dim,
    "prim::dtype": _dtype,
    "prim::device": lambda b, args: torch.device("cpu"),
    "prim::is_cuda": lambda b, args: False,
}

# In-place variants compiled as their out-of-place op (the op spec's `inplace`); the walk rebinds
# the mutated input.
INPLACE: dict[str, str] = {f"{kind}_": kind for kind in SPEC_INPLACE}
