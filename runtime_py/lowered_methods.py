"""Lowered methods, run without interpreting their wrapper bytecode.

A lowered method's bytecode is always the same ~60 instructions (``format/lowered_bytecode``):
pack the inputs in a list, ask the backend ``is_available()``, call
``execute(self.__handles["<method>"], inputs)``, unpack the result and check that every
output is a Tensor. At load, a function whose instructions, operators, types and constants
are exactly that template is bound to :class:`LoweredCall`, which does the same steps in
Python. Everything else still runs in the interpreter. The saving is the wrapper's
interpretation on every call (tens of microseconds), which dominates small models.

Likewise at load: the LoweredModule's ``__setstate__`` (rebuild the backend, ``compile`` the
processed module) is always the same ~50 instructions, and :func:`run_setstate` does its
steps without interpreting them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from bundle_format import ptmf
from bundle_format.lowered_bytecode import (
    BACKEND_CLASS,
    CONSTANT_TYPES,
    DEBUG_INFO_CLASS,
    DICT_RESULT_TYPE,
    NO_BACKEND_MESSAGE,
    SLOT_BACKEND,
    SLOT_DEBUG_INFO,
    SLOT_HANDLES,
    SLOT_PROCESSED,
    SLOT_SPEC,
    FunctionCode,
    MethodSignature,
    method_function,
    setstate_function,
)
from runtime_py.backends.base import Backend
from runtime_py.errors import ExecutionError, FormatError, LiteExportError
from runtime_py.interpreter import Runtime, ScriptError
from runtime_py.values import ScriptObject

NOT_LOWERED = object()  # what a LoweredCall returns when the objects are not the wrapper's


@dataclass(frozen=True)
class LoweredCall:
    """What a recognized wrapper method does, step for step."""

    signature: MethodSignature
    execute_handle: int = -1  # debug handle of the bytecode's execute call (torch's zip files have one)

    def __call__(self, wrapper: ScriptObject, args: list[Any]) -> Any:
        """The method's result, or NOT_LOWERED when the objects are not shaped as the wrapper's
        bytecode expects (a hostile bundle's state can be anything): then the caller interprets
        the bytecode, which fails with the interpreter's own error."""
        lowered = wrapper.slots[0] if wrapper.slots else None  # GET_ATTR 0: __loweredModule__
        if not isinstance(lowered, ScriptObject) or len(lowered.slots) <= max(SLOT_BACKEND, SLOT_HANDLES):
            return NOT_LOWERED
        backend, handles = lowered.slots[SLOT_BACKEND], lowered.slots[SLOT_HANDLES]
        if not isinstance(backend, Backend) or type(handles) is not dict or self.signature.name not in handles:
            return NOT_LOWERED
        if not backend.is_available():
            raise ScriptError(NO_BACKEND_MESSAGE)
        try:
            outputs = backend.execute(handles[self.signature.name], list(args))
        except ExecutionError as exc:  # the frame it leaves, as the interpreter would stack it
            if exc.debug_handle >= 0 and self.execute_handle >= 0:
                exc.outer_handles.append(self.execute_handle)
            raise
        if len(outputs) != self.signature.num_outputs:  # LIST_UNPACK
            raise ExecutionError(f"Expected {self.signature.num_outputs} elements in a list but found {len(outputs)}")
        if not all(isinstance(o, np.ndarray) for o in outputs):  # ISINSTANCE Tensor, else raise
            raise ScriptError("AssertionError: ")
        return self.signature.result(outputs)


EXECUTE_ARGS = 3  # execute(self, handle, inputs): the wrapper's only 3-input INTERFACE_CALL


def _signature(fn: ptmf.Function, module: ptmf.Module) -> MethodSignature | None:
    """The signature a wrapper method of ``fn``'s schema would have, if it has that shape. Its
    constant elements other than None are the function's constants after the template's six."""
    if fn.schema is None or len(fn.schema.returns) != 1 or not fn.schema.arguments:
        return None
    args = fn.schema.arguments[1:]
    if any(a.type != "Tensor" for a in args):
        return None
    returns = fn.schema.returns[0].type
    if returns == "Tensor":
        return MethodSignature(fn.qn.rpartition(".")[2], tuple(a.name for a in args), False, 1)
    if returns == DICT_RESULT_TYPE:  # the keys are the constants after the template's six
        keys = [module.ivalues[i] if 0 <= i < len(module.ivalues) else None
                for i in fn.constants[len(_FIXED_CONSTANTS):]]
        if not keys or not all(isinstance(k, ptmf.StringValue) for k in keys):
            return None
        return MethodSignature(fn.qn.rpartition(".")[2], tuple(a.name for a in args), False, len(keys), (),
                               tuple(k.value for k in keys if isinstance(k, ptmf.StringValue)))
    if not (returns.startswith("Tuple[") and returns.endswith("]")):
        return None
    items = [t.strip() for t in returns[len("Tuple["):-1].split(",")]
    extra = iter(fn.constants[len(_FIXED_CONSTANTS):])
    constants: list[tuple[int, ptmf.IValue]] = []
    for position, item in enumerate(items):
        if item == "NoneType":
            constants.append((position, ptmf.NoneValue()))
        elif item in _CONSTANT_ANNOTATIONS:
            index = next(extra, None)
            value = module.ivalues[index] if index is not None and 0 <= index < len(module.ivalues) else None
            if value is None or type(value) is not _CONSTANT_ANNOTATIONS[item]:
                return None  # not the template: the template comparison would fail too
            constants.append((position, value))
        elif item != "Tensor":
            return None
    return MethodSignature(fn.qn.rpartition(".")[2], tuple(a.name for a in args), True,
                           len(items) - len(constants), tuple(constants))


_FIXED_CONSTANTS = method_function("", MethodSignature("", (), False, 1), 0).constants
_CONSTANT_ANNOTATIONS = {name: kind for kind, name in CONSTANT_TYPES.items() if kind is not ptmf.NoneValue}


@dataclass(frozen=True)
class _Template:
    code: FunctionCode
    encoded: bytes  # its instructions as a file holds them


def _template(code: FunctionCode) -> _Template:
    return _Template(code, ptmf.encode_instructions(code.instructions))


@lru_cache(maxsize=64)
def _method_template(sig: MethodSignature) -> _Template:
    """Built once per signature: loading compares every method against it (the class type,
    the one thing that differs between bundles, is not compared)."""
    return _template(method_function("", sig, 0))


_SETSTATE_TEMPLATE = _template(setstate_function("", 0))


def _is_template(fn: ptmf.Function, template: _Template, module: ptmf.Module) -> bool:
    """Whether ``fn`` runs exactly ``template``'s code (its name and class type aside). Instructions
    read from a file are compared as bytes, undecoded: a recognized function never runs them."""
    code = template.code
    same_code = (fn.instructions.raw == template.encoded if isinstance(fn.instructions, ptmf.LazyInstructions)
                 else fn.instructions == code.instructions)
    return (same_code and fn.operators == code.operators
            and fn.type_annotations == code.type_annotations and fn.register_size == code.register_size
            and len(fn.constants) == len(code.constants)
            and all(module.ivalues[i] == c for i, c in zip(fn.constants, code.constants, strict=True)))


def recognize(fn: ptmf.Function, module: ptmf.Module) -> LoweredCall | None:
    """A LoweredCall for ``fn`` when it is exactly a lowered wrapper method, else None."""
    sig = _signature(fn, module)
    if sig is None or not _is_template(fn, template := _method_template(sig), module):
        return None
    execute = next(pc for pc, ins in enumerate(template.code.instructions)
                   if ins.op == ptmf.BytecodeOp.INTERFACE_CALL and ins.n == EXECUTE_ARGS)
    handles = fn.debug_handles
    return LoweredCall(sig, handles[execute] if handles is not None and execute < len(handles) else -1)


def is_lowered_setstate(fn: ptmf.Function, module: ptmf.Module) -> bool:
    """Whether ``fn`` is exactly a LoweredModule's ``__setstate__`` (which ``run_setstate`` runs)."""
    return _is_template(fn, _SETSTATE_TEMPLATE, module)


def run_setstate(obj: ScriptObject, state: Any, runtime: Runtime) -> bool:
    """What a recognized LoweredModule ``__setstate__`` does, step for step, without interpreting it.

    True when done. False when ``state`` is not the ``(spec, processed, True)`` this handles, or
    a step failed with one of our errors other than a FormatError: the caller then interprets the
    bytecode on a fresh object, which ends (in an error or not) exactly as it always did. (Only a failing load
    pays for the second run; every step is the runtime's own, so the two cannot disagree.)
    """
    if type(state) is not tuple or len(state) != 3 or state[2] is not True:
        return False
    try:
        obj.set_slot(SLOT_SPEC, state[0])
        obj.set_slot(SLOT_PROCESSED, state[1])
        for slot, type_name in ((SLOT_BACKEND, BACKEND_CLASS), (SLOT_DEBUG_INFO, DEBUG_INFO_CLASS)):
            created = runtime.create_object(type_name)
            runtime.call_method(created, "__init__", [])
            obj.set_slot(slot, created)
        backend = obj.slots[SLOT_BACKEND]
        if runtime.call_method(backend, "is_available", []) is not True:
            return False
        obj.set_slot(SLOT_HANDLES, runtime.call_method(backend, "compile", [state[1], state[0]]))
    except FormatError:
        raise
    except LiteExportError:
        # an ExecutionError, or an InternalError of a step (the backend's): the interpreter runs the
        # same steps and ends in the same error, naming the instruction. Any other exception is a
        # bug of this function's own and propagates (exit 70), never a fallback.
        return False
    return True
