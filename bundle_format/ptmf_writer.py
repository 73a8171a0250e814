"""Serialize a ``ptmf.Module`` into PTMF flatbuffer bytes (the adapter to the generated
writer code for ``schema/mobile_bytecode.fbs``)."""

from __future__ import annotations

from collections.abc import Sequence

import flatbuffers
import numpy as np

from bundle_format import ptmf
from bundle_format._generated import mobile_bytecode_generated as fb

# Union tags of schema/mobile_bytecode.fbs's IValueUnion, in declaration order.
_TAGS: dict[type, int] = {
    ptmf.IntValue: 1, ptmf.BoolValue: 2, ptmf.DoubleValue: 3, ptmf.ComplexDoubleValue: 4,
    ptmf.TensorMetadata: 5, ptmf.StringValue: 6, ptmf.ListValue: 7, ptmf.TupleValue: 8,
    ptmf.DictValue: 9, ptmf.ObjectValue: 10, ptmf.IntListValue: 11, ptmf.DoubleListValue: 12,
    ptmf.BoolListValue: 13, ptmf.DeviceValue: 14, ptmf.EnumValue: 15, ptmf.Function: 16,
}


class BundleTooLargeError(ValueError):
    """The module does not fit in one PTMF flatbuffer (2 GiB). The exporter reports it as the
    model's problem (liteexport.bundle: ModelError, exit 3); the format layer knows no exit codes."""


def _numbers(builder: flatbuffers.Builder, items: Sequence[int] | Sequence[float], dtype: str) -> int:
    return int(builder.CreateNumpyVector(np.asarray(items, dtype=dtype)))


def _offsets(builder: flatbuffers.Builder, offsets: Sequence[int]) -> int:
    builder.StartVector(4, len(offsets), 4)
    for off in reversed(offsets):
        builder.PrependUOffsetTRelative(off)
    return int(builder.EndVector())


def _strings(builder: flatbuffers.Builder, texts: Sequence[str]) -> int:
    return _offsets(builder, [builder.CreateSharedString(t) for t in texts])


def _tensor(builder: flatbuffers.Builder, t: ptmf.TensorMetadata) -> int:
    quantized = _quantized_schema(builder, t.quantized_schema) if t.quantized_schema is not None else None
    sizes = _numbers(builder, t.sizes, "<i4")
    strides = _numbers(builder, t.strides, "<i4")
    fb.TensorMetadataStart(builder)
    fb.TensorMetadataAddStorageLocationIndex(builder, t.storage_location_index)
    fb.TensorMetadataAddScalarType(builder, t.scalar_type)
    fb.TensorMetadataAddStorageOffset(builder, t.storage_offset)
    fb.TensorMetadataAddSizes(builder, sizes)
    fb.TensorMetadataAddStrides(builder, strides)
    fb.TensorMetadataAddRequiresGrad(builder, t.requires_grad)
    if quantized is not None:
        fb.TensorMetadataAddQuantizedSchema(builder, quantized)
    return int(fb.TensorMetadataEnd(builder))


def _quantized_schema(builder: flatbuffers.Builder, q: ptmf.QuantizedSchema) -> int:
    """A quantized tensor's parameters, as torch writes them (per channel: scales and zero_points
    are plain tensors of their own)."""
    scales = _tensor(builder, q.scales) if q.scales is not None else None
    zero_points = _tensor(builder, q.zero_points) if q.zero_points is not None else None
    fb.QuantizedSchemaStart(builder)
    fb.QuantizedSchemaAddQscheme(builder, q.qscheme)
    fb.QuantizedSchemaAddScale(builder, q.scale)
    fb.QuantizedSchemaAddZeroPoint(builder, q.zero_point)
    if scales is not None:
        fb.QuantizedSchemaAddScales(builder, scales)
    if zero_points is not None:
        fb.QuantizedSchemaAddZeroPoints(builder, zero_points)
    fb.QuantizedSchemaAddAxis(builder, q.axis)
    return int(fb.QuantizedSchemaEnd(builder))


