"""The export side's backend seam: one name, one preprocess giving a CompiledModule."""

from __future__ import annotations

from pathlib import Path

import torch

import liteexport
from bundle_format.lowered_bytecode import BACKEND_NAME as RUNTIME_BACKEND_NAME
from liteexport.backend import BACKEND_NAME, DEMO_BACKEND
from liteexport.lowered import CompiledModule

PACKAGE = Path(liteexport.__file__).parent


def test_backend_name_is_spelled_once_on_the_export_side() -> None:
    spelled = [path.relative_to(PACKAGE).as_posix() for path in sorted(PACKAGE.rglob("*.py"))
               if BACKEND_NAME in path.read_text(encoding="utf-8") and "_generated" not in path.parts]
    assert spelled == ["backend.py"]
    assert BACKEND_NAME == RUNTIME_BACKEND_NAME  # the loader's registration of the same name


def test_every_export_path_compiles_through_the_seam() -> None:
    """The CLI, the API, partial lowering and torch's to_backend preprocess all call
    ``DEMO_BACKEND.preprocess``; only the seam calls the compiler's entry itself."""
    callers = [path.relative_to(PACKAGE).as_posix() for path in sorted(PACKAGE.rglob("*.py"))
               if "compile_module(" in path.read_text(encoding="utf-8") and "compiler" not in path.parts]
    assert callers == ["backend.py"]


def test_demo_backend_preprocess_compiles_the_methods() -> None:
    class Scale(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.relu(x) * 2.0

    assert DEMO_BACKEND.name == BACKEND_NAME
    compiled = DEMO_BACKEND.preprocess(torch.jit.script(Scale()), ["forward"], {"forward": [[1, 4]]})
    assert isinstance(compiled, CompiledModule)
    assert [program.method for program in compiled.programs] == ["forward"]
