"""The lite interpreter's bytecode loop: one ``while pc < len(code)`` and a table of opcodes.

Semantics follow torch/csrc/jit/mobile/interpreter.cpp (and the prim ops it inlines,
runtime/vararg_functions.cpp, mobile/promoted_prim_ops.cpp): registers are 1-based,
``X`` and ``N`` mean what each handler's comment says, jumps are relative to the jumping
instruction, and a method call leaves its one result on the caller's stack.

Values: tensors are numpy arrays (0-dim for scalars), int/float/bool/str/None are Python
values, lists/tuples/dicts Python containers, devices strings ("cpu"), dtypes ints
(c10::ScalarType), objects ``runtime_py.values.ScriptObject``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Protocol

import numpy as np

from bundle_format.ptmf import BytecodeOp
from runtime_py.backends.demo.arrays import ignore_fp_errors, restore_fp_errors
from runtime_py.blocks import Refused, block_spans, compile_block, get_slot, kind, pop_n
from runtime_py.budgets import LoadBudget
from runtime_py.errors import ExecutionError, FormatError, InternalError, LiteExportError
from runtime_py.quantized_tensor import QuantizedTensor
from runtime_py.tensor_instructions import (
    device_instruction,
    dim_instruction,
    dtype_instruction,
    is_cuda_instruction,
    num_to_tensor_instruction,
    to_list_instruction,
)
from runtime_py.value_format import format_ivalue
from runtime_py.values import UNINITIALIZED, ScriptObject

_log = logging.getLogger("runtime_py")


class Runtime(Protocol):
    """What the interpreter needs from the loaded module."""

    def call_method(self, obj: Any, name: str, args: list[Any]) -> Any: ...

    def create_object(self, type_name: str) -> Any: ...


Handler = Callable[["Frame", int, int], None]
Kernel = Callable[[list[Any]], None]


@dataclass(frozen=True)
class Code:
    """A Function ready to run: constants resolved, operators bound to kernels."""

    qn: str
    instructions: Sequence[tuple[int, int, int]]  # (op, x, n); ptmf.LazyInstructions decode on first run
    constants: tuple[Any, ...]
    operators: tuple[Kernel, ...]  # each pops its inputs, pushes its outputs
    types: tuple[str, ...]
    register_size: int
    debug_handles: tuple[int, ...] | None = None  # one per instruction
    operator_names: tuple[str, ...] = ()  # "name.overload", for error messages

    @cached_property
    def steps(self) -> tuple[tuple[Handler, int, int], ...]:
        """(handler, X, N) per instruction, resolved once so the loop does no lookups; on first
        run, not at load: many functions of a bundle never run (lowered wrappers, __getstate__)."""
        return tuple([(HANDLERS.get(op) or _unknown(op), x, n) for op, x, n in self.instructions])

    @cached_property
    def plan(self) -> tuple[tuple[Handler, int, int], ...]:
        """``steps`` with each straight-line run replaced, at its first pc, by one compiled block
        (runtime_py.blocks) that leaves pc on the run's last instruction. The other steps of a
        run stay in place but are never reached: no jump lands inside a run."""
        steps = list(self.steps)
        for start, end in block_spans(self.instructions):
            steps[start] = (compile_block(self.instructions, start, end, self.operators), 0, 0)
        return tuple(steps)

    def debug_handle(self, pc: int) -> int:
        if self.debug_handles is None or not 0 <= pc < len(self.debug_handles):
            return -1
        return self.debug_handles[pc]

    def describe(self, pc: int) -> str:
        """``aten::add.Tensor`` for an operator call, the opcode's name otherwise."""
        if not 0 <= pc < len(self.instructions):
            return f"pc {pc}"
        op, x, _ = self.instructions[pc]
        if op in (BytecodeOp.OP, BytecodeOp.OPN) and 0 <= x < len(self.operator_names):
            return self.operator_names[x]
        return _opname(op)


class ScriptError(ExecutionError):
    """RAISE_EXCEPTION: the model's own ``raise`` or failed ``assert``."""


