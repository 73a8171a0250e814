"""The lite-interpreter bytecode of a lowered module, as torch's to_backend lowering
writes it (see ``shared/tools/torch_reference_lowering.py`` for torch's own output).

A format fact shared by both sides: liteexport writes these functions, and runtime_py
recognizes them at load to run lowered methods without interpreting the wrapper.

Three kinds of functions, instruction for instruction what torch 2.13 emits:
- ``LoweredWrapper.<method>``: packs the inputs into a ``List[Any]``, asks the backend
  ``is_available()``, calls ``execute(self.__handles["<method>"], inputs)``, unpacks the
  returned list and checks every output is a Tensor; a returned tuple's elements that are
  compile-time constants (the None auxiliary outputs of googlenet in eval mode) are loaded
  with LOADC where the tuple is built, as torch builds its tuple with ``LOADC None``. (Torch
  would also pass a None through ``execute`` and check ``isinstance(_i, NoneType)``; compiled
  programs return tensors only, so the constant never crosses the backend.)
- ``LoweredModule.__setstate__``: restores spec and processed module, creates the
  backend and ``BackendDebugInfo`` objects, ``__handles = backend.compile(...)``;
- ``LoweredModule.__getstate__``: returns ``(spec, processed, True)``.

Constants are given as IValues; the packer turns them into ivalue indexes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bundle_format import ptmf
from bundle_format.ptmf import BytecodeOp as Op

BACKEND_NAME = "backend_with_compiler_demo"
BACKEND_CLASS = f"__torch__.torch.classes.__backends__.{BACKEND_NAME}"
DEBUG_INFO_CLASS = "__torch__.torch.classes.backendutils.BackendDebugInfo"
STATE_TYPE = "Tuple[Dict[str, Any], Any, bool]"
NO_BACKEND_MESSAGE = "Exception: Backend is not available."
DICT_RESULT_TYPE = "Dict[str, Tensor]"  # a method returning a dict of tensors (MethodSignature.output_keys)

# Attribute slots of the LoweredModule object, in the order torch's __setstate__ sets them.
SLOT_PROCESSED, SLOT_SPEC, SLOT_BACKEND, SLOT_HANDLES, SLOT_DEBUG_INFO = range(5)
NO_DEBUG_HANDLE = -1  # wrapper bytecode has no user source behind it


@dataclass(frozen=True)
class MethodSignature:
    """A lowered method's TorchScript signature (``self`` excluded)."""

    name: str
    arg_names: tuple[str, ...]  # every argument is a Tensor
    returns_tuple: bool  # True: a Tuple of num_outputs Tensors and the constants; False: one Tensor
    num_outputs: int  # Tensors the program returns (execute's list)
    # (position in the returned tuple, value) of its constant elements, by position
    constants: tuple[tuple[int, ptmf.IValue], ...] = ()
    # a Dict[str, Tensor] result: its keys, in order, one per output (returns_tuple is False)
    output_keys: tuple[str, ...] = ()

    @property
    def items(self) -> tuple[ptmf.IValue | None, ...]:
        """The returned tuple's elements in order: None for a Tensor, else the constant."""
        fixed = dict(self.constants)
        return tuple(fixed.get(i) for i in range(self.num_outputs + len(fixed)))

    @property
    def return_type(self) -> str:
        if self.output_keys:
            return DICT_RESULT_TYPE
        if not self.returns_tuple:
            return "Tensor"
        return "Tuple[" + ", ".join("Tensor" if c is None else CONSTANT_TYPES[type(c)] for c in self.items) + "]"


    def result(self, tensors: Sequence[Any]) -> Any:
        """What the method returns for ``tensors`` (the program's outputs, in order): a tuple with
        its constants in place, a dict by the output keys, or the one tensor."""
        if self.output_keys:
            return dict(zip(self.output_keys, tensors, strict=True))
        return self.elements(tensors) if self.returns_tuple else tensors[0]

    def elements(self, tensors: Sequence[Any]) -> tuple[Any, ...]:
        """The returned tuple's elements: ``tensors`` (the program's outputs, in order) with the
        constants' run-time values (None, bool, int, float) in place."""
        rest = iter(tensors)
        return tuple(next(rest) if c is None else constant_value(c) for c in self.items)


