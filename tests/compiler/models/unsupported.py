"""A model with unsupported nodes in two methods (the golden-file test)."""

from __future__ import annotations

import torch
from torch import nn


class Unsupported(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dead = torch.atan(x)  # noqa: F841 (dead code: not reported)
        return torch.erfinv(x) + 1

    @torch.jit.export
    def other(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        return y.to(torch.float64)
