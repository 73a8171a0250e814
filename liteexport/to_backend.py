"""Lowering through torch's to_backend API with liteexport's compiler: the scripting rule, the
method_compile_spec and ``lower`` (whole or selected submodules). ``liteexport.api`` and
``liteexport.partial`` lower through here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from liteexport.backend import BACKEND_NAME
from liteexport.errors import ModelError

Shapes = Mapping[str, Sequence[Sequence[int]]]


def scripted_module(module: Any) -> Any:
    """``module`` as a ScriptModule in eval mode (an nn.Module is scripted; the caller's module is
    left as it is)."""
    import torch

    if isinstance(module, torch.jit.ScriptModule):
        return module
    if not isinstance(module, torch.nn.Module):
        raise ModelError(f"expected a torch.nn.Module or a ScriptModule, got {type(module).__name__}")
    try:
        scripted = torch.jit.script(module)
    except Exception as exc:  # TorchScript's own message says what and where
        raise ModelError(f"cannot script {type(module).__name__}: {exc}") from exc
    return scripted.eval()


def compile_spec(scripted: Any, methods: Sequence[str] | None = None,
                 input_shapes: Shapes | None = None) -> dict[str, dict[str, Any]]:
    """The method_compile_spec torch's to_backend takes: one entry per method to lower (default
    ``forward``); ``input_shapes`` go into it (liteexport's preprocess reads them)."""
    from liteexport.torch_backend.preprocess import INPUT_SHAPES_KEY

    names = list(methods) if methods else ["forward"]
    spec: dict[str, dict[str, Any]] = {}
    for name in names:
        shapes = (input_shapes or {}).get(name)
        spec[name] = {INPUT_SHAPES_KEY: [list(map(int, s)) for s in shapes]} if shapes else {"": ""}
    unknown = sorted(set(input_shapes or {}) - set(names))
    if unknown:
        raise ModelError(f"input_shapes names {', '.join(unknown)}, which is not lowered "
                         f"(lowering: {', '.join(names)})")
    return spec


def lower(module: Any, methods: Sequence[str] | None = None, input_shapes: Shapes | None = None,
          submodules: Sequence[str] | None = None) -> Any:
    """``module`` lowered by torch's own to_backend API, with liteexport's compiler as the preprocess.

    Parameters
    ----------
    module
        An ``nn.Module`` (scripted here, in eval mode) or a ScriptModule.
    methods
        The methods to lower; default ``forward``.
    input_shapes
        Static input shapes by method, ``{"forward": [(1, 3, 224, 224)]}``.
    submodules
        Dotted names: only these are lowered (``torch._C._jit_to_backend_selective``); the rest
        stays TorchScript.

    Returns
    -------
    torch.jit.ScriptModule
        torch's lowered module: it runs in TorchScript and saves with ``torch.jit.save`` or
        ``_save_for_lite_interpreter`` like any module torch lowered itself.

    Raises
    ------
    RuntimeError
        torch's, with UnsupportedNodesError's text when a node does not compile (as torch's demo
        backend does). Loads (and on first use builds) liteexport's torch backend: a C++ compiler
        is needed once.

    Examples
    --------
    >>> lowered = liteexport.lower(model, input_shapes={"forward": [(1, 3, 32, 32)]})  # doctest: +SKIP
    >>> lowered._save_for_lite_interpreter("model.ptl")  # doctest: +SKIP
    """
    import torch

    from liteexport.torch_backend import load_torch_backend

    load_torch_backend()
    scripted = scripted_module(module)
    if not submodules:
        return torch._C._jit_to_backend(BACKEND_NAME, scripted, compile_spec(scripted, methods, input_shapes))

    def to_backend(submodule: Any) -> Any:
        return torch._C._jit_to_backend(BACKEND_NAME, submodule, compile_spec(submodule, methods, input_shapes))

    return torch._C._jit_to_backend_selective(scripted, to_backend, list(submodules))
