"""The demo backend's compiled program, as plain frozen dataclasses.

This mirrors ``schema/demo_program.fbs`` (the wire format; read its comments for the
meaning of each field) and ``schema/demo_ops.toml`` (the opcodes, generated into ``OpCode``
and ``OP_SPECS``; the attribute dataclasses, generated into ``_generated/demo_attrs.py`` and
re-exported here under their names). The compiler builds these, ``program_codec`` turns
them into bytes and back, and the runtimes execute them. Nothing here needs torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# the attribute tables, generated from schema/demo_ops.toml (fields, defaults, constraints)
from bundle_format._generated.demo_attrs import TABLES
from bundle_format._generated.demo_attrs import Activation as Activation
from bundle_format._generated.demo_attrs import ArangeLikeAttrs as ArangeLikeAttrs
from bundle_format._generated.demo_attrs import ArgReduceAttrs as ArgReduceAttrs
from bundle_format._generated.demo_attrs import AttentionAttrs as AttentionAttrs
from bundle_format._generated.demo_attrs import AxisAttrs as AxisAttrs
from bundle_format._generated.demo_attrs import BinaryAttrs as BinaryAttrs
from bundle_format._generated.demo_attrs import CastAttrs as CastAttrs
from bundle_format._generated.demo_attrs import ClampAttrs as ClampAttrs
from bundle_format._generated.demo_attrs import Conv2dAttrs as Conv2dAttrs
from bundle_format._generated.demo_attrs import DiagonalAttrs as DiagonalAttrs
from bundle_format._generated.demo_attrs import FillAttrs as FillAttrs
from bundle_format._generated.demo_attrs import FlattenAttrs as FlattenAttrs
from bundle_format._generated.demo_attrs import FusedAttrs as FusedAttrs
from bundle_format._generated.demo_attrs import GeluAttrs as GeluAttrs
from bundle_format._generated.demo_attrs import LayerNormAttrs as LayerNormAttrs
from bundle_format._generated.demo_attrs import PermuteAttrs as PermuteAttrs
from bundle_format._generated.demo_attrs import Pool2dAttrs as Pool2dAttrs
from bundle_format._generated.demo_attrs import QuantizeAttrs as QuantizeAttrs
from bundle_format._generated.demo_attrs import ReduceAttrs as ReduceAttrs
from bundle_format._generated.demo_attrs import ResizeAttrs as ResizeAttrs
from bundle_format._generated.demo_attrs import ShapeAttrs as ShapeAttrs
from bundle_format._generated.demo_attrs import SliceAttrs as SliceAttrs
from bundle_format._generated.demo_attrs import TopKAttrs as TopKAttrs

# the instruction set, generated from schema/demo_ops.toml
from bundle_format._generated.demo_ops import OP_SPECS as OP_SPECS
from bundle_format._generated.demo_ops import DType as DType
from bundle_format._generated.demo_ops import OpCode as OpCode
from bundle_format._generated.demo_ops import OpSpec as OpSpec
from bundle_format.attr_rows import AttrTable

ATTRIBUTE_TABLES: tuple[AttrTable, ...] = TABLES  # in union tag order

# 2: typed slots and weights (slot_dtypes; int64/int32/bool inputs): a version-1 runtime would
# read int64 ids as float32, so it must refuse these programs (it accepts exactly its version).
# A version-1 program is a version-2 one whose slots are all float32: still read.
# 3: program state (Program.states, INDEX_COPY, STATE_WRITE): a version-2 runtime would drop what a
# call writes. Only programs with state are written as version 3; the others stay version 2, so
# bundles without state read everywhere they did.
PROGRAM_FORMAT_VERSION = 2
STATE_FORMAT_VERSION = 3
READABLE_PROGRAM_VERSIONS = (1, 2, 3)
READABLE_VERSIONS_TEXT = " or ".join(str(v) for v in READABLE_PROGRAM_VERSIONS)  # for messages
PROGRAM_FILE_IDENTIFIER = b"LXDP"

# DType (schema/demo_ops.toml [dtypes]) <-> its name in the op spec and in messages
DTYPE_NAMES: dict[DType, str] = {d: d.name.lower() for d in DType}
DTYPES_BY_NAME: dict[str, DType] = {name: d for d, name in DTYPE_NAMES.items()}
DTYPE_SIZES: dict[DType, int] = {DType.FLOAT32: 4, DType.INT64: 8, DType.INT32: 4, DType.BOOL: 1}

SLICE_END = (1 << 63) - 1  # "to the end of the axis" (SliceAttrs.end's default)

Attributes = (
    BinaryAttrs | GeluAttrs | AxisAttrs | FusedAttrs | Conv2dAttrs | LayerNormAttrs
    | Pool2dAttrs | ShapeAttrs | PermuteAttrs | FlattenAttrs | ClampAttrs | ReduceAttrs | SliceAttrs | CastAttrs
    | ArangeLikeAttrs | ResizeAttrs | DiagonalAttrs | ArgReduceAttrs | TopKAttrs | QuantizeAttrs | FillAttrs
    | AttentionAttrs | None
)

# the Attributes union's members (schema/demo_ops.toml [attributes]) -> their dataclasses
ATTRIBUTE_CLASSES: dict[str, type] = {table.name: table.cls for table in ATTRIBUTE_TABLES}


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
    ``shape=None`` an unknown rank. ``dim_symbols`` (empty: none) gives, per dim of ``shape``,
    the index of the program's SymbolicDim that dim is (its size is then -1), or -1."""

    shape: tuple[int, ...] | None
    dtype: DType = DType.FLOAT32
    dim_symbols: tuple[int, ...] = ()


@dataclass(frozen=True)
class SymbolicDim:
    """A named dim (``--dim S=1..128``): every input dim naming it has the same size, in
    ``lo..hi`` inclusive (``hi`` -1: no upper bound)."""

    name: str
    lo: int
    hi: int = -1

    def __str__(self) -> str:
        return f"{self.name}={self.lo}..{'' if self.hi < 0 else self.hi}"


@dataclass(frozen=True)
class Constant:
    slot: int  # value slot the constant is loaded into
    weight: int  # index into the processed module's weight list


@dataclass(frozen=True)
class State:
    """A tensor the module keeps across calls (a KV cache), held in ``slot`` for the whole call:
    allocated once per loaded module, shared by every method declaring the same ``name``, written
    in place by INDEX_COPY and STATE_WRITE. ``initial``: the weight holding its first value, -1 for zeros."""

    name: str
    slot: int
    dtype: DType
    shape: tuple[int, ...]
    initial: int = -1

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * DTYPE_SIZES[self.dtype]


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
    # per slot: the dtype of every value it holds (the op spec's rules give each result's); empty:
    # every slot is float32 (what a program without typed values writes)
    slot_dtypes: tuple[DType, ...] = ()
    symbolic_dims: tuple[SymbolicDim, ...] = ()  # the named dims the inputs' dim_symbols point into
    # the most bytes its instruction results (and the running instruction's own allocation) take at
    # once with every named dim at its upper bound, as runtime_py counts them; 0: not planned
    working_memory: int = 0
    states: tuple[State, ...] = ()  # the module state it reads or writes (format version 3)

    def slot_dtype(self, slot: int) -> DType:
        return self.slot_dtypes[slot] if self.slot_dtypes else DType.FLOAT32
