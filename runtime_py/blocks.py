"""Straight-line runs of bytecode compiled into one Python function each.

Most of a TorchScript function is register shuffling around operator calls: ``LOAD 1,
GET_ATTR 4, STORE 3, ..., MOVE 6, MOVE 7, OP 0, STORE 8``. Dispatching those one by one
costs more than many of the operators they feed (a small model spends most of its time
there). A run of such instructions without jumps into its middle becomes one function: its
pushes and pops are tracked at compile time, so values travel through Python locals and
only what an operator or a later instruction needs reaches the real stack.

Generated source holds nothing from the bundle but integers (register, slot, constant and
operator indexes, already checked against the function's tables by the loader, passed
through ``int()`` before formatting); names and values stay in the frame's tables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from bundle_format.ptmf import BytecodeOp as Op
from runtime_py.operators.registry import DIRECT, DirectCall, as_tensor, reraise
from runtime_py.values import ScriptObject

# The instructions a block may hold: no control flow, no calls back into the runtime.
BLOCK_OPS = frozenset({Op.LOAD, Op.MOVE, Op.LOADC, Op.STORE, Op.STOREN, Op.DROP,
                       Op.DROPR, Op.GET_ATTR, Op.OP, Op.LIST_CONSTRUCT, Op.TUPLE_CONSTRUCT})
_MAX_INLINE_POPS = 16  # STOREN/LIST_CONSTRUCT/TUPLE_CONSTRUCT wider than this pop through the helper


def jump_targets(instructions: Sequence[tuple[int, int, int]]) -> set[int]:
    """Every pc a jump, a loop's exit or a loop's back edge can land on."""
    targets = set()
    for pc, (op, x, _) in enumerate(instructions):
        if op in (Op.JF, Op.JMP, Op.LOOP):
            targets.add(pc + x)
    return targets


def block_spans(instructions: Sequence[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """[start, end) of every run of two or more block instructions with no jump target inside."""
    targets = jump_targets(instructions)
    spans = []
    start = None
    for pc, (op, _, _) in enumerate(instructions):
        if start is not None and (op not in BLOCK_OPS or pc in targets):
            if pc - start >= 2:
                spans.append((start, pc))
            start = None
        if start is None and op in BLOCK_OPS:
            start = pc
    if start is not None and len(instructions) - start >= 2:
        spans.append((start, len(instructions)))
    return spans


class Refused(Exception):  # noqa: N818  (not an error of ours: the bundle's, reported as one by run)
    """An instruction refusing what the bundle's bytecode gave it - a value of the wrong kind, too
    few values on the stack. Nobody type-checked that bytecode, so this is the bundle's error:
    ``interpreter.run`` reports it as an ExecutionError naming the instruction, pc and function."""


def kind(value: Any) -> str:
    """A value's kind in an error message: ``Tensor``, ``int``, ``object of type M``..."""
    if isinstance(value, ScriptObject):
        return f"an object of type {value.type_name}"
    if value is None:
        return "None"
    name = "Tensor" if isinstance(value, np.ndarray) else type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def get_slot(obj: Any, index: int) -> Any:
    """GET_ATTR: attribute slot ``index`` of ``obj``, which the bytecode promised is an object."""
    if type(obj) is not ScriptObject:
        raise Refused(f"GET_ATTR of attribute slot {index} needs an object, got {kind(obj)}")
    if not 0 <= index < len(obj.slots):  # the index comes from the file: -1 is no slot either
        raise Refused(f"object of type {obj.type_name} has no attribute slot {index}")
    return obj.slots[index]


def pop_n(stack: list[Any], n: int) -> list[Any]:
    """The top ``n`` values, bottom first, removed from the stack."""
    if n > len(stack):
        raise Refused(f"instruction needs {n} values but the stack holds {len(stack)}")
    items = stack[len(stack) - n:]
    del stack[len(stack) - n:]
    return items


