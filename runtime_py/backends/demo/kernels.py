"""The demo instruction set's kernel table: how each opcode computes, with numpy.

``KERNELS`` is the one place that maps an ``OpCode`` to its numpy kernel, with the arity and
attribute type of its op spec (schema/demo_ops.toml). The plan checks instructions against
an entry's arity and attribute type, then calls its factory once per instruction to bind
the attributes; the executor only calls the bound kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from bundle_format.program import OP_SPECS, OpCode, attributes_class
from runtime_py.backends.demo import (
    activations,
    attention,
    conv,
    elementwise,
    fake_quantize,
    layout,
    linalg,
    normalization,
    pooling,
    reductions,
    resize,
    rounding,
    selection,
    slicing,
    state,
    typed,
)
from runtime_py.backends.demo.arrays import Kernel

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
    # two tensors (broadcast), or one tensor and the scalar in the attributes
    return lambda attrs, n_inputs: elementwise.make_binary(op, attrs, n_inputs)


# opcode -> (factory, buffered: it can keep its result buffer between calls): the one table
# of this executor; arity and attributes come from the op spec (schema/demo_ops.toml)
_FACTORIES: dict[OpCode, tuple[KernelFactory, bool]] = {
    OpCode.ADD: (_binary(OpCode.ADD), False),
    OpCode.SUB: (_binary(OpCode.SUB), False),
    OpCode.MUL: (_binary(OpCode.MUL), False),
    OpCode.DIV: (_binary(OpCode.DIV), False),
    OpCode.NEG: (_fixed(elementwise.neg), False),
    OpCode.RELU: (_fixed(elementwise.relu), False),
    OpCode.SIGMOID: (_fixed(elementwise.sigmoid), False),
    OpCode.TANH: (_fixed(elementwise.tanh), False),
    OpCode.GELU: (elementwise.make_gelu, True),
    OpCode.SOFTMAX: (elementwise.make_softmax, False),
    OpCode.LOG_SOFTMAX: (elementwise.make_log_softmax, False),
    OpCode.MATMUL: (_fixed(linalg.matmul), False),
    OpCode.LINEAR: (linalg.make_linear, False),
    OpCode.CONV2D: (conv.make_conv2d, True),
    OpCode.CHANNEL_AFFINE: (_fixed(normalization.channel_affine), False),
    OpCode.LAYER_NORM: (normalization.make_layer_norm, False),
    OpCode.MAX_POOL2D: (pooling.make_max_pool2d, True),
    OpCode.AVG_POOL2D: (pooling.make_avg_pool2d, False),
    OpCode.ADAPTIVE_AVG_POOL2D: (pooling.make_adaptive_avg_pool2d, False),
    OpCode.TRANSPOSE: (layout.make_transpose, False),
    OpCode.RESHAPE: (layout.make_reshape, False),
    OpCode.FLATTEN: (layout.make_flatten, False),
    OpCode.CAT: (layout.make_cat, False),
    OpCode.CLAMP: (activations.make_clamp, False),
    OpCode.HARDSIGMOID: (_fixed(activations.hardsigmoid), False),
    OpCode.HARDSWISH: (_fixed(activations.hardswish), False),
    OpCode.SILU: (_fixed(activations.silu), False),
    OpCode.MEAN: (reductions.make_mean, False),
    OpCode.SUM: (reductions.make_sum, False),
    OpCode.SLICE: (slicing.make_slice, False),
    OpCode.EXPAND: (slicing.make_expand, False),
    OpCode.LOG: (_fixed(activations.log), False),
    OpCode.SQRT: (_fixed(activations.sqrt), False),
    OpCode.RSQRT: (_fixed(activations.rsqrt), False),
    OpCode.ABS: (_fixed(activations.absolute), False),
    OpCode.EXP: (_fixed(activations.exp), False),
    OpCode.LOG1P: (_fixed(activations.log1p), False),
    OpCode.EXPM1: (_fixed(activations.expm1), False),
    OpCode.FLOOR: (_fixed(activations.floor), False),
    OpCode.CEIL: (_fixed(activations.ceil), False),
    OpCode.TRUNC: (_fixed(activations.trunc), False),
    OpCode.ROUND: (_fixed(activations.round_half_even), False),
    OpCode.SIGN: (_fixed(activations.sign), False),
    OpCode.ERF: (_fixed(activations.erf), False),
    OpCode.POW: (_binary(OpCode.POW), False),
    OpCode.EMBEDDING: (_fixed(typed.embedding), False),
    OpCode.CAST: (typed.make_cast, False),
    OpCode.GATHER: (typed.make_gather, False),
    OpCode.INDEX_SELECT: (typed.make_index_select, False),
    OpCode.EQ: (typed.make_compare(OpCode.EQ), False),
    OpCode.NE: (typed.make_compare(OpCode.NE), False),
    OpCode.LT: (typed.make_compare(OpCode.LT), False),
    OpCode.LE: (typed.make_compare(OpCode.LE), False),
    OpCode.GT: (typed.make_compare(OpCode.GT), False),
    OpCode.GE: (typed.make_compare(OpCode.GE), False),
    OpCode.BITWISE_NOT: (_fixed(typed.bitwise_not), False),
    OpCode.BITWISE_AND: (_fixed(typed.bitwise_and), False),
    OpCode.BITWISE_OR: (_fixed(typed.bitwise_or), False),
    OpCode.WHERE: (_fixed(typed.where), False),
    OpCode.CUMSUM: (typed.make_cumsum, False),
    OpCode.SIN: (_fixed(typed.sin), False),
    OpCode.COS: (_fixed(typed.cos), False),
    OpCode.ARANGE_LIKE: (typed.make_arange_like, False),
    OpCode.FULL: (typed.make_full, False),
    OpCode.RESIZE2D: (resize.make_resize2d, False),
    OpCode.FAKE_QUANTIZE: (fake_quantize.make_fake_quantize, False),
    OpCode.TRIU: (selection.make_triu, False),
    OpCode.TRIL: (selection.make_tril, False),
    OpCode.ARGMAX: (selection.make_argmax, False),
    OpCode.TOPK: (selection.make_topk, False),
    OpCode.ARGMIN: (selection.make_argmin, False),
    OpCode.FLOOR_DIV: (rounding.make_rounding(OpCode.FLOOR_DIV), False),
    OpCode.TRUNC_DIV: (rounding.make_rounding(OpCode.TRUNC_DIV), False),
    OpCode.REMAINDER: (rounding.make_rounding(OpCode.REMAINDER), False),
    OpCode.INDEX_COPY: (state.make_index_copy, False),
    OpCode.STATE_WRITE: (state.make_state_write, False),
    OpCode.ATTENTION: (attention.make_attention, False),
}


def _spec(op: OpCode, factory: KernelFactory, buffered: bool) -> KernelSpec:
    spec = OP_SPECS[op]
    attrs_type = attributes_class(op)
    default = attrs_type() if attrs_type is not None and spec.attrs_optional else None
    kind = BufferedKernelSpec if buffered else KernelSpec  # a buffered factory takes reuse_output
    return kind(factory, spec.min_inputs, spec.max_inputs, attrs_type, default,  # type: ignore[arg-type]
                spec.may_alias_input)


KERNELS: dict[OpCode, KernelSpec] = {op: _spec(op, *entry) for op, entry in _FACTORIES.items()}