def _schema(builder: flatbuffers.Builder, schema: ptmf.Schema) -> int:
    def args(items: Sequence[ptmf.Arg]) -> int:
        offsets = []
        for arg in items:
            name, type_ = builder.CreateSharedString(arg.name), builder.CreateSharedString(arg.type)
            fb.ArgStart(builder)
            fb.ArgAddName(builder, name)
            fb.ArgAddType(builder, type_)
            fb.ArgAddDefaultValue(builder, arg.default_value)
            offsets.append(fb.ArgEnd(builder))
        return _offsets(builder, offsets)

    arguments, returns = args(schema.arguments), args(schema.returns)
    fb.SchemaStart(builder)
    fb.SchemaAddArguments(builder, arguments)
    fb.SchemaAddReturns(builder, returns)
    return int(fb.SchemaEnd(builder))


# struct Instruction { op:byte; n:ushort; x:int; }: op, a pad byte, n, x; 8 bytes, 4-aligned
_INSTRUCTION = np.dtype({"names": ["op", "n", "x"], "formats": ["i1", "<u2", "<i4"], "offsets": [0, 2, 4],
                         "itemsize": 8})


def _instructions(builder: flatbuffers.Builder, instructions: Sequence[ptmf.Instruction]) -> int:
    """The instruction vector, its bytes made by numpy at once (the generated CreateInstruction
    costs a dozen builder calls per instruction, most of a small bundle's encoding time)."""
    structs = np.zeros(len(instructions), _INSTRUCTION)  # zeros: the pad bytes are written too
    for field in ("op", "n", "x"):
        structs[field] = [getattr(ins, field) for ins in instructions]
    fb.FunctionStartInstructionsVector(builder, len(instructions))
    builder.head -= structs.nbytes
    builder.Bytes[builder.head:builder.head + structs.nbytes] = structs.tobytes()
    return int(builder.EndVector())


def _function(builder: flatbuffers.Builder, f: ptmf.Function) -> int:
    qn = builder.CreateSharedString(f.qn)
    instructions = _instructions(builder, f.instructions)
    operator_offsets = []
    for op in f.operators:
        name, overload = builder.CreateSharedString(op.name), builder.CreateSharedString(op.overload_name)
        fb.OperatorStart(builder)
        fb.OperatorAddName(builder, name)
        fb.OperatorAddOverloadName(builder, overload)
        fb.OperatorAddNumArgsSerialized(builder, op.num_args_serialized)
        operator_offsets.append(fb.OperatorEnd(builder))
    operators = _offsets(builder, operator_offsets)
    constants = _numbers(builder, f.constants, "<u4")
    annotations = _strings(builder, f.type_annotations)
    schema = _schema(builder, f.schema) if f.schema is not None else 0
    debug_info = 0
    if f.debug_handles is not None:
        handles = _numbers(builder, f.debug_handles, "<i8")
        fb.DebugInfoStart(builder)
        fb.DebugInfoAddDebugHandle(builder, handles)
        debug_info = fb.DebugInfoEnd(builder)
    fb.FunctionStart(builder)
    fb.FunctionAddQn(builder, qn)
    fb.FunctionAddInstructions(builder, instructions)
    fb.FunctionAddOperators(builder, operators)
    fb.FunctionAddConstants(builder, constants)
    fb.FunctionAddTypeAnnotations(builder, annotations)
    fb.FunctionAddRegisterSize(builder, f.register_size)
    if schema:
        fb.FunctionAddSchema(builder, schema)
    if debug_info:
        fb.FunctionAddDebugInfo(builder, debug_info)
    fb.FunctionAddClassType(builder, f.class_type)
    return int(fb.FunctionEnd(builder))


