# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_ops.toml
# ruff: noqa
"""The op traits of schema/demo_ops.toml: what each op is, for the compiler and the runtimes
(the keys are documented in the spec's header)."""

from __future__ import annotations

from typing import NamedTuple

from bundle_format._generated.demo_ops import OpCode


class OpTraits(NamedTuple):
    family: str  # the kernel function computing it: binary | unary | math | compare | bitwise | rounding | own
    shape: str  # shape rule: same | broadcast | axis | reduce | own (compiler/shapes.py)
    memory: str  # memory bound: broadcast | rounding | largest_input | widest | own (runtime_py memory.py)
    oracle: str | None  # the dotted torch function it computes
    xnnpack: str | None  # "step" (a fast step of its own) | "unary" (a UnaryStep) | None
    int8: str | None  # "keeps_grid": static int8 keeps the input's grid through it
    values: str | None  # "view" | "moved" | "converted": the result carries input 0's values
    row_split: bool  # rows of the result depend on the same rows of input 0


OP_TRAITS: dict[OpCode, OpTraits] = {
    OpCode.ADD: OpTraits('binary', 'broadcast', 'broadcast', 'torch.add', 'step', None, None, False),
    OpCode.SUB: OpTraits('binary', 'broadcast', 'broadcast', 'torch.sub', 'step', None, None, False),
    OpCode.MUL: OpTraits('binary', 'broadcast', 'broadcast', 'torch.mul', 'step', None, None, False),
    OpCode.DIV: OpTraits('binary', 'broadcast', 'broadcast', 'torch.div', 'step', None, None, False),
    OpCode.NEG: OpTraits('unary', 'same', 'largest_input', 'torch.neg', 'unary', None, None, False),
    OpCode.RELU: OpTraits('unary', 'same', 'largest_input', 'torch.relu', 'unary', 'keeps_grid', None, False),
    OpCode.SIGMOID: OpTraits('unary', 'same', 'largest_input', 'torch.sigmoid', 'unary', None, None, False),
    OpCode.TANH: OpTraits('unary', 'same', 'largest_input', 'torch.tanh', 'unary', None, None, False),
    OpCode.GELU: OpTraits('own', 'same', 'largest_input', 'torch.nn.functional.gelu', 'unary', None, None, False),
    OpCode.SOFTMAX: OpTraits('own', 'axis', 'largest_input', 'torch.softmax', None, None, None, False),
    OpCode.LOG_SOFTMAX: OpTraits('own', 'axis', 'largest_input', 'torch.log_softmax', None, None, None, False),
    OpCode.MATMUL: OpTraits('own', 'own', 'own', 'torch.matmul', None, None, None, True),
    OpCode.LINEAR: OpTraits('own', 'own', 'own', 'torch.nn.functional.linear', 'step', None, None, True),
    OpCode.CONV2D: OpTraits('own', 'own', 'own', 'torch.nn.functional.conv2d', 'step', None, None, False),
    OpCode.CHANNEL_AFFINE: OpTraits('own', 'own', 'broadcast', 'torch.nn.functional.batch_norm', None, None, None, False),
    OpCode.LAYER_NORM: OpTraits('own', 'own', 'broadcast', 'torch.nn.functional.layer_norm', None, None, None, False),
    OpCode.MAX_POOL2D: OpTraits('own', 'own', 'own', 'torch.nn.functional.max_pool2d', 'step', 'keeps_grid', None, False),
    OpCode.AVG_POOL2D: OpTraits('own', 'own', 'own', 'torch.nn.functional.avg_pool2d', None, 'keeps_grid', None, False),
    OpCode.ADAPTIVE_AVG_POOL2D: OpTraits('own', 'own', 'own', 'torch.nn.functional.adaptive_avg_pool2d', 'step', 'keeps_grid', None, False),
    OpCode.TRANSPOSE: OpTraits('own', 'own', 'largest_input', 'torch.permute', None, None, 'view', False),
    OpCode.RESHAPE: OpTraits('own', 'own', 'largest_input', 'torch.reshape', None, 'keeps_grid', 'view', False),
    OpCode.FLATTEN: OpTraits('own', 'own', 'largest_input', 'torch.flatten', None, 'keeps_grid', 'view', False),
    OpCode.CAT: OpTraits('own', 'own', 'own', 'torch.cat', None, None, 'moved', False),
    OpCode.CLAMP: OpTraits('own', 'same', 'largest_input', 'torch.clamp', 'unary', 'keeps_grid', None, False),
    OpCode.HARDSIGMOID: OpTraits('own', 'same', 'largest_input', 'torch.nn.functional.hardsigmoid', 'unary', None, None, False),
    OpCode.HARDSWISH: OpTraits('own', 'same', 'largest_input', 'torch.nn.functional.hardswish', 'unary', None, None, False),
    OpCode.SILU: OpTraits('own', 'same', 'largest_input', 'torch.nn.functional.silu', 'unary', None, None, False),
    OpCode.MEAN: OpTraits('own', 'reduce', 'largest_input', 'torch.mean', None, None, None, False),
    OpCode.SUM: OpTraits('own', 'reduce', 'largest_input', 'torch.sum', None, None, None, False),
    OpCode.SLICE: OpTraits('own', 'own', 'largest_input', 'torch.narrow', None, None, 'view', False),
    OpCode.EXPAND: OpTraits('own', 'own', 'own', 'torch.Tensor.expand', None, None, 'moved', False),
    OpCode.LOG: OpTraits('math', 'same', 'largest_input', 'torch.log', 'unary', None, None, False),
    OpCode.SQRT: OpTraits('math', 'same', 'largest_input', 'torch.sqrt', 'unary', None, None, False),
    OpCode.RSQRT: OpTraits('math', 'same', 'largest_input', 'torch.rsqrt', 'unary', None, None, False),
    OpCode.ABS: OpTraits('math', 'same', 'largest_input', 'torch.abs', 'unary', None, None, False),
    OpCode.POW: OpTraits('binary', 'broadcast', 'broadcast', 'torch.pow', 'step', None, None, False),
    OpCode.EXP: OpTraits('math', 'same', 'largest_input', 'torch.exp', 'unary', None, None, False),
    OpCode.EMBEDDING: OpTraits('own', 'own', 'own', 'torch.nn.functional.embedding', None, None, None, False),
    OpCode.CAST: OpTraits('own', 'same', 'widest', 'torch.Tensor.to', None, None, 'converted', False),
    OpCode.GATHER: OpTraits('own', 'own', 'own', 'torch.gather', None, None, 'moved', False),
    OpCode.INDEX_SELECT: OpTraits('own', 'own', 'own', 'torch.index_select', None, None, 'moved', False),
    OpCode.EQ: OpTraits('compare', 'broadcast', 'broadcast', 'torch.eq', None, None, None, False),
    OpCode.NE: OpTraits('compare', 'broadcast', 'broadcast', 'torch.ne', None, None, None, False),
    OpCode.LT: OpTraits('compare', 'broadcast', 'broadcast', 'torch.lt', None, None, None, False),
    OpCode.LE: OpTraits('compare', 'broadcast', 'broadcast', 'torch.le', None, None, None, False),
    OpCode.GT: OpTraits('compare', 'broadcast', 'broadcast', 'torch.gt', None, None, None, False),
    OpCode.GE: OpTraits('compare', 'broadcast', 'broadcast', 'torch.ge', None, None, None, False),
    OpCode.BITWISE_NOT: OpTraits('bitwise', 'same', 'largest_input', 'torch.bitwise_not', None, None, None, False),
    OpCode.BITWISE_AND: OpTraits('bitwise', 'broadcast', 'broadcast', 'torch.bitwise_and', None, None, None, False),
    OpCode.BITWISE_OR: OpTraits('bitwise', 'broadcast', 'broadcast', 'torch.bitwise_or', None, None, None, False),
    OpCode.WHERE: OpTraits('own', 'broadcast', 'broadcast', 'torch.where', None, None, None, False),
    OpCode.CUMSUM: OpTraits('own', 'axis', 'widest', 'torch.cumsum', None, None, None, False),
    OpCode.SIN: OpTraits('math', 'same', 'largest_input', 'torch.sin', None, None, None, False),
    OpCode.COS: OpTraits('math', 'same', 'largest_input', 'torch.cos', None, None, None, False),
    OpCode.ARANGE_LIKE: OpTraits('own', 'own', 'own', 'torch.arange', None, None, None, False),
    OpCode.RESIZE2D: OpTraits('own', 'own', 'own', 'torch.nn.functional.interpolate', None, None, None, False),
    OpCode.TRIU: OpTraits('own', 'own', 'largest_input', 'torch.triu', None, None, None, False),
    OpCode.TRIL: OpTraits('own', 'own', 'largest_input', 'torch.tril', None, None, None, False),
    OpCode.ARGMAX: OpTraits('own', 'own', 'widest', 'torch.argmax', None, None, None, False),
    OpCode.TOPK: OpTraits('own', 'own', 'own', 'torch.topk', None, None, None, False),
    OpCode.FLOOR_DIV: OpTraits('rounding', 'broadcast', 'rounding', 'torch.floor_divide', None, None, None, False),
    OpCode.TRUNC_DIV: OpTraits('rounding', 'broadcast', 'rounding', 'torch.div', None, None, None, False),
    OpCode.REMAINDER: OpTraits('rounding', 'broadcast', 'rounding', 'torch.remainder', None, None, None, False),
    OpCode.FAKE_QUANTIZE: OpTraits('own', 'same', 'largest_input', 'torch.fake_quantize_per_tensor_affine', 'unary', None, None, False),
    OpCode.ARGMIN: OpTraits('own', 'own', 'widest', 'torch.argmin', None, None, None, False),
    OpCode.FULL: OpTraits('own', 'own', 'own', 'torch.full', None, None, None, False),
    OpCode.LOG1P: OpTraits('math', 'same', 'largest_input', 'torch.log1p', 'unary', None, None, False),
    OpCode.EXPM1: OpTraits('math', 'same', 'largest_input', 'torch.expm1', 'unary', None, None, False),
    OpCode.FLOOR: OpTraits('math', 'same', 'largest_input', 'torch.floor', 'unary', None, None, False),
    OpCode.CEIL: OpTraits('math', 'same', 'largest_input', 'torch.ceil', 'unary', None, None, False),
    OpCode.TRUNC: OpTraits('math', 'same', 'largest_input', 'torch.trunc', 'unary', None, None, False),
    OpCode.ROUND: OpTraits('math', 'same', 'largest_input', 'torch.round', 'unary', None, None, False),
    OpCode.SIGN: OpTraits('math', 'same', 'largest_input', 'torch.sign', 'unary', None, None, False),
    OpCode.ERF: OpTraits('math', 'same', 'largest_input', 'torch.erf', 'unary', None, None, False),
    OpCode.INDEX_COPY: OpTraits('own', 'same', 'own', None, None, None, None, False),
    OpCode.STATE_WRITE: OpTraits('own', 'same', 'own', None, None, None, None, False),
    OpCode.ATTENTION: OpTraits('own', 'own', 'own', None, None, None, None, False),
}

