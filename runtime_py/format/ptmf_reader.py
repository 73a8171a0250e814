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
from runtime_py.format import ptmf
from runtime_py.format._generated import mobile_bytecode_generated as fb

T = TypeVar("T")


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


def _function(f: fb.Function) -> ptmf.Function:
    def instruction(i: int) -> ptmf.Instruction:
        ins = f.Instructions(i)
        return ptmf.Instruction(op=ins.Op(), x=ins.X(), n=ins.N())

    def operator(i: int) -> ptmf.Operator:
        op = f.Operators(i)
        return ptmf.Operator(_text(op.Name()), _text(op.OverloadName()), op.NumArgsSerialized())

    schema, debug = f.Schema(), f.DebugInfo()
    return ptmf.Function(
        qn=_text(f.Qn()), instructions=_vector(f, "Instructions", instruction),
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
    """Decode a verified PTMF buffer. Storage arrays are views into ``buf``."""
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