def constant_value(value: ptmf.IValue) -> Any:
    """The run-time value of a returned tuple's constant, as LOADC gives it."""
    if isinstance(value, (ptmf.BoolValue, ptmf.IntValue, ptmf.DoubleValue)):
        return value.value
    return None


# The constants a returned tuple may hold, and their TorchScript annotation.
CONSTANT_TYPES: dict[type, str] = {
    ptmf.NoneValue: "NoneType", ptmf.BoolValue: "bool", ptmf.IntValue: "int", ptmf.DoubleValue: "float"}


def wrapper_type(qualname: str) -> str:
    return f"torch.jit.LoweredWrapper.{BACKEND_NAME}.{qualname}"


def lowered_type(qualname: str) -> str:
    return f"torch.jit.LoweredModule.{BACKEND_NAME}.{qualname}"


@dataclass(frozen=True)
class FunctionCode:
    """A Function whose constants are still IValues (not yet ivalue indexes)."""

    qn: str
    instructions: tuple[ptmf.Instruction, ...]
    operators: tuple[ptmf.Operator, ...]
    constants: tuple[ptmf.IValue, ...]
    type_annotations: tuple[str, ...]
    register_size: int
    schema: ptmf.Schema
    class_type: int  # index into the module's object types


def _ins(op: Op, x: int = 0, n: int = 0) -> ptmf.Instruction:
    return ptmf.Instruction(op=int(op), x=x, n=n)


def _raise(message_constant: int) -> list[ptmf.Instruction]:
    """Raise constants[message_constant] (an exception message; class name constant 2 = None)."""
    return [_ins(Op.LOADC, message_constant), _ins(Op.LOADC, 2), _ins(Op.RAISE_EXCEPTION)]


