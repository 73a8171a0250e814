"""timm models of issue 20 (random weights) lower whole and match eager in runtime_py and in
torch's lite interpreter: ghostnetv2_100, whose DFC attention upsamples with F.interpolate(...,
mode="nearest") at 14 sites (RESIZE2D), edgenext_xx_small (cumsum, sin/cos and a floor division
of its position table, folded at compile time), efficientvit_m0 and levit_128s (attention with a
bias cache), and mobilevitv2_050 (group norm, as a layer norm per group)."""

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


@pytest.mark.parametrize(("name", "size"), [("ghostnetv2_100", 224), ("edgenext_xx_small", 256),
                                            ("efficientvit_m0", 224), ("levit_128s", 224), ("mobilevitv2_050", 256)])
def test_timm_model_lowers_whole_and_matches_torch(name: str, size: int, tmp_path: Path) -> None:
    import_torchvision()  # timm imports torchvision, whose C++ ops load only through the shim
    timm = pytest.importorskip("timm")
    tb.load_torch_backend()
    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False).eval()
    shape = (1, 3, size, size)
    x = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    path = tmp_path / f"{name}.ptl"
    liteexport.export(model, path, input_shapes=[shape])  # lower=True: every node compiled, or it raises
    with torch.no_grad():
        expected = model(x)
    assert_same(runtime_py.load(path).run_method("forward", x.numpy()), expected)
    assert_same(torch.jit.mobile._load_for_lite_interpreter(str(path)).run_method("forward", x), expected)