class Frame:
    """One running function: its registers (1-based, reg[0] unused) and the value stack."""

    __slots__ = ("code", "registers", "stack", "runtime", "pc")

    def __init__(self, code: Code, stack: list[Any], runtime: Runtime) -> None:
        self.code = code
        self.registers: list[Any] = [None] * (code.register_size + 1)
        self.stack = stack
        self.runtime = runtime
        self.pc = 0


# RET sets the frame's pc here: the loop (``while pc < len(steps)``, then pc += 1) ends, and no
# check per instruction nor exception is needed to tell a return from running off the end
_RETURNED = sys.maxsize - 1


# --- value helpers -----------------------------------------------------------------------------

_SIMPLE_TYPES: dict[str, Callable[[Any], bool]] = {
    "Tensor": lambda v: isinstance(v, np.ndarray | QuantizedTensor),
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "float": lambda v: isinstance(v, float),
    "bool": lambda v: isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "NoneType": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "Device": lambda v: isinstance(v, str),
    "Any": lambda v: True,
}


def is_instance(value: Any, type_str: str) -> bool:
    """isinstance against a TorchScript type string (``Tensor``, ``List[int]``, ``__torch__.M``...)."""
    check = _SIMPLE_TYPES.get(type_str)
    if check is not None:
        return check(value)
    if type_str.startswith("Optional[") and type_str.endswith("]"):
        return value is None or is_instance(value, type_str[len("Optional["):-1])
    for prefix, container in (("List[", list), ("Tuple[", tuple), ("Dict[", dict)):
        if type_str.startswith(prefix):
            return isinstance(value, container)
    return isinstance(value, ScriptObject) and value.type_name == type_str


def _same(a: Any, b: Any) -> bool:
    """IValue::is: identity for tensors and objects, equality for None and numbers."""
    if a is None or b is None:
        return a is b
    if isinstance(a, (bool, int, float)) and isinstance(b, (bool, int, float)):
        return type(a) is type(b) and a == b
    return a is b


# --- the instructions ---------------------------------------------------------------------------

def _op(f: Frame, x: int, n: int) -> None:  # call operators[X]
    f.code.operators[x](f.stack)


def _opn(f: Frame, x: int, n: int) -> None:  # call operators[X] with N inputs (vararg): N is pushed first
    f.stack.append(n)
    f.code.operators[x](f.stack)


def _load(f: Frame, x: int, n: int) -> None:  # push reg[X]
    f.stack.append(f.registers[x])


def _move(f: Frame, x: int, n: int) -> None:  # push reg[X], clear it
    f.stack.append(f.registers[x])
    f.registers[x] = None


def _storen(f: Frame, x: int, n: int) -> None:  # pop N values into reg[X..X+N-1]
    f.registers[x:x + n] = pop_n(f.stack, n)


def _store(f: Frame, x: int, n: int) -> None:  # pop into reg[X]
    f.registers[x] = f.stack.pop()


def _drop(f: Frame, x: int, n: int) -> None:  # pop and discard
    f.stack.pop()


def _dropr(f: Frame, x: int, n: int) -> None:  # clear reg[X]
    f.registers[x] = None


def _loadc(f: Frame, x: int, n: int) -> None:  # push constants[X]
    f.stack.append(f.code.constants[x])


def _jf(f: Frame, x: int, n: int) -> None:  # pop a bool; if false, jump by X
    if not f.stack.pop():
        f.pc += x - 1


def _jmp(f: Frame, x: int, n: int) -> None:  # jump by X
    f.pc += x - 1


