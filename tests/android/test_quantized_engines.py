"""A quantized model's bundle (issue 22; torch.ao's, and --quantize int8's) on the other engines:
torch's lite interpreter with our backend and the native core (liteexport_native_run) give
runtime_py's outputs within liteexport.quantized_parity.QUANTA quanta of the output's grid (their
float kernels sum in another order, which can move a value across a rounding boundary of
FAKE_QUANTIZE)."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport
import runtime_py
from liteexport.inspect_bundle import delegate_contents
from liteexport.quantized_parity import QUANTA, output_quantum, quanta_apart
from liteexport.torch_backend import load_torch_backend
from tests import cpp_builds
from tests.android.test_android_sample import build_dir
from tests.compiler.models.quantized import small_quantized
from tests.liteexport.models.residual_net import ResidualNet

pytestmark = [pytest.mark.android, pytest.mark.torch_oracle,
              pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None,
                                 reason="needs cmake and g++ to build C++")]


@pytest.mark.parametrize("engine", ["qnnpack", "fbgemm"])
def test_quantized_bundle_runs_on_torch_lite_and_the_native_core(engine: str, tmp_path: Path) -> None:
    previous = torch.backends.quantized.engine
    try:
        model = small_quantized(engine)
    finally:
        torch.backends.quantized.engine = previous
    path = tmp_path / "small.ptl"
    liteexport.export(model, path, input_shapes=[(1, 3, 16, 16)])
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    quantum = output_quantum(contents[0]["forward"], 0)
    assert quantum is not None
    x = np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32)
    ours = np.asarray(runtime_py.load(path).forward(x))

    load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))(torch.from_numpy(x)).numpy()
    assert quanta_apart(lite, ours, quantum) <= QUANTA + 1e-3

    tool = build_dir(cpp_builds.wait("native-host")) / "liteexport_native_run"
    np.save(tmp_path / "x.npy", x)
    done = subprocess.run([str(tool), str(path), str(tmp_path / "x.npy"), "--output", str(tmp_path / "out.npz")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    native = np.load(tmp_path / "out.npz")["arr_0"]
    assert native.shape == ours.shape and quanta_apart(native, ours, quantum) <= QUANTA + 1e-3


def _native(bundle: Path, x: np.ndarray, folder: Path) -> np.ndarray:
    tool = build_dir(cpp_builds.wait("native-host")) / "liteexport_native_run"
    np.save(folder / "x.npy", x)
    done = subprocess.run([str(tool), str(bundle), str(folder / "x.npy"), "--output", str(folder / "out.npz")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return np.load(folder / "out.npz")["arr_0"]


def _int8_on_every_engine(bundle: Path, x: np.ndarray, folder: Path) -> None:
    """runtime_py, torch's lite interpreter and the native core within QUANTA quanta of each other."""
    contents = delegate_contents(runtime_py.load(bundle).ptmf)
    assert contents is not None
    quantum = output_quantum(contents[0]["forward"], 0)
    assert quantum is not None
    ours = np.asarray(runtime_py.load(bundle).forward(x))
    load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(str(bundle))(torch.from_numpy(x)).numpy()
    assert quanta_apart(lite, ours, quantum) <= QUANTA + 1e-3
    native = _native(bundle, x, folder)
    assert native.shape == ours.shape and quanta_apart(native, ours, quantum) <= QUANTA + 1e-3


def test_an_int8_bundle_runs_on_torch_lite_and_the_native_core(tmp_path: Path) -> None:
    """--quantize int8 (a conv net with a residual join): the same outputs on every engine."""
    path = tmp_path / "int8.ptl"
    rng = np.random.default_rng(0)
    calibration = [(rng.standard_normal((1, 3, 16, 16)).astype(np.float32),) for _ in range(4)]
    liteexport.export(ResidualNet(), path, input_shapes=[(1, 3, 16, 16)], quantize="int8",
                      calibration_inputs=calibration)
    _int8_on_every_engine(path, np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32), tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_torchvision_int8_bundles_run_on_every_engine(name: str, tmp_path: Path) -> None:
    from tests.compiler.models.int8_models import SHAPE, export_both, float_model

    _, int8, _, _ = export_both(float_model(name), tmp_path)
    _int8_on_every_engine(Path(int8.path), np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32),
                          tmp_path)
