"""The operator table: ``name.overload`` -> a kernel that pops its inputs and pushes its outputs.

Every operator is registered with its TorchScript schema (see `registry.op`); the family
modules imported below fill `OPERATORS` when this package is imported.
"""

from __future__ import annotations

from typing import Any

from bundle_format import ptmf
from runtime_py.errors import ExecutionError
from runtime_py.operators import (  # noqa: F401  (each import registers its family)
    attention,
    containers,
    creation,
    elementwise,
    linalg,
    nn,
    normalization,
    packed_params,
    python_scalars,
    quantized,
    quantized_conv,
    quantized_shape,
    recurrent,
    reductions,
    shape,
    upsample,
)
from runtime_py.operators.registry import OPERATORS, Kernel, OperatorDef, bind

__all__ = ["OPERATORS", "Kernel", "OperatorDef", "bind_operator", "is_supported"]


def _key(name: str, overload: str) -> str:
    return f"{name}.{overload}" if overload else name


def is_supported(name: str, overload: str) -> bool:
    """Whether runtime_py implements ``name`` with this overload."""
    return _key(name, overload) in OPERATORS


def bind_operator(op: ptmf.Operator, function: str) -> Kernel:
    """The kernel for ``op``; an operator we lack fails when called, naming itself."""
    definition = OPERATORS.get(_key(op.name, op.overload_name))
    if definition is not None:
        try:
            return bind(definition, op.num_args_serialized)
        except ExecutionError as exc:
            message = f"{exc} (in {function})"
        return _failing(message)
    return _failing(f"operator {op.name} (overload '{op.overload_name}') used by {function} "
                    "is not implemented in runtime_py")


def _failing(message: str) -> Kernel:
    def missing(stack: list[Any]) -> None:
        raise ExecutionError(message)

    return missing
