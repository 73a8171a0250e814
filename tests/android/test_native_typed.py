"""Typed programs (issue 20) on the native core through its host tool liteexport_native_run: int64,
int32 and bool inputs (.npy), weights, intermediates and outputs (.npz) run and match torch; an
input of another dtype is the input error (exit 6) saying expected vs got, an id outside the table
runtime_py's kernel error (exit 7), a bad .npy exit 6 with one line; float32 programs with the new
float ops still run from LXT1 files."""
from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

import runtime_py
from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.input_spec import TensorSpec
from runtime_py.errors import ExecutionError
from tests.android.test_native_run_limits import _run, _tool, _write_tensor
from tests.android.typed_io import INPUTS, TypedIO, write_typed_io
from tests.text_models.typed import assert_same, run_native

pytestmark = [pytest.mark.android, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None,
                                 reason="needs cmake and g++ to build C++")]


class _Embed(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.nn.Embedding(10, 4)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids)


class _FloatOps(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(torch.sin(x) * torch.cos(x), 1)


def _embed_bundle(tmp_path: Path) -> Path:
    bundle = tmp_path / "embed.ptl"
    write_bundle(compile_module(torch.jit.script(_Embed()), input_shapes={"forward": [TensorSpec((3,), "int64")]}),
                 bundle)
    return bundle


def test_typed_inputs_weights_and_outputs_match_torch(tmp_path: Path) -> None:
    bundle = write_typed_io(tmp_path / "typed.ptl")
    for inputs in INPUTS:
        with torch.no_grad():
            expected = TypedIO()(*map(torch.from_numpy, inputs))
        got = run_native(bundle, inputs, tool=_tool())
        assert [g.dtype for g in got] == [np.float32, np.int64, np.int32, np.bool_]
        assert_same(got, expected)


def test_an_input_of_another_dtype_is_an_input_error(tmp_path: Path) -> None:
    bundle = _embed_bundle(tmp_path)
    np.save(tmp_path / "x.npy", np.zeros(3, np.int32))
    result = _run(bundle, tmp_path / "x.npy")
    assert result.returncode == 6, result.stdout + result.stderr
    assert "input 0: expected int64 of shape (3,), got int32 of shape (3,)" in result.stderr


def test_an_id_outside_the_table_is_the_kernel_error_of_runtime_py(tmp_path: Path) -> None:
    bundle = _embed_bundle(tmp_path)
    for bad in (-1, 10):
        np.save(tmp_path / "x.npy", np.array([0, bad, 2], np.int64))
        result = _run(bundle, tmp_path / "x.npy")
        assert result.returncode == 7, result.stdout + result.stderr
        assert f"index {bad} is out of range [0, 10)" in result.stderr
        with pytest.raises(ExecutionError, match=rf"index {bad} is out of range \[0, 10\)"):
            runtime_py.load(bundle).run_method("forward", np.array([0, bad, 2], np.int64))


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


@pytest.mark.parametrize(("content", "message"), [
    (b"not numpy", "no \\x93NUMPY magic"),
    (_npy(np.zeros(3, np.float64)), "dtype '<f8'"),
    (_npy(np.zeros(3, np.int64))[:-8], "its data holds 16 bytes, its shape needs 3 values of 8 bytes"),
    (_npy(np.zeros((3, 2), np.float32, order="F")), "Fortran order"),
])
def test_a_bad_npy_is_an_input_error_of_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    bundle = _embed_bundle(tmp_path)
    (tmp_path / "x.npy").write_bytes(content)
    result = _run(bundle, tmp_path / "x.npy")
    assert result.returncode == 6, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


def test_float_programs_with_sin_cos_and_cumsum_run(tmp_path: Path) -> None:
    bundle = tmp_path / "float_ops.ptl"
    write_bundle(compile_module(torch.jit.script(_FloatOps()), input_shapes={"forward": [(2, 5)]}), bundle)
    data = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    x = tmp_path / "x.bin"
    _write_tensor(x, data)
    result = _run(bundle, x, "--output", tmp_path / "out.npz")
    assert result.returncode == 0, result.stdout + result.stderr
    expected = _FloatOps()(torch.from_numpy(data)).numpy()
    with np.load(tmp_path / "out.npz") as outputs:
        np.testing.assert_allclose(outputs["arr_0"], expected, atol=1e-6, rtol=1e-5)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["float_ops.ptl", "out.npz", "x.bin"]  # nothing unasked


def test_expected_outputs_of_other_dtypes_compare_exactly(tmp_path: Path) -> None:
    bundle = write_typed_io(tmp_path / "typed.ptl")
    inputs = INPUTS[0]
    for i, value in enumerate(inputs):
        np.save(tmp_path / f"in{i}.npy", value)
    with torch.no_grad():
        expected = [t.numpy() for t in TypedIO()(*map(torch.from_numpy, inputs))]
    for k, value in enumerate(expected):
        np.save(tmp_path / f"out{k}.npy", value)
    outputs = [tmp_path / f"out{k}.npy" for k in range(4)]
    argv = [bundle, tmp_path / "in0.npy", tmp_path / "in1.npy", "--expect", *outputs]
    result = _run(*argv)
    assert result.returncode == 0, result.stdout + result.stderr
    np.save(tmp_path / "out1.npy", expected[1] + 1)  # one position off
    result = _run(*argv)
    assert result.returncode == 2 and "output 1 differs: int64 values differ" in result.stderr, result.stderr
    np.save(tmp_path / "out1.npy", expected[1].astype(np.int32))
    result = _run(*argv)
    assert result.returncode == 2 and "output 1 differs: dtype int64, expected int32" in result.stderr, result.stderr
