"""The models of the end-to-end parity suite (a real file, so source lines are stable)."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Optional

import torch
from torch import nn
from torch.nn import functional as F


def _seeded(module: nn.Module, seed: int) -> nn.Module:
    """Deterministic, non-trivial weights and batch-norm statistics."""
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen) * 0.3)
        for m in module.modules():
            if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.5)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)
    return module.eval()


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(20, 64)
        self.fc2 = nn.Linear(64, 32)
        self.head = nn.Linear(32, 5)
        _seeded(self, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.fc1(x))
        x = torch.sigmoid(self.fc2(x)) * 2.0 - 1.0
        return F.log_softmax(self.head(x), dim=-1)


class ConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
            nn.AvgPool2d(2, ceil_mode=True), nn.Conv2d(16, 16, 3, padding=2, dilation=2, groups=4),
            nn.AdaptiveAvgPool2d((2, 2)))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.5), nn.Linear(64, 10))
        _seeded(self, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(self.classifier(self.features(x)), dim=1)


class ResidualBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        _seeded(self, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + x)


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(6, 12)
        self.out = nn.Linear(12, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.proj(x)))


class TwoMethods(nn.Module):
    """Submodules, and a second method marked @torch.jit.export."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.scale = nn.Linear(4, 4)
        _seeded(self, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scale(self.encoder(x)) - 0.5

    @torch.jit.export
    def embed(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.encoder(x), self.encoder(y)], dim=1) / 3.0


class TupleOutputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 8)
        _seeded(self, 5)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        y = self.fc(x) + h
        return y, torch.neg(y).t(), x


class NormGeluBlock(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.up = nn.Linear(16, 32)
        self.down = nn.Linear(32, 16)
        _seeded(self, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.down(F.gelu(self.up(self.norm(x))))
        return F.gelu(x + y, approximate="tanh")


class Attention(nn.Module):
    """matmul, transpose, view/reshape, softmax and scalar arithmetic."""

    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(16, 16)
        self.k = nn.Linear(16, 16)
        self.v = nn.Linear(16, 16)
        self.out = nn.Linear(16, 16)
        _seeded(self, 7)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b = x.size(0)
        q = self.q(x).view(b, 6, 2, 8).transpose(1, 2)
        k = self.k(x).view(b, 6, 2, 8).transpose(1, 2)
        v = self.v(x).view(b, 6, 2, 8).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / 8.0 ** 0.5
        y = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, 6, 16)
        return self.out(y)


class LinearAlgebra(nn.Module):
    """addmm, mm, t, flatten and the scalar/alpha forms of add, sub, mul, div, rsub."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.zeros(12, 6))
        self.b = nn.Parameter(torch.zeros(6))
        _seeded(self, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.addmm(self.b, torch.flatten(x, 1), self.w, beta=0.5, alpha=2.0)
        z = torch.mm(y, self.w.t())
        z = torch.sub(z, torch.flatten(x, 1), alpha=0.25)
        z = torch.add(z, 1.5, alpha=2) * 3.0
        return (1.0 - z) / (torch.abs(z) + 1.0) if False else (1.0 - z) / 7.0 + 2.0 / (z * z + 1.0)


class MobileBlocks(nn.Module):
    """The activations, reductions and slicing of mobile CNNs: relu6/hardswish/hardsigmoid/silu,
    squeeze-excitation (mean keepdim), channel shuffle (chunk, view, transpose), select, slice,
    expand, pad, roll, stack, sum."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.se_reduce = nn.Conv2d(8, 4, 1)
        self.se_expand = nn.Conv2d(4, 8, 1)
        self.token = nn.Parameter(torch.zeros(1, 1, 6))
        _seeded(self, 9)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = F.relu6(self.bn(self.conv(x)) * 3.0)
        y = F.hardswish(y - 2.0)
        scale = F.hardsigmoid(self.se_expand(F.silu(self.se_reduce(y.mean([2, 3], keepdim=True)))))
        y = y * scale.expand(-1, -1, x.size(2), x.size(3))
        a, b = y.chunk(2, dim=1)
        y = torch.cat([F.hardtanh(a, -0.5, 0.5), b.clamp(min=0.1)], 1)
        n, c, h, w = y.size()
        y = y.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)
        y = torch.roll(F.pad(y, [1, 1, 0, 0]), shifts=1, dims=3)[:, :, :, 1:-1]
        rows = y.sum(2).transpose(1, 2)  # n, w, c
        tokens = torch.cat([self.token.expand(n, -1, -1), rows[:, :, :6]], 1)
        first = torch.stack([tokens[:, 0], tokens.mean(1)], 1).squeeze(0).unsqueeze(0)
        return tokens.select(1, -1), first


