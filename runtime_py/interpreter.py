"""The lite interpreter's bytecode loop: one ``while pc < len(code)`` and a table of opcodes.

Semantics follow torch/csrc/jit/mobile/interpreter.cpp: registers are 1-based, ``X``
and ``N`` mean what each handler's comment says, jumps are relative to the jumping
instruction.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from runtime_py.errors import ExecutionError, FormatError, LiteExportError
from runtime_py.format.ptmf import OpCode
from runtime_py.values import UNINITIALIZED, ScriptObject


class Runtime(Protocol):
    """What the interpreter needs from the loaded module."""

    def call_method(self, obj: Any, name: str, args: list[Any]) -> Any: ...

    def create_object(self, type_name: str) -> Any: ...


@dataclass(frozen=True)
class Code:
    """A Function ready to run: constants resolved, operators bound to kernels."""

    qn: str
    instructions: tuple[tuple[int, int, int], ...]  # (op, x, n)
    constants: tuple[Any, ...]
    operators: tuple[Callable[[list[Any]], None], ...]  # each pops its inputs, pushes its outputs
    types: tuple[str, ...]
    register_size: int


class ScriptError(ExecutionError):
    """RAISE_EXCEPTION: the model's own ``raise`` (or a lowered method's failed check)."""


@dataclass
class Frame:
    code: Code
    registers: list[Any]
    stack: list[Any]
    runtime: Runtime
    pc: int = 0


def _isinstance(value: Any, type_str: str) -> bool:
    if type_str == "Tensor":
        return isinstance(value, np.ndarray)
    checks: dict[str, Callable[[Any], bool]] = {
        "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "float": lambda v: isinstance(v, float),
        "bool": lambda v: isinstance(v, bool),
        "str": lambda v: isinstance(v, str),
        "NoneType": lambda v: v is None,
        "Any": lambda v: True,
    }
    if type_str in checks:
        return checks[type_str](value)
    for prefix, kind in (("List[", list), ("Tuple[", tuple), ("Dict[", dict)):
        if type_str.startswith(prefix):
            return isinstance(value, kind)
    return isinstance(value, ScriptObject) and value.type_name == type_str


def _op(f: Frame, x: int, n: int) -> None:  # call operators[X]
    f.code.operators[x](f.stack)


def _opn(f: Frame, x: int, n: int) -> None:  # call operators[X] with N inputs (vararg)
    f.stack.append(n)
    f.code.operators[x](f.stack)


def _load(f: Frame, x: int, n: int) -> None:  # push reg[X]
    f.stack.append(f.registers[x])


def _move(f: Frame, x: int, n: int) -> None:  # push reg[X], clear it
    f.stack.append(f.registers[x])
    f.registers[x] = None


def _storen(f: Frame, x: int, n: int) -> None:  # pop N values into reg[X..X+N-1]
    for i in range(n - 1, -1, -1):
        f.registers[x + i] = f.stack.pop()


def _store(f: Frame, x: int, n: int) -> None:  # pop into reg[X]
    f.registers[x] = f.stack.pop()


def _drop(f: Frame, x: int, n: int) -> None:  # pop and discard
    f.stack.pop()


def _dropr(f: Frame, x: int, n: int) -> None:  # clear reg[X]
    f.registers[x] = None


def _loadc(f: Frame, x: int, n: int) -> None:  # push constants[X]
    f.stack.append(f.code.constants[x])


def _jf(f: Frame, x: int, n: int) -> None:  # pop a bool; jump by X if false
    if not f.stack.pop():
        f.pc += x - 1


def _jmp(f: Frame, x: int, n: int) -> None:  # jump by X
    f.pc += x - 1


def _interface_call(f: Frame, x: int, n: int) -> None:  # constants[X] is the method, N inputs, object first
    args = f.stack[len(f.stack) - n:]
    del f.stack[len(f.stack) - n:]
    f.stack.append(f.runtime.call_method(args[0], f.code.constants[x], args[1:]))


def _get_attr(f: Frame, x: int, n: int) -> None:  # pop object, push slot X
    f.stack.append(f.stack.pop().get_slot(x))


def _set_attr(f: Frame, x: int, n: int) -> None:  # pop value and object, set slot X
    value = f.stack.pop()
    f.stack.pop().set_slot(x, value)


def _list_unpack(f: Frame, x: int, n: int) -> None:  # pop a list of X items, push them
    items = f.stack.pop()
    if len(items) != x:
        raise ExecutionError(f"expected a list of {x} elements to unpack, got {len(items)}")
    f.stack.extend(items)


def _tuple_construct(f: Frame, x: int, n: int) -> None:  # pop X values, push a tuple
    items = tuple(f.stack[len(f.stack) - x:])
    del f.stack[len(f.stack) - x:]
    f.stack.append(items)


def _list_construct(f: Frame, x: int, n: int) -> None:  # pop N values, push a list of types[X]
    items = f.stack[len(f.stack) - n:]
    del f.stack[len(f.stack) - n:]
    f.stack.append(list(items))


def _dict_construct(f: Frame, x: int, n: int) -> None:  # pop N key/value pairs, push a dict
    items = f.stack[len(f.stack) - 2 * n:]
    del f.stack[len(f.stack) - 2 * n:]
    f.stack.append(dict(zip(items[0::2], items[1::2], strict=True)))


def _create_object(f: Frame, x: int, n: int) -> None:  # push a new object of types[X]
    f.stack.append(f.runtime.create_object(f.code.types[x]))


def _isinstance_op(f: Frame, x: int, n: int) -> None:  # pop, push isinstance(v, types[X..X+N-1])
    value = f.stack.pop()
    f.stack.append(any(_isinstance(value, t) for t in f.code.types[x:x + n]))


def _tuple_index(f: Frame, x: int, n: int) -> None:  # pop index and tuple, push tuple[index]
    index = f.stack.pop()
    f.stack.append(f.stack.pop()[index])


def _dict_index(f: Frame, x: int, n: int) -> None:  # pop key and dict, push dict[key]
    key = f.stack.pop()
    f.stack.append(f.stack.pop()[key])


def _raise_exception(f: Frame, x: int, n: int) -> None:  # pop class name and message, raise
    class_name = f.stack.pop()
    message = f.stack.pop()
    raise ScriptError(f"{class_name}: {message}" if class_name else str(message))


def _un_initialized(f: Frame, x: int, n: int) -> None:  # push a placeholder
    f.stack.append(UNINITIALIZED)


def _is(f: Frame, x: int, n: int) -> None:  # __is__
    b = f.stack.pop()
    f.stack.append(f.stack.pop() is b)


def _isnot(f: Frame, x: int, n: int) -> None:  # __isnot__
    b = f.stack.pop()
    f.stack.append(f.stack.pop() is not b)


def _not(f: Frame, x: int, n: int) -> None:  # __not__
    f.stack.append(not f.stack.pop())


# opcode -> handler(frame, X, N); RET is handled by the loop itself
HANDLERS: dict[int, Callable[[Frame, int, int], None]] = {
    OpCode.OP: _op,
    OpCode.OPN: _opn,
    OpCode.LOAD: _load,
    OpCode.MOVE: _move,
    OpCode.STOREN: _storen,
    OpCode.STORE: _store,
    OpCode.DROP: _drop,
    OpCode.DROPR: _dropr,
    OpCode.LOADC: _loadc,
    OpCode.JF: _jf,
    OpCode.JMP: _jmp,
    OpCode.INTERFACE_CALL: _interface_call,
    OpCode.GET_ATTR: _get_attr,
    OpCode.SET_ATTR: _set_attr,
    OpCode.LIST_UNPACK: _list_unpack,
    OpCode.TUPLE_CONSTRUCT: _tuple_construct,
    OpCode.LIST_CONSTRUCT: _list_construct,
    OpCode.DICT_CONSTRUCT: _dict_construct,
    OpCode.CREATE_OBJECT: _create_object,
    OpCode.ISINSTANCE: _isinstance_op,
    OpCode.TUPLE_INDEX: _tuple_index,
    OpCode.RAISE_EXCEPTION: _raise_exception,
    OpCode.DICT_INDEX: _dict_index,
    OpCode.UN_INITIALIZED: _un_initialized,
    OpCode.IS: _is,
    OpCode.ISNOT: _isnot,
    OpCode.NOT: _not,
}


def _opname(op: int) -> str:
    return OpCode(op).name if op in OpCode._value2member_map_ else f"opcode {op}"


def run(code: Code, args: list[Any], runtime: Runtime) -> Any:
    """Run ``code`` on ``args`` (``self`` first) and return its result."""
    frame = Frame(code, [None] * (code.register_size + 1), list(args), runtime)
    instructions = code.instructions
    while frame.pc < len(instructions):
        op, x, n = instructions[frame.pc]
        if op == OpCode.RET:
            return frame.stack.pop()
        handler = HANDLERS.get(op)
        if handler is None:
            raise FormatError(f"unsupported instruction {_opname(op)} at pc {frame.pc} of function {code.qn}")
        try:
            handler(frame, x, n)
        except LiteExportError:
            raise
        except (IndexError, KeyError, TypeError, AttributeError, ValueError) as exc:
            raise ExecutionError(
                f"{_opname(op)} {x} {n} at pc {frame.pc} of function {code.qn} failed: {exc}") from exc
        frame.pc += 1
    raise FormatError(f"function {code.qn} ran past its last instruction without RET")
