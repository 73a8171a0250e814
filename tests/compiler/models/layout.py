"""Source laid out awkwardly on purpose: multi-line expressions and blank lines, to check
that source ranges are formatted exactly as TorchScript formats them."""

from __future__ import annotations

import torch
from torch import nn


class Layout(nn.Module):
    def forward(self, x: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
        y = x + 1

        z = torch.sigmoid(
            x) * (h
                  + 2)


        return torch.tanh(y) * z


def free_function(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x
                      )
