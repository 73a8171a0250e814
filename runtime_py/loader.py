"""Turn a verified ``ptmf.Module`` into run-time values: tensors as numpy views of the
storage, objects (rebuilding CLASS_WITH_SETSTATE ones through their ``__setstate__``),
and functions ready for the interpreter."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

import numpy as np

from bundle_format import ptmf
from bundle_format.ptmf_verify import ivalue_children
from runtime_py import budgets, interpreter
from runtime_py.backends import Backend, get_backend
from runtime_py.errors import ExecutionError, FormatError, InternalError, LiteExportError
from runtime_py.lowered_methods import NOT_LOWERED, LoweredCall, is_lowered_setstate, recognize, run_setstate
from runtime_py.operators import bind_operator
from runtime_py.operators.packed_params import CUSTOM_CLASSES
from runtime_py.quantized_tensor import QuantizedTensor
from runtime_py.values import ScriptEnum, ScriptObject

BACKEND_CLASS_PREFIX = "__torch__.torch.classes.__backends__."
DEBUG_INFO_CLASS = "__torch__.torch.classes.backendutils.BackendDebugInfo"


# Load-time code (``__setstate__``) may run this many instructions per instruction or ivalue the
# bundle holds (each takes bytes of the file), plus a fixed allowance.
LOAD_INSTRUCTIONS_PER_ITEM = 16
LOAD_INSTRUCTIONS_SLACK = 10_000
# A value built by load-time code may take 4 bytes per byte of the bundle's storage and 32 per
# instruction or ivalue, plus this allowance (checked after each operator: doubling a list
# in a loop stops at about twice the cap).
LOAD_VALUE_SLACK = 256 << 10


# the limits of the method call in progress (LoadedModule.call_limited)
_RUN_BUDGET: ContextVar[budgets.RunBudget | None] = ContextVar("runtime_py_run_budget", default=None)


def _dependencies(v: ptmf.IValue, module: ptmf.Module) -> tuple[int, ...]:
    """The ivalues ``v`` needs built before it (those ``_build`` looks up)."""
    if isinstance(v, ptmf.ObjectValue):
        if module.object_types[v.type_index].type == ptmf.TypeType.CLASS_WITH_SETSTATE:
            return (v.state, v.setstate_func)
        return v.attrs
    if isinstance(v, ptmf.Function):
        return v.constants
    return ivalue_children(v)  # containers' items, an enum's value


def tensor_value(t: ptmf.TensorMetadata, storages: tuple[np.ndarray, ...]) -> np.ndarray | QuantizedTensor:
    """The tensor ``t`` describes (verify_module checked it, its quantization included)."""
    values = _array(t, storages[t.storage_location_index])
    q = t.quantized_schema
    if q is None:
        return values
    if q.scales is None or q.zero_points is None:
        return QuantizedTensor(values, t.scalar_type, q.scale, q.zero_point)
    return QuantizedTensor(values, t.scalar_type, scales=_array(q.scales, storages[q.scales.storage_location_index])
                           .astype(np.float64), zero_points=_array(q.zero_points, storages[
                               q.zero_points.storage_location_index]).astype(np.int64), axis=q.axis)


def _array(t: ptmf.TensorMetadata, storage: np.ndarray) -> np.ndarray:
    dtype = ptmf.storage_dtype(t.scalar_type)
    assert dtype is not None  # verify_module checked it
    if 0 in t.sizes:  # no bytes at all, whatever the other sizes claim (verify_module bounded them)
        return np.ndarray(tuple(t.sizes), dtype=dtype, buffer=np.zeros(0, dtype=np.uint8), strides=(0,) * len(t.sizes))
    # A view, never a copy: weights stay in the mapped file (read-only, so never modified).
    return np.ndarray(tuple(t.sizes), dtype=dtype, buffer=storage, offset=t.storage_offset * dtype.itemsize,
                      strides=tuple(s * dtype.itemsize for s in t.strides))


# run-time value of each kind of ivalue that refers to no other
_PLAIN: dict[type, Callable[[Any], Any]] = {
    ptmf.NoneValue: lambda v: None,
    ptmf.IntValue: lambda v: v.value, ptmf.BoolValue: lambda v: v.value,
    ptmf.DoubleValue: lambda v: v.value, ptmf.StringValue: lambda v: v.value,
    ptmf.DeviceValue: lambda v: v.value,
    ptmf.ComplexDoubleValue: lambda v: complex(v.real, v.imag),
    ptmf.IntListValue: lambda v: list(v.items), ptmf.DoubleListValue: lambda v: list(v.items),
    ptmf.BoolListValue: lambda v: list(v.items),
}


class LoadedModule:
    """The run-time side of a bundle: values by ivalue index, functions by qualified name."""

    def __init__(self, module: ptmf.Module) -> None:
        self.module = module
        self._values: dict[int, Any] = {}
        self._building: set[int] = set()  # ivalues whose dependencies are being built
        self._methods: dict[str, ptmf.Function] = {}  # by qualified name
        self.functions: dict[str, interpreter.Code] = {}  # the methods' Codes, made when first run
        items = len(module.ivalues) + sum(len(v.instructions) for v in module.ivalues if isinstance(v, ptmf.Function))
        storage = sum(int(s.nbytes) for s in module.storage_data)
        # set while loading: load-time code is hostile and bounded; None once loaded
        self._budget: budgets.LoadBudget | None = budgets.LoadBudget(
            LOAD_INSTRUCTIONS_PER_ITEM * items + LOAD_INSTRUCTIONS_SLACK, 4 * storage + 32 * items + LOAD_VALUE_SLACK)
        self.lowered_calls: dict[str, LoweredCall] = {}  # qualified name -> wrapper run without bytecode
        for index in module.methods:
            fn = module.ivalues[index]
            assert isinstance(fn, ptmf.Function)  # verify_module checked it
            self._build_needed(fn.constants)
            self._methods[fn.qn] = fn
            call = recognize(fn, module)
            if call is not None:
                self.lowered_calls[fn.qn] = call
        self.root = self.value(module.state_obj)
        for index in module.methods:  # default values too: building one may run __setstate__
            fn = module.ivalues[index]
            assert isinstance(fn, ptmf.Function)
            if fn.schema is not None:
                self._build_needed(tuple(arg.default_value for arg in fn.schema.arguments))
        self._budget = None

    # --- values -------------------------------------------------------------------------
    def value(self, index: int) -> Any:
        """The run-time value of ivalue ``index`` (built once)."""
        if index not in self._values:
            self._build_needed((index,))
        return self._values[index]

    def _build_needed(self, roots: tuple[int, ...]) -> None:
        """Build ``roots`` and everything they refer to, children first, without recursion (a
        hostile bundle may nest values as deep as its size allows). verify_module ruled out
        containers that contain themselves, but not an object whose ``__setstate__`` (or a
        function whose constants) refer back to it: a value met again while it is being built
        is a FormatError, not an endless loop."""
        values, building, ivalues = self._values, self._building, self.module.ivalues
        for root in roots:
            if root in values:
                continue
            stack = [(root, False)]
            while stack:
                index, expanded = stack.pop()
                if expanded:
                    values[index] = self._build(ivalues[index], index)
                    building.discard(index)
                elif index not in values:
                    plain = _PLAIN.get(type(ivalues[index]))
                    if plain is not None:  # depends on nothing: built at once (most values are)
                        values[index] = plain(ivalues[index])
                        continue
                    if index in building:
                        raise FormatError(f"ivalue {index} depends on itself", where=f"Module.ivalues[{index}]")
                    building.add(index)
                    stack.append((index, True))
                    stack.extend([(child, False) for child in reversed(_dependencies(ivalues[index], self.module))
                                  if child not in values])

    def _build(self, v: ptmf.IValue, index: int) -> Any:
        plain = _PLAIN.get(type(v))
        if plain is not None:
            return plain(v)
        values = self._values  # _build_needed built every dependency first
        if isinstance(v, ptmf.ListValue):
            return [values[i] for i in v.items]
        if isinstance(v, ptmf.TupleValue):
            return tuple([values[i] for i in v.items])
        if isinstance(v, ptmf.TensorMetadata):
            return tensor_value(v, self.module.storage_data)
        if isinstance(v, ptmf.EnumValue):
            return ScriptEnum(v.type_name, values[v.value])
        if isinstance(v, ptmf.DictValue):
            try:
                return {values[k]: values[val] for k, val in zip(v.keys, v.values, strict=True)}
            except TypeError as exc:  # e.g. a list used as a key
                raise FormatError(f"unhashable dict key: {exc}", where=f"Module.ivalues[{index}]") from exc
        if isinstance(v, ptmf.ObjectValue):
            return self._object(v, index)
        if isinstance(v, ptmf.Function):
            return self._method_code(v.qn) or self._code(v)
        raise FormatError(f"cannot load ivalue of kind {type(v).__name__}", where=f"Module.ivalues[{index}]")

    def _object(self, v: ptmf.ObjectValue, index: int) -> Any:
        object_type = self.module.object_types[v.type_index]
        obj = ScriptObject(object_type.type_name)
        if object_type.type == ptmf.TypeType.CLASS_WITH_FIELD:
            obj.slots = [self.value(i) for i in v.attrs]
        elif object_type.type == ptmf.TypeType.CLASS_WITH_SETSTATE:
            state = self.value(v.state)
            setstate_fn = self.module.ivalues[v.setstate_func]
            assert isinstance(setstate_fn, ptmf.Function)  # verify_module checked it
            if is_lowered_setstate(setstate_fn, self.module) and run_setstate(obj, state, self):
                return obj
            obj = ScriptObject(object_type.type_name)  # interpreted from the start
            try:
                interpreter.run(self.value(v.setstate_func), [obj, state], self, self._budget)
            except FormatError as exc:
                raise exc.at(f"Module.ivalues[{index}]") from exc.__cause__
            except InternalError:  # a bug of ours stays one
                raise
            except LiteExportError as exc:  # the file's own code failed: the file is at fault
                raise FormatError(f"__setstate__ of {object_type.type_name} failed at load: {exc}",
                                  where=f"Module.ivalues[{index}]") from exc
        elif object_type.type == ptmf.TypeType.CUSTOM_CLASS:
            return self._custom_object(object_type.type_name, v, index)
        else:
            raise FormatError(f"objects of kind {object_type.type.name} ({object_type.type_name}) are not "
                              "supported", where=f"Module.ivalues[{index}]")
        return obj

    def _custom_object(self, type_name: str, v: ptmf.ObjectValue, index: int) -> Any:
        """A torch C++ class's object, rebuilt from the state its ``__getstate__`` gave (torch runs
        the class's native ``__setstate__``; runtime_py has its own for the classes it knows)."""
        build = CUSTOM_CLASSES.get(type_name)
        if build is None:
            raise FormatError(f"objects of the C++ class {type_name} are not supported by runtime_py (it rebuilds "
                              f"{', '.join(sorted(CUSTOM_CLASSES))})", where=f"Module.ivalues[{index}]")
        try:
            return build(self.value(v.state))
        except ExecutionError as exc:  # the state the file holds does not fit the class
            raise FormatError(f"__setstate__ of {type_name}: {exc}", where=f"Module.ivalues[{index}]") from exc

    def _method_code(self, qn: str) -> interpreter.Code | None:
        """The Code of method ``qn``, made on first use: a recognized lowered method never
        needs one (its constants were built at load, so making it later builds nothing)."""
        code = self.functions.get(qn)
        if code is None and qn in self._methods:
            code = self.functions[qn] = self._code(self._methods[qn])
        return code

    def _code(self, f: ptmf.Function) -> interpreter.Code:
        return interpreter.Code(
            qn=f.qn, instructions=f.instructions, constants=tuple([self.value(c) for c in f.constants]),
            operators=tuple(bind_operator(op, f.qn) for op in f.operators),
            types=f.type_annotations, register_size=f.register_size, debug_handles=f.debug_handles,
            operator_names=tuple(f"{op.name}.{op.overload_name}" if op.overload_name else op.name
                                 for op in f.operators))

    def call_limited(self, obj: Any, name: str, args: list[Any], budget: budgets.RunBudget | None) -> Any:
        """``call_method`` with the bytecode it interprets (this method's and every method it calls)
        under ``budget``: the budget follows the call through the context, not through the
        interpreter's Runtime protocol (and concurrent calls each have their own)."""
        if budget is None:
            return self.call_method(obj, name, args)
        token = _RUN_BUDGET.set(budget)
        try:
            return self.call_method(obj, name, args)
        finally:
            _RUN_BUDGET.reset(token)

    # --- the interpreter's Runtime protocol ---------------------------------------------------
    def call_method(self, obj: Any, name: str, args: list[Any]) -> Any:
        if isinstance(obj, ScriptObject):
            qn = f"{obj.type_name}.{name}"
            lowered = self.lowered_calls.get(qn)
            if lowered is not None and self._budget is None:
                result = lowered(obj, args)
                if result is not NOT_LOWERED:
                    return result
            code = self._method_code(qn)
            if code is None:
                raise ExecutionError(f"object of type {obj.type_name} has no method {name}")
            return interpreter.run(code, [obj, *args], self, self._budget or _RUN_BUDGET.get())
        # not a script object: only what create_object makes besides them (a delegate backend, the
        # debug info holder) has methods to call, and only the public ones its class defines
        method = (getattr(obj, name, None) if isinstance(obj, Backend | _BackendDebugInfo)
                  and (not name.startswith("_") or name == "__init__") else None)
        if method is None:
            callable_object = isinstance(obj, Backend | _BackendDebugInfo)
            raise ExecutionError(f"{type(obj).__name__} has no method {name}" if callable_object
                                 else f"method {name} called on a {type(obj).__name__}, not an object")
        try:
            inspect.signature(method).bind(*args)
        except TypeError as exc:  # the bundle's bytecode chose the arguments
            raise ExecutionError(f"{type(obj).__name__}.{name}: {exc}") from None
        try:
            return method(*args)
        except (LiteExportError, MemoryError, RecursionError):
            raise
        except Exception as exc:  # the backend refuses what it is given with our errors: this is a bug
            raise InternalError(f"{type(obj).__name__}.{name} failed: {type(exc).__name__}: {exc}") from exc

    def create_object(self, type_name: str) -> Any:
        if type_name.startswith(BACKEND_CLASS_PREFIX):
            return get_backend(type_name[len(BACKEND_CLASS_PREFIX):])
        if type_name == DEBUG_INFO_CLASS:
            return _BackendDebugInfo()
        return ScriptObject(type_name)


class _BackendDebugInfo:
    """torch's BackendDebugInfo holder: torch-side only, nothing to keep in runtime_py."""

    def __init__(self) -> None:
        pass
