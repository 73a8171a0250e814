"""The Android sample's native core and partial lowering: a mixed bundle (TorchScript bytecode
calling operators, plus lowered parts) is refused at load, naming every operator it lacks; a
module lowered by torch's to_backend with liteexport's compiler runs, with torch's outputs."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
from tests import cpp_builds
from tests.to_backend import mixed_models

pytestmark = [pytest.mark.android, pytest.mark.slow, pytest.mark.torch_oracle, pytest.mark.usefixtures("backend")]


def _native_run() -> Path:
    step = cpp_builds.wait("native-host")
    return Path(step.output.strip().splitlines()[-1]) / "liteexport_native_run"


def _tensor_file(path: Path, array: np.ndarray) -> Path:
    """The native tool's input format: b"LXT1", uint32 ndim, int64 dims, float32 data."""
    path.write_bytes(b"LXT1" + struct.pack("<I", array.ndim) + struct.pack(f"<{array.ndim}q", *array.shape)
                     + array.astype(np.float32).tobytes())
    return path


def test_native_core_refuses_a_mixed_bundle_at_load(tmp_path: Path) -> None:
    bundle = tmp_path / "mixed.ptl"
    liteexport.export(mixed_models.Pair().eval(), bundle, lower=["enc"])
    x = _tensor_file(tmp_path / "x.bin", np.ones((2, 4), np.float32))
    result = subprocess.run([str(_native_run()), str(bundle), str(x), str(x)], capture_output=True, text=True,
                            check=False)
    assert result.returncode != 0
    assert "uses operators the native runtime does not implement: aten::add.Tensor, aten::sub.Tensor" \
        in result.stderr
    assert "forward" not in result.stdout  # refused before any call


def test_native_core_runs_a_module_lowered_by_torchs_to_backend(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = mixed_models.Encoder().eval()
    bundle = tmp_path / "lowered.ptl"
    bundle.write_bytes(liteexport.lower(model)._c._save_to_buffer_for_mobile({}, False, True))
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    result = subprocess.run([str(_native_run()), str(bundle), str(_tensor_file(tmp_path / "x.bin", x)),
                             "--output", str(tmp_path / "out.npz")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    with np.load(tmp_path / "out.npz") as outputs:
        ours = outputs["arr_0"]
    np.testing.assert_allclose(ours, model(torch.from_numpy(x)).detach().numpy(), atol=1e-5, rtol=1e-4)
