"""liteexport profile keeps the lowered submodules of a partially lowered bundle apart: each row
is keyed by (lowered submodule, method, instruction), on runtime_py and on torch's lite interpreter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import invoke

pytestmark = pytest.mark.torch_oracle

MODEL = '''
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.relu(self.lin(x))


class Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = nn.Sequential(nn.Linear(8, 8), nn.Tanh())

    def forward(self, x):
        return self.b(torch.sort(self.a(x))[0])
'''


@pytest.fixture(scope="module")
def two_lowered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("two")
    (folder / "two.py").write_text(MODEL)
    out = folder / "two.ptl"
    result = invoke(["export", f"{folder / 'two.py'}:Two", "-o", str(out), "--lower", "a", "--lower", "b",
                     "--input-shape", "forward:2x8", "-q"])
    assert result.exit_code == 0, result.output
    return out


@pytest.mark.parametrize("engine", ["runtime_py", "torch"])
def test_two_lowered_submodules_are_two_rows(two_lowered: Path, engine: str) -> None:
    result = invoke(["profile", str(two_lowered), "--random", "2x8", "--runs", "3", "--warmup", "1",
                     "--engine", engine, "--json"])
    assert result.exit_code == 0, result.output
    rows = {(i["lowered"], i["method"], i["index"]): i for i in json.loads(result.stdout)["instructions"]}
    # a: LINEAR with its ReLU fused; b: LINEAR, TANH; each run once per call
    assert sorted(rows) == [("a", "forward", 0), ("b", "forward", 0), ("b", "forward", 1)]
    assert [rows[k]["op"] for k in sorted(rows)] == ["LINEAR", "LINEAR", "TANH"]
    assert all(row["calls"] == 3 for row in rows.values())
    assert ".a(Block)" in rows[("a", "forward", 0)]["module_hierarchy"]
    assert ".b(Sequential)" in rows[("b", "forward", 0)]["module_hierarchy"]
    text = invoke(["profile", str(two_lowered), "--random", "2x8", "--runs", "1", "--engine", engine])
    assert text.exit_code == 0, text.output
    labels = {line.split()[0] for line in text.stdout.splitlines() if line.strip().startswith(("a.", "b."))}
    assert labels == {"a.forward:0", "b.forward:0", "b.forward:1"}
