# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_ops.toml
# ruff: noqa
"""The demo instruction set (schema/demo_ops.toml): opcodes and their operands."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class OpCode(enum.IntEnum):
    """The instruction set. Numbering is the wire format: append, never reorder."""

    ADD = 0  # a + alpha * b; one input: x OP scalar
    SUB = 1  # a - alpha * b; reverse: b - alpha * a (rsub)
    MUL = 2  # a * b
    DIV = 3  # a / b, true division
    NEG = 4  # -x
    RELU = 5  # max(x, 0)
    SIGMOID = 6  # 1 / (1 + exp(-x))
    TANH = 7  # tanh(x)
    GELU = 8  # erf or tanh GELU
    SOFTMAX = 9  # stable softmax along an axis
    LOG_SOFTMAX = 10  # stable log-softmax along an axis
    MATMUL = 11  # torch.matmul (1-D and batched)
    LINEAR = 12  # x @ W.T [+ b], then the fused activation
    CONV2D = 13  # x, W[, b]; CHW or NCHW
    CHANNEL_AFFINE = 14  # inference batch norm: x * scale + shift along dim 1
    LAYER_NORM = 15  # x[, weight[, bias]]
    MAX_POOL2D = 16  # max over windows
    AVG_POOL2D = 17  # mean over windows
    ADAPTIVE_AVG_POOL2D = 18  # mean pooling to an output size (2 dims)
    TRANSPOSE = 19  # full permutation of the axes
    RESHAPE = 20  # to a shape that may hold one -1
    FLATTEN = 21  # merge dims start_dim..end_dim
    CAT = 22  # concatenate the inputs along an axis
    CLAMP = 23  # min(max(x, min), max), either bound optional; NaN stays NaN (clamp, hardtanh, relu6)
    HARDSIGMOID = 24  # min(max(x + 3, 0), 6) / 6
    HARDSWISH = 25  # x * min(max(x + 3, 0), 6) / 6
    SILU = 26  # x / (1 + exp(-x))
    MEAN = 27  # mean over axes (all when none), keepdim
    SUM = 28  # sum over axes (all when none), keepdim
    SLICE = 29  # start:end:step (step > 0) on one axis, bounds clamped as in Python
    EXPAND = 30  # broadcast to a shape; -1 keeps a size, new leading dims allowed
    LOG = 31  # natural log(x)
    SQRT = 32  # sqrt(x)
    RSQRT = 33  # 1 / sqrt(x)
    ABS = 34  # |x|
    POW = 35  # a ** b; one input: x ** scalar, reverse: scalar ** x
    EXP = 36  # e ** x
    EMBEDDING = 37  # rows of weight [N, D] at indices (any shape) -> [*indices.shape, D]; an index outside [0, N) is an error
    CAST = 38  # x converted to another dtype as torch's Tensor.to (float -> int truncates toward zero; nonzero -> True)
    GATHER = 39  # torch.gather: out[i][j] = x[index[i][j]][j] along axis; index may be smaller than x off the axis; negative or out-of-range indices are errors
    INDEX_SELECT = 40  # torch.index_select: the entries at a 1-D index along axis; out-of-range indices are errors
    EQ = 41  # a == b (broadcast), or a == scalar
    NE = 42  # a != b
    LT = 43  # a < b; reverse: b < a
    LE = 44  # a <= b; reverse: b <= a
    GT = 45  # a > b; reverse: b > a
    GE = 46  # a >= b; reverse: b >= a
    BITWISE_NOT = 47  # ~x (logical not for bool)
    BITWISE_AND = 48  # a & b, broadcast (logical and for bool)
    BITWISE_OR = 49  # a | b, broadcast (logical or for bool)
    WHERE = 50  # a where condition else b, all three broadcast (masked_fill too)
    CUMSUM = 51  # running sum along an axis; bool and int32 sum in int64, as torch
    SIN = 52  # sin(x)
    COS = 53  # cos(x)
    ARANGE_LIKE = 54  # torch.arange(start, S + end_offset) in int64, where S is the size of the reference operand's axis (a sequence length known only at run time); the reference's values are not read
    RESIZE2D = 55  # nearest or bilinear resizing of an NCHW tensor's last two dims to an output size, as torch's upsample_nearest2d / upsample_bilinear2d
    TRIU = 56  # torch.triu: the elements on and above the diagonal of the last two dims, zero (False) elsewhere; at least 2 dims
    TRIL = 57  # torch.tril: the elements on and below the diagonal of the last two dims, zero (False) elsewhere; at least 2 dims
    ARGMAX = 58  # torch.argmax along an axis: the first index of the largest value (a NaN is the largest), in int64
    TOPK = 59  # torch.topk's indices (sorted=True) in int64, the input's shape with k along the axis; the values are a GATHER of them; k larger than the axis is an error
    FLOOR_DIV = 60  # floor(a / b) as torch.floor_divide and div(rounding_mode='floor'); integer division by zero is an error
    TRUNC_DIV = 61  # a / b rounded toward zero, as torch.div(rounding_mode='trunc'); integer division by zero is an error
    REMAINDER = 62  # a - floor(a / b) * b, the sign of b, as torch.remainder and Python's %; integer division by zero is an error
    FAKE_QUANTIZE = 63  # x rounded to a per-tensor int8/uint8 grid and back to float32 (quantize then dequantize): the activations of quantized models
    ARGMIN = 64  # torch.argmin along an axis: the first index of the smallest value (a NaN counts as the smallest, as torch's), in int64
    FULL = 65  # torch.full(sizes, value): the one-element value operand repeated over sizes that may be the reference operand's sizes known only at run time (a causal mask of S x S); the reference's values are not read
    LOG1P = 66  # log(1 + x), exact near 0; -inf at -1 and NaN below
    EXPM1 = 67  # e ** x - 1, exact near 0
    FLOOR = 68  # the largest whole number <= x
    CEIL = 69  # the smallest whole number >= x
    TRUNC = 70  # x rounded toward zero
    ROUND = 71  # x rounded to the nearest whole number, halves to even (torch.round without decimals)
    SIGN = 72  # -1, 0 or 1 by the sign of x; 0 for -0 and NaN, as torch
    ERF = 73  # the error function erf(x)
    INDEX_COPY = 74  # writes source's entries into the state operand in place, at the 1-D index's positions along axis (torch.index_copy_, a KV cache's write at cache_position); the result is that state; a position outside [0, size) is the caller's error and nothing is written
    STATE_WRITE = 75  # sets the whole state operand to value (of its shape and dtype) in place (torch's copy_ into a buffer); the result is that state
    ATTENTION = 76  # softmax(q k^T * scale + mask) v of q [B, H, S, D] and k, v [B, Hkv, L, D] with H a multiple of Hkv (grouped-query attention: head h reads kv head h // (H / Hkv)); the mask (True = attend, or added) broadcasts to [B, H, S, L]; key positions every query masks out are skipped (a decode step at position p of an L-position cache reads p + 1 keys); a query whose keys are all masked gives zeros


class DType(enum.IntEnum):
    """Element types of compiled values, numbered as c10::ScalarType ([dtypes])."""

    INT32 = 3
    INT64 = 4
    FLOAT32 = 6
    BOOL = 11


@dataclass(frozen=True)
class OpSpec:
    min_inputs: int
    max_inputs: int | None  # None: any number
    attrs: str | None  # the Attributes union member it carries (fbs table name); None: none
    attrs_optional: bool  # every attribute field has a default: the instruction may omit them
    may_alias_input: bool  # the result may be a view of input 0
    operands: tuple[str, ...] = ()  # names, in order (the last repeats for "any number")
    dtypes: tuple[str, ...] = ("float32",)  # dtypes of the operands not in operand_dtypes (they share one, T)
    operand_dtypes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # operand -> its own dtypes
    result: str = "same"  # the result's dtype: "same" (T), "attr" (Cast.dtype), "widen_int", or a dtype name


OP_SPECS: dict[OpCode, OpSpec] = {
    OpCode.ADD: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32'), {}, 'same'),
    OpCode.SUB: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32'), {}, 'same'),
    OpCode.MUL: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32'), {}, 'same'),
    OpCode.DIV: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32',), {}, 'same'),
    OpCode.NEG: OpSpec(1, 1, None, False, False, ('x',), ('float32', 'int64', 'int32'), {}, 'same'),
    OpCode.RELU: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.SIGMOID: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.TANH: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.GELU: OpSpec(1, 1, 'Gelu', True, False, ('x',), ('float32',), {}, 'same'),
    OpCode.SOFTMAX: OpSpec(1, 1, 'Axis', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.LOG_SOFTMAX: OpSpec(1, 1, 'Axis', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.MATMUL: OpSpec(2, 2, None, False, False, ('a', 'b'), ('float32',), {}, 'same'),
    OpCode.LINEAR: OpSpec(2, 3, 'Fused', True, False, ('x', 'weight', 'bias'), ('float32',), {}, 'same'),
    OpCode.CONV2D: OpSpec(2, 3, 'Conv2d', True, False, ('x', 'weight', 'bias'), ('float32',), {}, 'same'),
    OpCode.CHANNEL_AFFINE: OpSpec(3, 3, None, False, False, ('x', 'scale', 'shift'), ('float32',), {}, 'same'),
    OpCode.LAYER_NORM: OpSpec(1, 3, 'LayerNorm', False, False, ('x', 'weight', 'bias'), ('float32',), {}, 'same'),
    OpCode.MAX_POOL2D: OpSpec(1, 1, 'Pool2d', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.AVG_POOL2D: OpSpec(1, 1, 'Pool2d', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.ADAPTIVE_AVG_POOL2D: OpSpec(1, 1, 'Shape', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.TRANSPOSE: OpSpec(1, 1, 'Permute', False, True, ('x',), ('float32', 'int64', 'int32', 'bool'), {}, 'same'),
    OpCode.RESHAPE: OpSpec(1, 1, 'Shape', False, True, ('x',), ('float32', 'int64', 'int32', 'bool'), {}, 'same'),
    OpCode.FLATTEN: OpSpec(1, 1, 'Flatten', False, True, ('x',), ('float32', 'int64', 'int32', 'bool'), {}, 'same'),
    OpCode.CAT: OpSpec(1, None, 'Axis', False, False, ('tensors',), ('float32', 'int64', 'int32', 'bool'), {}, 'same'),
    OpCode.CLAMP: OpSpec(1, 1, 'Clamp', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.HARDSIGMOID: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.HARDSWISH: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.SILU: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.MEAN: OpSpec(1, 1, 'Reduce', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.SUM: OpSpec(1, 1, 'Reduce', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.SLICE: OpSpec(1, 1, 'Slice', False, True, ('x',), ('float32', 'int64', 'int32', 'bool'), {}, 'same'),
    OpCode.EXPAND: OpSpec(1, 1, 'Shape', False, False, ('x',), ('float32', 'int64', 'int32', 'bool'), {}, 'same'),
    OpCode.LOG: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.SQRT: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.RSQRT: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.ABS: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.POW: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32',), {}, 'same'),
    OpCode.EXP: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.EMBEDDING: OpSpec(2, 2, None, False, False, ('weight', 'indices'), ('float32',), {'indices': ('int64', 'int32')}, 'same'),
    OpCode.CAST: OpSpec(1, 1, 'Cast', False, False, ('x',), ('float32', 'int64', 'int32', 'bool'), {}, 'attr'),
    OpCode.GATHER: OpSpec(2, 2, 'Axis', False, False, ('x', 'index'), ('float32', 'int64', 'int32', 'bool'), {'index': ('int64', 'int32')}, 'same'),
    OpCode.INDEX_SELECT: OpSpec(2, 2, 'Axis', False, False, ('x', 'index'), ('float32', 'int64', 'int32', 'bool'), {'index': ('int64', 'int32')}, 'same'),
    OpCode.EQ: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32', 'bool'), {}, 'bool'),
    OpCode.NE: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32', 'bool'), {}, 'bool'),
    OpCode.LT: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32', 'bool'), {}, 'bool'),
    OpCode.LE: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32', 'bool'), {}, 'bool'),
    OpCode.GT: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32', 'bool'), {}, 'bool'),
    OpCode.GE: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32', 'bool'), {}, 'bool'),
    OpCode.BITWISE_NOT: OpSpec(1, 1, None, False, False, ('x',), ('bool', 'int64', 'int32'), {}, 'same'),
    OpCode.BITWISE_AND: OpSpec(2, 2, None, False, False, ('a', 'b'), ('bool', 'int64', 'int32'), {}, 'same'),
    OpCode.BITWISE_OR: OpSpec(2, 2, None, False, False, ('a', 'b'), ('bool', 'int64', 'int32'), {}, 'same'),
    OpCode.WHERE: OpSpec(3, 3, None, False, False, ('condition', 'a', 'b'), ('float32', 'int64', 'int32', 'bool'), {'condition': ('bool',)}, 'same'),
    OpCode.CUMSUM: OpSpec(1, 1, 'Axis', False, False, ('x',), ('float32', 'int64', 'int32', 'bool'), {}, 'widen_int'),
    OpCode.SIN: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.COS: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.ARANGE_LIKE: OpSpec(1, 1, 'ArangeLike', False, False, ('reference',), ('float32', 'int64', 'int32', 'bool'), {}, 'int64'),
    OpCode.RESIZE2D: OpSpec(1, 1, 'Resize', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.TRIU: OpSpec(1, 1, 'Diagonal', True, False, ('x',), ('float32', 'int64', 'int32', 'bool'), {}, 'same'),
    OpCode.TRIL: OpSpec(1, 1, 'Diagonal', True, False, ('x',), ('float32', 'int64', 'int32', 'bool'), {}, 'same'),
    OpCode.ARGMAX: OpSpec(1, 1, 'ArgReduce', False, False, ('x',), ('float32', 'int64', 'int32'), {}, 'int64'),
    OpCode.TOPK: OpSpec(1, 1, 'TopK', False, False, ('x',), ('float32', 'int64', 'int32'), {}, 'int64'),
    OpCode.FLOOR_DIV: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32'), {}, 'same'),
    OpCode.TRUNC_DIV: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32'), {}, 'same'),
    OpCode.REMAINDER: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32', 'int64', 'int32'), {}, 'same'),
    OpCode.FAKE_QUANTIZE: OpSpec(1, 1, 'Quantize', False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.ARGMIN: OpSpec(1, 1, 'ArgReduce', False, False, ('x',), ('float32', 'int64', 'int32'), {}, 'int64'),
    OpCode.FULL: OpSpec(2, 2, 'Fill', False, False, ('value', 'reference'), ('float32', 'int64', 'int32', 'bool'), {'reference': ('float32', 'int64', 'int32', 'bool')}, 'same'),
    OpCode.LOG1P: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.EXPM1: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.FLOOR: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.CEIL: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.TRUNC: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.ROUND: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.SIGN: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.ERF: OpSpec(1, 1, None, False, False, ('x',), ('float32',), {}, 'same'),
    OpCode.INDEX_COPY: OpSpec(3, 3, 'Axis', False, False, ('state', 'index', 'source'), ('float32', 'int64', 'int32', 'bool'), {'index': ('int64', 'int32')}, 'same'),
    OpCode.STATE_WRITE: OpSpec(2, 2, None, False, False, ('state', 'value'), ('float32', 'int64', 'int32', 'bool'), {}, 'same'),
    OpCode.ATTENTION: OpSpec(3, 4, 'Attention', False, False, ('q', 'k', 'v', 'mask'), ('float32',), {'mask': ('float32', 'bool')}, 'same'),
}

# Attributes union member -> its tag
ATTRIBUTE_TAGS: dict[str, int] = {'Binary': 1, 'Gelu': 2, 'Axis': 3, 'Fused': 4, 'Conv2d': 5, 'LayerNorm': 6, 'Pool2d': 7, 'Shape': 8, 'Permute': 9, 'Flatten': 10, 'Clamp': 11, 'Reduce': 12, 'Slice': 13, 'Cast': 14, 'ArangeLike': 15, 'Resize': 16, 'Diagonal': 17, 'ArgReduce': 18, 'TopK': 19, 'Quantize': 20, 'Fill': 21, 'Attention': 22}
