"""Lowered methods, run without interpreting their wrapper bytecode.

A lowered method's bytecode is always the same ~60 instructions (``format/lowered_bytecode``):
pack the inputs in a list, ask the backend ``is_available()``, call
``execute(self.__handles["<method>"], inputs)``, unpack the result and check that every
output is a Tensor. At load, a function whose instructions, operators, types and constants
are exactly that template is bound to :class:`LoweredCall`, which does the same steps in
Python. Everything else still runs in the interpreter. The saving is the wrapper's
interpretation on every call (tens of microseconds), which dominates small models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from runtime_py.errors import ExecutionError
from runtime_py.format import ptmf
from runtime_py.format.lowered_bytecode import (
    NO_BACKEND_MESSAGE,
    SLOT_BACKEND,
    SLOT_HANDLES,
    MethodSignature,
    method_function,
)
from runtime_py.interpreter import ScriptError
from runtime_py.values import ScriptObject


@dataclass(frozen=True)
class LoweredCall:
    """What a recognized wrapper method does, step for step."""

    signature: MethodSignature

    def __call__(self, wrapper: ScriptObject, args: list[Any]) -> Any:
        lowered = wrapper.get_slot(0)  # GET_ATTR 0: __loweredModule__
        backend = lowered.get_slot(SLOT_BACKEND)
        if not backend.is_available():
            raise ScriptError(NO_BACKEND_MESSAGE)
        outputs = backend.execute(lowered.get_slot(SLOT_HANDLES)[self.signature.name], list(args))
        if len(outputs) != self.signature.num_outputs:  # LIST_UNPACK
            raise ExecutionError(f"Expected {self.signature.num_outputs} elements in a list but found {len(outputs)}")
        if not all(isinstance(o, np.ndarray) for o in outputs):  # ISINSTANCE Tensor, else raise
            raise ScriptError("AssertionError: ")
        return tuple(outputs) if self.signature.returns_tuple else outputs[0]


def _signature(fn: ptmf.Function) -> MethodSignature | None:
    """The signature a wrapper method of ``fn``'s schema would have, if it has that shape."""
    if fn.schema is None or len(fn.schema.returns) != 1 or not fn.schema.arguments:
        return None
    args = fn.schema.arguments[1:]
    if any(a.type != "Tensor" for a in args):
        return None
    returns = fn.schema.returns[0].type
    if returns == "Tensor":
        outputs, is_tuple = 1, False
    elif returns.startswith("Tuple[") and returns.endswith("]"):
        items = [t.strip() for t in returns[len("Tuple["):-1].split(",")]
        if any(t != "Tensor" for t in items):
            return None
        outputs, is_tuple = len(items), True
    else:
        return None
    return MethodSignature(fn.qn.rpartition(".")[2], tuple(a.name for a in args), is_tuple, outputs)


def recognize(fn: ptmf.Function, module: ptmf.Module) -> LoweredCall | None:
    """A LoweredCall for ``fn`` when it is exactly a lowered wrapper method, else None."""
    sig = _signature(fn)
    if sig is None:
        return None
    template = method_function("", sig, fn.class_type)
    same = (fn.instructions == template.instructions and fn.operators == template.operators
            and fn.type_annotations == template.type_annotations and fn.register_size == template.register_size
            and len(fn.constants) == len(template.constants)
            and all(module.ivalues[i] == c for i, c in zip(fn.constants, template.constants, strict=True)))
    return LoweredCall(sig) if same else None