def _table_value(builder: flatbuffers.Builder, v: ptmf.IValue) -> int:
    """The out-of-line table of a table-typed union member."""
    if isinstance(v, ptmf.TensorMetadata):
        return _tensor(builder, v)
    if isinstance(v, ptmf.Function):
        return _function(builder, v)
    if isinstance(v, (ptmf.StringValue, ptmf.DeviceValue)):
        text = builder.CreateSharedString(v.value)
        if isinstance(v, ptmf.StringValue):
            fb.StringStart(builder)
            fb.StringAddData(builder, text)
            return int(fb.StringEnd(builder))
        fb.DeviceStart(builder)
        fb.DeviceAddStr(builder, text)
        return int(fb.DeviceEnd(builder))
    if isinstance(v, ptmf.ListValue):
        items, annotation = _numbers(builder, v.items, "<u4"), builder.CreateSharedString(v.annotation)
        fb.ListStart(builder)
        fb.ListAddItems(builder, items)
        fb.ListAddAnnotationStr(builder, annotation)
        return int(fb.ListEnd(builder))
    if isinstance(v, ptmf.TupleValue):
        items = _numbers(builder, v.items, "<u4")
        fb.TupleStart(builder)
        fb.TupleAddItems(builder, items)
        return int(fb.TupleEnd(builder))
    if isinstance(v, ptmf.DictValue):
        keys, values = _numbers(builder, v.keys, "<u4"), _numbers(builder, v.values, "<u4")
        annotation = builder.CreateSharedString(v.annotation)
        fb.DictStart(builder)
        fb.DictAddKeys(builder, keys)
        fb.DictAddValues(builder, values)
        fb.DictAddAnnotationStr(builder, annotation)
        return int(fb.DictEnd(builder))
    if isinstance(v, ptmf.ObjectValue):
        attrs = _numbers(builder, v.attrs, "<u4")
        fb.ObjectStart(builder)
        fb.ObjectAddTypeIndex(builder, v.type_index)
        fb.ObjectAddState(builder, v.state)
        fb.ObjectAddAttrs(builder, attrs)
        fb.ObjectAddSetstateFunc(builder, v.setstate_func)
        return int(fb.ObjectEnd(builder))
    if isinstance(v, ptmf.EnumValue):
        name = builder.CreateSharedString(v.type_name)
        fb.EnumValueStart(builder)
        fb.EnumValueAddTypeName(builder, name)
        fb.EnumValueAddValue(builder, v.value)
        return int(fb.EnumValueEnd(builder))
    numeric = {ptmf.IntListValue: ("<i8", fb.IntListStart, fb.IntListAddItems, fb.IntListEnd),
               ptmf.DoubleListValue: ("<f8", fb.DoubleListStart, fb.DoubleListAddItems, fb.DoubleListEnd),
               ptmf.BoolListValue: ("?", fb.BoolListStart, fb.BoolListAddItems, fb.BoolListEnd)}
    dtype, start, add, end = numeric[type(v)]
    items = _numbers(builder, v.items, dtype)  # type: ignore[union-attr]
    start(builder)
    add(builder, items)
    return int(end(builder))


def _ivalue(builder: flatbuffers.Builder, v: ptmf.IValue) -> int:
    # Struct members of the union are written out of line; the union offset points at them.
    if isinstance(v, ptmf.NoneValue):
        value, tag = 0, 0
    elif isinstance(v, ptmf.IntValue):
        value, tag = fb.CreateInt(builder, v.value), 1
    elif isinstance(v, ptmf.BoolValue):
        value, tag = fb.CreateBool(builder, v.value), 2
    elif isinstance(v, ptmf.DoubleValue):
        value, tag = fb.CreateDouble(builder, v.value), 3
    elif isinstance(v, ptmf.ComplexDoubleValue):
        value, tag = fb.CreateComplexDouble(builder, v.real, v.imag), 4
    else:
        value, tag = _table_value(builder, v), _TAGS[type(v)]
    fb.IValueStart(builder)
    if tag:
        fb.IValueAddValType(builder, tag)
        fb.IValueAddVal(builder, value)
    return int(fb.IValueEnd(builder))


def _extra_files(builder: flatbuffers.Builder, files: Sequence[ptmf.ExtraFile]) -> int:
    offsets = []
    for extra in files:
        name, content = builder.CreateSharedString(extra.name), builder.CreateString(extra.content)
        fb.ExtraFileStart(builder)
        fb.ExtraFileAddName(builder, name)
        fb.ExtraFileAddContent(builder, content)
        offsets.append(fb.ExtraFileEnd(builder))
    return _offsets(builder, offsets)


def encode_module(module: ptmf.Module) -> bytes:
    """The PTMF bytes of ``module``; deterministic (same Module, same bytes)."""
    return b"".join(encode_module_chunks(module))


