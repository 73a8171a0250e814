"""The demo instruction set's kernel table: what each opcode reads, and how it computes.

``KERNELS`` is the one place that maps an ``OpCode`` to its numpy kernel. The plan checks
instructions against an entry's arity and attribute type, then calls its factory once per
instruction to bind the attributes; the executor only calls the bound kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from runtime_py.backends.demo import (
    activations,
    conv,
    elementwise,
    layout,
    linalg,
    normalization,
    pooling,
    reductions,
    slicing,
)
from runtime_py.backends.demo.arrays import Kernel
from runtime_py.format.program import (
    AxisAttrs,
    BinaryAttrs,
    ClampAttrs,
    Conv2dAttrs,
    FlattenAttrs,
    FusedAttrs,
    GeluAttrs,
    LayerNormAttrs,
    OpCode,
    PermuteAttrs,
    Pool2dAttrs,
    ReduceAttrs,
    ShapeAttrs,
    SliceAttrs,
)

# Binds an instruction's attributes (already of the entry's type) and its input count into a
# kernel; raises ValueError for attribute values the op does not accept.
KernelFactory = Callable[[Any, int], Kernel]


class BufferedKernelFactory(Protocol):
    """A ``KernelFactory`` that also takes ``reuse_output=True``: the result is written into a
    buffer the kernel keeps between calls (the plan asks for it only when the result never
    leaves the call)."""

    def __call__(self, attrs: Any, n_inputs: int, /, *, reuse_output: bool = False) -> Kernel: ...


@dataclass(frozen=True)
class KernelSpec:
    """How one opcode is checked and prepared."""

    factory: KernelFactory
    min_inputs: int
    max_inputs: int | None  # None: any number (cat)
    attrs_type: type | None = None  # None: the instruction carries no attributes
    default_attrs: object = None  # used when an instruction omits attributes that have defaults
    may_alias_input: bool = False  # the result may be a view of an input (matters for outputs)


@dataclass(frozen=True)
class BufferedKernelSpec(KernelSpec):
    """An opcode whose kernel can write its result into a buffer it keeps between calls."""

    factory: BufferedKernelFactory


def _fixed(kernel: Kernel) -> KernelFactory:
    """The factory of a kernel without attributes."""
    return lambda attrs, n_inputs: kernel


def _binary(op: OpCode) -> KernelFactory:
    return lambda attrs, n_inputs: elementwise.make_binary(op, attrs, n_inputs)


def _binary_spec(op: OpCode) -> KernelSpec:
    # two tensors (broadcast), or one tensor and the scalar in the attributes
    return KernelSpec(_binary(op), 1, 2, BinaryAttrs, BinaryAttrs())


KERNELS: dict[OpCode, KernelSpec] = {
    OpCode.ADD: _binary_spec(OpCode.ADD),  # a + alpha*b
    OpCode.SUB: _binary_spec(OpCode.SUB),  # a - alpha*b; reverse: b - alpha*a (rsub)
    OpCode.MUL: _binary_spec(OpCode.MUL),  # a * b
    OpCode.DIV: _binary_spec(OpCode.DIV),  # a / b, true division
    OpCode.NEG: KernelSpec(_fixed(elementwise.neg), 1, 1),  # -x
    OpCode.RELU: KernelSpec(_fixed(elementwise.relu), 1, 1),  # max(x, 0)
    OpCode.SIGMOID: KernelSpec(_fixed(elementwise.sigmoid), 1, 1),  # 1 / (1 + exp(-x))
    OpCode.TANH: KernelSpec(_fixed(elementwise.tanh), 1, 1),  # tanh(x)
    OpCode.GELU: BufferedKernelSpec(elementwise.make_gelu, 1, 1, GeluAttrs, GeluAttrs()),  # erf or tanh GELU
    OpCode.SOFTMAX: KernelSpec(elementwise.make_softmax, 1, 1, AxisAttrs),  # stable softmax on an axis
    OpCode.LOG_SOFTMAX: KernelSpec(elementwise.make_log_softmax, 1, 1, AxisAttrs),  # stable log-softmax
    OpCode.MATMUL: KernelSpec(_fixed(linalg.matmul), 2, 2),  # torch.matmul
    OpCode.LINEAR: KernelSpec(linalg.make_linear, 2, 3, FusedAttrs, FusedAttrs()),  # x @ W.T + b [relu]
    OpCode.CONV2D: BufferedKernelSpec(conv.make_conv2d, 2, 3, Conv2dAttrs, Conv2dAttrs()),  # x, W[, b] [relu]
    OpCode.CHANNEL_AFFINE: KernelSpec(_fixed(normalization.channel_affine), 3, 3),  # x*scale+shift on dim 1
    OpCode.LAYER_NORM: KernelSpec(normalization.make_layer_norm, 1, 3, LayerNormAttrs),  # x[, w[, b]]
    OpCode.MAX_POOL2D: BufferedKernelSpec(pooling.make_max_pool2d, 1, 1, Pool2dAttrs),  # max over windows
    OpCode.AVG_POOL2D: KernelSpec(pooling.make_avg_pool2d, 1, 1, Pool2dAttrs),  # mean over windows
    OpCode.ADAPTIVE_AVG_POOL2D: KernelSpec(pooling.make_adaptive_avg_pool2d, 1, 1, ShapeAttrs),  # to a size
    OpCode.TRANSPOSE: KernelSpec(layout.make_transpose, 1, 1, PermuteAttrs, may_alias_input=True),  # permute
    OpCode.RESHAPE: KernelSpec(layout.make_reshape, 1, 1, ShapeAttrs, may_alias_input=True),  # one -1 allowed
    OpCode.FLATTEN: KernelSpec(layout.make_flatten, 1, 1, FlattenAttrs, may_alias_input=True),  # merge dims
    OpCode.CAT: KernelSpec(layout.make_cat, 1, None, AxisAttrs),  # concatenate inputs on an axis
    OpCode.CLAMP: KernelSpec(activations.make_clamp, 1, 1, ClampAttrs),  # min(max(x, lo), hi)
    OpCode.HARDSIGMOID: KernelSpec(_fixed(activations.hardsigmoid), 1, 1),  # relu6(x + 3) / 6
    OpCode.HARDSWISH: KernelSpec(_fixed(activations.hardswish), 1, 1),  # x * relu6(x + 3) / 6
    OpCode.SILU: KernelSpec(_fixed(activations.silu), 1, 1),  # x * sigmoid(x)
    OpCode.MEAN: KernelSpec(reductions.make_mean, 1, 1, ReduceAttrs),  # mean over axes [keepdim]
    OpCode.SUM: KernelSpec(reductions.make_sum, 1, 1, ReduceAttrs),  # sum over axes [keepdim]
    OpCode.SLICE: KernelSpec(slicing.make_slice, 1, 1, SliceAttrs, may_alias_input=True),  # start:end:step
    OpCode.EXPAND: KernelSpec(slicing.make_expand, 1, 1, ShapeAttrs),  # broadcast to a shape
}