def _loop(f: Frame, x: int, n: int) -> None:
    """Loop header. Stack: trip_count, max_trip_count, cond, then N-2 loop-carried values.
    Continue: trip_count += 1 and cond's slot becomes the iteration index; else drop the three
    counters (the loop-carried values move down) and jump by X."""
    stack = f.stack
    base = len(stack) - (n + 1)
    if base < 0 or n < 2:  # the three counters at least
        raise Refused(f"LOOP needs {max(n + 1, 3)} values (N = {n}) but the stack holds {len(stack)}")
    trip = stack[base]
    try:
        go = trip < stack[base + 1] and stack[base + 2]
    except TypeError:  # the counters are the bundle's values: ints, unless its bytecode is broken
        raise Refused(f"LOOP needs an int trip count and maximum, got {kind(trip)} and {kind(stack[base + 1])}") \
            from None
    if go:
        stack[base + 2] = trip
        stack[base] = trip + 1
    else:
        del stack[base:base + 3]
        f.pc += x - 1


def _ret(f: Frame, x: int, n: int) -> None:  # return the top of the stack (left there for run)
    if not f.stack:
        raise ExecutionError(f"RET with an empty stack at pc {f.pc} of function {f.code.qn}")
    f.pc = _RETURNED


def _call(f: Frame, x: int, n: int) -> None:  # call function X of the code (torch: upgraders only)
    raise ExecutionError(f"CALL {x}: calling functions by index (operator upgraders of old models) is not "
                         "supported by runtime_py")


def _interface_call(f: Frame, x: int, n: int) -> None:  # method named constants[X], N inputs, object first
    if n == 0:
        raise Refused("INTERFACE_CALL with no inputs")
    args = pop_n(f.stack, n)
    name = f.code.constants[x]
    if not isinstance(name, str):
        raise Refused(f"INTERFACE_CALL needs a method name, got {kind(name)}")
    f.stack.append(f.runtime.call_method(args[0], name, args[1:]))


def _get_attr(f: Frame, x: int, n: int) -> None:  # pop object, push its slot X
    f.stack.append(get_slot(f.stack.pop(), x))


def _set_attr(f: Frame, x: int, n: int) -> None:  # pop value and object, set slot X
    value = f.stack.pop()
    obj = f.stack.pop()
    if type(obj) is not ScriptObject:
        raise Refused(f"SET_ATTR of attribute slot {x} needs an object, got {kind(obj)}")
    if x < 0:
        raise Refused(f"object of type {obj.type_name} has no attribute slot {x}")
    obj.set_slot(x, value)


def _sequence(value: Any, what: str) -> list[Any] | tuple[Any, ...]:
    if not isinstance(value, list | tuple):
        raise Refused(f"{what} needs a list or tuple, got {kind(value)}")
    return value


def _hashable(key: Any, what: str) -> None:
    if not isinstance(key, str | int | float | complex | type(None)):  # bool is an int
        raise Refused(f"{what}: a dict key must be a str, int, float or bool, got {kind(key)}")


def _list_unpack(f: Frame, x: int, n: int) -> None:  # pop a list of X items, push them
    items = _sequence(f.stack.pop(), "LIST_UNPACK")
    if len(items) != x:
        raise ExecutionError(f"Expected {x} elements in a list but found {len(items)}")
    f.stack.extend(items)


def _tuple_construct(f: Frame, x: int, n: int) -> None:  # pop X values, push a tuple
    f.stack.append(tuple(pop_n(f.stack, x)))


def _named_tuple_construct(f: Frame, x: int, n: int) -> None:  # pop N values, push a tuple of types[X]
    f.stack.append(tuple(pop_n(f.stack, n)))


def _list_construct(f: Frame, x: int, n: int) -> None:  # pop N values, push a list of types[X]
    f.stack.append(pop_n(f.stack, n))


def _dict_construct(f: Frame, x: int, n: int) -> None:  # pop N values (key, value, ...), push a dict
    if n % 2:
        raise Refused(f"DICT_CONSTRUCT needs keys and values in pairs, got {n} values")
    items = pop_n(f.stack, n)
    for key in items[0::2]:
        _hashable(key, "DICT_CONSTRUCT")
    f.stack.append(dict(zip(items[0::2], items[1::2], strict=True)))


def _create_object(f: Frame, x: int, n: int) -> None:  # push a new object of class types[X]
    f.stack.append(f.runtime.create_object(f.code.types[x]))


