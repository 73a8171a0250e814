"""torchvision models, scripted and saved by torch itself, run in runtime_py's interpreter and
operator table (the plain-bytecode path, routed through the demo backend's kernels) with the
outputs of torch's own lite interpreter on the same bundle, in both of torch's containers."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
mobile = pytest.importorskip("torch.jit.mobile")

import runtime_py  # noqa: E402
from benchmarks.models import GatedMLP  # noqa: E402
from benchmarks.torchvision_shim import import_torchvision  # noqa: E402

# small inputs keep the test quick; they exercise every layer type these models have (depthwise
# and grouped convs, strided and padded windows, SE blocks, channel shuffles, hardswish, BN)
MODELS = {"resnet18": (1, 3, 64, 64), "mobilenet_v2": (1, 3, 64, 64), "mobilenet_v3_small": (2, 3, 64, 64),
          "shufflenet_v2_x0_5": (1, 3, 64, 64), "squeezenet1_1": (1, 3, 64, 64)}


def _check(model: torch.nn.Module, shape: tuple[int, ...], path: Path, flatbuffer: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.script(model.eval())._save_for_lite_interpreter(str(path), _use_flatbuffer=flatbuffer)
        lite = mobile._load_for_lite_interpreter(str(path))
    x = torch.randn(*shape)
    with torch.no_grad():
        expected = lite(x).numpy()
    ours = runtime_py.load(str(path)).forward(x.numpy())
    assert ours.dtype == expected.dtype and ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("flatbuffer", [True, False], ids=["flatbuffer", "zip"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_torchvision_model_matches_torch_lite(name: str, flatbuffer: bool, tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = getattr(import_torchvision().models, name)()
    with torch.no_grad():  # random BN statistics, so every normalization does real work
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
    _check(model, MODELS[name], tmp_path / "m.ptl", flatbuffer)


def test_gated_mlp_matches_torch_lite(tmp_path: Path) -> None:
    torch.manual_seed(0)
    _check(GatedMLP(), (3, 64), tmp_path / "m.ptl", flatbuffer=True)
