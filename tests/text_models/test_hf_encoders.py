"""Tiny random-config Hugging Face encoders of issue 20, traced: ViT, the Whisper encoder (its
audio stem is two conv1d, compiled as CONV2D over a height of 1) and MobileViT (its unfolding casts
sizes with transformers' torch_int, an aten::to of a number that folds at compile time) lower whole
and match eager torch in runtime_py, torch's lite interpreter and the native core (where it builds).
Configs built in code: no hub access."""

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


def _vit() -> tuple[torch.nn.Module, tuple[int, ...]]:
    config = transformers.ViTConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
                                    image_size=32, patch_size=8)
    return transformers.ViTModel(config), (1, 3, 32, 32)


def _whisper_encoder() -> tuple[torch.nn.Module, tuple[int, ...]]:
    config = transformers.WhisperConfig(d_model=32, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=64,
                                        decoder_layers=1, decoder_attention_heads=2, decoder_ffn_dim=64,
                                        num_mel_bins=16, max_source_positions=50)
    return transformers.WhisperModel(config).encoder, (1, 16, 100)  # 100 frames -> 50 positions


def _mobilevit() -> tuple[torch.nn.Module, tuple[int, ...]]:
    config = transformers.MobileViTConfig(image_size=32, patch_size=2, hidden_sizes=[16, 24, 32],
                                          neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64], num_attention_heads=2,
                                          expand_ratio=2.0)
    model = transformers.MobileViTModel(config)
    # HF's init (std 0.02 everywhere) shrinks the activations by ~1e-12 per stage: the output is all
    # zeros, which would match anything. torch's own default init keeps them in range (max ~1e-2).
    for module in model.modules():
        if module is not model and hasattr(module, "reset_parameters"):
            module.reset_parameters()
    return model, (1, 3, 32, 32)


@pytest.mark.parametrize("make", [_vit, _whisper_encoder, _mobilevit], ids=["vit", "whisper_encoder", "mobilevit"])
def test_encoder_lowers_whole_and_matches_eager(make: object, tmp_path: Path) -> None:
    import liteexport.torch_backend as tb

    tb.load_torch_backend()
    torch.manual_seed(0)
    encoder, shape = make()  # type: ignore[operator]
    model = LastHiddenState(encoder.eval()).eval()
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(1))
    _, compiled = compile_traced(model, [x])
    with torch.no_grad():
        expected = model(x).numpy()
    assert abs(expected).max() > 0  # an all-zero output (a vanishing init) would match anything
    ours, lite = run_engines(compiled, tmp_path / "encoder.ptl", [x])
    assert_same(ours, expected)
    assert_same(lite.numpy(), expected)  # type: ignore[attr-defined]