def _isinstance(f: Frame, x: int, n: int) -> None:  # pop, push whether it is one of types[X..X+N-1]
    value = f.stack.pop()
    f.stack.append(any(is_instance(value, t) for t in f.code.types[x:x + n]))


def _tuple_slice(f: Frame, x: int, n: int) -> None:  # pop a tuple, push tuple[X:X+N]
    f.stack.append(tuple(_sequence(f.stack.pop(), "TUPLE_SLICE")[x:x + n]))


def _tuple_index(f: Frame, x: int, n: int) -> None:  # pop index and tuple, push tuple[index]
    index = f.stack.pop()
    items = _sequence(f.stack.pop(), "TUPLE_INDEX")
    if type(index) is not int:
        raise Refused(f"TUPLE_INDEX needs an int index, got {kind(index)}")
    if not -len(items) <= index < len(items):
        raise ExecutionError("Tuple list index out of range")
    f.stack.append(items[index])


def _raise_exception(f: Frame, x: int, n: int) -> None:  # pop class name (or None) and message, raise
    class_name = f.stack.pop()
    message = f.stack.pop()
    raise ScriptError(f"{class_name}: {message}" if class_name else str(message))


def _dict_index(f: Frame, x: int, n: int) -> None:  # pop key and dict, push dict[key]
    key = f.stack.pop()
    d = f.stack.pop()
    if not isinstance(d, dict):
        raise Refused(f"DICT_INDEX needs a dict, got {kind(d)}")
    _hashable(key, "DICT_INDEX")
    if key not in d:
        raise ExecutionError(f"KeyError: {format_ivalue(key)}")
    f.stack.append(d[key])


def _nop(f: Frame, x: int, n: int) -> None:  # UNCHECKED_CAST: the value already has the promised type
    pass


def _is(f: Frame, x: int, n: int) -> None:  # pop b, a; push a is b
    b = f.stack.pop()
    f.stack.append(_same(f.stack.pop(), b))


def _isnot(f: Frame, x: int, n: int) -> None:  # pop b, a; push a is not b
    b = f.stack.pop()
    f.stack.append(not _same(f.stack.pop(), b))


def _un_initialized(f: Frame, x: int, n: int) -> None:  # push a placeholder (value on a path that raises)
    f.stack.append(UNINITIALIZED)


def _format(f: Frame, x: int, n: int) -> None:  # pop X values (format string first), push str.format result
    args = pop_n(f.stack, x)
    if not args or not isinstance(args[0], str):
        raise Refused(f"FORMAT needs a format string, got {kind(args[0]) if args else 'no values'}")
    fmt = args[0]
    out: list[str] = []
    begin = 0
    for used in range(len(args)):
        loc = fmt.find("{}", begin)
        if loc < 0:
            break
        if used + 1 >= len(args):
            raise ExecutionError(f"Too few arguments for format string: {fmt}")
        out.append(fmt[begin:loc])
        out.append(format_ivalue(args[used + 1]))
        begin = loc + 2
    out.append(fmt[begin:])
    f.stack.append("".join(out))


def _not(f: Frame, x: int, n: int) -> None:  # pop a bool, push its negation
    f.stack.append(not f.stack.pop())


def _warn(f: Frame, x: int, n: int) -> None:  # pop stacklevel and message, log the message
    f.stack.pop()
    _log.warning("%s", f.stack.pop())