def method_function(qualname: str, sig: MethodSignature, class_type: int) -> FunctionCode:
    """The wrapper's ``<method>``: call the backend's execute and type-check its outputs."""
    n, k = len(sig.arg_names), sig.num_outputs
    lowered, unset_result, unset_tensor, inputs = n + 2, n + 3, n + 4, n + 5
    outputs, checked, result = n + 6, n + 6 + k, n + 6 + 2 * k
    # constants: 0 method name, 1 assertion message, 2 None, 3 no-backend message, 4/5 method names,
    # then the tuple's other constants
    code = [_ins(Op.STOREN, 1, n + 1), _ins(Op.MOVE, 1), _ins(Op.GET_ATTR, 0), _ins(Op.STORE, lowered),
            _ins(Op.UN_INITIALIZED), _ins(Op.STORE, unset_result),
            _ins(Op.UN_INITIALIZED), _ins(Op.STORE, unset_tensor)]
    code += [_ins(Op.MOVE, 2 + i) for i in range(n)]
    code += [_ins(Op.LIST_CONSTRUCT, 0, n), _ins(Op.STORE, inputs),
             _ins(Op.LOAD, lowered), _ins(Op.GET_ATTR, SLOT_BACKEND), _ins(Op.INTERFACE_CALL, 4, 1)]
    available = len(code)
    code.append(_ins(Op.JF))  # patched below: jump to the no-backend branch
    code += [_ins(Op.LOAD, lowered), _ins(Op.GET_ATTR, SLOT_BACKEND),
             _ins(Op.LOAD, lowered), _ins(Op.GET_ATTR, SLOT_HANDLES),
             _ins(Op.LOADC, 0), _ins(Op.DICT_INDEX), _ins(Op.LOAD, inputs), _ins(Op.INTERFACE_CALL, 5, 3),
             _ins(Op.LIST_UNPACK, k), _ins(Op.STOREN, outputs, k) if k > 1 else _ins(Op.STORE, outputs)]
    for j in range(k):
        # if isinstance(out_j, Tensor): checked_j = unchecked_cast(out_j) else: raise AssertionError
        code += [_ins(Op.LOAD, outputs + j), _ins(Op.ISINSTANCE, 1 + j, 1), _ins(Op.JF, 4),
                 _ins(Op.LOAD, outputs + j), _ins(Op.OP, 0), _ins(Op.JMP, 5), *_raise(1),
                 _ins(Op.LOAD, unset_tensor), _ins(Op.STORE, checked + j), _ins(Op.DROPR, outputs + j)]
    # constants 6...: one per constant element (NaN is not equal to itself), or a dict's keys
    extra: list[ptmf.IValue] = [ptmf.StringValue(key) for key in sig.output_keys]
    tensors = iter(range(k))
    for item in sig.items:
        if item is None:
            j = next(tensors)
            if sig.output_keys:  # key, tensor, key, tensor...: DICT_CONSTRUCT below
                code.append(_ins(Op.LOADC, 6 + j))
            code.append(_ins(Op.MOVE, checked + j))
        elif isinstance(item, ptmf.NoneValue):
            code.append(_ins(Op.LOADC, 2))  # as torch's own tuples load None
        else:
            extra.append(item)
            code.append(_ins(Op.LOADC, 5 + len(extra)))
    if sig.output_keys:  # one dict of the key-tensor pairs (types[1 + k]: Dict[str, Tensor])
        code.append(_ins(Op.DICT_CONSTRUCT, 1 + k, 2 * k))
    if sig.returns_tuple:
        code.append(_ins(Op.TUPLE_CONSTRUCT, len(sig.items)))
    code.append(_ins(Op.JMP, 5))
    code[available] = _ins(Op.JF, len(code) - available)
    code += [*_raise(3), _ins(Op.LOAD, unset_result), _ins(Op.STORE, result),
             _ins(Op.DROPR, unset_tensor), _ins(Op.DROPR, inputs), _ins(Op.DROPR, lowered),
             _ins(Op.DROPR, unset_result), _ins(Op.MOVE, result), _ins(Op.RET)]
    constants: tuple[ptmf.IValue, ...] = (
        ptmf.StringValue(sig.name), ptmf.StringValue("AssertionError: "), ptmf.NoneValue(),
        ptmf.StringValue(NO_BACKEND_MESSAGE), ptmf.StringValue("is_available"), ptmf.StringValue("execute"),
        *extra)
    args = (ptmf.Arg("self", wrapper_type(qualname)),) + tuple(ptmf.Arg(a, "Tensor") for a in sig.arg_names)
    return FunctionCode(
        qn=f"{wrapper_type(qualname)}.{sig.name}", instructions=tuple(code),
        operators=(ptmf.Operator("prim::unchecked_cast", "", 1),), constants=constants,
        type_annotations=("List[Any]",) + ("Tensor",) * k + ((DICT_RESULT_TYPE,) if sig.output_keys else ()),
        register_size=result,
        schema=ptmf.Schema(args, (ptmf.Arg("", sig.return_type),)), class_type=class_type)


