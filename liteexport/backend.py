"""The export side's backend seam, the counterpart of ExecuTorch's ``BackendDetails.preprocess``:
a backend has a name (the one torch's to_backend and the bundle's lowered modules carry) and a
``preprocess`` turning a scripted module's methods into a `CompiledModule`.

liteexport has one backend, the demo compiler; its name is spelled here once for the export
side (runtime_py registers the same name for loading bundles).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from liteexport.input_spec import TensorSpec
from liteexport.lowered import CompiledModule

BACKEND_NAME = "backend_with_compiler_demo"


class ExportBackend(Protocol):
    """What the exporter needs of a backend."""

    name: str

    def preprocess(self, scripted: Any, methods: Sequence[str] | None = None,
                   input_shapes: Mapping[str, Sequence[Sequence[int] | TensorSpec]] | None = None,
                   **options: Any) -> CompiledModule:
        """The methods of ``scripted`` (a ScriptModule; default forward and every exported
        method) compiled for this backend; ``input_shapes`` and ``options`` are its compile specs.
        An input is a TensorSpec (shape and dtype, liteexport.input_spec) or a plain int shape
        (a float32 input)."""
        ...


class DemoCompilerBackend:
    """The demo backend (`BACKEND_NAME`) with liteexport's compiler (`liteexport.compiler`)."""

    name = BACKEND_NAME

    def preprocess(self, scripted: Any, methods: Sequence[str] | None = None,
                   input_shapes: Mapping[str, Sequence[Sequence[int] | TensorSpec]] | None = None,
                   **options: Any) -> CompiledModule:
        from liteexport.compiler import compile_module  # torch: only when compiling

        return compile_module(scripted, methods=list(methods) if methods else None,
                              input_shapes=input_shapes or None, **options)


DEMO_BACKEND: ExportBackend = DemoCompilerBackend()
