"""PyTorch Mobile's flatbuffer format ("PTMF"), as plain frozen dataclasses.

A field-for-field mirror of ``schema/mobile_bytecode.fbs``. The writer builds these,
``ptmf_codec`` turns them into bytes and back (verifying hostile input), the
interpreter runs them. Nothing here needs torch or flatbuffers.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple, overload

import numpy as np

PTMF_FILE_IDENTIFIER = b"PTMF"
BYTECODE_VERSION = 9  # what we write; the first flatbuffer bytecode version
MIN_BYTECODE_VERSION = 4  # torch's lite interpreter reads 4..9; we read flatbuffers of 9 only
MAX_BYTECODE_VERSION = 9
STORAGE_ALIGNMENT = 16


class BytecodeOp(enum.IntEnum):
    """Bytecode opcodes (torch/csrc/jit/runtime/instruction.h, bytecode >= 8)."""

    OP = 0  # call operators[X]
    OPN = 1  # call operators[X] with N inputs (vararg)
    LOAD = 2  # push reg[X]
    MOVE = 3  # push reg[X] and clear it
    STOREN = 4  # pop N values into reg[X..X+N-1]
    STORE = 5  # pop into reg[X]
    DROP = 6  # pop and discard
    DROPR = 7  # clear reg[X]
    LOADC = 8  # push constants[X]
    JF = 9  # pop a bool; if false, jump by X
    JMP = 10  # jump by X
    LOOP = 11  # loop header
    RET = 12  # return the stack
    WAIT = 13
    CALL = 14  # call function X
    GUARD = 15
    TYPECHECK = 16
    FAIL_GUARD = 17
    PROFILE_OP = 18
    TAIL_CALL = 19
    INTERFACE_CALL = 20  # call method named constants[X] on the first of N inputs
    GET_ATTR = 21  # pop object, push its slot X
    SET_ATTR = 22  # pop value and object, set slot X
    LIST_UNPACK = 23  # pop a list of X items, push them
    TUPLE_CONSTRUCT = 24  # pop X values, push a tuple
    NAMED_TUPLE_CONSTRUCT = 25
    LIST_CONSTRUCT = 26  # pop N values, push a list of types[X]
    DICT_CONSTRUCT = 27  # pop 2N values, push a dict of types[X]
    CREATE_OBJECT = 28  # push a new object of types[X]
    ISINSTANCE = 29  # pop, push whether it is one of types[X..X+N-1]
    TUPLE_SLICE = 30
    TUPLE_INDEX = 31  # pop index and tuple, push tuple[index]
    RAISE_EXCEPTION = 32  # pop message (and class name), raise
    DICT_INDEX = 33  # pop key and dict, push dict[key]
    UNCHECKED_CAST = 34
    IS = 35  # __is__
    UN_INITIALIZED = 36  # push an uninitialized value
    ISNOT = 37  # __isnot__
    FORMAT = 38
    DEVICE = 39
    DTYPE = 40
    DIM = 41
    NOT = 42  # __not__
    TO_LIST = 43
    NUM_TO_TENSOR = 44
    IS_CUDA = 45
    FORK = 46
    WARN = 47
    ENTER = 48
    EXIT = 49
    AWAITABLE = 50


class TypeType(enum.IntEnum):
    UNSET = 0
    CLASS_WITH_FIELD = 1  # plain TorchScript object: attrs by slot
    CUSTOM_CLASS = 2  # __torch__.torch.classes.* (C++ class)
    CLASS_WITH_SETSTATE = 3  # object rebuilt by __setstate__(state)
    NON_OBJ = 4


class ScalarType(enum.IntEnum):
    """c10::ScalarType numbering."""

    BYTE = 0
    CHAR = 1
    SHORT = 2
    INT = 3
    LONG = 4
    HALF = 5
    FLOAT = 6
    DOUBLE = 7
    BOOL = 11
    QINT8 = 12
    QUINT8 = 13
    QINT32 = 14
    BFLOAT16 = 15


# numpy element type of each scalar type we can hold in runtime_py
NUMPY_DTYPES: dict[int, np.dtype] = {
    ScalarType.BYTE: np.dtype(np.uint8),
    ScalarType.CHAR: np.dtype(np.int8),
    ScalarType.SHORT: np.dtype("<i2"),
    ScalarType.INT: np.dtype("<i4"),
    ScalarType.LONG: np.dtype("<i8"),
    ScalarType.HALF: np.dtype("<f2"),
    ScalarType.FLOAT: np.dtype("<f4"),
    ScalarType.DOUBLE: np.dtype("<f8"),
    ScalarType.BOOL: np.dtype(np.bool_),
}
# the integer element type a quantized tensor's storage holds (its values are affine-mapped
# to reals by the tensor's QuantizedSchema); kept apart from NUMPY_DTYPES, whose inverse maps
# a numpy dtype back to one scalar type (int8 is Char there, never QInt8)
QUANTIZED_DTYPES: dict[int, np.dtype] = {
    ScalarType.QINT8: np.dtype(np.int8),
    ScalarType.QUINT8: np.dtype(np.uint8),
    ScalarType.QINT32: np.dtype("<i4"),
}


def storage_dtype(scalar_type: int) -> np.dtype | None:
    """The numpy element type of a tensor of ``scalar_type``'s storage, plain or quantized (None: unsupported)."""
    return NUMPY_DTYPES.get(scalar_type) or QUANTIZED_DTYPES.get(scalar_type)


