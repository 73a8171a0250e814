"""Models using the ops added for real models (torchvision's classification zoo): clamping
activations, reductions over dims, splitting, slicing, expanding, padding, factories."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


class Activations(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = F.relu6(x * 4.0) + F.hardtanh(x, -0.25, 0.5) + x.clamp(min=-0.1) + torch.clamp(x, max=0.2)
        y = y + F.hardswish(x * 5.0) + F.hardsigmoid(x * 5.0) + F.silu(x) + F.leaky_relu(x, 0.2)
        z = x.clone()
        z = F.relu6(z, inplace=True)  # in-place forms rebind the value
        return y + z + nn.functional.hardswish(x, inplace=False) + torch.clamp_min(x, 0.5) + x.clamp_max(0.5)


class Reductions(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        pooled = x.mean([2, 3], keepdim=True)  # squeeze-excitation
        return x * pooled, x.sum(1), torch.mean(x, dim=-1), x.sum() + x.mean()


class Slicing(nn.Module):
    """chunk, split, select, slice, narrow, unbind, stack, squeeze/unsqueeze, expand, roll, pad."""

    def __init__(self) -> None:
        super().__init__()
        self.token = nn.Parameter(torch.linspace(-1.0, 1.0, 6).reshape(1, 1, 6))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        a, b = x.chunk(2, dim=1)
        c, d, e = torch.split(x, [1, 2, 1], 1)
        f = torch.stack([a, b], 0).sum(0) + torch.cat([c, e], 1) - d
        g = x[:, 1:3, ::2, -3:] + x.narrow(1, 0, 2)[:, :, ::2, 3:]
        rows = torch.unbind(x, 2)
        h = rows[0] + rows[-1] + x.select(2, 1)  # n, c, w
        n = x.size(0)
        tokens = torch.cat([self.token.expand(n, -1, -1), h], 1)
        shifted = torch.roll(F.pad(f, [1, 2, 2, 0], value=0.5), shifts=[2, -1], dims=[2, 3])
        scaled = x[:, :1].expand(-1, 4, -1, -1) * x.flatten(2).unflatten(2, (5, -1)) + F.pad(g, [1, 2, 3, -1]).sum()
        return tokens.unsqueeze(1).squeeze(1) + torch.zeros(n, 5, 6) + torch.ones_like(tokens), shifted, scaled


class Sequences(nn.Module):
    """nn.LSTM (2 layers, bidirectional, batch first) and nn.GRU, unrolled at compile time."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(6, 5, num_layers=2, bidirectional=True, batch_first=True)
        self.gru = nn.GRU(10, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        y, (h, c) = self.lstm(x)
        z, hg = self.gru(y.transpose(0, 1))
        return z, h, c, hg


class Attention(nn.Module):
    """The fused inference kernels nn.TransformerEncoderLayer and nn.MultiheadAttention call,
    scaled dot product attention with a causal mask, einsum."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True, norm_first=True)
        self.mha = nn.MultiheadAttention(8, 4, batch_first=True)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        a, lay = self.mha, self.layer
        y = torch._transformer_encoder_layer_fwd(
            x, 8, 2, lay.self_attn.in_proj_weight, lay.self_attn.in_proj_bias, lay.self_attn.out_proj.weight,
            lay.self_attn.out_proj.bias, False, True, 1e-5, lay.norm1.weight, lay.norm1.bias, lay.norm2.weight,
            lay.norm2.bias, lay.linear1.weight, lay.linear1.bias, lay.linear2.weight, lay.linear2.bias)
        z, _ = torch._native_multi_head_attention(y, x, x, 8, 4, a.in_proj_weight, a.in_proj_bias,
                                                  a.out_proj.weight, a.out_proj.bias, None, False)
        q = z.view(2, 5, 2, 4).transpose(1, 2)
        causal = F.scaled_dot_product_attention(q, q, q, is_causal=True)
        scores = torch.einsum("bhid,bhjd->bhij", q, causal)
        flat = q.reshape(4, 5, 4)
        scores = scores + torch.baddbmm(torch.ones(1, 5, 5), flat, flat.transpose(1, 2), beta=0.5, alpha=2.0).view(
            2, 2, 5, 5) + torch.bmm(flat, flat.transpose(1, 2)).view(2, 2, 5, 5)
        return z, causal, scores
