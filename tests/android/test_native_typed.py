"""Typed programs (issue 20) on the native core: its Array holds float32 only so far, so a bundle
with int64/int32/bool slots is refused at load with DTYPE_NOT_SUPPORTED (a format error naming the
slot and its dtype), never misread as float32; float32 programs with the new float ops run."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import torch

from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.input_spec import TensorSpec
from tests.android.test_native_run_limits import _read_tensor, _run, _write_tensor

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


def test_a_typed_program_is_refused_with_its_slot_and_dtype(tmp_path: Path) -> None:
    bundle = tmp_path / "embed.ptl"
    write_bundle(compile_module(torch.jit.script(_Embed()), input_shapes={"forward": [TensorSpec((3,), "int64")]}),
                 bundle)
    x = tmp_path / "x.bin"
    _write_tensor(x, np.zeros(3, np.float32))
    result = _run(bundle, x)
    assert result.returncode == 5, result.stdout + result.stderr
    assert "this executor holds float32 values only, but slot 0 holds int64 values" in result.stderr


def test_float_programs_with_sin_cos_and_cumsum_run(tmp_path: Path) -> None:
    bundle = tmp_path / "float_ops.ptl"
    write_bundle(compile_module(torch.jit.script(_FloatOps()), input_shapes={"forward": [(2, 5)]}), bundle)
    data = np.random.default_rng(0).standard_normal((2, 5)).astype(np.float32)
    x = tmp_path / "x.bin"
    _write_tensor(x, data)
    result = _run(bundle, x)
    assert result.returncode == 0, result.stdout + result.stderr
    expected = _FloatOps()(torch.from_numpy(data)).numpy()
    np.testing.assert_allclose(_read_tensor(Path(str(bundle) + ".out0.bin")), expected, atol=1e-6, rtol=1e-5)
