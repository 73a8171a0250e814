"""torchvision's segmentation models (issue 20) lower whole through liteexport.export: their
dict output keeps torch's keys and matches eager in runtime_py and in torch's lite interpreter.
Their heads end with F.interpolate(..., mode="bilinear", align_corners=False) (RESIZE2D)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch
import torch.jit.mobile

import liteexport
import liteexport.torch_backend as tb
import runtime_py
from tests.text_models.typed import assert_same

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for the shared shim
from benchmarks.torchvision_shim import import_torchvision  # noqa: E402

pytestmark = [pytest.mark.torch_oracle, pytest.mark.slow]

# fcn_resnet50 is large: a smaller image keeps the test's time down (its convs are the cost)
MODELS = {
    "lraspp_mobilenet_v3_large": (1, 3, 224, 224),
    "deeplabv3_mobilenet_v3_large": (1, 3, 224, 224),
    "fcn_resnet50": (1, 3, 96, 96),
}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_segmentation_model_lowers_whole_and_matches_torch(name: str, tmp_path: Path) -> None:
    tb.load_torch_backend()
    shape = MODELS[name]
    torch.manual_seed(0)
    model = getattr(import_torchvision().models.segmentation, name)(weights=None, weights_backbone=None).eval()
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    path = tmp_path / f"{name}.ptl"
    liteexport.export(model, path, input_shapes=[shape])  # lower=True: every node compiled, or it raises
    with torch.no_grad():
        expected = model(x)

    ours = runtime_py.load(path).run_method("forward", x.numpy())
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path)).run_method("forward", x)
    for got in (ours, lite):
        assert isinstance(got, dict) and list(got) == list(expected)
        for key in expected:
            assert_same(got[key], expected[key])
