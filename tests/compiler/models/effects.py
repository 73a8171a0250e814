"""Models with side effects (list and dict writes, attribute writes, in-place updates)
and compile-time control flow, for tests/compiler/test_effects.py."""

from __future__ import annotations

import torch
from torch import nn


class DenseBlock(nn.Module):
    """densenet's pattern: a list grown with append, each layer reading the cat of it."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Conv2d(3 + 2 * i, 2, 1) for i in range(3)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = [x]
        for layer in self.layers:
            features.append(torch.relu(layer(torch.cat(features, 1))))
        return torch.cat(features, 1)


class ListEdits(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        parts = [x * 2.0]
        parts.insert(0, x + 1.0)
        parts.extend([x - 3.0, x * x])
        parts[1] = parts[1] + 0.5
        last = parts.pop()
        named = {"a": x * 3.0}
        named["b"] = last
        for i in range(len(parts)):
            parts[i] = parts[i] * float(i + 1)
        return torch.cat(parts, 1), named["a"] + named["b"] * float(len(named))


class AttributeWrite(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return x * 2.0


class InPlaceOnView(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 1.0
        flat = y.view(-1)
        flat.relu_()
        return y


class InPlaceOnInput(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.mul_(2.0)
        return x + 1.0


class InPlaceOnBuffer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.total.add_(1.0)
        return x * 2.0


class InPlaceInList(nn.Module):
    """An in-place update after the tensor went into a list: the list sees it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2.0
        kept = [y, x + 1.0]
        y.add_(10.0)
        return torch.cat(kept, 1)


class DeadAppend(nn.Module):
    """An unsupported op appended to a list that is never read: dead, not reported."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        unused = [x]
        unused.append(torch.erfinv(x))
        return x * 2.0


class UnsupportedAppended(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parts = [x]
        parts.append(torch.erfinv(x))
        return torch.cat(parts, 1)


class DataDependentIf(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if bool(x * 2.0):
            return x * 2.0
        return x


class InPlaceOnComputedConstant(nn.Module):
    """swin_v2's pattern: an in-place ReLU on a tensor computed from weights alone."""

    def __init__(self) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.randn(3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bias = self.table * 2.0 - 0.5
        bias.relu_()
        return x + bias


class MaskBuiltInPlace(nn.Module):
    """swin's attention mask: a constant built by slice assignment (in-place writes through views)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = x.new_zeros((4, 4))
        count = 0
        for h in ((0, 2), (2, 4)):
            for w in ((0, 1), (1, 4)):
                mask[h[0]:h[1], w[0]:w[1]] = count
                count += 1
        return x + mask


class CachedAttentionBias(nn.Module):
    """timm's efficientvit_m0/levit attention: the bias table gathered once per device into a
    dict attribute, written in a branch (a memo), then read back in the same call."""

    def __init__(self, tokens: int = 4, heads: int = 2) -> None:
        super().__init__()
        self.heads = heads
        self.attention_biases = nn.Parameter(torch.randn(heads, tokens))
        offsets = torch.arange(tokens)
        self.register_buffer("attention_bias_idxs", (offsets[:, None] - offsets[None, :]).abs(), persistent=False)
        self.attention_bias_cache = torch.jit.Attribute({}, dict[str, torch.Tensor])

    def get_attention_biases(self, device: torch.device) -> torch.Tensor:
        if torch.jit.is_tracing() or self.training:
            return self.attention_biases[:, self.attention_bias_idxs]
        else:
            device_key = str(device)
            if device_key not in self.attention_bias_cache:
                self.attention_bias_cache[device_key] = self.attention_biases[:, self.attention_bias_idxs]
            return self.attention_bias_cache[device_key]

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x: (batch, heads, tokens, dim)
        scores = torch.matmul(x, x.transpose(-2, -1)) + self.get_attention_biases(x.device)
        return torch.matmul(scores.softmax(dim=-1), x)


class RunTimeValueCached(nn.Module):
    """A dict attribute written with a value computed from the input: state kept across calls."""

    def __init__(self) -> None:
        super().__init__()
        self.last = torch.jit.Attribute({}, dict[str, torch.Tensor])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        self.last["x"] = x * 2.0
        return x + 1.0
