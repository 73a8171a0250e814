"""Methods with non-Tensor arguments, compiled for given values (``--specialize forward:k=3``).

A compiled program takes Tensors only. A method such as ``forward(self, x, k: int)`` is still
lowered whole when ``k``'s value is given at export (``specialize={"forward": {"k": 3}}``): the
compiler walks ``forward`` with ``k`` bound to 3 (folding it like any constant,
``liteexport.compiler.compile_module``'s ``specialize``), and the bundle's ``forward`` takes the
Tensor arguments only, ``forward(x)``: the value is part of the program, so no caller passes it
and no engine checks it. The bundle is an ordinary whole-lowered one: it keeps the debug table,
takes ``--input-shape``/``--dim``, is self-checked, and runs on every engine, the native core
included. torch's reference outputs come from `reference_module`, a module whose methods take the
Tensor arguments only and call the model's with the values. int, float, bool and lists of them
can be specialized.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from liteexport.errors import ModelError

INNER = "specialized"  # the model's attribute name in the reference module
_KINDS = {"int": int, "float": float, "bool": bool}


def _literal(value: Any) -> str:
    """``value`` as TorchScript source (a bool, int, float or a list of one of them)."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if type(value) in _KINDS.values():
        return repr(value)
    raise ModelError(f"cannot specialize on {value!r}: only int, float, bool and lists of them")


def parse_specialization(text: str) -> tuple[str, str, Any]:
    """``forward:k=3`` (method optional, default forward; the value a Python literal: ``True``,
    ``0.5``, ``[1, 2]``) -> ("forward", "k", 3); ValueError on bad text."""
    target, sep, value = text.partition("=")
    method, _, arg = target.rpartition(":")
    method = method or "forward"
    if not sep or not arg.isidentifier() or not method.isidentifier():
        raise ValueError(f"{text!r} is not METHOD:ARG=VALUE (e.g. forward:k=3)")
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        raise ValueError(f"{value!r} is not an int, float, bool or list of them") from None
    _literal(parsed)  # the kinds TorchScript takes
    return method, arg, parsed


def by_method(items: Iterable[tuple[str, str, Any]]) -> dict[str, dict[str, Any]]:
    values: dict[str, dict[str, Any]] = {}
    for method, arg, value in items:
        values.setdefault(method, {})[arg] = value
    return values


def _typed(method: str, name: str, annotation: str, value: Any) -> Any:
    """``value`` as argument ``name`` of type ``annotation`` takes it (an int for a float is
    widened); ModelError when it is of another kind."""
    if annotation.startswith("List[") and isinstance(value, (list, tuple)):
        return [_typed(method, name, annotation[5:-1], v) for v in value]
    kind = _KINDS.get(annotation)
    if kind is float and type(value) is int:
        return float(value)
    if kind is None or type(value) is not kind:
        raise ModelError(f"--specialize {method}:{name}={_literal(value)}: {method}'s argument {name} is "
                         f"{annotation}; only int, float, bool and lists of them are specialized, each with a "
                         "value of its type")
    return value


def checked_values(scripted: Any, values: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """``values`` checked against the methods' signatures (ModelError naming what is wrong: a
    method or argument the module does not have, a value of another type, an argument left that is
    not a Tensor), each value as its argument's type takes it."""
    unknown_methods = [method for method in values if method not in scripted._c._method_names()]
    if unknown_methods:
        raise ModelError(f"--specialize names method {unknown_methods[0]!r}, which the module does not have")
    checked: dict[str, dict[str, Any]] = {}
    for method, arguments in values.items():
        params = list(scripted._c._get_method(method).schema.arguments)[1:]
        unknown = sorted(set(arguments) - {p.name for p in params})
        if unknown:
            raise ModelError(f"--specialize: {method} has no argument {', '.join(unknown)} (its arguments: "
                             f"{', '.join(p.name for p in params)})")
        checked[method] = {p.name: _typed(method, p.name, p.type.annotation_str, arguments[p.name])
                           for p in params if p.name in arguments}
        left = [p for p in params if p.name not in arguments and p.type.kind() != "TensorType"]
        if left:
            raise ModelError(f"--specialize: {method}'s argument {left[0].name} is {left[0].type.annotation_str} "
                             f"too: give --specialize {method}:{left[0].name}=VALUE as well")
    return checked


def reference_module(scripted: Any, values: Mapping[str, Mapping[str, Any]], methods: Sequence[str] = ()) -> Any:
    """A ScriptModule holding ``scripted`` whose methods (those of ``values``, then ``methods``)
    take the Tensor arguments only and call the model's with ``values`` (torch's reference outputs
    for the compiled programs, and the self-check's); the model is its attribute `INNER`."""
    import torch

    source = []
    for method in dict.fromkeys([*values, *methods]):
        if method not in scripted._c._method_names():
            raise ModelError(f"--method {method}: the module has no such method")
        params = list(scripted._c._get_method(method).schema.arguments)[1:]
        fixed = values.get(method, {})
        tensors = [p for p in params if p.name not in fixed]
        signature = "".join(f", {p.name}: {p.type.annotation_str}" for p in tensors)
        call = ", ".join(_literal(fixed[p.name]) if p.name in fixed else p.name for p in params)
        source.append(f"def {method}(self{signature}):\n    return self.{INNER}.{method}({call})\n")
    outer = torch._C.ScriptModule(f"{INNER}_{scripted.original_name}", torch._C.CompilationUnit(), True)
    outer._register_attribute(INNER, scripted._c._type(), scripted._c)
    outer._define(torch._C.ConcreteModuleType.from_jit_type(outer._type()), "\n".join(source),
                  lambda name: getattr(builtins, name, None))
    return torch.jit._recursive.wrap_cpp_module(outer).eval()


def specialized_model(reference: Any) -> Any:
    """The model a `reference_module` holds."""
    return getattr(reference, INNER)


__all__ = ["by_method", "checked_values", "parse_specialization", "reference_module", "specialized_model"]