class QScheme(enum.IntEnum):
    """c10::QScheme numbering (QuantizedSchema.qscheme)."""

    PER_TENSOR_AFFINE = 0
    PER_CHANNEL_AFFINE = 1
    PER_TENSOR_SYMMETRIC = 2
    PER_CHANNEL_SYMMETRIC = 3
    PER_CHANNEL_AFFINE_FLOAT_QPARAMS = 4


class Instruction(NamedTuple):
    """A named tuple, not a dataclass: loading builds one per instruction, and the interpreter
    runs the (op, x, n) tuples as they are."""

    op: int  # BytecodeOp value; kept as int so an unknown opcode survives to the interpreter's error
    x: int
    n: int


# struct Instruction { op:byte; n:ushort; x:int; }: op, a padding byte, n, x (little endian)
INSTRUCTION_STRUCT = struct.Struct("<bxHi")


def encode_instructions(instructions: Sequence[Instruction]) -> bytes:
    """The bytes of an instruction vector, padding zeroed (as the writer writes them)."""
    return b"".join([INSTRUCTION_STRUCT.pack(op, n, x) for op, x, n in instructions])


class CodeLimits(NamedTuple):
    """What a function's instruction indexes are checked against: its own tables' sizes."""

    operators: int
    constants: int
    register_size: int
    types: int


class LazyInstructions(Sequence[Instruction]):
    """A function's instructions as the file holds them (bounds already checked), decoded and
    index-checked against the ``limits`` read with them on first use: most functions of a
    lowered bundle never run (the wrapper and ``__setstate__`` are recognized by their bytes,
    ``__getstate__`` is never called). ``check`` raises FormatError; the length needs no decoding."""

    __slots__ = ("raw", "limits", "_check", "_decoded")

    def __init__(self, raw: memoryview, limits: CodeLimits,
                 check: Callable[[tuple[Instruction, ...], CodeLimits], None]) -> None:
        self.raw = raw  # whole INSTRUCTION_STRUCT records
        self.limits = limits
        self._check = check
        self._decoded: tuple[Instruction, ...] | None = None

    def decoded(self) -> tuple[Instruction, ...]:
        """The instructions, decoded and checked once (FormatError if their indexes are bad)."""
        if self._decoded is None:
            new = tuple.__new__
            code = tuple([new(Instruction, (op, x, n)) for op, n, x in INSTRUCTION_STRUCT.iter_unpack(self.raw)])
            self._check(code, self.limits)
            self._decoded = code
        return self._decoded

    def __len__(self) -> int:
        return len(self.raw) // INSTRUCTION_STRUCT.size

    @overload
    def __getitem__(self, index: int) -> Instruction: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Instruction, ...]: ...

    def __getitem__(self, index: int | slice) -> Instruction | tuple[Instruction, ...]:
        return self.decoded()[index]

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.decoded())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyInstructions):
            other = other.decoded()
        return self.decoded() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.decoded())

    def __repr__(self) -> str:
        return repr(self.decoded())


def code_limits(f: Function) -> CodeLimits:
    return CodeLimits(len(f.operators), len(f.constants), f.register_size, len(f.type_annotations))


@dataclass(frozen=True)
class Operator:
    name: str  # e.g. "aten::add"
    overload_name: str  # e.g. "Tensor"
    num_args_serialized: int = -1


@dataclass(frozen=True)
class Arg:
    name: str
    type: str
    default_value: int = 0  # ivalue index (0 = None)