class RecurrentAttention(nn.Module):
    """nn.GRU and nn.LSTM (unrolled at compile time), then the fused multi-head attention
    nn.MultiheadAttention runs in inference, and einsum."""

    def __init__(self) -> None:
        super().__init__()
        self.gru = nn.GRU(6, 8, batch_first=True)
        self.lstm = nn.LSTM(8, 4, bidirectional=True, batch_first=True)
        self.mha = nn.MultiheadAttention(8, 2, batch_first=True)
        _seeded(self, 10)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y, _ = self.gru(x)
        z, (h, _) = self.lstm(y)
        a = self.mha
        att, _ = torch._native_multi_head_attention(z, z, z, 8, 2, a.in_proj_weight, a.in_proj_bias,
                                                    a.out_proj.weight, a.out_proj.bias, None, False)
        return torch.einsum("btd,bsd->bts", att, z), h


class HandwrittenNorms(nn.Module):
    """Normalizations written with elementwise math: an RMS/layer norm from pow, mean, sqrt
    and rsqrt; F.normalize (a 2-norm); abs, log and powers; a softmax from exp and sum."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(12))
        _seeded(self, 11)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        centered = x - x.mean(-1, keepdim=True)
        layer = centered / torch.sqrt(centered.pow(2).mean(-1, keepdim=True) + 1e-5) * self.scale
        rms = x * torch.rsqrt(torch.mean(x * x, dim=-1, keepdim=True) + 1e-6)
        unit = F.normalize(x, dim=-1)
        softmax = torch.exp(x) / torch.exp(x).sum(-1, keepdim=True)
        return layer + rms + unit, torch.log(torch.abs(x) + 1.0) + 2.0 ** x.clamp(max=3.0) + x ** 3 + softmax


class AuxOutputs(NamedTuple):
    logits: torch.Tensor
    aux1: Optional[torch.Tensor]  # noqa: UP045 (TorchScript reads the annotation)
    aux2: Optional[torch.Tensor]  # noqa: UP045


class AuxiliaryHeads(nn.Module):
    """googlenet's outputs: auxiliary heads only in training, so in eval mode the scripted
    forward returns (logits, None, None); and a plain tuple with None beside a tensor."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(8, 6)
        self.head = nn.Linear(6, 3)
        self.aux = nn.Linear(6, 3)
        _seeded(self, 12)

    def forward(self, x: torch.Tensor) -> AuxOutputs:
        h = torch.relu(self.body(x))
        aux: Optional[torch.Tensor] = self.aux(h) if self.training else None  # noqa: UP045
        return AuxOutputs(self.head(h), aux, None)

    @torch.jit.export
    def pair(self, x: torch.Tensor) -> tuple[torch.Tensor, None]:
        return self.body(x) * 2.0, None


class TokenOps(nn.Module):
    """The typed ops of text models on one float input: ids made from it (a cast), their embedding,
    masks from every comparison and bitwise op, masked_fill, cumsum positions, gather and
    index_select by them, sin/cos of positions."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 8)
        self.register_buffer("pick", torch.tensor([3, 0, 5, 1, 7]))
        _seeded(self, 13)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        ids = (torch.sigmoid(x) * 9.99).long()  # [0, 9], truncated as torch casts
        h = self.embed(ids)
        keep = ~(ids > 4) | (ids == 0)
        keep = keep & (ids != 7)
        h = h.masked_fill((ids < 2).unsqueeze(-1), 0.5)
        pos = torch.cumsum(keep.long(), dim=1)
        index = torch.where(pos >= x.size(1), torch.zeros_like(pos), pos)
        picked = torch.gather(h, 1, index.unsqueeze(-1).expand(-1, -1, 8))
        picked = torch.index_select(picked, 2, self.pick)
        angle = torch.sin(pos) * torch.cos(x)
        below = (x <= 0.0).float() + (ids >= 9).to(torch.float32)
        return picked * (angle + below).unsqueeze(-1)


class Upsampling(nn.Module):
    """F.interpolate as segmentation heads and FPNs use it (RESIZE2D): bilinear to a size and by a
    scale factor, align_corners both ways, nearest up by 2 and down by a non-integer ratio."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        _seeded(self, 17)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        low = torch.relu(self.conv(x))  # [N, 4, 5, 6]
        up = F.interpolate(low, size=(x.size(2), x.size(3)), mode="bilinear", align_corners=False)
        corners = F.interpolate(low, scale_factor=1.7, mode="bilinear", align_corners=True)
        near = F.interpolate(low, scale_factor=2.0, mode="nearest")
        down = F.interpolate(x, size=(7, 5), mode="nearest")
        return up[:, :3] + x + corners.mean() + near.mean() + F.interpolate(down, size=(9, 11), mode="bilinear")


