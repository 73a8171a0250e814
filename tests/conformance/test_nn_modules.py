"""THE conformance suite: torch.nn modules (eval mode), scripted, saved by torch in both lite
formats, run by runtime_py and compared with torch's lite interpreter on the same inputs."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conformance.lite_oracle import FORMATS, check

torch = pytest.importorskip("torch")
nn = torch.nn

pytestmark = pytest.mark.torch_oracle


def _x(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _tokens(*shape: int) -> np.ndarray:
    return np.random.default_rng(1).integers(0, 10, shape).astype(np.int64)


class _Seq(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.body(x)


class _List(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return x


class _Dict(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.ModuleDict({"a": nn.Linear(4, 2), "b": nn.Linear(4, 5)})

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.heads["a"](x), self.heads["b"](x)


class _Bilinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.b = nn.Bilinear(3, 4, 5)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.b(x, y)


class _Recurrent(nn.Module):
    def __init__(self, cell: nn.Module) -> None:
        super().__init__()
        self.rnn = cell

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(x)
        return out


class _Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:  # noqa: UP007
        out, weights = self.attn(x, x, x)
        return out, weights


def _bn(module: nn.Module) -> nn.Module:
    """Batch norm with non-trivial running statistics (the defaults hide mistakes)."""
    with torch.no_grad():
        module.running_mean.uniform_(-0.5, 0.5)
        module.running_var.uniform_(0.5, 2.0)
        module.weight.uniform_(0.5, 1.5)
        module.bias.uniform_(-0.5, 0.5)
    return module


# name -> (module factory, inputs)
CASES: dict[str, tuple[Callable[[], nn.Module], tuple[Any, ...]]] = {
    "Linear": (lambda: nn.Linear(4, 3), (_x(2, 4),)),
    "Bilinear": (_Bilinear, (_x(2, 3), _x(2, 4, seed=1))),
    "Conv1d": (lambda: nn.Conv1d(3, 4, 3, padding=1), (_x(1, 3, 10),)),
    "Conv2d": (lambda: nn.Conv2d(3, 4, 3, stride=2, padding=1), (_x(1, 3, 8, 8),)),
    "ConvTranspose2d": (lambda: nn.ConvTranspose2d(3, 2, 3, stride=2, padding=1, output_padding=1),
                        (_x(1, 3, 5, 5),)),
    "BatchNorm1d": (lambda: _bn(nn.BatchNorm1d(4)), (_x(3, 4),)),
    "BatchNorm2d": (lambda: _bn(nn.BatchNorm2d(3)), (_x(2, 3, 4, 4),)),
    "LayerNorm": (lambda: nn.LayerNorm(6), (_x(2, 3, 6),)),
    "GroupNorm": (lambda: nn.GroupNorm(2, 4), (_x(2, 4, 3, 3),)),
    "Embedding": (lambda: nn.Embedding(10, 4), (_tokens(2, 5),)),
    "Dropout": (lambda: nn.Dropout(0.3), (_x(2, 5),)),
    "ReLU": (nn.ReLU, (_x(2, 5),)),
    "ReLU6": (nn.ReLU6, (_x(2, 5) * 5,)),
    "LeakyReLU": (lambda: nn.LeakyReLU(0.2), (_x(2, 5),)),
    "PReLU": (lambda: nn.PReLU(3), (_x(2, 3, 4),)),
    "ELU": (nn.ELU, (_x(2, 5),)),
    "GELU": (nn.GELU, (_x(2, 5),)),
    "GELU_tanh": (lambda: nn.GELU(approximate="tanh"), (_x(2, 5),)),
    "SiLU": (nn.SiLU, (_x(2, 5),)),
    "Hardswish": (nn.Hardswish, (_x(2, 5) * 4,)),
    "Hardsigmoid": (nn.Hardsigmoid, (_x(2, 5) * 4,)),
    "Sigmoid": (nn.Sigmoid, (_x(2, 5),)),
    "Tanh": (nn.Tanh, (_x(2, 5),)),
    "Softmax": (lambda: nn.Softmax(dim=1), (_x(2, 5),)),
    "LogSoftmax": (lambda: nn.LogSoftmax(dim=-1), (_x(2, 5),)),
    "MaxPool2d": (lambda: nn.MaxPool2d(2), (_x(1, 2, 6, 6),)),
    "AvgPool2d": (lambda: nn.AvgPool2d(3, stride=2, padding=1), (_x(1, 2, 7, 7),)),
    "AdaptiveAvgPool2d": (lambda: nn.AdaptiveAvgPool2d((2, 3)), (_x(1, 2, 7, 8),)),
    "Flatten": (nn.Flatten, (_x(2, 3, 4),)),
    "Upsample_nearest": (lambda: nn.Upsample(scale_factor=2, mode="nearest"), (_x(1, 2, 3, 4),)),
    "Upsample_bilinear": (lambda: nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                          (_x(1, 2, 3, 4),)),
    "Identity": (nn.Identity, (_x(2, 5),)),
    "Sequential": (_Seq, (_x(2, 4),)),
    "ModuleList": (_List, (_x(2, 4),)),
    "ModuleDict": (_Dict, (_x(2, 4),)),
    "LSTM": (lambda: _Recurrent(nn.LSTM(4, 5, num_layers=2, batch_first=True)), (_x(2, 3, 4),)),
    "GRU": (lambda: _Recurrent(nn.GRU(4, 5, batch_first=True)), (_x(2, 3, 4),)),
    "MultiheadAttention": (_Attention, (_x(2, 3, 8),)),
    "TransformerEncoderLayer": (lambda: nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1,
                                                                   batch_first=True), (_x(2, 3, 8),)),
}


@pytest.fixture(scope="module")
def scripted() -> dict[str, Any]:
    torch.manual_seed(0)
    return {name: torch.jit.script(factory().eval()) for name, (factory, _) in CASES.items()}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", list(CASES))
def test_module_matches_torch_lite(name: str, fmt: str, scripted: dict[str, Any], tmp_path: Path) -> None:
    check(scripted[name], tmp_path, name, fmt, CASES[name][1])