# opcode -> handler(frame, X, N)
HANDLERS: dict[int, Handler] = {
    BytecodeOp.OP: _op,
    BytecodeOp.OPN: _opn,
    BytecodeOp.LOAD: _load,
    BytecodeOp.MOVE: _move,
    BytecodeOp.STOREN: _storen,
    BytecodeOp.STORE: _store,
    BytecodeOp.DROP: _drop,
    BytecodeOp.DROPR: _dropr,
    BytecodeOp.LOADC: _loadc,
    BytecodeOp.JF: _jf,
    BytecodeOp.JMP: _jmp,
    BytecodeOp.LOOP: _loop,
    BytecodeOp.RET: _ret,
    BytecodeOp.CALL: _call,
    BytecodeOp.INTERFACE_CALL: _interface_call,
    BytecodeOp.GET_ATTR: _get_attr,
    BytecodeOp.SET_ATTR: _set_attr,
    BytecodeOp.LIST_UNPACK: _list_unpack,
    BytecodeOp.TUPLE_CONSTRUCT: _tuple_construct,
    BytecodeOp.NAMED_TUPLE_CONSTRUCT: _named_tuple_construct,
    BytecodeOp.LIST_CONSTRUCT: _list_construct,
    BytecodeOp.DICT_CONSTRUCT: _dict_construct,
    BytecodeOp.CREATE_OBJECT: _create_object,
    BytecodeOp.ISINSTANCE: _isinstance,
    BytecodeOp.TUPLE_SLICE: _tuple_slice,
    BytecodeOp.TUPLE_INDEX: _tuple_index,
    BytecodeOp.RAISE_EXCEPTION: _raise_exception,
    BytecodeOp.DICT_INDEX: _dict_index,
    BytecodeOp.UNCHECKED_CAST: _nop,
    BytecodeOp.IS: _is,
    BytecodeOp.UN_INITIALIZED: _un_initialized,
    BytecodeOp.ISNOT: _isnot,
    BytecodeOp.FORMAT: _format,
    BytecodeOp.DEVICE: device_instruction,
    BytecodeOp.DTYPE: dtype_instruction,
    BytecodeOp.DIM: dim_instruction,
    BytecodeOp.NOT: _not,
    BytecodeOp.TO_LIST: to_list_instruction,
    BytecodeOp.NUM_TO_TENSOR: num_to_tensor_instruction,
    BytecodeOp.IS_CUDA: is_cuda_instruction,
    BytecodeOp.WARN: _warn,
}


def _opname(op: int) -> str:
    return BytecodeOp(op).name if op in BytecodeOp._value2member_map_ else f"opcode {op}"


class _UnsupportedInstruction(Exception):
    pass


def _unknown(op: int) -> Handler:
    def unsupported(f: Frame, x: int, n: int) -> None:
        raise _UnsupportedInstruction(_opname(op))
    return unsupported


_ALLOCATING_STEPS = (_op, _opn, _list_construct, _dict_construct, _tuple_construct, _format, to_list_instruction)


def _run_budgeted(f: Frame, budget: LoadBudget) -> None:
    """The loop of ``run`` under a budget (load-time code, or a call with run limits): counts
    instructions and checks what operators build."""
    if budget.depth >= budget.MAX_CALL_DEPTH:  # calls in progress, not calls made
        raise budget.too_deep(f.code)
    budget.depth += 1
    steps = f.code.steps
    end = len(steps)
    try:
        while f.pc < end:
            budget.instructions_left -= 1
            if budget.instructions_left < 0:
                budget.refill(f)
            handler, x, n = steps[f.pc]
            handler(f, x, n)
            if handler in _ALLOCATING_STEPS and f.stack:
                budget.check_value(f.stack[-1], f"{f.code.qn}.instructions[{f.pc}]")
            f.pc += 1
    finally:
        budget.depth -= 1


def _where(code: Code, pc: int) -> str:
    handle = code.debug_handle(pc)
    return (f"{code.describe(pc)} at pc {pc} of function {code.qn}"
            + (f", debug handle {handle}" if handle >= 0 else ""))


