"""docs/reference.md's Core ATen table is what scripts/core_aten_table.py generates from torch's
op registry, the compiler's tables and the stored OpInfo counts; its "kept fused" claims hold
(the user-level op is kept by core_aten(), the Core ATen op never produced)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
import torch

pytestmark = pytest.mark.torch_oracle

ROOT = Path(__file__).resolve().parents[2]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("core_aten_table", ROOT / "scripts" / "core_aten_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["core_aten_table"] = module
    spec.loader.exec_module(module)
    return module


def test_the_committed_table_is_fresh() -> None:
    assert _generator().main(["--check"]) == 0, "run python scripts/core_aten_table.py"


def test_every_core_overload_is_in_the_table() -> None:
    generator = _generator()
    overloads = generator.core_overloads()
    assert torch.ops.aten.convolution.default in overloads and torch.ops.aten.add.Tensor in overloads
    assert all(torch.Tag.core in op.tags for op in overloads)
    doc = (ROOT / "docs" / "reference.md").read_text()
    assert f"{len(overloads)} Core ATen overloads" in doc
    for op in overloads:
        base = str(op).removeprefix("aten.").split(".")[0]
        assert f"| `{base}` |" in doc
