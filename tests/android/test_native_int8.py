"""The native core's int8 path (issue 22; native/src/demo/xnn_int8.cpp): a quantized
model's convolutions, adds, pooling and linear layers run on XNNPACK's int8 operators, their
FAKE_QUANTIZE steps folded into them. The profile (liteexport_native_run --profile) marks the steps
that ran on int8 values, so these tests fail when a fusion silently stops happening; the outputs
stay within liteexport.quantized_parity.QUANTA quanta of runtime_py's."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport
import runtime_py
from benchmarks.models import torchvision_quantized
from liteexport.inspect_bundle import delegate_contents
from liteexport.quantized_parity import QUANTA, output_quantum, quanta_apart
from tests import cpp_builds
from tests.android.test_android_sample import build_dir
from tests.compiler.models.quantized import depthwise_fbgemm, small_quantized

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for the shared shim
from benchmarks.torchvision_shim import import_torchvision  # noqa: E402

pytestmark = [pytest.mark.android, pytest.mark.torch_oracle,
              pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None,
                                 reason="needs cmake and g++ to build C++")]


@pytest.fixture(autouse=True)
def _engine():  # type: ignore[no-untyped-def]
    previous = torch.backends.quantized.engine
    yield
    torch.backends.quantized.engine = previous


def _run_native(path: Path, x: np.ndarray, tmp_path: Path) -> tuple[np.ndarray, list[dict[str, object]]]:
    """The native core's output on x, and its profile's rows in program order."""
    tool = build_dir(cpp_builds.wait("native-host")) / "liteexport_native_run"
    np.save(tmp_path / "x.npy", x)
    profile = tmp_path / "profile.json"
    done = subprocess.run([str(tool), str(path), str(tmp_path / "x.npy"), "--output", str(tmp_path / "out.npz"),
                           "--profile", str(profile), "--repeat", "1", "--warmup", "0"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    rows = sorted(json.loads(profile.read_text())["instructions"], key=lambda r: r["index"])
    return np.load(tmp_path / "out.npz")["arr_0"], rows


def _within_quanta(path: Path, x: np.ndarray, native: np.ndarray) -> float:
    ours = np.asarray(runtime_py.load(path).forward(x))
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    quantum = output_quantum(contents[0]["forward"], 0)
    assert quantum is not None
    assert native.shape == ours.shape
    assert native.argmax() == ours.argmax()
    return quanta_apart(native, ours, quantum)


@pytest.mark.parametrize("engine", ["qnnpack", "fbgemm"])
def test_a_small_quantized_model_runs_its_quantized_ops_on_int8(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "small.ptl"
    liteexport.export(small_quantized(engine), path, input_shapes=[(1, 3, 16, 16)])
    x = np.random.default_rng(3).standard_normal((1, 3, 16, 16)).astype(np.float32)
    native, rows = _run_native(path, x, tmp_path)
    assert _within_quanta(path, x, native) <= QUANTA + 1e-3
    int8 = Counter(str(r["op"]) for r in rows if r["int8"])
    # every quantized op: the RGB conv, the grouped conv2 (4 channels a group), the 1x1 conv3,
    # add_relu, the cat, max pooling, the global average pool, flatten and the linear layer
    # (qnnpack: per-tensor weights; fbgemm: per channel)
    assert int8 == {"CONV2D": 3, "ADD": 1, "CAT": 1, "MAX_POOL2D": 1, "ADAPTIVE_AVG_POOL2D": 1, "FLATTEN": 2,
                    "LINEAR": 1, "FAKE_QUANTIZE": 3}, int8
    # the FAKE_QUANTIZE steps after the convolutions, the add (and its ReLU), the cat, the pool and
    # the linear layer are folded into them
    instructions = len(delegate_contents(runtime_py.load(path).ptmf)[0]["forward"].instructions)  # type: ignore[index]
    assert instructions - len(rows) == 8


def test_fbgemm_saturating_depthwise_convs_match_torch_on_the_native_core_and_torch_lite(tmp_path: Path) -> None:
    """Issue 31: fbgemm's depthwise convs add int16 pairs of products with saturation
    (liteexport/compiler/int16_pairs.py); their emulation (a CONV2D with an output per pair, a
    CLAMP, a grouped 1x1 CONV2D) runs on float kernels, the rest on int8, and both engines give torch's result
    within a quantum on held-out images (measured: 0 native, 1 torch lite; 23 before)."""
    from liteexport.torch_backend import load_torch_backend

    model = depthwise_fbgemm()
    path = tmp_path / "dw.ptl"
    liteexport.export(model, path, input_shapes=[(1, 3, 24, 24)])
    load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    quantum = output_quantum(contents[0]["forward"], 0)
    assert quantum is not None
    for seed in range(100, 108):
        x = np.random.default_rng(seed).random((1, 3, 24, 24)).astype(np.float32)
        with torch.no_grad():
            expected = model(torch.from_numpy(x)).numpy()
        native, rows = _run_native(path, x, tmp_path)
        assert quanta_apart(native, expected, quantum) <= 1 + 1e-3
        assert quanta_apart(lite(torch.from_numpy(x)).numpy(), expected, quantum) <= 1 + 1e-3
    floats = Counter(str(r["op"]) for r in rows if not r["int8"])
    assert floats == {"CONV2D": 4}, floats  # two per depthwise conv (the CLAMP fused into the first)
    assert Counter(str(r["op"]) for r in rows if r["int8"])["CONV2D"] == 3  # the stem, project and skip


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2"])
def test_torchvision_quantized_classifiers_run_on_int8(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.ptl"
    liteexport.export(torchvision_quantized(import_torchvision(), name, 224), path, input_shapes=[(1, 3, 224, 224)])
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    native, rows = _run_native(path, x, tmp_path)
    assert _within_quanta(path, x, native) <= QUANTA + 1e-3
    # every step runs on int8 (the RGB convolution too); the only FAKE_QUANTIZE step left is the
    # input's, writing int8
    float_steps = [(r["index"], r["op"]) for r in rows if not r["int8"]]
    assert float_steps == [], float_steps
    ops = Counter(str(r["op"]) for r in rows)
    assert ops["FAKE_QUANTIZE"] == 1 and ops["ADD"] >= 8 and ops["LINEAR"] == 1, ops


@pytest.mark.slow
@pytest.mark.parametrize(("name", "float_ops"), [("googlenet", []), ("shufflenet_v2_x1_0", ["MEAN"])])
def test_inception_cats_and_channel_shuffles_run_on_int8(name: str, float_ops: list[str], tmp_path: Path) -> None:
    # googlenet: ceil-mode max pooling and the inception blocks' quantized::cat; shufflenet: the
    # chunks (SLICE), the channel shuffle (RESHAPE, TRANSPOSE) and quantized::cat, all on int8
    # values; shufflenet's final aten::mean reads floats
    path = tmp_path / f"{name}.ptl"
    liteexport.export(torchvision_quantized(import_torchvision(), name, 224), path, input_shapes=[(1, 3, 224, 224)])
    x = np.random.default_rng(1).standard_normal((1, 3, 224, 224)).astype(np.float32)
    native, rows = _run_native(path, x, tmp_path)
    ours = runtime_py.load(path).forward(x)
    ours = np.asarray(ours[0] if isinstance(ours, (tuple, list)) else ours)  # googlenet: its GoogLeNetOutputs
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    quantum = output_quantum(contents[0]["forward"], 0)
    assert quantum is not None and native.shape == ours.shape
    assert quanta_apart(native, ours, quantum) <= QUANTA + 1e-3
    assert [r["op"] for r in rows if not r["int8"]] == float_ops
    assert Counter(str(r["op"]) for r in rows)["CAT"] >= 9
