"""inspect lists every operator a bundle calls and which ones runtime_py lacks, in both formats."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from liteexport.inspect_bundle import describe, format_description
from tests.liteexport.models.fft_model import UsesFft

pytestmark = pytest.mark.torch_oracle


@pytest.mark.parametrize("flatbuffer", [False, True], ids=["zip", "flatbuffer"])
def test_missing_operators_are_listed(tmp_path: Path, flatbuffer: bool) -> None:
    path = tmp_path / "m.ptl"
    torch.jit.script(UsesFft())._save_for_lite_interpreter(str(path), _use_flatbuffer=flatbuffer)
    d = describe(path)
    assert d["format"] == ("flatbuffer" if flatbuffer else "zip")
    assert d["operators"]["missing_in_runtime_py"] == ["aten::fft_fft", "aten::real"]
    supported = {o["name"] for o in d["operators"]["all"] if o["runtime_py"]}
    assert "aten::relu" in supported
    assert "Operators: 4 (runtime_py lacks 2: aten::fft_fft, aten::real)" in format_description(d)
