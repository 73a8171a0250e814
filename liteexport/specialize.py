"""Lowered methods with non-Tensor arguments, specialized at compile time.

A compiled program takes Tensors only. A method such as ``forward(self, x, k: int)`` is still
lowered when ``k``'s value is given at export (``specialize={"forward": {"k": 3}}``): the module
gets a Tensor-only method ``forward_specialized(self, x)`` that calls ``forward(x, 3)`` (so the
compiler folds ``k``), that method is lowered, and a small TorchScript ``forward(self, x, k)``
in front of it checks at run time that ``k`` is the value compiled in (a clear error otherwise)
and calls the compiled program. int, float, bool and lists of them can be specialized.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable, Mapping
from typing import Any

from liteexport.errors import ModelError

SUFFIX = "_specialized"
_ANNOTATIONS = {bool: "bool", int: "int", float: "float"}


def _literal(value: Any) -> str:
    """``value`` as TorchScript source (a bool, int, float or a list of one of them)."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if type(value) in _ANNOTATIONS:
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


def specialized(scripted: Any, values: Mapping[str, Mapping[str, Any]]) -> Any:
    """A ScriptModule whose methods named in ``values`` take their non-Tensor arguments from
    ``values[method]`` at compile time and run lowered (``liteexport.lower``); every other
    argument must be a Tensor."""
    import torch

    from liteexport.to_backend import lower

    calls = []
    for method, arguments in values.items():
        if method not in scripted._c._method_names():
            raise ModelError(f"specialize names {method!r}, which the module does not have")
        params = list(scripted._c._get_method(method).schema.arguments)[1:]
        unknown = sorted(set(arguments) - {p.name for p in params})
        if unknown:
            raise ModelError(f"specialize: {method} has no argument {', '.join(unknown)}")
        tensors = [p.name for p in params if p.name not in arguments]
        call_args = ", ".join(_literal(arguments[p.name]) if p.name in arguments else p.name for p in params)
        inputs = "".join(f", {t}" for t in tensors)
        scripted._c._define(scripted._concrete_type, f"def {method}{SUFFIX}(self{inputs}):\n"
                            f"    return self.{method}({call_args})\n", lambda _: None)
        calls.append((method, params, arguments, tensors))
    lowered = lower(scripted, methods=[f"{method}{SUFFIX}" for method in values])
    source = []
    for method, params, arguments, tensors in calls:
        signature = ", ".join(f"{p.name}: {p.type.annotation_str}" for p in params)
        source.append(f"def {method}(self, {signature}):")
        for name, value in arguments.items():
            source.append(f"    if {name} != {_literal(value)}:\n"
                          f"        raise RuntimeError(\"{method} was compiled for {name} = {_literal(value)}\")")
        source.append(f"    return self.lowered.{method}{SUFFIX}({', '.join(tensors)})\n")
    outer = torch._C.ScriptModule("Specialized", torch._C.CompilationUnit(), True)
    outer._register_attribute("lowered", lowered._c._type(), lowered._c)
    outer._define(torch._C.ConcreteModuleType.from_jit_type(outer._type()), "\n".join(source),
                  lambda name: getattr(builtins, name, None))  # RuntimeError
    return torch.jit._recursive.wrap_cpp_module(outer)


__all__ = ["by_method", "parse_specialization", "specialized"]
