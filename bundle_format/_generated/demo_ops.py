# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_ops.toml
# ruff: noqa
"""The demo instruction set (schema/demo_ops.toml): opcodes and their operands."""

from __future__ import annotations

import enum
from dataclasses import dataclass


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


@dataclass(frozen=True)
class OpSpec:
    min_inputs: int
    max_inputs: int | None  # None: any number
    attrs: str | None  # the Attributes union member it carries (fbs table name); None: none
    attrs_optional: bool  # every attribute field has a default: the instruction may omit them
    may_alias_input: bool  # the result may be a view of input 0
    operands: tuple[str, ...] = ()  # names, in order (the last repeats for "any number")
    dtypes: tuple[str, ...] = ("float32",)  # element types every operand and the result may have


OP_SPECS: dict[OpCode, OpSpec] = {
    OpCode.ADD: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32',)),
    OpCode.SUB: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32',)),
    OpCode.MUL: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32',)),
    OpCode.DIV: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32',)),
    OpCode.NEG: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.RELU: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.SIGMOID: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.TANH: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.GELU: OpSpec(1, 1, 'Gelu', True, False, ('x',), ('float32',)),
    OpCode.SOFTMAX: OpSpec(1, 1, 'Axis', False, False, ('x',), ('float32',)),
    OpCode.LOG_SOFTMAX: OpSpec(1, 1, 'Axis', False, False, ('x',), ('float32',)),
    OpCode.MATMUL: OpSpec(2, 2, None, False, False, ('a', 'b'), ('float32',)),
    OpCode.LINEAR: OpSpec(2, 3, 'Fused', True, False, ('x', 'weight', 'bias'), ('float32',)),
    OpCode.CONV2D: OpSpec(2, 3, 'Conv2d', True, False, ('x', 'weight', 'bias'), ('float32',)),
    OpCode.CHANNEL_AFFINE: OpSpec(3, 3, None, False, False, ('x', 'scale', 'shift'), ('float32',)),
    OpCode.LAYER_NORM: OpSpec(1, 3, 'LayerNorm', False, False, ('x', 'weight', 'bias'), ('float32',)),
    OpCode.MAX_POOL2D: OpSpec(1, 1, 'Pool2d', False, False, ('x',), ('float32',)),
    OpCode.AVG_POOL2D: OpSpec(1, 1, 'Pool2d', False, False, ('x',), ('float32',)),
    OpCode.ADAPTIVE_AVG_POOL2D: OpSpec(1, 1, 'Shape', False, False, ('x',), ('float32',)),
    OpCode.TRANSPOSE: OpSpec(1, 1, 'Permute', False, True, ('x',), ('float32',)),
    OpCode.RESHAPE: OpSpec(1, 1, 'Shape', False, True, ('x',), ('float32',)),
    OpCode.FLATTEN: OpSpec(1, 1, 'Flatten', False, True, ('x',), ('float32',)),
    OpCode.CAT: OpSpec(1, None, 'Axis', False, False, ('tensors',), ('float32',)),
    OpCode.CLAMP: OpSpec(1, 1, 'Clamp', False, False, ('x',), ('float32',)),
    OpCode.HARDSIGMOID: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.HARDSWISH: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.SILU: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.MEAN: OpSpec(1, 1, 'Reduce', False, False, ('x',), ('float32',)),
    OpCode.SUM: OpSpec(1, 1, 'Reduce', False, False, ('x',), ('float32',)),
    OpCode.SLICE: OpSpec(1, 1, 'Slice', False, True, ('x',), ('float32',)),
    OpCode.EXPAND: OpSpec(1, 1, 'Shape', False, False, ('x',), ('float32',)),
    OpCode.LOG: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.SQRT: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.RSQRT: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.ABS: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
    OpCode.POW: OpSpec(1, 2, 'Binary', True, False, ('a', 'b'), ('float32',)),
    OpCode.EXP: OpSpec(1, 1, None, False, False, ('x',), ('float32',)),
}

# Attributes union member -> its tag
ATTRIBUTE_TAGS: dict[str, int] = {'Binary': 1, 'Gelu': 2, 'Axis': 3, 'Fused': 4, 'Conv2d': 5, 'LayerNorm': 6, 'Pool2d': 7, 'Shape': 8, 'Permute': 9, 'Flatten': 10, 'Clamp': 11, 'Reduce': 12, 'Slice': 13}
