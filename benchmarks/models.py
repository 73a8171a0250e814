"""The benchmark's models: what the demo compiler supports, from overhead-bound to
compute-bound, plus an MLP whose width scales the weights from kilobytes to ~512 MB; and the
plain-bytecode cases: torchvision models and a gated MLP, run from torch's own bundles."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F


class TinyMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(torch.relu(self.fc1(x)))


class WideMLP(nn.Module):
    def __init__(self, width: int = 1024, depth: int = 3) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = torch.relu(layer(x))
        return x


class SmallCNN(nn.Module):
    """A small CNN at 224x224: conv/bn/relu/pool blocks, then a linear head."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.head = nn.Linear(64, 100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.flatten(self.features(x), 1))


class EncoderLayer(nn.Module):
    """A transformer encoder layer written with the ops the compiler supports
    (nn.TransformerEncoderLayer's fused attention kernel is not among them)."""

    def __init__(self, d_model: int = 256, heads: int = 4, ff: int = 1024) -> None:
        super().__init__()
        self.heads, self.d_head = heads, d_model // heads
        self.q, self.k, self.v = nn.Linear(d_model, d_model), nn.Linear(d_model, d_model), nn.Linear(d_model, d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.norm1, self.norm2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.ff1, self.ff2 = nn.Linear(d_model, ff), nn.Linear(ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.size(0), x.size(1), x.size(2)
        q = self.q(x).view(b, t, self.heads, self.d_head).transpose(1, 2)
        k = self.k(x).view(b, t, self.heads, self.d_head).transpose(1, 2)
        v = self.v(x).view(b, t, self.heads, self.d_head).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) / self.d_head ** 0.5, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(b, t, d)
        x = self.norm1(x + self.proj(y))
        return self.norm2(x + self.ff2(F.gelu(self.ff1(x))))


class GatedMLP(nn.Module):
    """A transformer-style gated feed-forward block: x + W2(silu(W1 norm(x)) * W3 norm(x))."""

    def __init__(self, d_model: int = 64, hidden: int = 256) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.gate, self.up = nn.Linear(d_model, hidden), nn.Linear(d_model, hidden)
        self.down = nn.Linear(hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def _torchvision(name: str) -> Callable[[], nn.Module]:
    def make() -> nn.Module:
        from benchmarks.torchvision_shim import import_torchvision

        model: nn.Module = getattr(import_torchvision().models, name)()
        return model

    return make


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[], nn.Module]
    input_shape: tuple[int, ...]
    compute_bound: bool


CASES = (
    Case("tiny_mlp", TinyMLP, (1, 16), False),
    Case("mlp_1024", WideMLP, (8, 1024), True),
    Case("cnn_224", SmallCNN, (1, 3, 224, 224), True),
    Case("encoder", EncoderLayer, (1, 64, 256), True),
    Case("resnet18", _torchvision("resnet18"), (1, 3, 224, 224), True),
    Case("mobilenet_v2", _torchvision("mobilenet_v2"), (1, 3, 224, 224), True),
)


# torch's own bundles of these (torch.jit.script + _save_for_lite_interpreter) run by runtime_py's
# interpreter and operator table against torch's lite interpreter: the plain-bytecode path
PLAIN_CASES = (
    Case("gated_mlp", GatedMLP, (1, 64), False),
    Case("gated_mlp_16", lambda: GatedMLP(256, 1024), (16, 256), True),
    *(Case(name, _torchvision(name), (1, 3, 224, 224), True)
      for name in ("resnet18", "mobilenet_v2", "mobilenet_v3_small", "shufflenet_v2_x0_5", "squeezenet1_1")),
)


# benchmarks/peers.py: the native core against ExecuTorch (XNNPACK delegate) and ONNX Runtime (issue 21)
PEER_CASES = (
    Case("resnet18", _torchvision("resnet18"), (1, 3, 224, 224), True),
    Case("mobilenet_v2", _torchvision("mobilenet_v2"), (1, 3, 224, 224), True),
    Case("mobilenet_v3_small", _torchvision("mobilenet_v3_small"), (1, 3, 224, 224), True),
    Case("encoder", EncoderLayer, (1, 64, 256), True),
)


# benchmarks/quantized.py: int8 against float, ours and ExecuTorch's (issue 22)
def _with_statistics(name: str) -> Callable[[], nn.Module]:
    """torchvision's ``name`` with batch-norm statistics (with_batch_norm_statistics): a model whose
    activations neither vanish nor explode, as quantization needs (random weights give mobilenet_v2
    logits of 1e-9, below any 8-bit grid)."""
    return lambda: with_batch_norm_statistics(_torchvision(name)(), 224)


# named apart from the plain torchvision cases (benchmarks.worker finds a case by its name)
QUANTIZED_CASES = (
    Case("resnet18_stats", _with_statistics("resnet18"), (1, 3, 224, 224), True),
    Case("mobilenet_v2_stats", _with_statistics("mobilenet_v2"), (1, 3, 224, 224), True),
)


def calibration_images(shape: tuple[int, ...], count: int = 8) -> list[np.ndarray]:
    """The inputs static quantization observes, the same for every tool: standard normal, seeds
    1..count (the measured input is seed 0's)."""
    return [np.random.default_rng(seed).standard_normal(shape).astype(np.float32) for seed in range(1, count + 1)]


def torchvision_quantized(torchvision: object, name: str, size: int) -> nn.Module:
    """torchvision's quantizable ``name`` (random weights), its batch-norm statistics taken from
    random images (with_batch_norm_statistics), quantized for qnnpack as ``quantize=True`` does:
    how PyTorch Mobile users have their quantized models."""
    from torchvision.models.quantization.utils import quantize_model

    torch.manual_seed(0)
    torch.backends.quantized.engine = "qnnpack"
    model = getattr(torchvision.models.quantization, name)(weights=None, quantize=False)  # type: ignore[attr-defined]
    quantize_model(with_batch_norm_statistics(model, size), "qnnpack")
    return model


def with_batch_norm_statistics(model: nn.Module, size: int) -> nn.Module:
    """``model`` in eval mode with its batch norms' running statistics taken from random images
    (a few training-mode passes): with weights=None they are 0 and 1, and activations vanish or
    explode through a deep network (mobilenet_v2's logits are 1e-9) as no trained model's do."""
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.rand(2, 3, size, size))
    return model.eval()


def scaling_case(width: int) -> Case:
    """An MLP of 2 layers width x width: 8 * width^2 bytes of float32 weights."""
    return Case(f"mlp_w{width}", lambda: WideMLP(width, depth=2), (1, width), True)
