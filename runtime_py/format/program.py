"""The demo backend's compiled program, as plain frozen dataclasses.

This mirrors ``schema/demo_program.fbs`` (the wire format; read its comments for the
meaning of each field and opcode). The compiler builds these, ``program_codec`` turns
them into bytes and back, and the runtimes execute them. Nothing here needs torch.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

PROGRAM_FORMAT_VERSION = 1
PROGRAM_FILE_IDENTIFIER = b"LXDP"


class DType(enum.IntEnum):
    """Element types; numbered as c10::ScalarType. Only float32 is compiled."""

    FLOAT32 = 6


class OpCode(enum.IntEnum):
    """The instruction set. Numbering is the wire format: append, never reorder."""

    # elementwise binary: 2 inputs (numpy broadcasting) or 1 input and a scalar
    ADD = 0  # a + alpha * b
    SUB = 1  # a - alpha * b
    MUL = 2
    DIV = 3
    # elementwise unary
    NEG = 4
    RELU = 5
    SIGMOID = 6
    TANH = 7
    GELU = 8  # attrs: GeluAttrs
    # reductions over one axis
    SOFTMAX = 9  # attrs: AxisAttrs
    LOG_SOFTMAX = 10  # attrs: AxisAttrs
    # linear algebra
    MATMUL = 11  # torch.matmul semantics
    LINEAR = 12  # x, weight[out, in], optional bias; attrs: FusedAttrs
    CONV2D = 13  # x, weight, optional bias; attrs: Conv2dAttrs
    # normalization
    CHANNEL_AFFINE = 14  # inference batch norm: x, scale[C], shift[C] along dim 1
    LAYER_NORM = 15  # x, optional weight, optional bias; attrs: LayerNormAttrs
    # pooling
    MAX_POOL2D = 16  # attrs: Pool2dAttrs
    AVG_POOL2D = 17  # attrs: Pool2dAttrs
    ADAPTIVE_AVG_POOL2D = 18  # attrs: ShapeAttrs (output size, 2 dims)
    # layout
    TRANSPOSE = 19  # attrs: PermuteAttrs
    RESHAPE = 20  # attrs: ShapeAttrs (may hold one -1)
    FLATTEN = 21  # attrs: FlattenAttrs
    CAT = 22  # n inputs; attrs: AxisAttrs
    # activations
    CLAMP = 23  # attrs: ClampAttrs (clamp, hardtanh, relu6)
    HARDSIGMOID = 24  # min(max(x + 3, 0), 6) / 6
    HARDSWISH = 25  # x * min(max(x + 3, 0), 6) / 6
    SILU = 26  # x * sigmoid(x)
    # reductions over several axes
    MEAN = 27  # attrs: ReduceAttrs
    SUM = 28  # attrs: ReduceAttrs
    # layout
    SLICE = 29  # attrs: SliceAttrs
    EXPAND = 30  # attrs: ShapeAttrs (target shape; -1 keeps the input's size)


class Activation(enum.IntEnum):
    """An activation fused into the instruction that produces a value."""

    NONE = 0
    RELU = 1


@dataclass(frozen=True)
class BinaryAttrs:
    alpha: float = 1.0  # multiplies the second operand (add/sub)
    scalar: float | None = None  # the scalar operand when the instruction has one input
    reverse: bool = False  # operands swapped: scalar OP x (rsub, rdiv) or b OP a


@dataclass(frozen=True)
class GeluAttrs:
    tanh_approximation: bool = False


@dataclass(frozen=True)
class AxisAttrs:
    axis: int


@dataclass(frozen=True)
class FusedAttrs:
    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class Conv2dAttrs:
    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)
    groups: int = 1
    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class LayerNormAttrs:
    normalized_ndim: int
    eps: float


@dataclass(frozen=True)
class Pool2dAttrs:
    kernel: tuple[int, int]
    stride: tuple[int, int]
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)  # max pool only
    ceil_mode: bool = False
    count_include_pad: bool = True  # avg pool only
    divisor_override: int | None = None  # avg pool only


@dataclass(frozen=True)
class ShapeAttrs:
    dims: tuple[int, ...]


@dataclass(frozen=True)
class PermuteAttrs:
    perm: tuple[int, ...]


@dataclass(frozen=True)
class FlattenAttrs:
    start_dim: int
    end_dim: int


@dataclass(frozen=True)
class ClampAttrs:
    min: float | None = None  # None: no lower bound
    max: float | None = None  # None: no upper bound


@dataclass(frozen=True)
class ReduceAttrs:
    axes: tuple[int, ...]  # distinct, may be negative; empty: every axis
    keepdim: bool = False


SLICE_END = (1 << 63) - 1  # "to the end of the axis"


@dataclass(frozen=True)
class SliceAttrs:
    """``x[..., start:end:step, ...]`` on one axis: negative bounds count from the end and
    bounds are clamped to the axis, as in Python; step > 0."""

    axis: int
    start: int = 0
    end: int = SLICE_END
    step: int = 1


Attributes = (
    BinaryAttrs | GeluAttrs | AxisAttrs | FusedAttrs | Conv2dAttrs | LayerNormAttrs
    | Pool2dAttrs | ShapeAttrs | PermuteAttrs | FlattenAttrs | ClampAttrs | ReduceAttrs | SliceAttrs | None
)


@dataclass(frozen=True)
class Instruction:
    op: OpCode
    inputs: tuple[int, ...]  # value slots read
    outputs: tuple[int, ...]  # value slots written
    attributes: Attributes
    debug_handle: int  # key into the bundle's debug table


@dataclass(frozen=True)
class ValueInfo:
    """Static dtype and shape of a value; -1 marks a dimension known only at run time,
    ``shape=None`` an unknown rank."""

    shape: tuple[int, ...] | None
    dtype: DType = DType.FLOAT32


@dataclass(frozen=True)
class Constant:
    slot: int  # value slot the constant is loaded into
    weight: int  # index into the processed module's weight list


@dataclass(frozen=True)
class Program:
    """One compiled method: inputs occupy slots 0..len(inputs)-1."""

    method: str
    num_slots: int
    inputs: tuple[ValueInfo, ...]
    constants: tuple[Constant, ...]
    instructions: tuple[Instruction, ...]
    outputs: tuple[int, ...]
    output_debug_handles: tuple[int, ...]  # per output: handle of its producer, -1 for inputs
    format_version: int = PROGRAM_FORMAT_VERSION
