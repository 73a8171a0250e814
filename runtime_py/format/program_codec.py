"""Program <-> bytes (``schema/demo_program.fbs``): the one adapter to its generated code.

Encoding is deterministic (same Program, same bytes). Decoding treats the bytes as hostile
and reads them in one pass with :mod:`fb_reader` (every table, vector, string and offset
bounds-checked as it is read; it runs on every load, so it avoids the generated readers),
checking the values against the schema's rules (format version, known opcodes and enums,
the attribute type each opcode carries, 2-element int pairs...). Any violation is a
:class:`FormatError` whose ``where`` names the table, index and byte. Slot-range checks are
the executor's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from runtime_py.error_codes import format_error, render
from runtime_py.errors import InternalError
from runtime_py.format import fb_reader as fr
from runtime_py.format import fb_writer as fw
from runtime_py.format._generated import demo_program_generated as g
from runtime_py.format.fb_reader import Buffer, TableReader
from runtime_py.format.fb_writer import Builder
from runtime_py.format.program import (
    OP_SPECS,
    PROGRAM_FILE_IDENTIFIER,
    PROGRAM_FORMAT_VERSION,
    SLICE_END,
    Activation,
    Attributes,
    AxisAttrs,
    BinaryAttrs,
    ClampAttrs,
    Constant,
    Conv2dAttrs,
    DType,
    FlattenAttrs,
    FusedAttrs,
    GeluAttrs,
    Instruction,
    LayerNormAttrs,
    OpCode,
    PermuteAttrs,
    Pool2dAttrs,
    Program,
    ReduceAttrs,
    ShapeAttrs,
    SliceAttrs,
    ValueInfo,
    attributes_class,
)

__all__ = ["encode_program", "decode_program"]

# --- the tables' layouts: flatc's reading of schema/demo_program.fbs (_generated/layouts.py) ---
(_BINARY, _GELU, _AXIS, _FUSED, _CONV2D, _LAYER_NORM, _POOL2D, _SHAPE, _PERMUTE, _FLATTEN, _CLAMP, _REDUCE, _SLICE,
 _INSTRUCTION, _VALUE_INFO, _CONSTANT, _PROGRAM) = (fr.spec("demo_program", name) for name in (
    "Binary", "Gelu", "Axis", "Fused", "Conv2d", "LayerNorm", "Pool2d", "Shape", "Permute", "Flatten", "Clamp",
    "Reduce", "Slice", "Instruction", "ValueInfo", "Constant", "Program"))

# what the single-pass reader needs of each layout
(_BINARY_L, _GELU_L, _AXIS_L, _FUSED_L, _CONV2D_L, _LAYER_NORM_L, _POOL2D_L, _SHAPE_L, _PERMUTE_L, _FLATTEN_L,
 _CLAMP_L, _REDUCE_L, _SLICE_L, _INSTRUCTION_L, _VALUE_INFO_L, _CONSTANT_L, _PROGRAM_L) = (
    fr.layout(spec) for spec in (_BINARY, _GELU, _AXIS, _FUSED, _CONV2D, _LAYER_NORM, _POOL2D, _SHAPE, _PERMUTE,
                                 _FLATTEN, _CLAMP, _REDUCE, _SLICE, _INSTRUCTION, _VALUE_INFO, _CONSTANT, _PROGRAM))
# raw wire values -> members: a dict lookup is ~10x cheaper than calling the enum
_OPCODES = {int(op): op for op in OpCode}
_ACTIVATIONS = {int(a): a for a in Activation}

# --- rules shared by encoder and decoder ---

# each opcode's attribute dataclass (schema/demo_ops.toml)
_OP_ATTRIBUTES: dict[OpCode, type | None] = {op: attributes_class(op) for op in OpCode}


# A problem: the code of schema/demo_errors.toml and its fields; None for no problem.
Problem = tuple[str, dict[str, object]] | None


def attribute_problem(op: OpCode, attrs: type | None) -> Problem:
    """Why ``op`` cannot carry attributes of type ``attrs``, or None when it can.

    Each opcode carries the attribute type of its spec entry; one whose attribute type has a
    default for every field (Binary, Gelu, Fused, Conv2d) may also carry none.
    """
    expected = _OP_ATTRIBUTES[op]
    if attrs is expected or (attrs is None and OP_SPECS[op].attrs_optional):
        return None
    wanted = "no attributes" if expected is None else f"{expected.__name__}"
    found = "none" if attrs is None else attrs.__name__
    return "ATTRIBUTE_TYPE", {"op": op.name, "expected": wanted, "found": found}


def _pair_problem(values: tuple[int, ...], name: str) -> Problem:
    return None if len(values) == 2 else ("PAIR_LENGTH", {"field": name, "found": len(values)})


def _outputs_problem(outputs: tuple[int, ...], handles: tuple[int, ...]) -> Problem:
    if len(outputs) == len(handles):
        return None
    return "OUTPUT_HANDLES", {"outputs": len(outputs), "handles": len(handles)}


def _adaptive_problem(op: OpCode, attrs: Attributes) -> Problem:
    if op is OpCode.ADAPTIVE_AVG_POOL2D and isinstance(attrs, ShapeAttrs) and len(attrs.dims) != 2:
        return "OUTPUT_SIZE_LENGTH", {"op": op.name, "found": len(attrs.dims)}
    return None


def _bug(problem: Problem | str) -> None:
    if isinstance(problem, str):
        raise InternalError(f"cannot encode program: {problem}")
    if problem is not None:
        raise InternalError(f"cannot encode program: {render(*problem)}")


def _bad(problem: Problem, path: str, pos: int) -> None:
    if problem is not None:  # the location only then: building it for every check costs more than the check
        raise format_error(problem[0], where=fr.location(path, pos), **problem[1])


# --- encoding ---

def _ints32(b: Builder, start: Callable[[Builder, int], object], values: tuple[int, ...]) -> int:
    return fw.write_scalars(b, start, b.PrependInt32, values)


def _pair(b: Builder, start: Callable[[Builder, int], object], values: tuple[int, int], name: str) -> int:
    _bug(_pair_problem(tuple(values), name))
    return _ints32(b, start, values)


def _write_binary(b: Builder, a: BinaryAttrs) -> int:
    g.BinaryStart(b)
    g.BinaryAddAlpha(b, float(a.alpha))
    if a.scalar is not None:
        g.BinaryAddScalar(b, float(a.scalar))
        g.BinaryAddHasScalar(b, True)
    g.BinaryAddReverse(b, bool(a.reverse))
    return int(g.BinaryEnd(b))


def _write_gelu(b: Builder, a: GeluAttrs) -> int:
    g.GeluStart(b)
    g.GeluAddTanhApproximation(b, bool(a.tanh_approximation))
    return int(g.GeluEnd(b))


def _write_axis(b: Builder, a: AxisAttrs) -> int:
    g.AxisStart(b)
    g.AxisAddAxis(b, a.axis)
    return int(g.AxisEnd(b))


def _write_fused(b: Builder, a: FusedAttrs) -> int:
    g.FusedStart(b)
    g.FusedAddActivation(b, int(Activation(a.activation)))
    return int(g.FusedEnd(b))


def _write_conv2d(b: Builder, a: Conv2dAttrs) -> int:
    stride = _pair(b, g.Conv2dStartStrideVector, a.stride, "Conv2dAttrs.stride")
    padding = _pair(b, g.Conv2dStartPaddingVector, a.padding, "Conv2dAttrs.padding")
    dilation = _pair(b, g.Conv2dStartDilationVector, a.dilation, "Conv2dAttrs.dilation")
    g.Conv2dStart(b)
    g.Conv2dAddStride(b, stride)
    g.Conv2dAddPadding(b, padding)
    g.Conv2dAddDilation(b, dilation)
    g.Conv2dAddGroups(b, a.groups)
    g.Conv2dAddActivation(b, int(Activation(a.activation)))
    return int(g.Conv2dEnd(b))


def _write_layer_norm(b: Builder, a: LayerNormAttrs) -> int:
    g.LayerNormStart(b)
    g.LayerNormAddNormalizedNdim(b, a.normalized_ndim)
    g.LayerNormAddEps(b, float(a.eps))
    return int(g.LayerNormEnd(b))


def _write_pool2d(b: Builder, a: Pool2dAttrs) -> int:
    if a.divisor_override == 0:
        _bug("Pool2dAttrs.divisor_override 0 cannot be written (0 means none)")
    kernel = _pair(b, g.Pool2dStartKernelVector, a.kernel, "Pool2dAttrs.kernel")
    stride = _pair(b, g.Pool2dStartStrideVector, a.stride, "Pool2dAttrs.stride")
    padding = _pair(b, g.Pool2dStartPaddingVector, a.padding, "Pool2dAttrs.padding")
    dilation = _pair(b, g.Pool2dStartDilationVector, a.dilation, "Pool2dAttrs.dilation")
    g.Pool2dStart(b)
    g.Pool2dAddKernel(b, kernel)
    g.Pool2dAddStride(b, stride)
    g.Pool2dAddPadding(b, padding)
    g.Pool2dAddDilation(b, dilation)
    g.Pool2dAddCeilMode(b, bool(a.ceil_mode))
    g.Pool2dAddCountIncludePad(b, bool(a.count_include_pad))
    g.Pool2dAddDivisorOverride(b, a.divisor_override or 0)
    return int(g.Pool2dEnd(b))


def _write_shape(b: Builder, a: ShapeAttrs) -> int:
    dims = fw.write_scalars(b, g.ShapeStartDimsVector, b.PrependInt64, a.dims)
    g.ShapeStart(b)
    g.ShapeAddDims(b, dims)
    return int(g.ShapeEnd(b))


def _write_permute(b: Builder, a: PermuteAttrs) -> int:
    perm = _ints32(b, g.PermuteStartPermVector, a.perm)
    g.PermuteStart(b)
    g.PermuteAddPerm(b, perm)
    return int(g.PermuteEnd(b))


def _write_flatten(b: Builder, a: FlattenAttrs) -> int:
    g.FlattenStart(b)
    g.FlattenAddStartDim(b, a.start_dim)
    g.FlattenAddEndDim(b, a.end_dim)
    return int(g.FlattenEnd(b))


def _write_clamp(b: Builder, a: ClampAttrs) -> int:
    g.ClampStart(b)
    if a.min is not None:
        g.ClampAddMin(b, float(a.min))
        g.ClampAddHasMin(b, True)
    if a.max is not None:
        g.ClampAddMax(b, float(a.max))
        g.ClampAddHasMax(b, True)
    return int(g.ClampEnd(b))


def _write_reduce(b: Builder, a: ReduceAttrs) -> int:
    axes = _ints32(b, g.ReduceStartAxesVector, a.axes)
    g.ReduceStart(b)
    g.ReduceAddAxes(b, axes)
    g.ReduceAddKeepdim(b, bool(a.keepdim))
    return int(g.ReduceEnd(b))


def _write_slice(b: Builder, a: SliceAttrs) -> int:
    g.SliceStart(b)
    g.SliceAddAxis(b, a.axis)
    g.SliceAddStart(b, a.start)
    g.SliceAddEnd(b, a.end)
    g.SliceAddStep(b, a.step)
    return int(g.SliceEnd(b))


# --- decoding of the attribute tables (checked as they are read, by fb_reader) ---

def _pair_at(r: TableReader, pos: int, path: str, table_pos: int) -> tuple[int, int]:
    pair = r.scalars("i", pos, path)
    _bad(_pair_problem(pair, path.rsplit(".", 1)[1]), path, pos or table_pos)
    return pair[0], pair[1]


def _activation(r: TableReader, pos: int, path: str, table_pos: int) -> Activation:
    raw = r.scalar(fr.I8, pos, 0)
    activation: Activation | None = _ACTIVATIONS.get(raw)  # type: ignore[call-overload]
    if activation is None:
        raise format_error("UNKNOWN_ENUM", where=fr.location(f"{path}.activation", pos or table_pos),
                           enum="Activation", value=raw)
    return activation


def _read_binary(r: TableReader, pos: int, path: str) -> BinaryAttrs:
    alpha, scalar, has_scalar, reverse = r.table(pos, _BINARY_L, path)
    has = r.scalar(fr.BOOL, has_scalar, False)
    if scalar and not has:
        raise format_error("FIELD_WITHOUT_FLAG", where=fr.location(f"{path}.scalar", scalar), field="scalar",
                           flag="has_scalar")
    return BinaryAttrs(alpha=r.scalar(fr.F64, alpha, 1.0),  # type: ignore[arg-type]
                       scalar=r.scalar(fr.F64, scalar, 0.0) if has else None,  # type: ignore[arg-type]
                       reverse=r.scalar(fr.BOOL, reverse, False))  # type: ignore[arg-type]


def _read_gelu(r: TableReader, pos: int, path: str) -> GeluAttrs:
    (tanh,) = r.table(pos, _GELU_L, path)
    return GeluAttrs(tanh_approximation=r.scalar(fr.BOOL, tanh, False))  # type: ignore[arg-type]


def _read_axis(r: TableReader, pos: int, path: str) -> AxisAttrs:
    (axis,) = r.table(pos, _AXIS_L, path)
    return AxisAttrs(axis=r.scalar(fr.I32, axis, 0))  # type: ignore[arg-type]


def _read_fused(r: TableReader, pos: int, path: str) -> FusedAttrs:
    (activation,) = r.table(pos, _FUSED_L, path)
    return FusedAttrs(activation=_activation(r, activation, path, pos))


def _read_conv2d(r: TableReader, pos: int, path: str) -> Conv2dAttrs:
    stride, padding, dilation, groups, activation = r.table(pos, _CONV2D_L, path)
    return Conv2dAttrs(
        stride=_pair_at(r, stride, f"{path}.stride", pos),
        padding=_pair_at(r, padding, f"{path}.padding", pos),
        dilation=_pair_at(r, dilation, f"{path}.dilation", pos),
        groups=r.scalar(fr.I32, groups, 1),  # type: ignore[arg-type]
        activation=_activation(r, activation, path, pos),
    )


def _read_layer_norm(r: TableReader, pos: int, path: str) -> LayerNormAttrs:
    ndim, eps = r.table(pos, _LAYER_NORM_L, path)
    return LayerNormAttrs(normalized_ndim=r.scalar(fr.I32, ndim, 0), eps=r.scalar(fr.F64, eps, 0.0))  # type: ignore[arg-type]


def _read_pool2d(r: TableReader, pos: int, path: str) -> Pool2dAttrs:
    kernel, stride, padding, dilation, ceil_mode, count_include_pad, divisor = r.table(pos, _POOL2D_L, path)
    return Pool2dAttrs(
        kernel=_pair_at(r, kernel, f"{path}.kernel", pos),
        stride=_pair_at(r, stride, f"{path}.stride", pos),
        padding=_pair_at(r, padding, f"{path}.padding", pos),
        dilation=_pair_at(r, dilation, f"{path}.dilation", pos),
        ceil_mode=r.scalar(fr.BOOL, ceil_mode, False),  # type: ignore[arg-type]
        count_include_pad=r.scalar(fr.BOOL, count_include_pad, True),  # type: ignore[arg-type]
        divisor_override=r.scalar(fr.I32, divisor, 0) or None,  # type: ignore[arg-type]
    )


def _read_shape(r: TableReader, pos: int, path: str) -> ShapeAttrs:
    (dims,) = r.table(pos, _SHAPE_L, path)
    return ShapeAttrs(dims=r.scalars("q", dims, f"{path}.dims"))


def _read_permute(r: TableReader, pos: int, path: str) -> PermuteAttrs:
    (perm,) = r.table(pos, _PERMUTE_L, path)
    return PermuteAttrs(perm=r.scalars("i", perm, f"{path}.perm"))


def _read_flatten(r: TableReader, pos: int, path: str) -> FlattenAttrs:
    start_dim, end_dim = r.table(pos, _FLATTEN_L, path)
    return FlattenAttrs(start_dim=r.scalar(fr.I32, start_dim, 0), end_dim=r.scalar(fr.I32, end_dim, 0))  # type: ignore[arg-type]


def _bound(r: TableReader, value: int, present: int, name: str, path: str) -> float | None:
    """A Clamp bound: its value when its has_ flag is set, else None (a value without the flag is malformed)."""
    has = r.scalar(fr.BOOL, present, False)
    if value and not has:
        raise format_error("FIELD_WITHOUT_FLAG", where=fr.location(f"{path}.{name}", value), field=name,
                           flag=f"has_{name}")
    return r.scalar(fr.F64, value, 0.0) if has else None  # type: ignore[return-value]


def _read_clamp(r: TableReader, pos: int, path: str) -> ClampAttrs:
    low, high, has_low, has_high = r.table(pos, _CLAMP_L, path)
    return ClampAttrs(min=_bound(r, low, has_low, "min", path), max=_bound(r, high, has_high, "max", path))


def _read_reduce(r: TableReader, pos: int, path: str) -> ReduceAttrs:
    axes, keepdim = r.table(pos, _REDUCE_L, path)
    return ReduceAttrs(axes=r.scalars("i", axes, f"{path}.axes"), keepdim=r.scalar(fr.BOOL, keepdim, False))  # type: ignore[arg-type]


def _read_slice(r: TableReader, pos: int, path: str) -> SliceAttrs:
    axis, start, end, step = r.table(pos, _SLICE_L, path)
    return SliceAttrs(axis=r.scalar(fr.I32, axis, 0), start=r.scalar(fr.I64, start, 0),  # type: ignore[arg-type]
                      end=r.scalar(fr.I64, end, SLICE_END), step=r.scalar(fr.I64, step, 1))  # type: ignore[arg-type]


@dataclass(frozen=True)
class _AttrCodec:
    """How one member of the ``Attributes`` union is written and read."""

    cls: type
    tag: int  # the union type tag (g.Attributes.X)
    spec: fr.TableSpec
    write: Callable[[Builder, Any], int]
    read: Callable[[TableReader, int, str], Attributes]  # (reader, table position, path)


_ATTR_CODECS = (
    _AttrCodec(BinaryAttrs, g.Attributes.Binary, _BINARY, _write_binary, _read_binary),
    _AttrCodec(GeluAttrs, g.Attributes.Gelu, _GELU, _write_gelu, _read_gelu),
    _AttrCodec(AxisAttrs, g.Attributes.Axis, _AXIS, _write_axis, _read_axis),
    _AttrCodec(FusedAttrs, g.Attributes.Fused, _FUSED, _write_fused, _read_fused),
    _AttrCodec(Conv2dAttrs, g.Attributes.Conv2d, _CONV2D, _write_conv2d, _read_conv2d),
    _AttrCodec(LayerNormAttrs, g.Attributes.LayerNorm, _LAYER_NORM, _write_layer_norm, _read_layer_norm),
    _AttrCodec(Pool2dAttrs, g.Attributes.Pool2d, _POOL2D, _write_pool2d, _read_pool2d),
    _AttrCodec(ShapeAttrs, g.Attributes.Shape, _SHAPE, _write_shape, _read_shape),
    _AttrCodec(PermuteAttrs, g.Attributes.Permute, _PERMUTE, _write_permute, _read_permute),
    _AttrCodec(FlattenAttrs, g.Attributes.Flatten, _FLATTEN, _write_flatten, _read_flatten),
    _AttrCodec(ClampAttrs, g.Attributes.Clamp, _CLAMP, _write_clamp, _read_clamp),
    _AttrCodec(ReduceAttrs, g.Attributes.Reduce, _REDUCE, _write_reduce, _read_reduce),
    _AttrCodec(SliceAttrs, g.Attributes.Slice, _SLICE, _write_slice, _read_slice),
)
_BY_CLASS = {c.cls: c for c in _ATTR_CODECS}
_BY_TAG = {c.tag: c for c in _ATTR_CODECS}


# --- Program ---

def encode_program(program: Program) -> bytes:
    """The flatbuffer of ``program`` (identifier ``LXDP``); the same Program gives the same bytes.

    A Program the schema cannot express (wrong attribute type for an opcode, a pair that is not
    2 long, a negative slot...) is a bug of its producer: :class:`InternalError`.
    """
    with fw.encoding("program"):
        b = Builder(1024)
        method = b.CreateString(program.method)
        inputs = [_write_value_info(b, v) for v in program.inputs]
        constants = [_write_constant(b, c) for c in program.constants]
        instructions = [_write_instruction(b, i) for i in program.instructions]
        _bug(_outputs_problem(tuple(program.outputs), tuple(program.output_debug_handles)))
        outputs = fw.write_scalars(b, g.ProgramStartOutputsVector, b.PrependUint32, program.outputs)
        handles = fw.write_scalars(b, g.ProgramStartOutputDebugHandlesVector, b.PrependInt64,
                                   program.output_debug_handles)
        input_vec = fw.write_offsets(b, g.ProgramStartInputsVector, inputs)
        constant_vec = fw.write_offsets(b, g.ProgramStartConstantsVector, constants)
        instruction_vec = fw.write_offsets(b, g.ProgramStartInstructionsVector, instructions)
        g.ProgramStart(b)
        g.ProgramAddFormatVersion(b, program.format_version)
        g.ProgramAddMethod(b, method)
        g.ProgramAddNumSlots(b, program.num_slots)
        g.ProgramAddInputs(b, input_vec)
        g.ProgramAddConstants(b, constant_vec)
        g.ProgramAddInstructions(b, instruction_vec)
        g.ProgramAddOutputs(b, outputs)
        g.ProgramAddOutputDebugHandles(b, handles)
        return fw.finish(b, int(g.ProgramEnd(b)), PROGRAM_FILE_IDENTIFIER)


def _write_value_info(b: Builder, info: ValueInfo) -> int:
    shape = None
    if info.shape is not None:
        shape = fw.write_scalars(b, g.ValueInfoStartShapeVector, b.PrependInt64, info.shape)
    g.ValueInfoStart(b)
    g.ValueInfoAddDtype(b, int(DType(info.dtype)))
    if shape is not None:
        g.ValueInfoAddShape(b, shape)
        g.ValueInfoAddHasShape(b, True)
    return int(g.ValueInfoEnd(b))


def _write_constant(b: Builder, constant: Constant) -> int:
    g.ConstantStart(b)
    g.ConstantAddSlot(b, constant.slot)
    g.ConstantAddWeight(b, constant.weight)
    return int(g.ConstantEnd(b))


def _write_instruction(b: Builder, inst: Instruction) -> int:
    op = OpCode(inst.op)
    attrs_cls = None if inst.attributes is None else type(inst.attributes)
    _bug(attribute_problem(op, attrs_cls))
    _bug(_adaptive_problem(op, inst.attributes))
    codec = None if attrs_cls is None else _BY_CLASS[attrs_cls]
    attrs = None if codec is None else codec.write(b, inst.attributes)
    inputs = fw.write_scalars(b, g.InstructionStartInputsVector, b.PrependUint32, inst.inputs)
    outputs = fw.write_scalars(b, g.InstructionStartOutputsVector, b.PrependUint32, inst.outputs)
    g.InstructionStart(b)
    g.InstructionAddOp(b, int(op))
    g.InstructionAddInputs(b, inputs)
    g.InstructionAddOutputs(b, outputs)
    if codec is not None and attrs is not None:
        g.InstructionAddAttributesType(b, codec.tag)
        g.InstructionAddAttributes(b, attrs)
    g.InstructionAddDebugHandle(b, inst.debug_handle)
    return int(g.InstructionEnd(b))


def decode_program(buf: Buffer) -> Program:
    """The Program in ``buf`` (bytes, or a uint8 array viewing a mapped bundle; not copied).

    Raises :class:`FormatError` for anything malformed, and nothing else.
    """
    with fr.hostile_input("program"):
        return _read_program(TableReader(buf))


def _read_program(r: TableReader) -> Program:
    pos = r.root(PROGRAM_FILE_IDENTIFIER, "Program")
    version, method, num_slots, inputs, constants, instructions, outputs, handles = r.table(
        pos, _PROGRAM_L, "Program")
    found = r.scalar(fr.U32, version, 0)
    if found != PROGRAM_FORMAT_VERSION:
        raise format_error("UNSUPPORTED_VERSION", where=fr.location("Program.format_version", version or pos),
                           found=found, supported=PROGRAM_FORMAT_VERSION)
    output_slots = r.scalars("I", outputs, "Program.outputs")
    output_handles = r.scalars("q", handles, "Program.output_debug_handles")
    _bad(_outputs_problem(output_slots, output_handles), "Program.output_debug_handles", handles or pos)
    return Program(
        method=r.required_string(method, "Program.method", pos),
        num_slots=r.scalar(fr.U32, num_slots, 0),  # type: ignore[arg-type]
        inputs=r.each(inputs, "Program.inputs", _read_value_info),
        constants=r.each(constants, "Program.constants", _read_constant),
        instructions=r.each(instructions, "Program.instructions", _read_instruction),
        outputs=output_slots,
        output_debug_handles=output_handles,
        format_version=found,
    )


def _read_value_info(r: TableReader, pos: int, path: str) -> ValueInfo:
    dtype, shape, has_shape = r.table(pos, _VALUE_INFO_L, path)
    known = r.scalar(fr.BOOL, has_shape, False)
    if shape and not known:
        raise format_error("FIELD_WITHOUT_FLAG", where=fr.location(f"{path}.shape", shape), field="shape",
                           flag="has_shape")
    raw = r.scalar(fr.I8, dtype, int(DType.FLOAT32))
    if raw != DType.FLOAT32:
        raise format_error("UNKNOWN_ENUM", where=fr.location(f"{path}.dtype", dtype or pos), enum="DType", value=raw)
    return ValueInfo(shape=r.scalars("q", shape, f"{path}.shape") if known else None, dtype=DType.FLOAT32)


def _read_constant(r: TableReader, pos: int, path: str) -> Constant:
    slot, weight = r.table(pos, _CONSTANT_L, path)
    return Constant(slot=r.scalar(fr.U32, slot, 0), weight=r.scalar(fr.U32, weight, 0))  # type: ignore[arg-type]


def _read_instruction(r: TableReader, pos: int, path: str) -> Instruction:
    op_at, inputs, outputs, tag_at, attributes, handle = r.table(pos, _INSTRUCTION_L, path)
    raw = r.scalar(fr.U16, op_at, 0)
    op: OpCode | None = _OPCODES.get(raw)  # type: ignore[call-overload]
    if op is None:
        raise format_error("UNKNOWN_ENUM", where=fr.location(f"{path}.op", op_at or pos), enum="OpCode", value=raw)
    tag = r.scalar(fr.U8, tag_at, 0)
    codec = _BY_TAG.get(tag)  # type: ignore[call-overload]
    attrs: Attributes = None
    if tag == g.Attributes.NONE:
        if attributes:
            raise format_error("ATTRIBUTES_WITHOUT_TYPE", where=fr.location(f"{path}.attributes", attributes))
        _bad(attribute_problem(op, None), path + ".attributes_type", tag_at or pos)
    else:
        if codec is None or _OP_ATTRIBUTES[op] is not codec.cls:
            problem = ("UNKNOWN_ATTRIBUTE_TYPE", {"tag": tag}) if codec is None else attribute_problem(op, codec.cls)
            _bad(problem, f"{path}.attributes_type", tag_at or pos)
        if not attributes:
            raise format_error("ATTRIBUTES_MISSING", where=fr.location(f"{path}.attributes", pos),
                               table=codec.spec.name)
        attrs_path = path + ".attributes"
        child = r.target(attributes, attrs_path)
        attrs = codec.read(r, child, attrs_path)
        _bad(_adaptive_problem(op, attrs), attrs_path + ".dims", child)
    return Instruction(
        op=op,
        inputs=r.scalars("I", inputs, path + ".inputs"),
        outputs=r.scalars("I", outputs, path + ".outputs"),
        attributes=attrs,
        debug_handle=r.scalar(fr.I64, handle, 0),  # type: ignore[arg-type]
    )
