"""Exact texts of the errors users read, kept as golden files (regenerate: LITEEXPORT_REGOLD=1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import runtime_py
from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.model_loading import load_scripted
from runtime_py.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
TINY_CNN = "examples/tiny_cnn.py:TinyCNN"

pytestmark = pytest.mark.torch_oracle


def _check_golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("LITEEXPORT_REGOLD"):
        path.write_text(text)
    assert text == path.read_text()


@pytest.fixture
def tiny_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(ROOT)  # source files are named relative to the working directory
    path = tmp_path / "tiny.ptl"
    write_bundle(compile_module(load_scripted(TINY_CNN), input_shapes={"forward": [(-1, 3, 32, 32)]}), path)
    return path


@pytest.mark.parametrize("name, shape", [
    ("runtime_error_wrong_channels.txt", (1, 4, 32, 32)),
    ("runtime_error_wrong_rank.txt", (3, 32, 32)),
])
def test_runtime_error_maps_to_source(tiny_bundle: Path, name: str, shape: tuple[int, ...]) -> None:
    """A misfit input: one line saying what is wrong, then the module that reads it (exit 6)."""
    module = runtime_py.load(tiny_bundle)
    with pytest.raises(InputError) as info:
        module.forward(np.zeros(shape, np.float32))
    _check_golden(name, str(info.value) + "\n")


def test_unsupported_nodes_cli_text(tmp_path: Path) -> None:
    model = tmp_path / "model.py"
    model.write_text(
        "import torch\n\n\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x, h):\n"
        "        y = torch.atan(x) + torch.erfinv(h)\n"
        "        return torch.lgamma(y) * 2.0\n")
    out = tmp_path / "m.ptl"
    result = subprocess.run([sys.executable, "-m", "liteexport", "export", "model.py:M", "-o", str(out), "-q"],
                            capture_output=True, text=True, cwd=tmp_path, check=False)
    assert result.returncode == 4
    assert result.stdout == ""
    assert not out.exists()
    _check_golden("unsupported_nodes_cli.txt", result.stderr)


def test_torch_agrees_the_wrong_input_is_wrong() -> None:
    """The golden runtime errors describe inputs torch itself rejects."""
    from examples.tiny_cnn import TinyCNN

    with pytest.raises(RuntimeError):
        TinyCNN().eval()(torch.zeros(1, 4, 32, 32))


def test_two_exports_are_byte_identical(tmp_path: Path) -> None:
    """Separate processes (fresh hash seeds, fresh import state) write the same bytes."""
    outputs = [tmp_path / "a" / "tiny.ptl", tmp_path / "b" / "tiny.ptl"]
    for out in outputs:
        out.parent.mkdir()
        result = subprocess.run([sys.executable, "-m", "liteexport", "export", TINY_CNN, "-o", str(out), "-q"],
                                capture_output=True, text=True, cwd=ROOT, check=False)
        assert result.returncode == 0, result.stderr
    assert outputs[0].read_bytes() == outputs[1].read_bytes()