FAMILY = {op: t.family for op, t in OP_TRAITS.items()}
SHAPE_RULE = {op: t.shape for op, t in OP_TRAITS.items()}
MEMORY_RULE = {op: t.memory for op, t in OP_TRAITS.items()}
ORACLE = {op: t.oracle for op, t in OP_TRAITS.items() if t.oracle is not None}
XNNPACK = {op: t.xnnpack for op, t in OP_TRAITS.items() if t.xnnpack is not None}
VIEWS = frozenset(op for op, t in OP_TRAITS.items() if t.values == "view")
CARRIES_VALUES = frozenset(op for op, t in OP_TRAITS.items() if t.values is not None)
INT8_KEEPS_GRID = frozenset(op for op, t in OP_TRAITS.items() if t.int8 == "keeps_grid")
ROW_SPLIT_OPS = tuple(op for op, t in OP_TRAITS.items() if t.row_split)

# ATen name -> the op its plain lowering emits (one operand: unary; Binary attributes: binary)
PLAIN_LOWERINGS: dict[str, OpCode] = {
    'aten::add': OpCode.ADD,
    'aten::sub': OpCode.SUB,
    'aten::mul': OpCode.MUL,
    'aten::div': OpCode.DIV,
    'aten::neg': OpCode.NEG,
    'aten::relu': OpCode.RELU,
    'aten::sigmoid': OpCode.SIGMOID,
    'aten::tanh': OpCode.TANH,
    'aten::hardsigmoid': OpCode.HARDSIGMOID,
    'aten::hardswish': OpCode.HARDSWISH,
    'aten::silu': OpCode.SILU,
    'aten::log': OpCode.LOG,
    'aten::sqrt': OpCode.SQRT,
    'aten::rsqrt': OpCode.RSQRT,
    'aten::pow': OpCode.POW,
    'aten::exp': OpCode.EXP,
    'aten::sin': OpCode.SIN,
    'aten::cos': OpCode.COS,
    'aten::floor_divide': OpCode.FLOOR_DIV,
    'aten::remainder': OpCode.REMAINDER,
    'aten::log1p': OpCode.LOG1P,
    'aten::expm1': OpCode.EXPM1,
    'aten::floor': OpCode.FLOOR,
    'aten::ceil': OpCode.CEIL,
    'aten::trunc': OpCode.TRUNC,
    'aten::sign': OpCode.SIGN,
    'aten::erf': OpCode.ERF,
}