def encode_module_chunks(module: ptmf.Module) -> list[memoryview]:
    """The PTMF bytes of ``module`` as consecutive pieces: the metadata, then per storage its
    padding and length prefix and a view of the array's own memory. Export writes them one
    after the other, so the weights are never copied (nor held twice) on their way to the file.

    The Builder writes only the metadata. The storage vectors follow it in the file, so each
    StorageData's ``data`` offset points past the end of the Builder's buffer: to the Builder,
    whose offsets count back from the end of its buffer, that target is at offset
    ``-position in the tail``, and the uoffset it writes (target minus field position) is right
    whatever the metadata's final length. That length is a multiple of the storage alignment
    (``Prep`` below raises the buffer's ``minalign``), so tail positions aligned to 16 are
    16-aligned in the file, as torch's loader expects of StorageData.
    """
    builder = flatbuffers.Builder(1 << 16)
    builder.Prep(ptmf.STORAGE_ALIGNMENT, 0)
    tail: list[memoryview] = []
    tail_size = 0
    storage_tables = []
    for data in module.storage_data:
        raw = np.ascontiguousarray(data).reshape(-1).view(np.uint8).data
        start = -(-(tail_size + 4) // ptmf.STORAGE_ALIGNMENT) * ptmf.STORAGE_ALIGNMENT  # data, 16-aligned
        header = bytes(start - 4 - tail_size) + raw.nbytes.to_bytes(4, "little")  # padding, length
        fb.StorageDataStart(builder)
        fb.StorageDataAddData(builder, -(start - 4))  # never 0 (the default, which would drop the field)
        storage_tables.append(fb.StorageDataEnd(builder))
        tail += [memoryview(header), raw]
        tail_size = start + raw.nbytes
    storages = _offsets(builder, storage_tables)
    ivalues = _offsets(builder, [_ivalue(builder, v) for v in module.ivalues])
    object_types = []
    for t in module.object_types:
        name, attrs = builder.CreateSharedString(t.type_name), _strings(builder, t.attr_names)
        fb.ObjectTypeStart(builder)
        fb.ObjectTypeAddTypeName(builder, name)
        fb.ObjectTypeAddType(builder, int(t.type))
        fb.ObjectTypeAddAttrNames(builder, attrs)
        object_types.append(fb.ObjectTypeEnd(builder))
    types = _offsets(builder, object_types)
    extra_files = _extra_files(builder, module.extra_files)
    jit_sources = _extra_files(builder, module.jit_sources)
    methods = _numbers(builder, module.methods, "<u4")
    jit_constants = _numbers(builder, module.jit_constants, "<u4")
    fb.ModuleStart(builder)
    fb.ModuleAddBytecodeVersion(builder, module.bytecode_version)
    fb.ModuleAddExtraFiles(builder, extra_files)
    fb.ModuleAddMethods(builder, methods)
    fb.ModuleAddStateObj(builder, module.state_obj)
    fb.ModuleAddIvalues(builder, ivalues)
    fb.ModuleAddStorageDataSize(builder, len(module.storage_data))
    fb.ModuleAddStorageData(builder, storages)
    fb.ModuleAddObjectTypes(builder, types)
    fb.ModuleAddJitSources(builder, jit_sources)
    fb.ModuleAddJitConstants(builder, jit_constants)
    fb.ModuleAddOperatorVersion(builder, module.operator_version)
    fb.ModuleAddMobileIvalueSize(builder, module.mobile_ivalue_size)
    builder.Finish(fb.ModuleEnd(builder), file_identifier=ptmf.PTMF_FILE_IDENTIFIER)
    metadata = memoryview(builder.Bytes)[builder.Head():]
    # torch's own writer goes past 2 GiB (a 2.5 GB nn.Linear saves), but its loader's flatbuffer
    # verifier then refuses the file ("Malformed Flatbuffer module"): refuse before writing.
    if len(metadata) + tail_size >= 1 << 31:
        raise BundleTooLargeError(f"the bundle would be {len(metadata) + tail_size} bytes, but a PTMF bundle "
                                  "(a flatbuffer) holds at most 2 GiB: torch's lite interpreter refuses larger files")
    return [metadata, *tail]
