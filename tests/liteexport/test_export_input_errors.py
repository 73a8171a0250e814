"""Issue 31, item 6, on the export side: inputs the user gives the export that do not fit are input
errors (exit 6) naming the input, not a bad model (exit 3), a failed self-check (exit 9) or a raw
TypeError: another number of --input-shape shapes or example inputs than the method takes, and
example inputs that are not dense CPU tensors of a compiled dtype (sparse, nested, quantized, on
another device, complex, float16, uint8; float64 is converted with a note). Nothing is written."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
from runtime_py.errors import InputError

ROOT = Path(__file__).resolve().parents[2]
TINY_CNN = str(ROOT / "examples" / "tiny_cnn.py") + ":TinyCNN"


class Doubler(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x) * 2


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "liteexport", *args], capture_output=True, text=True, check=False,
                          cwd=ROOT, timeout=300)


def test_a_wrong_number_of_input_shapes_is_exit_6_in_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "tiny.ptl"
    result = _cli("export", TINY_CNN, "-o", str(out), "--input-shape", "forward:1x3x32x32,1x3x32x32")
    assert result.returncode == 6, result.stderr
    assert ("Error: method 'forward' takes 1 inputs (x) but --input-shape / input_shapes gives 2 shapes"
            in result.stderr)
    assert "Traceback" not in result.stderr and not out.exists()


def test_a_wrong_number_of_input_shapes_is_an_input_error_in_the_api(tmp_path: Path) -> None:
    out = tmp_path / "d.ptl"
    with pytest.raises(InputError, match=r"method 'forward' takes 1 inputs \(x\) but .* gives 0 shapes"):
        liteexport.export(Doubler(), out, input_shapes=[])
    assert not out.exists()


# what the user passes -> the words that must name it
BAD_EXAMPLES: dict[str, tuple[Callable[[], object], str]] = {
    "sparse": (lambda: torch.randn(2, 3).to_sparse(), "a sparse_coo tensor; inputs are dense tensors"),
    "sparse csr": (lambda: torch.randn(2, 3).to_sparse_csr(), "a sparse_csr tensor"),
    "nested": (lambda: torch.nested.nested_tensor([torch.randn(2), torch.randn(3)]), "a nested tensor"),
    "quantized": (lambda: torch.quantize_per_tensor(torch.randn(2, 3), 0.1, 0, torch.quint8), "a quantized tensor"),
    "meta device": (lambda: torch.empty(2, 3, device="meta"), "a tensor on device meta"),
    "complex": (lambda: torch.randn(2, 3, dtype=torch.complex64), "complex64 values; compiled programs take "
                "float32, int64, int32, bool inputs"),
    "float16": (lambda: torch.randn(2, 3).half(), "float16 values"),
    "bfloat16": (lambda: torch.randn(2, 3).bfloat16(), "bfloat16 values"),
    "uint8": (lambda: torch.zeros(2, 3, dtype=torch.uint8), "uint8 values"),
    "numpy complex": (lambda: np.zeros((2, 3), np.complex128), "complex128 values"),
    "a list": (lambda: [1.0, 2.0], "a list; inputs are tensors (arrays) only"),
}


@pytest.mark.parametrize("kind", sorted(BAD_EXAMPLES))
def test_an_example_input_no_program_takes_is_an_input_error_naming_it(kind: str, tmp_path: Path) -> None:
    make, words = BAD_EXAMPLES[kind]
    out = tmp_path / "d.ptl"
    good = torch.randn(2, 3)
    with pytest.raises(InputError) as info:
        liteexport.export(Doubler(), out, example_inputs=[(good,), (make(),)])
    assert str(info.value).startswith("example_inputs of forward, set 1, input 0: ")
    assert words in str(info.value)
    assert info.value.exit_code == 6 and not out.exists()


def test_calibration_inputs_are_checked_alike(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^calibration_inputs of forward, set 0, input 0: a sparse_coo tensor"):
        liteexport.export(Doubler(), tmp_path / "d.ptl", input_shapes=[(2, 3)], quantize="int8",
                          calibration_inputs=[(torch.randn(2, 3).to_sparse(),)])


@pytest.mark.parametrize("count", [0, 2])
def test_an_example_input_set_of_another_size_is_an_input_error(count: int, tmp_path: Path) -> None:
    with pytest.raises(InputError, match=rf"^input set 0 of forward: forward takes 1 inputs \(x\), the set holds "
                                         rf"{count}$"):
        liteexport.export(Doubler(), tmp_path / "d.ptl",
                          example_inputs=[tuple(torch.randn(2, 3) for _ in range(count))])


def test_an_example_input_the_model_refuses_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"^forward fails on input set 0 of forward \(torch.float32 \(1, 4, 8, 8\)\)"):
        liteexport.export(liteexport_model(), tmp_path / "t.ptl", example_inputs=[(torch.randn(1, 4, 8, 8),)])


def liteexport_model() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval()


def test_a_complex_npy_example_is_exit_6_in_the_cli(tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 32, 32), np.complex64))
    out = tmp_path / "tiny.ptl"
    result = _cli("export", TINY_CNN, "-o", str(out), "--example-inputs", str(tmp_path / "x.npy"))
    assert result.returncode == 6, result.stderr
    assert "Error: input set 0 of forward, input 0: complex64 values" in result.stderr
    assert "Traceback" not in result.stderr and not out.exists()