# ATen names whose in-place form (name_) compiles as the out-of-place op
INPLACE: tuple[str, ...] = ('aten::abs', 'aten::add', 'aten::bitwise_not', 'aten::ceil', 'aten::clamp', 'aten::clamp_max', 'aten::clamp_min', 'aten::clip', 'aten::copy', 'aten::cumsum', 'aten::div', 'aten::erf', 'aten::exp', 'aten::expm1', 'aten::floor', 'aten::floor_divide', 'aten::hardsigmoid', 'aten::hardswish', 'aten::hardtanh', 'aten::index_copy', 'aten::index_put', 'aten::leaky_relu', 'aten::log', 'aten::log1p', 'aten::masked_fill', 'aten::mul', 'aten::neg', 'aten::pow', 'aten::reciprocal', 'aten::relu', 'aten::relu6', 'aten::remainder', 'aten::round', 'aten::rsqrt', 'aten::sigmoid', 'aten::sign', 'aten::silu', 'aten::sqrt', 'aten::sub', 'aten::tanh', 'aten::tril', 'aten::triu', 'aten::trunc')

# ATen ops torch runs on a quantized tensor, by what they do to its grid
QUANTIZED_KEEPS_GRID = frozenset(['aten::chunk', 'aten::contiguous', 'aten::dim', 'aten::dropout', 'aten::flatten', 'aten::len', 'aten::max_pool2d', 'aten::permute', 'aten::relu', 'aten::reshape', 'aten::select', 'aten::size', 'aten::slice', 'aten::squeeze', 'aten::transpose', 'aten::unsqueeze', 'aten::upsample_nearest2d', 'aten::view'])  # the result's values are the input's, or chosen among them
QUANTIZED_REQUANTIZES = frozenset(['aten::adaptive_avg_pool2d', 'aten::avg_pool2d', 'aten::clamp', 'aten::hardtanh', 'aten::mean', 'aten::relu6', 'aten::upsample_bilinear2d'])  # torch rounds the result to the input's grid
QUANTIZED_FIXED_GRID: dict[str, tuple[float, int]] = {'aten::hardsigmoid': (0.00390625, 0), 'aten::sigmoid': (0.00390625, 0), 'aten::tanh': (0.0078125, 128)}  # torch's fixed output grid (quint8 inputs)