@dataclass(frozen=True)
class Schema:
    arguments: tuple[Arg, ...]
    returns: tuple[Arg, ...]


@dataclass(frozen=True)
class Function:
    qn: str
    instructions: tuple[Instruction, ...] | LazyInstructions  # lazy as read from a file
    operators: tuple[Operator, ...]
    constants: tuple[int, ...]  # ivalue indexes
    type_annotations: tuple[str, ...]
    register_size: int
    schema: Schema | None = None
    debug_handles: tuple[int, ...] | None = None  # DebugInfo: one per instruction
    class_type: int = 0  # index into Module.object_types


@dataclass(frozen=True)
class QuantizedSchema:
    """How a quantized tensor's integers map to reals: per tensor (scale, zero_point) or per
    channel along ``axis`` (scales and zero_points are 1-d tensors)."""

    qscheme: int  # QScheme value
    scale: float = 0.0
    zero_point: int = 0
    scales: TensorMetadata | None = None
    zero_points: TensorMetadata | None = None
    axis: int = 0


@dataclass(frozen=True)
class TensorMetadata:
    storage_location_index: int
    scalar_type: int
    storage_offset: int  # in elements
    sizes: tuple[int, ...]
    strides: tuple[int, ...]  # in elements
    requires_grad: bool = False
    quantized_schema: QuantizedSchema | None = None  # only for quantized tensors


@dataclass(frozen=True)
class NoneValue:
    pass


@dataclass(frozen=True)
class IntValue:
    value: int


@dataclass(frozen=True)
class BoolValue:
    value: bool


@dataclass(frozen=True)
class DoubleValue:
    value: float


@dataclass(frozen=True)
class ComplexDoubleValue:
    real: float
    imag: float


@dataclass(frozen=True)
class StringValue:
    value: str


@dataclass(frozen=True)
class ListValue:
    items: tuple[int, ...]  # ivalue indexes
    annotation: str


@dataclass(frozen=True)
class TupleValue:
    items: tuple[int, ...]  # ivalue indexes


@dataclass(frozen=True)
class DictValue:
    keys: tuple[int, ...]  # ivalue indexes
    values: tuple[int, ...]  # ivalue indexes
    annotation: str


@dataclass(frozen=True)
class ObjectValue:
    type_index: int  # index into Module.object_types
    state: int = 0  # ivalue index (CLASS_WITH_SETSTATE)
    attrs: tuple[int, ...] = ()  # ivalue indexes (CLASS_WITH_FIELD)
    setstate_func: int = 0  # ivalue index of a Function (CLASS_WITH_SETSTATE)


@dataclass(frozen=True)
class IntListValue:
    items: tuple[int, ...]


@dataclass(frozen=True)
class DoubleListValue:
    items: tuple[float, ...]


@dataclass(frozen=True)
class BoolListValue:
    items: tuple[bool, ...]


@dataclass(frozen=True)
class DeviceValue:
    value: str


@dataclass(frozen=True)
class EnumValue:
    type_name: str
    value: int  # ivalue index


IValue = (
    NoneValue | IntValue | BoolValue | DoubleValue | ComplexDoubleValue | TensorMetadata
    | StringValue | ListValue | TupleValue | DictValue | ObjectValue | IntListValue
    | DoubleListValue | BoolListValue | DeviceValue | EnumValue | Function
)


@dataclass(frozen=True)
class ObjectType:
    type_name: str
    type: TypeType
    attr_names: tuple[str, ...] = ()


@dataclass(frozen=True)
class ExtraFile:
    name: str
    content: bytes


@dataclass(frozen=True, eq=False)
class Module:
    """A whole bundle. ``storage_data`` holds one uint8 array per storage (views into the
    file when read from disk, so weights are used in place)."""

    bytecode_version: int
    extra_files: tuple[ExtraFile, ...]
    methods: tuple[int, ...]  # ivalue indexes of Function values
    state_obj: int  # ivalue index of the root Object
    ivalues: tuple[IValue, ...]
    storage_data: tuple[np.ndarray, ...]
    object_types: tuple[ObjectType, ...]
    jit_sources: tuple[ExtraFile, ...] = ()
    jit_constants: tuple[int, ...] = ()
    operator_version: int = 0
    mobile_ivalue_size: int = 0  # 0 means all ivalues

    def extra_file(self, name: str) -> bytes | None:
        for extra in self.extra_files:
            if extra.name == name:
                return extra.content
        return None