def run(code: Code, args: list[Any], runtime: Runtime, budget: LoadBudget | None = None) -> Any:
    """Run ``code`` on ``args`` (``self`` first) and return its result.

    A failure that is the bundle's becomes an ExecutionError that names the instruction, pc and
    function and carries the instruction's debug handle (so the caller can map it to source); a
    bug of ours an InternalError that names them too (see the rule at the except clauses). With
    a ``budget``, exceeding it is a FormatError (LoadBudget: code run at load) or a
    RunLimitExceeded (RunBudget: limits the caller set)."""
    # first: decoding checks the instructions, register_size among them, before any use; under a
    # budget code runs instruction by instruction (each counted), otherwise as compiled blocks
    steps = code.steps if budget is not None else code.plan
    f = Frame(code, list(args), runtime)
    end = len(steps)
    fp_errors = ignore_fp_errors()  # inf/nan follow IEEE as in torch, without numpy's warnings
    try:
        if budget is not None:
            _run_budgeted(f, budget)
        else:
            while f.pc < end:
                handler, x, n = steps[f.pc]
                handler(f, x, n)
                f.pc += 1
        if f.pc > _RETURNED:
            return f.stack.pop()
    except _UnsupportedInstruction as exc:
        raise FormatError(f"unsupported instruction {exc} at pc {f.pc} of function {code.qn}",
                          where=f"{code.qn}.instructions[{f.pc}]") from None
    except ExecutionError as exc:
        if exc.debug_handle < 0:  # the innermost frame that knows where it is tags the error
            exc.debug_handle = code.debug_handle(f.pc)
        else:  # the frames it passes through on the way out: torch's handle stack
            exc.outer_handles.append(code.debug_handle(f.pc))
        raise
    except InternalError as exc:
        if exc.where:  # an inner frame said where already
            raise
        raise InternalError(exc.detail, where=_where(code, f.pc)) from exc
    except LiteExportError:
        raise
    except Refused as exc:  # an instruction refused a value of the wrong kind: the bundle's bytecode
        raise ExecutionError(f"{code.describe(f.pc)} failed at pc {f.pc} of function {code.qn}: {exc}",
                             debug_handle=code.debug_handle(f.pc)) from None
    except MemoryError as exc:
        if budget is not None:
            raise budget.out_of_memory(code, f.pc) from exc
        raise ExecutionError(f"out of memory at pc {f.pc} of function {code.qn}",
                             debug_handle=code.debug_handle(f.pc)) from exc
    except RecursionError as exc:
        raise ExecutionError(f"recursion too deep at pc {f.pc} of function {code.qn}",
                             debug_handle=code.debug_handle(f.pc)) from exc
    # The rule. Operators classify their implementations' failures themselves (registry.fail):
    # what reaches here comes from the instructions' own code, which refuses every value of the
    # wrong kind the bundle's bytecode can give it (Refused, above). What is left:
    # - ValueError and ArithmeticError: a complaint about a value (the truth of a many-element
    #   tensor at JF, say): the bundle's, an ExecutionError;
    # - IndexError "pop from empty list" with the stack empty: the bytecode popped more values
    #   than it pushed (the stack's depth is not checked ahead, to keep each step cheap): the
    #   bundle's, an ExecutionError;
    # - anything else (TypeError, AttributeError, KeyError, IndexError, NameError,
    #   AssertionError...) is a bug of ours: InternalError, exit 70, naming where it happened.
    except (ValueError, ArithmeticError) as exc:
        raise ExecutionError(f"{code.describe(f.pc)} failed at pc {f.pc} of function {code.qn}: "
                             f"{type(exc).__name__}: {exc}", debug_handle=code.debug_handle(f.pc)) from exc
    except IndexError as exc:
        if f.stack or str(exc) != "pop from empty list":
            raise InternalError(f"{type(exc).__name__}: {exc}", where=_where(code, f.pc)) from exc
        raise ExecutionError(f"{code.describe(f.pc)} failed at pc {f.pc} of function {code.qn}: the stack is "
                             "empty (the bytecode pops more values than it pushed)",
                             debug_handle=code.debug_handle(f.pc)) from None
    except Exception as exc:
        raise InternalError(f"{type(exc).__name__}: {exc}", where=_where(code, f.pc)) from exc
    finally:
        restore_fp_errors(fp_errors)
    raise FormatError(f"function {code.qn} ran past its last instruction without RET",
                      where=f"{code.qn}.instructions[{end - 1}]")
