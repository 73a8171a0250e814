"""Example models the compiler tests script and compile (kept in a real file so that
TorchScript records stable source locations)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 16)
        self.drop = nn.Dropout(0.5)
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.fc1(x))
        x = self.drop(torch.relu(self.fc2(x)))
        return self.head(x)


class TinyCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 8, 3, stride=1, padding=(1, 2), dilation=(1, 2), groups=2),
            nn.BatchNorm2d(8),
            nn.ReLU(inplace=True),
            nn.AvgPool2d(2, stride=1),
        )
        self.pool = nn.AdaptiveAvgPool2d((2, 2))
        self.classifier = nn.Linear(32, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(self.features(x))
        return self.classifier(torch.flatten(y, 1))


class ConvBN(nn.Module):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding="same", bias=False)
        self.bn = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.bn(self.conv(x))


class Residual(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = ConvBN(4)
        self.b = ConvBN(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.relu(self.a(x))
        out = self.b(out)
        out += x
        return F.relu(out)


class Encoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(6, 6)
        self.act = nn.Tanh()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.proj(x))


class TwoMethods(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()
        self.head = nn.Linear(6, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(x))

    @torch.jit.export
    def embed(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.encoder(x)) - y

    def helper(self, x: torch.Tensor) -> torch.Tensor:
        return x


class TupleOut(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        h = self.fc(x)
        return h, h * y, x


class LayerNormGelu(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.norm = nn.LayerNorm(16)
        self.gelu = nn.GELU()
        self.fc2 = nn.Linear(16, 8)
        self.norm2 = nn.LayerNorm([8], elementwise_affine=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.gelu(self.norm(self.fc1(x)))
        h = F.gelu(self.fc2(h), approximate="tanh")
        return self.norm2(h + x)


class LinearAlgebra(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(5, 4))
        self.b = nn.Parameter(torch.randn(5))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        a = torch.addmm(self.b, x, self.w.t())
        c = torch.mm(x, self.w.t()) + a
        d = torch.matmul(c.transpose(0, 1), y)
        e = d.permute(1, 0).t()
        return torch.matmul(e, e.t())


class CatReshape(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        z = torch.cat([x, y], dim=1)
        z = z.view(z.size(0), 2, -1).contiguous()
        z = z.reshape(-1, 3, 4)
        return torch.flatten(z, start_dim=1, end_dim=-1) * 0.5


class ScalarArith(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scale = 3.0

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        a = torch.add(x, y, alpha=2.0) - torch.sub(x, y, alpha=0.5)
        b = 1.0 - a
        c = torch.rsub(x, y, alpha=3)
        d = (a * self.scale + b / 2 - c) / (y * y + 1.0)
        n = x.size(1) * 2 - 1
        return -torch.tanh(d + n) + torch.sigmoid(2.0 * d) + 2 / (d * d + 1)


class Softmaxes(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.softmax(x, dim=-1), F.log_softmax(x, dim=1)


class DeadCode(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.unused = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        wasted = self.unused(x).erfinv()  # dead: neither compiled nor reported
        _ = torch.sigmoid(wasted)
        return self.fc(x)


class DynamicView(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(x.size(0), -1)


class WithHelpers(nn.Module):
    """timm's shape: forward calls a helper taking a bool; an exported method takes a float."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_head(self.fc(x))

    def forward_head(self, x: torch.Tensor, pre_logits: bool = False) -> torch.Tensor:
        return x if pre_logits else torch.relu(x)

    @torch.jit.export
    def scaled(self, x: torch.Tensor, scale: float) -> torch.Tensor:
        return self.fc(x) * scale