class _Emitter:
    """Source of one block: pushed values are locals (``t0``, ``t1``...) until something needs
    them on the real stack (``s``); ``r`` are the registers, ``k`` the constants. A local is
    deleted right after the statement that consumes it, so a tensor lives no longer than it
    would on the stack (a block may span a whole network's forward)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.pending: list[str] = []  # locals pushed and not yet popped, bottom first
        self.consumed: list[str] = []  # locals popped for the statement being built
        self.count = 0

    def statement(self, line: str) -> None:
        """Emit ``line``, then delete the locals it consumed."""
        self.lines.append(line)
        if self.consumed:
            self.lines.append("del " + ", ".join(self.consumed))
            self.consumed.clear()

    def local(self) -> str:
        """A fresh local's name."""
        self.count += 1
        return f"t{self.count - 1}"

    def push(self, expression: str) -> None:
        name = self.local()
        self.push_set(name, f"{name} = {expression}")

    def push_set(self, name: str, statement: str) -> None:
        """Push local ``name``, set by ``statement`` (maybe a compound one)."""
        self.statement(statement)
        self.pending.append(name)

    def pop(self, pc: int) -> str:
        if self.pending:
            name = self.pending.pop()
            self.consumed.append(name)
            return name
        self.lines.append(f"f.pc = {pc}")  # an empty stack fails here, naming this instruction
        return "s.pop()"

    def take(self, n: int) -> list[str]:
        """The top ``n`` pending locals, bottom first (the caller checked there are ``n``)."""
        names = self.pending[len(self.pending) - n:]
        del self.pending[len(self.pending) - n:]
        self.consumed.extend(names)
        return names

    def pop_many(self, n: int, pc: int) -> str:
        """An expression of a list of the top ``n`` values, bottom first."""
        if len(self.pending) >= n and n <= _MAX_INLINE_POPS:
            return "[" + ", ".join(self.take(n)) + "]"
        self.flush()
        self.lines.append(f"f.pc = {pc}")
        return f"pop_n(s, {n})"

    def call_direct(self, pc: int, direct: DirectCall, namespace: dict[str, Any]) -> None:
        """Push ``impl(arguments..., defaults...)`` for the operator call at ``pc``, with the steps
        of the kernel it stands for inline (registry.DirectCall): no wrapper call nor argument
        tuple. The try costs nothing unless an exception is raised (Python >= 3.11)."""
        namespace[f"op{pc}"] = direct.site() if direct.site is not None else direct.impl
        namespace[f"name{pc}"] = direct.name
        namespace[f"schema{pc}"] = direct.schema
        defaults = [f"op{pc}_d{i}" for i in range(len(direct.defaults))]
        namespace.update(zip(defaults, direct.defaults, strict=True))
        arguments = ", ".join(self.take(direct.arity) + defaults)
        t = self.local()
        self.push_set(t, f"try:\n        {t} = op{pc}({arguments})\n    except Exception as exc:\n"
                           f"        reraise(name{pc}, exc, schema{pc}, [{arguments}])\n"
                           f"    if type({t}) is not ndarray:\n        {t} = asarray({t})")

    def flush(self) -> None:
        """Put the pending locals on the real stack (an operator pops its inputs from there)."""
        if len(self.pending) == 1:
            self.statement(f"s.append({self.take(1)[0]})")
        elif self.pending:
            self.statement("s.extend((" + ", ".join(self.take(len(self.pending))) + ",))")


def compile_block(instructions: Sequence[tuple[int, int, int]], start: int, end: int,
                  operators: Sequence[Callable[[list[Any]], None]]) -> Callable[..., None]:
    """A handler ``(frame, x, n)`` running instructions[start:end] and leaving ``frame.pc`` on
    the last of them (the interpreter's loop then steps past it). An operator whose kernel
    offers a DirectCall and whose arguments are all locals is called with them directly, through
    an implementation of its own when the operator keeps state per call site."""
    e = _Emitter()
    namespace: dict[str, Any] = {"pop_n": pop_n, "get_slot": get_slot, "reraise": reraise, "ndarray": np.ndarray,
                                 "asarray": as_tensor}
    for pc in range(start, end):
        op, x, n = instructions[pc]
        x, n = int(x), int(n)
        if op == Op.LOAD:
            e.push(f"r[{x}]")
        elif op == Op.MOVE:
            e.push(f"r[{x}]")
            e.lines.append(f"r[{x}] = None")
        elif op == Op.LOADC:
            e.push(f"k[{x}]")
        elif op == Op.STORE:
            value = e.pop(pc)
            e.statement(f"r[{x}] = {value}")
        elif op == Op.STOREN:
            e.statement(f"r[{x}:{x + n}] = {e.pop_many(n, pc)}")
        elif op == Op.DROP:
            value = e.pop(pc)
            if value == "s.pop()":
                e.lines.append(value)
            else:
                e.statement("pass")  # only the del of the dropped local
        elif op == Op.DROPR:
            e.lines.append(f"r[{x}] = None")
        elif op == Op.GET_ATTR:
            obj = e.pop(pc)
            e.lines.append(f"f.pc = {pc}")
            # a script object's slot read directly (a call costs more than the read); anything else,
            # or a slot it lacks, is refused in get_slot as the step refuses it
            if obj == "s.pop()":  # evaluated once
                e.push(obj)
                obj = e.pop(pc)
            t = e.local()
            if x < 0:  # no slot: get_slot says so
                e.push_set(t, f"{t} = get_slot({obj}, {x})")
            else:
                e.push_set(t, f"try:\n        {t} = {obj}.slots[{x}]\n    except (AttributeError, IndexError):\n"
                                f"        {t} = get_slot({obj}, {x})")
        elif op == Op.OP:
            direct: DirectCall | None = getattr(operators[x], DIRECT, None) if 0 <= x < len(operators) else None
            e.lines.append(f"f.pc = {pc}")
            if direct is not None and direct.arity <= len(e.pending):
                e.call_direct(pc, direct, namespace)
            else:
                e.flush()
                e.lines.append(f"ops[{x}](s)")
        elif op in (Op.LIST_CONSTRUCT, Op.TUPLE_CONSTRUCT):
            count = n if op == Op.LIST_CONSTRUCT else x
            values = e.pop_many(count, pc) if count > 0 else "[]"  # pop_n(s, -1) is [] too
            e.push(values if op == Op.LIST_CONSTRUCT else f"tuple({values})")
        else:  # pragma: no cover  (block_spans admits only the ops above)
            raise AssertionError(f"opcode {op} in a block")
    e.flush()
    e.lines.append(f"f.pc = {end - 1}")
    body = "\n    ".join(e.lines)
    source = (f"def block_{start}_{end}(f, x, n):\n"
              "    r = f.registers\n    s = f.stack\n    k = f.code.constants\n    ops = f.code.operators\n"
              f"    {body}\n")
    exec(compile(source, f"<block {start}-{end}>", "exec"), namespace)  # noqa: S102  (integers only, see above)
    handler: Callable[..., None] = namespace[f"block_{start}_{end}"]
    return handler
