"""Program <-> bytes (``schema/demo_program.fbs``): the one adapter to its generated code.

Encoding is deterministic (same Program, same bytes). Decoding treats the bytes as hostile:
every table is bounds-checked by :mod:`fb_verify` before the generated readers touch it, then
the values are checked against the schema's rules (format version, known opcodes and enums,
the attribute type each opcode carries, 2-element int pairs...). Any violation is a
:class:`FormatError` whose ``where`` names the table, index and byte. Slot-range checks are
the executor's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any

from runtime_py.errors import FormatError, InternalError
from runtime_py.format import fb_verify as fv
from runtime_py.format._generated import demo_program_generated as g
from runtime_py.format.fb_verify import Buffer, Builder, CheckedTable, Verifier
from runtime_py.format.program import (
    PROGRAM_FILE_IDENTIFIER,
    PROGRAM_FORMAT_VERSION,
    Activation,
    Attributes,
    AxisAttrs,
    BinaryAttrs,
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
    ShapeAttrs,
    ValueInfo,
)

__all__ = ["encode_program", "decode_program"]

# --- the tables' layouts, fields in schema id order ---
_BINARY = fv.TableSpec("Binary", (
    fv.scalar("alpha", 8), fv.scalar("scalar", 8), fv.scalar("has_scalar", 1), fv.scalar("reverse", 1)))
_GELU = fv.TableSpec("Gelu", (fv.scalar("tanh_approximation", 1),))
_AXIS = fv.TableSpec("Axis", (fv.scalar("axis", 4),))
_FUSED = fv.TableSpec("Fused", (fv.scalar("activation", 1),))
_CONV2D = fv.TableSpec("Conv2d", (
    fv.vector("stride", 4), fv.vector("padding", 4), fv.vector("dilation", 4),
    fv.scalar("groups", 4), fv.scalar("activation", 1)))
_LAYER_NORM = fv.TableSpec("LayerNorm", (fv.scalar("normalized_ndim", 4), fv.scalar("eps", 8)))
_POOL2D = fv.TableSpec("Pool2d", (
    fv.vector("kernel", 4), fv.vector("stride", 4), fv.vector("padding", 4), fv.vector("dilation", 4),
    fv.scalar("ceil_mode", 1), fv.scalar("count_include_pad", 1), fv.scalar("divisor_override", 4)))
_SHAPE = fv.TableSpec("Shape", (fv.vector("dims", 8),))
_PERMUTE = fv.TableSpec("Permute", (fv.vector("perm", 4),))
_FLATTEN = fv.TableSpec("Flatten", (fv.scalar("start_dim", 4), fv.scalar("end_dim", 4)))
_INSTRUCTION = fv.TableSpec("Instruction", (
    fv.scalar("op", 2), fv.vector("inputs", 4), fv.vector("outputs", 4),
    fv.scalar("attributes_type", 1), fv.table("attributes"), fv.scalar("debug_handle", 8)))
_VALUE_INFO = fv.TableSpec("ValueInfo", (
    fv.scalar("dtype", 1), fv.vector("shape", 8), fv.scalar("has_shape", 1)))
_CONSTANT = fv.TableSpec("Constant", (fv.scalar("slot", 4), fv.scalar("weight", 4)))
_PROGRAM = fv.TableSpec("Program", (
    fv.scalar("format_version", 4), fv.string("method"), fv.scalar("num_slots", 4),
    fv.tables("inputs"), fv.tables("constants"), fv.tables("instructions"),
    fv.vector("outputs", 4), fv.vector("output_debug_handles", 8)))

# --- rules shared by encoder and decoder ---

_OP_ATTRIBUTES: dict[OpCode, type | None] = {
    OpCode.ADD: BinaryAttrs,
    OpCode.SUB: BinaryAttrs,
    OpCode.MUL: BinaryAttrs,
    OpCode.DIV: BinaryAttrs,
    OpCode.NEG: None,
    OpCode.RELU: None,
    OpCode.SIGMOID: None,
    OpCode.TANH: None,
    OpCode.GELU: GeluAttrs,
    OpCode.SOFTMAX: AxisAttrs,
    OpCode.LOG_SOFTMAX: AxisAttrs,
    OpCode.MATMUL: None,
    OpCode.LINEAR: FusedAttrs,
    OpCode.CONV2D: Conv2dAttrs,
    OpCode.CHANNEL_AFFINE: None,
    OpCode.LAYER_NORM: LayerNormAttrs,
    OpCode.MAX_POOL2D: Pool2dAttrs,
    OpCode.AVG_POOL2D: Pool2dAttrs,
    OpCode.ADAPTIVE_AVG_POOL2D: ShapeAttrs,
    OpCode.TRANSPOSE: PermuteAttrs,
    OpCode.RESHAPE: ShapeAttrs,
    OpCode.FLATTEN: FlattenAttrs,
    OpCode.CAT: AxisAttrs,
}


def _all_defaults(cls: type) -> bool:
    return all(f.default is not MISSING or f.default_factory is not MISSING for f in fields(cls))


def attribute_problem(op: OpCode, attrs: type | None) -> str | None:
    """Why ``op`` cannot carry attributes of type ``attrs``, or None when it can.

    Each opcode carries the attribute type of its table entry; one whose attribute type has a
    default for every field (Binary, Gelu, Fused, Conv2d) may also carry none.
    """
    expected = _OP_ATTRIBUTES[op]
    if attrs is expected or (attrs is None and expected is not None and _all_defaults(expected)):
        return None
    wanted = "no attributes" if expected is None else f"{expected.__name__}"
    found = "none" if attrs is None else attrs.__name__
    return f"{op.name} takes {wanted}, found {found}"


def _pair_problem(values: tuple[int, ...], name: str) -> str | None:
    return None if len(values) == 2 else f"{name} must hold 2 values [h, w], found {len(values)}"


def _outputs_problem(outputs: tuple[int, ...], handles: tuple[int, ...]) -> str | None:
    if len(outputs) == len(handles):
        return None
    return f"{len(outputs)} outputs but {len(handles)} output debug handles"


def _adaptive_problem(op: OpCode, attrs: Attributes) -> str | None:
    if op is OpCode.ADAPTIVE_AVG_POOL2D and isinstance(attrs, ShapeAttrs) and len(attrs.dims) != 2:
        return f"ADAPTIVE_AVG_POOL2D output size must hold 2 dims, found {len(attrs.dims)}"
    return None


def _bug(problem: str | None) -> None:
    if problem is not None:
        raise InternalError(f"cannot encode program: {problem}")


def _bad(problem: str | None, where: str) -> None:
    if problem is not None:
        raise FormatError(problem, where=where)


# --- encoding ---

def _ints32(b: Builder, start: Callable[[Builder, int], object], values: tuple[int, ...]) -> int:
    return fv.write_scalars(b, start, b.PrependInt32, values)


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
    dims = fv.write_scalars(b, g.ShapeStartDimsVector, b.PrependInt64, a.dims)
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


# --- decoding of the attribute tables (each table already checked by the verifier) ---

def _pair_at(values: object, t: CheckedTable, name: str) -> tuple[int, int]:
    pair = fv.int_tuple(values)
    _bad(_pair_problem(pair, name), t.loc(name))
    return pair[0], pair[1]


def _read_binary(buf: memoryview, t: CheckedTable) -> BinaryAttrs:
    r = g.Binary()
    r.Init(buf, t.pos)
    if not r.HasScalar() and t.has("scalar"):
        raise FormatError("scalar given but has_scalar is false", where=t.loc("scalar"))
    return BinaryAttrs(alpha=r.Alpha(), scalar=r.Scalar() if r.HasScalar() else None, reverse=r.Reverse())


def _read_gelu(buf: memoryview, t: CheckedTable) -> GeluAttrs:
    r = g.Gelu()
    r.Init(buf, t.pos)
    return GeluAttrs(tanh_approximation=r.TanhApproximation())


def _read_axis(buf: memoryview, t: CheckedTable) -> AxisAttrs:
    r = g.Axis()
    r.Init(buf, t.pos)
    return AxisAttrs(axis=r.Axis())


def _read_fused(buf: memoryview, t: CheckedTable) -> FusedAttrs:
    r = g.Fused()
    r.Init(buf, t.pos)
    return FusedAttrs(activation=fv.enum_member(Activation, r.Activation(), t.loc("activation")))


def _read_conv2d(buf: memoryview, t: CheckedTable) -> Conv2dAttrs:
    r = g.Conv2d()
    r.Init(buf, t.pos)
    return Conv2dAttrs(
        stride=_pair_at(r.StrideAsNumpy(), t, "stride"),
        padding=_pair_at(r.PaddingAsNumpy(), t, "padding"),
        dilation=_pair_at(r.DilationAsNumpy(), t, "dilation"),
        groups=r.Groups(),
        activation=fv.enum_member(Activation, r.Activation(), t.loc("activation")),
    )


def _read_layer_norm(buf: memoryview, t: CheckedTable) -> LayerNormAttrs:
    r = g.LayerNorm()
    r.Init(buf, t.pos)
    return LayerNormAttrs(normalized_ndim=r.NormalizedNdim(), eps=r.Eps())


def _read_pool2d(buf: memoryview, t: CheckedTable) -> Pool2dAttrs:
    r = g.Pool2d()
    r.Init(buf, t.pos)
    return Pool2dAttrs(
        kernel=_pair_at(r.KernelAsNumpy(), t, "kernel"),
        stride=_pair_at(r.StrideAsNumpy(), t, "stride"),
        padding=_pair_at(r.PaddingAsNumpy(), t, "padding"),
        dilation=_pair_at(r.DilationAsNumpy(), t, "dilation"),
        ceil_mode=r.CeilMode(),
        count_include_pad=r.CountIncludePad(),
        divisor_override=r.DivisorOverride() or None,
    )


def _read_shape(buf: memoryview, t: CheckedTable) -> ShapeAttrs:
    r = g.Shape()
    r.Init(buf, t.pos)
    return ShapeAttrs(dims=fv.int_tuple(r.DimsAsNumpy()))


def _read_permute(buf: memoryview, t: CheckedTable) -> PermuteAttrs:
    r = g.Permute()
    r.Init(buf, t.pos)
    return PermuteAttrs(perm=fv.int_tuple(r.PermAsNumpy()))


def _read_flatten(buf: memoryview, t: CheckedTable) -> FlattenAttrs:
    r = g.Flatten()
    r.Init(buf, t.pos)
    return FlattenAttrs(start_dim=r.StartDim(), end_dim=r.EndDim())


@dataclass(frozen=True)
class _AttrCodec:
    """How one member of the ``Attributes`` union is written and read."""

    cls: type
    tag: int  # the union type tag (g.Attributes.X)
    spec: fv.TableSpec
    write: Callable[[Builder, Any], int]
    read: Callable[[memoryview, CheckedTable], Attributes]


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
)
_BY_CLASS = {c.cls: c for c in _ATTR_CODECS}
_BY_TAG = {c.tag: c for c in _ATTR_CODECS}


# --- Program ---

def encode_program(program: Program) -> bytes:
    """The flatbuffer of ``program`` (identifier ``LXDP``); the same Program gives the same bytes.

    A Program the schema cannot express (wrong attribute type for an opcode, a pair that is not
    2 long, a negative slot...) is a bug of its producer: :class:`InternalError`.
    """
    with fv.encoding("program"):
        b = Builder(1024)
        method = b.CreateString(program.method)
        inputs = [_write_value_info(b, v) for v in program.inputs]
        constants = [_write_constant(b, c) for c in program.constants]
        instructions = [_write_instruction(b, i) for i in program.instructions]
        _bug(_outputs_problem(tuple(program.outputs), tuple(program.output_debug_handles)))
        outputs = fv.write_scalars(b, g.ProgramStartOutputsVector, b.PrependUint32, program.outputs)
        handles = fv.write_scalars(b, g.ProgramStartOutputDebugHandlesVector, b.PrependInt64,
                                   program.output_debug_handles)
        input_vec = fv.write_offsets(b, g.ProgramStartInputsVector, inputs)
        constant_vec = fv.write_offsets(b, g.ProgramStartConstantsVector, constants)
        instruction_vec = fv.write_offsets(b, g.ProgramStartInstructionsVector, instructions)
        g.ProgramStart(b)
        g.ProgramAddFormatVersion(b, program.format_version)
        g.ProgramAddMethod(b, method)
        g.ProgramAddNumSlots(b, program.num_slots)
        g.ProgramAddInputs(b, input_vec)
        g.ProgramAddConstants(b, constant_vec)
        g.ProgramAddInstructions(b, instruction_vec)
        g.ProgramAddOutputs(b, outputs)
        g.ProgramAddOutputDebugHandles(b, handles)
        return fv.finish(b, int(g.ProgramEnd(b)), PROGRAM_FILE_IDENTIFIER)


def _write_value_info(b: Builder, info: ValueInfo) -> int:
    shape = None
    if info.shape is not None:
        shape = fv.write_scalars(b, g.ValueInfoStartShapeVector, b.PrependInt64, info.shape)
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
    inputs = fv.write_scalars(b, g.InstructionStartInputsVector, b.PrependUint32, inst.inputs)
    outputs = fv.write_scalars(b, g.InstructionStartOutputsVector, b.PrependUint32, inst.outputs)
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
    with fv.hostile_input("program"):
        return _read_program(Verifier(buf))


def _read_program(v: Verifier) -> Program:
    t = v.table(v.root(PROGRAM_FILE_IDENTIFIER, "Program"), _PROGRAM, "Program")
    r = g.Program()
    r.Init(v.buf, t.pos)
    version = r.FormatVersion()
    fv.check_version(version, PROGRAM_FORMAT_VERSION, "program", t.loc("format_version"))
    outputs = fv.int_tuple(r.OutputsAsNumpy())
    handles = fv.int_tuple(r.OutputDebugHandlesAsNumpy())
    _bad(_outputs_problem(outputs, handles), t.loc("output_debug_handles"))
    return Program(
        method=fv.required_str(r.Method(), t, "method"),
        num_slots=r.NumSlots(),
        inputs=tuple(_read_value_info(v.buf, c) for c in v.children(t, "inputs", _VALUE_INFO)),
        constants=tuple(_read_constant(v.buf, c) for c in v.children(t, "constants", _CONSTANT)),
        instructions=tuple(_read_instruction(v, c) for c in v.children(t, "instructions", _INSTRUCTION)),
        outputs=outputs,
        output_debug_handles=handles,
        format_version=version,
    )


def _read_value_info(buf: memoryview, t: CheckedTable) -> ValueInfo:
    r = g.ValueInfo()
    r.Init(buf, t.pos)
    if not r.HasShape() and t.has("shape"):
        raise FormatError("shape given but has_shape is false", where=t.loc("shape"))
    return ValueInfo(
        shape=fv.int_tuple(r.ShapeAsNumpy()) if r.HasShape() else None,
        dtype=fv.enum_member(DType, r.Dtype(), t.loc("dtype")),
    )


def _read_constant(buf: memoryview, t: CheckedTable) -> Constant:
    r = g.Constant()
    r.Init(buf, t.pos)
    return Constant(slot=r.Slot(), weight=r.Weight())


def _read_instruction(v: Verifier, t: CheckedTable) -> Instruction:
    r = g.Instruction()
    r.Init(v.buf, t.pos)
    op = fv.enum_member(OpCode, r.Op(), t.loc("op"))
    tag = r.AttributesType()
    attrs: Attributes = None
    if tag == g.Attributes.NONE:
        if t.has("attributes"):
            raise FormatError("attributes given without a type", where=t.loc("attributes"))
        _bad(attribute_problem(op, None), t.loc("attributes_type"))
    else:
        codec = _BY_TAG.get(tag)
        if codec is None:
            raise FormatError(f"unknown attribute type {tag}", where=t.loc("attributes_type"))
        _bad(attribute_problem(op, codec.cls), t.loc("attributes_type"))
        child = v.child(t, "attributes", codec.spec)
        if child is None:
            raise FormatError(f"attributes of type {codec.spec.name} are missing", where=t.loc("attributes"))
        attrs = codec.read(v.buf, child)
        _bad(_adaptive_problem(op, attrs), child.loc("dims"))
    return Instruction(
        op=op,
        inputs=fv.int_tuple(r.InputsAsNumpy()),
        outputs=fv.int_tuple(r.OutputsAsNumpy()),
        attributes=attrs,
        debug_handle=r.DebugHandle(),
    )
