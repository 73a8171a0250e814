"""Read PTMF flatbuffer bytes into a ``ptmf.Module`` (the adapter to the generated reader
code for ``schema/mobile_bytecode.fbs``).

The bytes are hostile until proven otherwise: ``ptmf_verify`` checks every offset,
length, union tag and index before anything here dereferences it, and whatever slips
through is turned into a FormatError, never another exception.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from runtime_py.errors import FormatError
from runtime_py.format import fb_verify as fv
from runtime_py.format import ptmf
from runtime_py.format._generated import mobile_bytecode_generated as fb
from runtime_py.format.fb_verify import CheckedTable, Verifier

T = TypeVar("T")

# --- the tables' layouts (schema/mobile_bytecode.fbs), fields in schema id order ---
# content is a flatbuffers string holding arbitrary bytes (our debug table is binary): no UTF-8 check
_EXTRA_FILE = fv.TableSpec("ExtraFile", (fv.string("name"), fv.vector("content", 1)))
_STORAGE = fv.TableSpec("StorageData", (fv.vector("data", 1),))
_OBJECT_TYPE = fv.TableSpec("ObjectType", (fv.string("type_name"), fv.scalar("type", 1), fv.strings("attr_names")))
_TENSOR = fv.TableSpec("TensorMetadata", (
    fv.scalar("storage_location_index", 4), fv.scalar("scalar_type", 1), fv.scalar("storage_offset", 4),
    fv.vector("sizes", 4), fv.vector("strides", 4), fv.scalar("requires_grad", 1), fv.table("quantized_schema")))
_QUANTIZED = fv.TableSpec("QuantizedSchema", (
    fv.scalar("qscheme", 1), fv.scalar("scale", 8), fv.scalar("zero_point", 4), fv.table("scales"),
    fv.table("zero_points"), fv.scalar("axis", 4)))
_OPERATOR = fv.TableSpec("Operator", (
    fv.string("name"), fv.string("overload_name"), fv.scalar("num_args_serialized", 4)))
_ARG = fv.TableSpec("Arg", (fv.string("name"), fv.string("type"), fv.scalar("default_value", 4)))
_SCHEMA = fv.TableSpec("Schema", (fv.tables("arguments"), fv.tables("returns")))
_DEBUG_INFO = fv.TableSpec("DebugInfo", (fv.vector("debug_handle", 8),))
_FUNCTION = fv.TableSpec("Function", (
    fv.string("qn"), fv.vector("instructions", 8), fv.tables("operators"), fv.vector("constants", 4),
    fv.strings("type_annotations"), fv.scalar("register_size", 4), fv.table("schema"), fv.table("debug_info"),
    fv.scalar("class_type", 4)))
_IVALUE = fv.TableSpec("IValue", (fv.scalar("val_type", 1), fv.table("val")))
_MODULE = fv.TableSpec("Module", (
    fv.scalar("bytecode_version", 4), fv.tables("extra_files"), fv.vector("methods", 4), fv.scalar("state_obj", 4),
    fv.tables("ivalues"), fv.scalar("storage_data_size", 4), fv.tables("storage_data"), fv.tables("object_types"),
    fv.tables("jit_sources"), fv.vector("jit_constants", 4), fv.scalar("operator_version", 4),
    fv.scalar("mobile_ivalue_size", 4)))
# union tag -> the member's layout: struct byte size (tags 1..4) or table spec
_UNION_STRUCTS = {1: 8, 2: 1, 3: 8, 4: 16}
_UNION_TABLES: dict[int, fv.TableSpec] = {
    5: _TENSOR,
    6: fv.TableSpec("String", (fv.string("data"),)),
    7: fv.TableSpec("List", (fv.vector("items", 4), fv.string("annotation_str"))),
    8: fv.TableSpec("Tuple", (fv.vector("items", 4),)),
    9: fv.TableSpec("Dict", (fv.vector("keys", 4), fv.vector("values", 4), fv.string("annotation_str"))),
    10: fv.TableSpec("Object", (
        fv.scalar("type_index", 4), fv.scalar("state", 4), fv.vector("attrs", 4), fv.scalar("setstate_func", 4))),
    11: fv.TableSpec("IntList", (fv.vector("items", 8),)),
    12: fv.TableSpec("DoubleList", (fv.vector("items", 8),)),
    13: fv.TableSpec("BoolList", (fv.vector("items", 1),)),
    14: fv.TableSpec("Device", (fv.string("str"),)),
    15: fv.TableSpec("EnumValue", (fv.string("type_name"), fv.scalar("value", 4))),
    16: _FUNCTION,
}


def _verify_tensor(v: Verifier, tensor: CheckedTable) -> None:
    quantized = v.child(tensor, "quantized_schema", _QUANTIZED)
    if quantized is not None:
        for name in ("scales", "zero_points"):
            nested = v.child(quantized, name, _TENSOR)
            if nested is not None:
                _verify_tensor(v, nested)  # nesting is bounded by the verifier's depth limit


def _verify_ivalue(v: Verifier, ivalue: CheckedTable) -> None:
    tag = v.buf[ivalue.fields["val_type"]] if ivalue.has("val_type") else 0
    target = ivalue.child("val")
    if tag == 0:
        return
    if target is None:
        raise FormatError(f"IValue with union tag {tag} has no value", where=ivalue.loc())
    if tag in _UNION_STRUCTS:
        v.check_range(target, _UNION_STRUCTS[tag], "struct", ivalue.path + ".val")
        return
    spec = _UNION_TABLES.get(tag)
    if spec is None:
        raise FormatError(f"unknown IValue union tag {tag}", where=ivalue.loc("val_type"))
    value = v.child(ivalue, "val", spec)
    assert value is not None
    if tag == 5:
        _verify_tensor(v, value)
    elif tag == 16:
        for _operator in v.children(value, "operators", _OPERATOR):
            pass  # checking each table is the point
        schema = v.child(value, "schema", _SCHEMA)
        if schema is not None:
            for _ in v.children(schema, "arguments", _ARG):
                pass
            for _ in v.children(schema, "returns", _ARG):
                pass
        v.child(value, "debug_info", _DEBUG_INFO)


def verify_structure(buf: Any) -> Verifier:
    """Check every table, vector, string and union member of a PTMF buffer lies inside it."""
    v = Verifier(buf)
    root = v.table(v.root(ptmf.PTMF_FILE_IDENTIFIER, "Module"), _MODULE, "Module")
    for name, spec in (("extra_files", _EXTRA_FILE), ("jit_sources", _EXTRA_FILE),
                       ("storage_data", _STORAGE), ("object_types", _OBJECT_TYPE)):
        for _ in v.children(root, name, spec):
            pass
    for ivalue in v.children(root, "ivalues", _IVALUE):
        _verify_ivalue(v, ivalue)
    return v


def _vector(obj: Any, name: str, get: Callable[[int], T]) -> tuple[T, ...]:
    length = getattr(obj, name + "Length")()
    return tuple(get(i) for i in range(length))


def _numbers(obj: Any, name: str) -> tuple[Any, ...]:
    if getattr(obj, name + "IsNone")():
        return ()
    return tuple(getattr(obj, name + "AsNumpy")().tolist())


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8") if raw is not None else ""


def _tensor(t: fb.TensorMetadata) -> ptmf.TensorMetadata:
    return ptmf.TensorMetadata(
        storage_location_index=t.StorageLocationIndex(), scalar_type=t.ScalarType(),
        storage_offset=t.StorageOffset(), sizes=_numbers(t, "Sizes"), strides=_numbers(t, "Strides"),
        requires_grad=bool(t.RequiresGrad()))


def _schema(s: fb.Schema) -> ptmf.Schema:
    def arg(a: fb.Arg) -> ptmf.Arg:
        return ptmf.Arg(_text(a.Name()), _text(a.Type()), a.DefaultValue())

    return ptmf.Schema(_vector(s, "Arguments", lambda i: arg(s.Arguments(i))),
                       _vector(s, "Returns", lambda i: arg(s.Returns(i))))


# struct Instruction { op:byte; n:ushort; x:int; } -> 8 bytes: op, pad, n, x (little endian)
_INSTRUCTION_DTYPE = np.dtype([("op", "i1"), ("pad", "u1"), ("n", "<u2"), ("x", "<i4")])


def _instructions(f: fb.Function) -> tuple[ptmf.Instruction, ...]:
    """All instructions in one numpy read (the struct accessors cost a call per field)."""
    count = f.InstructionsLength()
    if count == 0:
        return ()
    start = f._tab.Vector(f._tab.Offset(6))  # field 1 (instructions): vtable slot 6
    rows = np.frombuffer(f._tab.Bytes, dtype=_INSTRUCTION_DTYPE, count=count, offset=start)
    return tuple(ptmf.Instruction(op=op, x=x, n=n) for op, x, n in
                 zip(rows["op"].tolist(), rows["x"].tolist(), rows["n"].tolist(), strict=True))


def _function(f: fb.Function) -> ptmf.Function:

    def operator(i: int) -> ptmf.Operator:
        op = f.Operators(i)
        return ptmf.Operator(_text(op.Name()), _text(op.OverloadName()), op.NumArgsSerialized())

    schema, debug = f.Schema(), f.DebugInfo()
    return ptmf.Function(
        qn=_text(f.Qn()), instructions=_instructions(f),
        operators=_vector(f, "Operators", operator), constants=_numbers(f, "Constants"),
        type_annotations=_vector(f, "TypeAnnotations", lambda i: _text(f.TypeAnnotations(i))),
        register_size=f.RegisterSize(), schema=_schema(schema) if schema is not None else None,
        debug_handles=_numbers(debug, "DebugHandle") if debug is not None else None,
        class_type=f.ClassType())


def _as(table: Any, cls: type[T]) -> T:
    obj = cls()
    obj.Init(table.Bytes, table.Pos)  # type: ignore[attr-defined]
    return obj


def _ivalue(v: fb.IValue) -> ptmf.IValue:
    tag, table = v.ValType(), v.Val()
    if tag == 0 or table is None:
        return ptmf.NoneValue()
    # The four struct members (tags 1..4) are not generated for Python: read their bytes.
    if tag == 1:
        return ptmf.IntValue(struct.unpack_from("<q", table.Bytes, table.Pos)[0])
    if tag == 2:
        return ptmf.BoolValue(table.Bytes[table.Pos] != 0)
    if tag == 3:
        return ptmf.DoubleValue(struct.unpack_from("<d", table.Bytes, table.Pos)[0])
    if tag == 4:
        return ptmf.ComplexDoubleValue(*struct.unpack_from("<dd", table.Bytes, table.Pos))
    reader = _TABLE_READERS.get(tag)
    if reader is None:
        raise FormatError(f"unknown IValue union tag {tag}")
    return reader(table)


def _list(t: Any) -> ptmf.ListValue:
    lst = _as(t, fb.List)
    return ptmf.ListValue(_numbers(lst, "Items"), _text(lst.AnnotationStr()))


def _dict(t: Any) -> ptmf.DictValue:
    d = _as(t, fb.Dict)
    return ptmf.DictValue(_numbers(d, "Keys"), _numbers(d, "Values"), _text(d.AnnotationStr()))


def _object(t: Any) -> ptmf.ObjectValue:
    o = _as(t, fb.Object)
    return ptmf.ObjectValue(o.TypeIndex(), o.State(), _numbers(o, "Attrs"), o.SetstateFunc())


def _enum(t: Any) -> ptmf.EnumValue:
    e = _as(t, fb.EnumValue)
    return ptmf.EnumValue(_text(e.TypeName()), e.Value())


# union tag -> reader of that table member
_TABLE_READERS: dict[int, Callable[[Any], ptmf.IValue]] = {
    5: lambda t: _tensor(_as(t, fb.TensorMetadata)),
    6: lambda t: ptmf.StringValue(_text(_as(t, fb.String).Data())),
    7: _list,
    8: lambda t: ptmf.TupleValue(_numbers(_as(t, fb.Tuple), "Items")),
    9: _dict,
    10: _object,
    11: lambda t: ptmf.IntListValue(_numbers(_as(t, fb.IntList), "Items")),
    12: lambda t: ptmf.DoubleListValue(_numbers(_as(t, fb.DoubleList), "Items")),
    13: lambda t: ptmf.BoolListValue(tuple(bool(b) for b in _numbers(_as(t, fb.BoolList), "Items"))),
    14: lambda t: ptmf.DeviceValue(_text(_as(t, fb.Device).Str())),
    15: _enum,
    16: lambda t: _function(_as(t, fb.Function)),
}


def _extra(e: fb.ExtraFile) -> ptmf.ExtraFile:
    return ptmf.ExtraFile(_text(e.Name()), e.Content() or b"")


def _storage(s: fb.StorageData) -> np.ndarray:
    if s.DataIsNone():
        return np.zeros(0, dtype=np.uint8)
    data: np.ndarray = s.DataAsNumpy()  # a view into the buffer: weights stay in place
    return data


def read_module(buf: bytes | bytearray | memoryview | Any) -> ptmf.Module:
    """Verify and decode a PTMF buffer. Storage arrays are views into ``buf``."""
    with fv.hostile_input("PTMF bundle"):
        verified = verify_structure(buf).buf
        return _decode(verified)


def _decode(buf: memoryview) -> ptmf.Module:
    root = fb.Module.GetRootAs(buf, 0)
    return ptmf.Module(
        bytecode_version=root.BytecodeVersion(),
        extra_files=_vector(root, "ExtraFiles", lambda i: _extra(root.ExtraFiles(i))),
        methods=_numbers(root, "Methods"),
        state_obj=root.StateObj(),
        ivalues=_vector(root, "Ivalues", lambda i: _ivalue(root.Ivalues(i))),
        storage_data=_vector(root, "StorageData", lambda i: _storage(root.StorageData(i))),
        object_types=_vector(root, "ObjectTypes", lambda i: _object_type(root.ObjectTypes(i))),
        jit_sources=_vector(root, "JitSources", lambda i: _extra(root.JitSources(i))),
        jit_constants=_numbers(root, "JitConstants"),
        operator_version=root.OperatorVersion(),
        mobile_ivalue_size=root.MobileIvalueSize(),
    )


def _object_type(t: fb.ObjectType) -> ptmf.ObjectType:
    kind = t.Type()
    return ptmf.ObjectType(_text(t.TypeName()),
                           ptmf.TypeType(kind) if kind in ptmf.TypeType._value2member_map_ else ptmf.TypeType.UNSET,
                           _vector(t, "AttrNames", lambda i: _text(t.AttrNames(i))))