class Selection(nn.Module):
    """Causal masks (triu/tril), argmax/argmin, max/min over a dim and topk, and rounded division of floats and
    of int64 ids made from the input (floor_divide, remainder, div's floor and trunc modes)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [N, 5, 6]
        scores = x.tril(1) - x.triu(3)
        values, index = torch.max(scores, dim=-1)
        lows, low_index = torch.min(scores, dim=-1)
        top, where = torch.topk(x, 3, dim=1)
        ids = (x * 4).long()
        steps = torch.div(ids, 3, rounding_mode="floor") + torch.div(ids, -2, rounding_mode="trunc") + ids % 5
        rounded = x % 0.7 + x // 0.3 + torch.div(x, 0.4, rounding_mode="trunc")
        extremes = values + index.float() + torch.argmax(x, 2).float() - lows + low_index.float() + x.argmin(2).float()
        return extremes.unsqueeze(-1) + top.sum(1, keepdim=True) \
            + where.float().mean() + steps.float() + rounded


class ElementwiseMath(nn.Module):
    """The elementwise math ops added through the op spec: log1p (and its in-place form), expm1,
    floor, ceil, trunc, round, sign and erf."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.abs() * 2.0
        y.log1p_()
        scaled = x * 3.0
        rounded = torch.floor(scaled) + torch.ceil(scaled) * 2.0 + torch.trunc(scaled) * 3.0 + torch.round(scaled) * 4.0
        return torch.log1p(x.abs()) + y + torch.expm1(x) + rounded + torch.sign(x) + torch.erf(x)


# model class, method -> input shapes
CASES: dict[str, tuple[Callable[[], torch.nn.Module], dict[str, list[tuple[int, ...]]]]] = {
    "mlp": (MLP, {"forward": [(4, 20)]}),
    "convnet": (ConvNet, {"forward": [(2, 3, 32, 32)]}),
    "residual": (ResidualBlock, {"forward": [(2, 8, 10, 10)]}),
    "two_methods": (TwoMethods, {"forward": [(3, 6)], "embed": [(3, 6), (3, 6)]}),
    "tuple_outputs": (TupleOutputs, {"forward": [(5, 8), (5, 8)]}),
    "norm_gelu": (NormGeluBlock, {"forward": [(2, 7, 16)]}),
    "attention": (Attention, {"forward": [(2, 6, 16)]}),
    "linear_algebra": (LinearAlgebra, {"forward": [(4, 3, 4)]}),
    "mobile_blocks": (MobileBlocks, {"forward": [(2, 4, 6, 6)]}),
    "recurrent_attention": (RecurrentAttention, {"forward": [(2, 5, 6)]}),
    "handwritten_norms": (HandwrittenNorms, {"forward": [(3, 4, 12)]}),
    "auxiliary_heads": (AuxiliaryHeads, {"forward": [(2, 8)], "pair": [(2, 8)]}),
    "token_ops": (TokenOps, {"forward": [(2, 6)]}),
    "upsampling": (Upsampling, {"forward": [(2, 3, 9, 11)]}),
    "selection": (Selection, {"forward": [(2, 5, 6)]}),
    "elementwise_math": (ElementwiseMath, {"forward": [(2, 3, 5)]}),
}

# Models whose code needs ranks or sizes only static input shapes give (t() of an input-derived
# value, x.size(0) used as a view dim): without shapes the export fails, and says so.
NEEDS_STATIC_SHAPES = {"attention", "tuple_outputs", "mobile_blocks", "recurrent_attention", "handwritten_norms",
                       "token_ops", "upsampling", "selection"}
