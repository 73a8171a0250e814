"""Modules defined from source the way torch's C++ tests define them
(``Module m("m"); m.define(R"(...)")``: source file ``<string>``), and to_backend lowering."""

from __future__ import annotations

from typing import Any

import torch

import liteexport.torch_backend as tb

BACKEND = tb.BACKEND_NAME
SPEC = {"forward": {"": ""}}  # torch's tests' "fake" compile spec


def define(name: str, source: str, **submodules: Any) -> Any:
    """A ScriptModule of type ``name`` compiled from ``source`` with ``submodules`` registered,
    as torch's ``Module(name)``, ``register_module`` and ``define`` make it."""
    module = torch._C.ScriptModule(name, torch._C.CompilationUnit(), True)
    for attr, sub in submodules.items():
        sub_c = getattr(sub, "_c", sub)
        module._register_attribute(attr, sub_c._type(), sub_c)
    module._define(torch._C.ConcreteModuleType.from_jit_type(module._type()), source, lambda _: None)
    return torch.jit._recursive.wrap_cpp_module(module)


def to_backend(module: Any, spec: dict[str, Any] | None = None) -> Any:
    return torch._C._jit_to_backend(BACKEND, module, spec if spec is not None else SPEC)
