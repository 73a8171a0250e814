"""An FX node of an exported program as the op lowerings take a TorchScript node: its kind
(``aten::add``), its arguments in schema order with defaults filled, and the few Core ATen
forms that name an op the lowerings know under another name rewritten to it.

The lowerings are keyed by ATen name and take a node's inputs in schema order, as TorchScript
passes them: dtypes, layouts and memory formats as their c10 numbers, every keyword-only
argument positionally. An FX node holds Python objects (``torch.float32``) and leaves
defaults out; this module closes that gap, so one lowering table serves both front ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch

from liteexport.compiler.trace_forms import normalize as traced_form

# c10::ScalarType numbers (c10/core/ScalarType.h), the value TorchScript passes for a dtype
_SCALAR_TYPES = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.float32,
                 torch.float64, torch.complex32, torch.complex64, torch.complex128, torch.bool, torch.qint8,
                 torch.quint8, torch.qint32, torch.bfloat16)
SCALAR_TYPE_NUMBERS: dict[torch.dtype, int] = {dtype: number for number, dtype in enumerate(_SCALAR_TYPES)}
_MEMORY_FORMATS = {torch.contiguous_format: 0, torch.preserve_format: 1, torch.channels_last: 2,
                   torch.channels_last_3d: 3}
_LAYOUTS = {torch.strided: 0, torch.sparse_coo: 1}


def kind_of(op: torch._ops.OpOverload) -> str:
    """``torch.ops.aten.add.Tensor`` -> ``aten::add``."""
    return str(op._schema.name)


def schema_arguments(op: torch._ops.OpOverload, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[Any]:
    """The node's arguments in schema order (keyword-only ones too), defaults filled, still as FX
    holds them (nodes, lists of nodes). A required argument that is missing is a bug in the graph."""
    values: list[Any] = []
    for index, argument in enumerate(op._schema.arguments):
        if index < len(args) and not argument.kwarg_only:
            values.append(args[index])
        elif argument.name in kwargs:
            values.append(kwargs[argument.name])
        elif argument.has_default_value():
            values.append(argument.default_value)
        else:
            values.append(None)  # an optional argument without a default (Tensor? bias)
    return values


def as_torchscript_constant(value: Any) -> Any:
    """A Python object an FX node holds as TorchScript would pass it (dtype -> c10 number...)."""
    if isinstance(value, torch.dtype):
        return SCALAR_TYPE_NUMBERS.get(value, value)
    if isinstance(value, torch.memory_format):
        return _MEMORY_FORMATS.get(value, value)
    if isinstance(value, torch.layout):
        return _LAYOUTS.get(value, value)
    return value


# --- Core ATen forms the lowerings know by another name --------------------------------------------

Form = Callable[[list[Any]], tuple[str, list[Any], Callable[[Any], Any]] | None]


def _same(result: Any) -> Any:
    return result


def _batch_norm_no_training(args: list[Any]) -> tuple[str, list[Any], Callable[[Any], Any]]:
    """_native_batch_norm_legit_no_training(input, weight, bias, mean, var, momentum, eps) ->
    (out, save_mean, save_invstd): eval-mode batch norm, whose saved statistics nobody reads in
    inference (a read of them meets None and is reported)."""
    x, weight, bias, mean, var, momentum, eps = args
    return "aten::batch_norm", [x, weight, bias, mean, var, False, momentum, eps, False], \
        lambda out: (out, None, None)


def _to_copy(args: list[Any]) -> tuple[str, list[Any], Callable[[Any], Any]]:
    """_to_copy(x, dtype, layout, device, pin_memory, non_blocking, memory_format): Tensor.to."""
    x, dtype, _layout, _device, _pin, non_blocking, memory_format = args
    if dtype is None:
        return "aten::clone", [x, memory_format], _same
    return "aten::to", [x, dtype, bool(non_blocking), False, memory_format], _same


def _convolution(args: list[Any]) -> tuple[str, list[Any], Callable[[Any], Any]] | None:
    """convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
    groups): the arguments traced ``aten::_convolution`` starts with."""
    kind, normalized = traced_form("aten::_convolution", [*args, False, False, False, False])
    return None if kind == "aten::_convolution" else (kind, normalized, _same)


def _renamed(kind: str) -> Form:
    return lambda args: (kind, args, _same)


def _softmax(kind: str) -> Form:
    """_softmax(x, dim, half_to_float) -> softmax(x, dim, dtype=None)."""
    return lambda args: (kind, [args[0], args[1], None], _same)


FORMS: dict[str, Form] = {
    "aten::_native_batch_norm_legit_no_training": _batch_norm_no_training,
    "aten::_to_copy": _to_copy,
    "aten::convolution": _convolution,
    "aten::_unsafe_view": _renamed("aten::view"),
    "aten::_softmax": _softmax("aten::softmax"),
    "aten::_log_softmax": _softmax("aten::log_softmax"),
}
# Nodes that pass their first argument through: aliases, and copies (an exported graph is functional:
# nothing writes a value in place, so a copy and its source always read the same).
IDENTITY = {"aten::alias", "aten::lift_fresh_copy", "aten::detach", "aten::clone"}


def rewrite(kind: str, args: list[Any]) -> tuple[str, list[Any], Callable[[Any], Any]]:
    """``(kind, args, wrap)``: the form the lowerings know, and how to turn its result into the
    node's (a tuple where the Core ATen op returns one)."""
    form = FORMS.get(kind)
    rewritten = form(args) if form is not None else None
    return rewritten if rewritten is not None else (kind, args, _same)
