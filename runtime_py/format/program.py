"""The demo backend's compiled program, as plain frozen dataclasses.

This mirrors ``schema/demo_program.fbs`` (the wire format; read its comments for the
meaning of each field) and ``schema/demo_ops.toml`` (the opcodes, generated into ``OpCode``
and ``OP_SPECS``). The compiler builds these, ``program_codec`` turns
them into bytes and back, and the runtimes execute them. Nothing here needs torch.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

# the instruction set, generated from schema/demo_ops.toml
from runtime_py.format._generated.demo_ops import OP_SPECS as OP_SPECS
from runtime_py.format._generated.demo_ops import OpCode as OpCode
from runtime_py.format._generated.demo_ops import OpSpec as OpSpec

PROGRAM_FORMAT_VERSION = 1
PROGRAM_FILE_IDENTIFIER = b"LXDP"


class DType(enum.IntEnum):
    """Element types; numbered as c10::ScalarType. Only float32 is compiled."""

    FLOAT32 = 6


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
    min: float | None  # None: no lower bound
    max: float | None  # None: no upper bound


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

# the Attributes union's members (schema/demo_ops.toml [attributes]) -> their dataclasses
ATTRIBUTE_CLASSES: dict[str, type] = {
    "Binary": BinaryAttrs,
    "Gelu": GeluAttrs,
    "Axis": AxisAttrs,
    "Fused": FusedAttrs,
    "Conv2d": Conv2dAttrs,
    "LayerNorm": LayerNormAttrs,
    "Pool2d": Pool2dAttrs,
    "Shape": ShapeAttrs,
    "Permute": PermuteAttrs,
    "Flatten": FlattenAttrs,
    "Clamp": ClampAttrs,
    "Reduce": ReduceAttrs,
    "Slice": SliceAttrs,
}


def attributes_class(op: OpCode) -> type | None:
    """The attribute dataclass instructions of ``op`` carry (None: they carry none)."""
    name = OP_SPECS[op].attrs
    return None if name is None else ATTRIBUTE_CLASSES[name]


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
