"""Read PTMF flatbuffer bytes into a ``ptmf.Module`` (``schema/mobile_bytecode.fbs``).

The bytes are hostile until proven otherwise. :func:`read_module` reads them in one pass with
:mod:`fb_reader` (every table, vector, string, offset and union tag bounds-checked as it is
read, strings checked as UTF-8, under a work budget linear in the buffer's size), straight
into the ``ptmf`` dataclasses: it runs on every load, so it avoids the generated readers.
Index-level checks (ivalue, storage, register... indexes) are ``ptmf_verify``'s; a function's
instructions are decoded, and their indexes checked, when first used (``ptmf.LazyInstructions``).

The table layouts are flatc's reading of the schema (``fb_reader.spec``, generated), not restated.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from bundle_format import fb_reader as fr
from bundle_format import ptmf
from bundle_format.errors import FormatError, InternalError
from bundle_format.fb_reader import TableReader
from bundle_format.ptmf_verify import check_code

# --- the tables' layouts: flatc's reading of schema/mobile_bytecode.fbs (_generated/layouts.py) ---
# content is a flatbuffers string holding arbitrary bytes (our debug table is binary): no UTF-8 check
_EXTRA_FILE = fr.spec("mobile_bytecode", "ExtraFile", binary=("content",))
(_STORAGE, _OBJECT_TYPE, _TENSOR, _QUANTIZED, _OPERATOR, _ARG, _SCHEMA, _DEBUG_INFO, _FUNCTION, _IVALUE,
 _MODULE) = (fr.spec("mobile_bytecode", name) for name in (
    "StorageData", "ObjectType", "TensorMetadata", "QuantizedSchema", "Operator", "Arg", "Schema", "DebugInfo",
    "Function", "IValue", "Module"))
_MEMBERS = fr.union_members("mobile_bytecode", "IValueUnion")
# union tag -> the member's layout: a struct (how to read it, what it becomes) or a table spec
_UNION_STRUCT_READERS: dict[int, tuple[struct.Struct, Callable[..., ptmf.IValue]]] = {
    tag: (fmt, build) for tag, fmt, build in (
        (1, struct.Struct("<q"), ptmf.IntValue),
        (2, struct.Struct("<?"), ptmf.BoolValue),
        (3, struct.Struct("<d"), ptmf.DoubleValue),
        (4, struct.Struct("<dd"), ptmf.ComplexDoubleValue),
    ) if _MEMBERS[tag][1] == fmt.size  # the schema's struct members, as they are read
}
_UNION_TABLES: dict[int, fr.TableSpec] = {
    tag: fr.spec("mobile_bytecode", member) for tag, (member, size) in _MEMBERS.items() if not size}
if len(_UNION_STRUCT_READERS) + len(_UNION_TABLES) != len(_MEMBERS):
    raise InternalError("ptmf_reader's IValue struct readers do not match schema/mobile_bytecode.fbs")


# --- single-pass decoding ----------------------------------------------------------------------

_MODULE_L, _EXTRA_FILE_L, _STORAGE_L, _OBJECT_TYPE_L, _IVALUE_L, _TENSOR_L, _QUANTIZED_L = map(
    fr.layout, (_MODULE, _EXTRA_FILE, _STORAGE, _OBJECT_TYPE, _IVALUE, _TENSOR, _QUANTIZED))
_FUNCTION_L, _OPERATOR_L, _SCHEMA_L, _ARG_L, _DEBUG_INFO_L = map(
    fr.layout, (_FUNCTION, _OPERATOR, _SCHEMA, _ARG, _DEBUG_INFO))
_TYPE_TYPES = {int(t): t for t in ptmf.TypeType}
_NONE = ptmf.NoneValue()


def read_module(buf: bytes | bytearray | memoryview | Any) -> ptmf.Module:
    """Verify and decode a PTMF buffer. Storage arrays are views into ``buf``."""
    with fr.hostile_input("PTMF bundle"):
        return _read_module(TableReader(buf))


def _read_module(r: TableReader) -> ptmf.Module:
    root = r.root(ptmf.PTMF_FILE_IDENTIFIER, "Module")
    (version, extra_files, methods, state_obj, ivalues, _storage_count, storage_data, object_types,
     jit_sources, jit_constants, operator_version, ivalue_size) = r.table(root, _MODULE_L, "Module")
    return ptmf.Module(
        bytecode_version=r.scalar(fr.U32, version, 0),  # type: ignore[arg-type]
        extra_files=r.each(extra_files, "Module.extra_files", _extra_file),
        methods=r.scalars("I", methods, "Module.methods"),
        state_obj=r.scalar(fr.U32, state_obj, 0),  # type: ignore[arg-type]
        ivalues=r.each(ivalues, "Module.ivalues", _ivalue),
        storage_data=r.each(storage_data, "Module.storage_data", _storage),
        object_types=r.each(object_types, "Module.object_types", _object_type),
        jit_sources=r.each(jit_sources, "Module.jit_sources", _extra_file),
        jit_constants=r.scalars("I", jit_constants, "Module.jit_constants"),
        operator_version=r.scalar(fr.U32, operator_version, 0),  # type: ignore[arg-type]
        mobile_ivalue_size=r.scalar(fr.U32, ivalue_size, 0),  # type: ignore[arg-type]
    )


def _strings(r: TableReader, pos: int, path: str) -> tuple[str, ...]:
    """The string-vector field at ``pos``, () when absent."""
    if not pos:
        return ()
    start, count = r._vector(pos, fr.UOFFSET_SIZE, path)
    return tuple([r.string(start + 4 * i, f"{path}[{i}]") or "" for i in range(count)])


def _text(r: TableReader, pos: int, path: str) -> str:
    """An optional string field; absent reads as "" (what the generated readers gave)."""
    return r.string(pos, path) or ""


def _extra_file(r: TableReader, pos: int, path: str) -> ptmf.ExtraFile:
    name, content = r.table(pos, _EXTRA_FILE_L, path)
    if not content:
        return ptmf.ExtraFile(_text(r, name, path + ".name"), b"")
    # content is a flatbuffers string holding arbitrary bytes (our debug table is binary): no UTF-8 check
    start, count = r._vector(content, 1, path + ".content")
    return ptmf.ExtraFile(_text(r, name, path + ".name"), bytes(r.buf[start:start + count]))


def _storage(r: TableReader, pos: int, path: str) -> np.ndarray:
    (data,) = r.table(pos, _STORAGE_L, path)
    if not data:
        return np.zeros(0, dtype=np.uint8)
    start, count = r._vector(data, 1, path + ".data")
    return np.frombuffer(r.buf, np.uint8, count, start)  # a view: weights stay in the mapped file


def _object_type(r: TableReader, pos: int, path: str) -> ptmf.ObjectType:
    name, kind, attr_names = r.table(pos, _OBJECT_TYPE_L, path)
    return ptmf.ObjectType(_text(r, name, path + ".type_name"),
                           _TYPE_TYPES.get(r.scalar(fr.U8, kind, 0), ptmf.TypeType.UNSET),  # type: ignore[call-overload]
                           _strings(r, attr_names, path + ".attr_names"))


def _ivalue(r: TableReader, pos: int, path: str) -> ptmf.IValue:
    tag_at, val = r.table(pos, _IVALUE_L, path)
    tag: int = r.buf[tag_at] if tag_at else 0  # a u8 (r.scalar, inlined: ivalues are many)
    if tag == 0:
        return _NONE
    if not val:
        raise FormatError(f"IValue with union tag {tag} has no value", where=fr.location(path, pos))
    path += ".val"
    target = r.target(val, path)
    member = _UNION_STRUCT_READERS.get(tag)
    if member is not None:  # the four struct members (tags 1..4) are stored inline at the target
        fmt, build = member
        if target + fmt.size > r.size:
            r.fail(f"struct ({fmt.size} bytes at byte {target}) lies outside the {r.size}-byte buffer", path, target)
        return build(*fmt.unpack_from(r.buf, target))
    read = _UNION_TABLE_READERS.get(tag)
    if read is None:
        raise FormatError(f"unknown IValue union tag {tag}", where=fr.location(path + "_type", tag_at))
    return read(r, target, path)


def _tensor_fields(r: TableReader, pos: int, path: str) -> tuple[ptmf.TensorMetadata, int]:
    """The tensor at ``pos`` and the position of its quantized_schema field (0: none)."""
    storage, scalar_type, offset, sizes, strides, requires_grad, quantized = r.table(pos, _TENSOR_L, path)
    tensor = ptmf.TensorMetadata(
        storage_location_index=r.scalar(fr.U32, storage, 0),  # type: ignore[arg-type]
        scalar_type=r.scalar(fr.I8, scalar_type, 0),  # type: ignore[arg-type]
        storage_offset=r.scalar(fr.I32, offset, 0),  # type: ignore[arg-type]
        sizes=r.scalars("i", sizes, path + ".sizes"), strides=r.scalars("i", strides, path + ".strides"),
        requires_grad=r.scalar(fr.BOOL, requires_grad, False))  # type: ignore[arg-type]
    return tensor, quantized


def _tensor(r: TableReader, pos: int, path: str) -> ptmf.TensorMetadata:
    tensor, quantized = _tensor_fields(r, pos, path)
    if not quantized:
        return tensor
    qpath = path + ".quantized_schema"
    qscheme, scale, zero_point, scales, zero_points, axis = r.table(r.target(quantized, qpath), _QUANTIZED_L, qpath)
    schema = ptmf.QuantizedSchema(
        qscheme=r.scalar(fr.I8, qscheme, 0), scale=r.scalar(fr.F64, scale, 0.0),  # type: ignore[arg-type]
        zero_point=r.scalar(fr.I32, zero_point, 0),  # type: ignore[arg-type]
        scales=_channel_qparams(r, scales, qpath + ".scales"),
        zero_points=_channel_qparams(r, zero_points, qpath + ".zero_points"),
        axis=r.scalar(fr.I32, axis, 0))  # type: ignore[arg-type]
    return replace(tensor, quantized_schema=schema)


def _channel_qparams(r: TableReader, at: int, path: str) -> ptmf.TensorMetadata | None:
    """A per-channel scales or zero_points tensor: torch writes plain ones, so one that is itself
    quantized is refused (which also bounds how deep a hostile file can chain these tables)."""
    if not at:
        return None
    tensor, quantized = _tensor_fields(r, r.target(at, path), path)
    if quantized:
        r.fail("per-channel quantization parameters that are themselves quantized", path + ".quantized_schema",
               quantized)
    return tensor


def _instructions(r: TableReader, pos: int, path: str, limits: ptmf.CodeLimits) -> ptmf.LazyInstructions:
    """The instruction vector at ``pos``, bounds-checked now, decoded and index-checked when first used."""
    start, count = r._vector(pos, ptmf.INSTRUCTION_STRUCT.size, path) if pos else (0, 0)
    return ptmf.LazyInstructions(r.buf[start:start + count * ptmf.INSTRUCTION_STRUCT.size], limits,
                                 partial(_check_code, where=path.removesuffix(".instructions")))


def _check_code(instructions: tuple[ptmf.Instruction, ...], limits: ptmf.CodeLimits, where: str) -> None:
    with fr.hostile_input("PTMF function"):
        check_code(instructions, limits, where)


def _operator(r: TableReader, pos: int, path: str) -> ptmf.Operator:
    name, overload, num_args = r.table(pos, _OPERATOR_L, path)
    return ptmf.Operator(_text(r, name, path + ".name"), _text(r, overload, path + ".overload_name"),
                         r.scalar(fr.I32, num_args, -1))  # type: ignore[arg-type]


def _arg(r: TableReader, pos: int, path: str) -> ptmf.Arg:
    name, type_, default = r.table(pos, _ARG_L, path)
    return ptmf.Arg(_text(r, name, path + ".name"), _text(r, type_, path + ".type"),
                    r.scalar(fr.U32, default, 0))  # type: ignore[arg-type]


def _function(r: TableReader, pos: int, path: str) -> ptmf.Function:
    (qn, instructions, operators, constants, types, register_size, schema_at, debug_at,
     class_type) = r.table(pos, _FUNCTION_L, path)
    schema = None
    if schema_at:
        spath = path + ".schema"
        arguments, returns = r.table(r.target(schema_at, spath), _SCHEMA_L, spath)
        schema = ptmf.Schema(r.each(arguments, spath + ".arguments", _arg),
                             r.each(returns, spath + ".returns", _arg))
    debug_handles = None
    if debug_at:
        dpath = path + ".debug_info"
        (handles,) = r.table(r.target(debug_at, dpath), _DEBUG_INFO_L, dpath)
        debug_handles = r.scalars("q", handles, dpath + ".debug_handle")
    operator_list = r.each(operators, path + ".operators", _operator)
    constant_list = r.scalars("I", constants, path + ".constants")
    type_list = _strings(r, types, path + ".type_annotations")
    registers: int = r.scalar(fr.I32, register_size, 0)  # type: ignore[assignment]
    limits = ptmf.CodeLimits(len(operator_list), len(constant_list), registers, len(type_list))
    return ptmf.Function(
        qn=_text(r, qn, path + ".qn"), instructions=_instructions(r, instructions, path + ".instructions", limits),
        operators=operator_list, constants=constant_list, type_annotations=type_list, register_size=registers,
        schema=schema, debug_handles=debug_handles,
        class_type=r.scalar(fr.U32, class_type, 0))  # type: ignore[arg-type]


_STRING_L, _LIST_L, _TUPLE_L, _DICT_L, _OBJECT_L, _INT_LIST_L, _DOUBLE_LIST_L, _BOOL_LIST_L, _DEVICE_L, _ENUM_L = (
    fr.layout(_UNION_TABLES[tag]) for tag in range(6, 16))


def _string_value(r: TableReader, pos: int, path: str) -> ptmf.StringValue:
    (data,) = r.table(pos, _STRING_L, path)
    return ptmf.StringValue(_text(r, data, path + ".data"))


def _list_value(r: TableReader, pos: int, path: str) -> ptmf.ListValue:
    items, annotation = r.table(pos, _LIST_L, path)
    return ptmf.ListValue(r.scalars("I", items, path + ".items"), _text(r, annotation, path + ".annotation_str"))


def _tuple_value(r: TableReader, pos: int, path: str) -> ptmf.TupleValue:
    (items,) = r.table(pos, _TUPLE_L, path)
    return ptmf.TupleValue(r.scalars("I", items, path + ".items"))


def _dict_value(r: TableReader, pos: int, path: str) -> ptmf.DictValue:
    keys, values, annotation = r.table(pos, _DICT_L, path)
    return ptmf.DictValue(r.scalars("I", keys, path + ".keys"), r.scalars("I", values, path + ".values"),
                          _text(r, annotation, path + ".annotation_str"))


def _object_value(r: TableReader, pos: int, path: str) -> ptmf.ObjectValue:
    type_index, state, attrs, setstate_func = r.table(pos, _OBJECT_L, path)
    return ptmf.ObjectValue(r.scalar(fr.U32, type_index, 0), r.scalar(fr.U32, state, 0),  # type: ignore[arg-type]
                            r.scalars("I", attrs, path + ".attrs"), r.scalar(fr.U32, setstate_func, 0))  # type: ignore[arg-type]


def _int_list(r: TableReader, pos: int, path: str) -> ptmf.IntListValue:
    (items,) = r.table(pos, _INT_LIST_L, path)
    return ptmf.IntListValue(r.scalars("q", items, path + ".items"))


def _double_list(r: TableReader, pos: int, path: str) -> ptmf.DoubleListValue:
    (items,) = r.table(pos, _DOUBLE_LIST_L, path)
    return ptmf.DoubleListValue(r.scalars("d", items, path + ".items"))


def _bool_list(r: TableReader, pos: int, path: str) -> ptmf.BoolListValue:
    (items,) = r.table(pos, _BOOL_LIST_L, path)
    return ptmf.BoolListValue(r.scalars("?", items, path + ".items"))  # type: ignore[arg-type]


def _device(r: TableReader, pos: int, path: str) -> ptmf.DeviceValue:
    (text,) = r.table(pos, _DEVICE_L, path)
    return ptmf.DeviceValue(_text(r, text, path + ".str"))


def _enum(r: TableReader, pos: int, path: str) -> ptmf.EnumValue:
    type_name, value = r.table(pos, _ENUM_L, path)
    return ptmf.EnumValue(_text(r, type_name, path + ".type_name"), r.scalar(fr.U32, value, 0))  # type: ignore[arg-type]


# union tag -> the reader of that table member
_UNION_TABLE_READERS: dict[int, Callable[[TableReader, int, str], ptmf.IValue]] = {
    5: _tensor, 6: _string_value, 7: _list_value, 8: _tuple_value, 9: _dict_value, 10: _object_value,
    11: _int_list, 12: _double_list, 13: _bool_list, 14: _device, 15: _enum, 16: _function,
}
