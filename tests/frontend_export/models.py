"""Small real models for the torch.export front end's tests: a transformer block over a named
sequence dim, and models returning a dict and a tuple. Weights are seeded."""

from __future__ import annotations

import torch
from torch import nn


class Block(nn.Module):
    """A pre-norm transformer block over (1, S, 64): attention (4 heads) then a GELU MLP."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.ln1 = nn.LayerNorm(64)
        self.ln2 = nn.LayerNorm(64)
        self.qkv = nn.Linear(64, 192)
        self.proj = nn.Linear(64, 64)
        self.mlp = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, s, _ = x.shape
        q, k, v = (t.view(b, s, 4, 16).transpose(1, 2) for t in self.qkv(self.ln1(x)).split(64, dim=-1))
        attended = torch.nn.functional.scaled_dot_product_attention(q, k, v)
        x = x + self.proj(attended.transpose(1, 2).reshape(b, s, 64))
        return x + self.mlp(self.ln2(x))


class Heads(nn.Module):
    """Two heads over one body, returned as a dict."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.body = nn.Linear(8, 16)
        self.a = nn.Linear(16, 4)
        self.b = nn.Linear(16, 2)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        h = torch.relu(self.body(x))
        return {"logits": self.a(h), "score": torch.sigmoid(self.b(h))}


class Pair(nn.Module):
    """Probabilities and the top value, returned as a tuple."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(2)
        self.linear = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = self.linear(x)
        return y.softmax(-1), y.max(-1).values


class DataBranch(nn.Module):
    """A branch on a tensor's values: torch.export refuses it (data-dependent)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x


class Unsupported(nn.Module):
    """Two ops the compiler has no lowering for, on two lines."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.special.erfcx(x)
        return torch.special.i0(y) + 1


class FixedLength(nn.Module):
    """Works for one sequence length only: a dynamic S contradicts its view."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.view(1, 8, 8)