def setstate_function(qualname: str, class_type: int) -> FunctionCode:
    """``LoweredModule.__setstate__(self, state)``: rebuild the backend and compile."""
    code = [_ins(Op.STOREN, 1, 2),
            # self.__method_compile_spec = state[0]; self.__processed_module = state[1]
            _ins(Op.LOAD, 1), _ins(Op.LOAD, 2), _ins(Op.LOADC, 2), _ins(Op.TUPLE_INDEX),
            _ins(Op.SET_ATTR, SLOT_SPEC),
            _ins(Op.LOAD, 1), _ins(Op.LOAD, 2), _ins(Op.LOADC, 3), _ins(Op.TUPLE_INDEX),
            _ins(Op.SET_ATTR, SLOT_PROCESSED),
            # if state[2]: create the backend and the debug-info holder
            _ins(Op.MOVE, 2), _ins(Op.LOADC, 4), _ins(Op.TUPLE_INDEX), _ins(Op.JF, 18),
            _ins(Op.CREATE_OBJECT, 0), _ins(Op.STORE, 3), _ins(Op.LOAD, 3), _ins(Op.INTERFACE_CALL, 7, 1),
            _ins(Op.DROP), _ins(Op.LOAD, 1), _ins(Op.MOVE, 3), _ins(Op.SET_ATTR, SLOT_BACKEND),
            _ins(Op.CREATE_OBJECT, 1), _ins(Op.STORE, 4), _ins(Op.LOAD, 4), _ins(Op.INTERFACE_CALL, 8, 1),
            _ins(Op.DROP), _ins(Op.LOAD, 1), _ins(Op.MOVE, 4), _ins(Op.SET_ATTR, SLOT_DEBUG_INFO),
            _ins(Op.JMP, 1),
            # if backend.is_available(): self.__handles = backend.compile(processed, spec) else raise
            _ins(Op.LOAD, 1), _ins(Op.GET_ATTR, SLOT_BACKEND), _ins(Op.INTERFACE_CALL, 9, 1), _ins(Op.JF, 11),
            _ins(Op.LOAD, 1), _ins(Op.LOAD, 1), _ins(Op.GET_ATTR, SLOT_BACKEND),
            _ins(Op.LOAD, 1), _ins(Op.GET_ATTR, SLOT_PROCESSED), _ins(Op.LOAD, 1), _ins(Op.GET_ATTR, SLOT_SPEC),
            _ins(Op.INTERFACE_CALL, 10, 3), _ins(Op.SET_ATTR, SLOT_HANDLES), _ins(Op.JMP, 4),
            _ins(Op.LOADC, 1), _ins(Op.LOADC, 0), _ins(Op.RAISE_EXCEPTION),
            _ins(Op.DROPR, 1), _ins(Op.LOADC, 0), _ins(Op.RET)]
    constants: tuple[ptmf.IValue, ...] = (
        ptmf.NoneValue(), ptmf.StringValue(NO_BACKEND_MESSAGE), ptmf.IntValue(0), ptmf.IntValue(1),
        ptmf.IntValue(2), ptmf.NoneValue(), ptmf.NoneValue(), ptmf.StringValue("__init__"),
        ptmf.StringValue("__init__"), ptmf.StringValue("is_available"), ptmf.StringValue("compile"))
    self_type = lowered_type(qualname)
    return FunctionCode(
        qn=f"{self_type}.__setstate__", instructions=tuple(code), operators=(), constants=constants,
        type_annotations=(BACKEND_CLASS, DEBUG_INFO_CLASS), register_size=4,
        schema=ptmf.Schema((ptmf.Arg("self", self_type), ptmf.Arg("state", STATE_TYPE)),
                           (ptmf.Arg("", "NoneType"),)),
        class_type=class_type)


def getstate_function(qualname: str, class_type: int) -> FunctionCode:
    """``LoweredModule.__getstate__(self)``: ``(spec, processed, True)``."""
    code = (_ins(Op.STORE, 1), _ins(Op.LOAD, 1), _ins(Op.GET_ATTR, SLOT_SPEC), _ins(Op.MOVE, 1),
            _ins(Op.GET_ATTR, SLOT_PROCESSED), _ins(Op.LOADC, 0), _ins(Op.TUPLE_CONSTRUCT, 3), _ins(Op.RET))
    self_type = lowered_type(qualname)
    return FunctionCode(
        qn=f"{self_type}.__getstate__", instructions=code, operators=(),
        constants=(ptmf.BoolValue(True),), type_annotations=(), register_size=1,
        schema=ptmf.Schema((ptmf.Arg("self", self_type),), (ptmf.Arg("", STATE_TYPE),)),
        class_type=class_type)
