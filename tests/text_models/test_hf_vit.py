"""A tiny random-config Hugging Face ViT (issue 20's vision transformers), traced, lowers whole and
matches eager torch in runtime_py, torch's lite interpreter and the native core (where it builds).
Config built in code: no hub access."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch
import torch.jit.mobile

from benchmarks.torchvision_shim import import_torchvision
from tests.text_models.typed import assert_same, compile_traced, run_engines

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import_torchvision()  # transformers imports torchvision, whose CUDA wheel's C++ ops do not load here
import transformers  # noqa: E402

pytestmark = pytest.mark.torch_oracle


class LastHiddenState(torch.nn.Module):
    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, pixels: torch.Tensor) -> torch.Tensor:
        return self.model(pixels, return_dict=False)[0]  # type: ignore[no-any-return]


def test_vit_lowers_whole_and_matches_eager(tmp_path: Path) -> None:
    import liteexport.torch_backend as tb

    tb.load_torch_backend()
    torch.manual_seed(0)
    config = transformers.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                    image_size=32, patch_size=8)
    model = LastHiddenState(transformers.ViTModel(config).eval()).eval()
    pixels = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    _, compiled = compile_traced(model, [pixels])
    with torch.no_grad():
        expected = model(pixels).numpy()
    ours, lite = run_engines(compiled, tmp_path / "vit.ptl", [pixels])
    assert_same(ours, expected)
    assert_same(lite.numpy(), expected)  # type: ignore[attr-defined]
