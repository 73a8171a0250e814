"""The operator table: ``name.overload`` -> a kernel that pops its inputs and pushes its outputs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runtime_py.errors import ExecutionError
from runtime_py.format import ptmf

Kernel = Callable[[list[Any]], None]


def _unchecked_cast(stack: list[Any]) -> None:
    pass  # the value on the stack is already of the type the cast promises


# "name.overload" (overload may be empty) -> kernel
OPERATORS: dict[str, Kernel] = {
    "prim::unchecked_cast": _unchecked_cast,  # type refinement after isinstance, no run-time work
}


def bind_operator(op: ptmf.Operator, function: str) -> Kernel:
    """The kernel for ``op``; an operator we lack fails when called, naming itself."""
    key = f"{op.name}.{op.overload_name}" if op.overload_name else op.name
    kernel = OPERATORS.get(key)
    if kernel is not None:
        return kernel

    def missing(stack: list[Any]) -> None:
        raise ExecutionError(f"operator {op.name} (overload '{op.overload_name}') used by {function} "
                             "is not implemented in runtime_py")

    return missing
