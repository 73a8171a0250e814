"""Turn the unpickled contents of a zip lite model into the ``ptmf.Module`` mirror.

The zip format keeps functions in ``bytecode.pkl`` (opcode *names*, constants as values)
and the module's state in ``data.pkl`` (an object graph); the flatbuffer format keeps
both as one table of ivalues referring to each other by index. Building that table here
lets one loader and one interpreter run both formats.

``bytecode.pkl`` = ``(version, (qualname, (('instructions', ((name, X, N), ...)),
('operators', ((name, overload[, num_args]), ...)), ('constants', (...)), ('types',
(...)), ('register_size', n)), (('arguments', args), ('returns', args))), ...)``
(torch/csrc/jit/mobile/parse_bytecode.cpp, import.cpp).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bundle_format import ptmf
from bundle_format.errors import FormatError
from bundle_format.ptmf import BytecodeOp
from bundle_format.restricted_unpickler import PickledObject, TensorRef

# zip opcode names that are not Python identifiers in ptmf.BytecodeOp
_OPCODE_ALIASES = {"__IS__": BytecodeOp.IS, "__ISNOT__": BytecodeOp.ISNOT, "__NOT__": BytecodeOp.NOT}
SETSTATE = "__setstate__"
CUSTOM_CLASS_PREFIX = "__torch__.torch.classes."  # torch's C++ classes (torch::class_), as the flatbuffer marks them


def opcode(name: Any, where: str) -> int:
    """The number of the opcode called ``name`` in zip bytecode."""
    if isinstance(name, str):
        if name in _OPCODE_ALIASES:
            return _OPCODE_ALIASES[name]
        if name in BytecodeOp.__members__:
            return BytecodeOp[name]
    raise FormatError(f"unknown instruction {name!r}", where=where)


class IValueTable:
    """Builds ``Module.ivalues``: index 0 is None, shared objects are stored once."""

    def __init__(self) -> None:
        self.ivalues: list[ptmf.IValue] = [ptmf.NoneValue()]
        self.object_types: list[ptmf.ObjectType] = []
        self._type_index: dict[ptmf.ObjectType, int] = {}
        self._by_id: dict[int, int] = {}  # id(container/object/tensor) -> index
        self._keep: list[Any] = []  # keeps ids above valid
        self._primitives: dict[tuple[type, Any], int] = {}
        self.setstate_functions: dict[str, int] = {}  # class name -> ivalue index of its __setstate__
        self.where = "bytecode.pkl"  # the record (and part of it) whose values are being added, for errors

    def append(self, value: ptmf.IValue) -> int:
        self.ivalues.append(value)
        return len(self.ivalues) - 1

    def add(self, value: Any) -> int:
        if value is None:
            return 0
        if isinstance(value, (bool, int, float, str, complex)):
            key = (type(value), value)
            if key not in self._primitives:
                self._primitives[key] = self.append(_primitive(value))
            return self._primitives[key]
        if id(value) in self._by_id:
            return self._by_id[id(value)]
        index = self.append(ptmf.NoneValue())  # reserve first: children come after their parent
        self._by_id[id(value)] = index
        self._keep.append(value)
        self.ivalues[index] = self._container(value)
        return index

    def _container(self, value: Any) -> ptmf.IValue:
        if isinstance(value, TensorRef):
            return tensor_metadata(value)
        if isinstance(value, list):
            return ptmf.ListValue(tuple(self.add(v) for v in value), "")
        if isinstance(value, tuple):
            return ptmf.TupleValue(tuple(self.add(v) for v in value))
        if isinstance(value, dict):
            keys = tuple(self.add(k) for k in value)
            return ptmf.DictValue(keys, tuple(self.add(v) for v in value.values()), "")
        if isinstance(value, PickledObject):
            return self._object(value)
        raise FormatError(f"cannot load a value of kind {type(value).__name__} from a zip model", where=self.where)

    def _object(self, obj: PickledObject) -> ptmf.IValue:
        if obj.args:  # REDUCE'd class: torch pickles enum values this way
            return ptmf.EnumValue(obj.type_name, self.add(obj.args[0]))
        if obj.type_name.startswith(CUSTOM_CLASS_PREFIX):  # a C++ class: its state is what its __getstate__ gave
            kind = self._type(ptmf.ObjectType(obj.type_name, ptmf.TypeType.CUSTOM_CLASS))
            return ptmf.ObjectValue(kind, state=self.add(obj.state if obj.has_state else None))
        if obj.type_name in self.setstate_functions:
            kind = self._type(ptmf.ObjectType(obj.type_name, ptmf.TypeType.CLASS_WITH_SETSTATE))
            state = obj.state if obj.has_state else None
            return ptmf.ObjectValue(kind, state=self.add(state), setstate_func=self.setstate_functions[obj.type_name])
        state = obj.state if obj.has_state else {}
        if not isinstance(state, dict) or not all(isinstance(k, str) for k in state):
            raise FormatError(f"object of class {obj.type_name} has no __setstate__ and its state is not "
                              "a dict of attributes", where=self.where)
        # Slots in the order the pickle lists the attributes: the class's own order.
        kind = self._type(ptmf.ObjectType(obj.type_name, ptmf.TypeType.CLASS_WITH_FIELD, tuple(state)))
        return ptmf.ObjectValue(kind, attrs=tuple(self.add(v) for v in state.values()))

    def _type(self, object_type: ptmf.ObjectType) -> int:
        if object_type not in self._type_index:
            self._type_index[object_type] = len(self.object_types)
            self.object_types.append(object_type)
        return self._type_index[object_type]


def tensor_metadata(ref: TensorRef) -> ptmf.TensorMetadata:
    """The flatbuffer mirror's form of a pickled tensor (a quantized one's parameters included)."""
    q = ref.quantizer
    schema = None if q is None else ptmf.QuantizedSchema(
        q.qscheme, q.scale, q.zero_point, None if q.scales is None else tensor_metadata(q.scales),
        None if q.zero_points is None else tensor_metadata(q.zero_points), q.axis)
    return ptmf.TensorMetadata(ref.storage_index, ref.scalar_type, ref.storage_offset, ref.sizes, ref.strides,
                               ref.requires_grad, schema)


def _primitive(value: bool | int | float | str | complex) -> ptmf.IValue:
    if isinstance(value, bool):
        return ptmf.BoolValue(value)
    if isinstance(value, int):
        return ptmf.IntValue(value)
    if isinstance(value, float):
        return ptmf.DoubleValue(value)
    if isinstance(value, complex):
        return ptmf.ComplexDoubleValue(value.real, value.imag)
    return ptmf.StringValue(value)


def _sections(table: Any, where: str) -> dict[str, Any]:
    """``(('instructions', ...), ('operators', ...), ...)`` as a dict."""
    if not isinstance(table, tuple) or not all(isinstance(s, tuple) and len(s) == 2 and isinstance(s[0], str)
                                               for s in table):
        raise FormatError("expected a tuple of (name, value) sections", where=where)
    return dict(table)


def _instruction(raw: Any, where: str) -> ptmf.Instruction:
    if not isinstance(raw, tuple) or len(raw) != 3 or not all(isinstance(v, int) for v in raw[1:]):
        raise FormatError(f"malformed instruction {raw!r:.60}", where=where)
    return ptmf.Instruction(opcode(raw[0], where), raw[1], raw[2])


def _operator(raw: Any, where: str) -> ptmf.Operator:
    # Bytecode 5 has (name, overload); 6+ add the number of arguments serialized.
    if (not isinstance(raw, tuple) or len(raw) not in (2, 3) or not all(isinstance(s, str) for s in raw[:2])
            or (len(raw) == 3 and not isinstance(raw[2], int))):
        raise FormatError(f"malformed operator {raw!r:.60}", where=where)
    return ptmf.Operator(raw[0], raw[1], raw[2] if len(raw) == 3 else -1)


def _schema(raw: Any, table: IValueTable, where: str) -> ptmf.Schema:
    sections = _sections(raw, where)

    def args(items: Any) -> tuple[ptmf.Arg, ...]:
        out = []
        for item in items or ():
            fields = _sections(item, where)
            out.append(ptmf.Arg(str(fields.get("name", "")), str(fields.get("type", "")),
                                table.add(fields.get("default_value"))))
        return tuple(out)

    return ptmf.Schema(args(sections.get("arguments")), args(sections.get("returns")))


def function(raw: Any, table: IValueTable, debug_handles: dict[str, tuple[int, ...]]) -> ptmf.Function:
    """One ``(qualname, code, schema)`` entry of bytecode.pkl."""
    if not isinstance(raw, tuple) or len(raw) not in (2, 3) or not isinstance(raw[0], str):
        raise FormatError(f"malformed function entry {raw!r:.60}", where="bytecode.pkl")
    qn = raw[0]
    where = f"bytecode.pkl function {qn}"
    code = _sections(raw[1], where)
    table.where = where
    try:
        instructions = tuple(_instruction(i, where) for i in code["instructions"])
        operators = tuple(_operator(o, where) for o in code["operators"])
        constants = tuple(table.add(c) for c in code["constants"])
        types = tuple(str(t) for t in code["types"])
        register_size = int(code["register_size"])
    except KeyError as exc:
        raise FormatError(f"missing section {exc}", where=where) from None
    except TypeError as exc:
        raise FormatError(f"malformed section: {exc}", where=where) from None
    schema = _schema(raw[2], table, where) if len(raw) == 3 and raw[2] is not None else None
    return ptmf.Function(qn, instructions, operators, constants, types, register_size, schema,
                         debug_handles.get(qn))


def function_debug_handles(raw: Any) -> dict[str, tuple[int, ...]]:
    """mobile_debug_handles.pkl: ``(version, (qualname, (('function_debug_handles', ([h, ...],)),)), ...)``."""
    out: dict[str, tuple[int, ...]] = {}
    if not isinstance(raw, tuple):
        raise FormatError("expected a tuple", where="mobile_debug_handles.pkl")
    for entry in raw[1:]:
        if not isinstance(entry, tuple) or len(entry) != 2 or not isinstance(entry[0], str):
            raise FormatError(f"malformed entry {entry!r:.60}", where="mobile_debug_handles.pkl")
        handles = _sections(entry[1], "mobile_debug_handles.pkl").get("function_debug_handles")
        if isinstance(handles, tuple) and len(handles) == 1:  # torch wraps the list in a 1-tuple
            handles = handles[0]
        if not isinstance(handles, list) or not all(isinstance(h, int) for h in handles):
            raise FormatError(f"malformed handles of {entry[0]}", where="mobile_debug_handles.pkl")
        out[entry[0]] = tuple(handles)
    return out


def build_module(version: int, functions: Sequence[ptmf.Function], root: Any, storage: Sequence[np.ndarray],
                 extra_files: tuple[ptmf.ExtraFile, ...], table: IValueTable) -> ptmf.Module:
    """The ptmf.Module of a zip model whose functions were converted with ``table``."""
    methods = tuple(table.append(f) for f in functions)
    # Objects of a class whose __setstate__ is in the bytecode are rebuilt by it (torch does the same).
    for f, index in zip(functions, methods, strict=True):
        if f.qn.endswith("." + SETSTATE):
            table.setstate_functions[f.qn[: -len(SETSTATE) - 1]] = index
    if not isinstance(root, PickledObject):
        raise FormatError("the root of data.pkl is not a model object", where="data.pkl")
    table.where = "data.pkl"
    state_obj = table.add(root)
    return ptmf.Module(bytecode_version=version, extra_files=extra_files, methods=methods, state_obj=state_obj,
                       ivalues=tuple(table.ivalues), storage_data=tuple(storage),
                       object_types=tuple(table.object_types))
