"""A small CNN with a residual join, for --quantize int8 (tests/liteexport/test_static_int8.py)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


class ResidualNet(torch.nn.Module):
    """conv-bn-relu, max pool, conv-relu6, conv, a residual add-relu, global pool, linear."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.c1 = torch.nn.Conv2d(3, 16, 3, padding=1)
        self.b1 = torch.nn.BatchNorm2d(16)
        self.c2 = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.c3 = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(torch.relu(self.b1(self.c1(x))), 2)
        y = self.c3(F.relu6(self.c2(x)))
        x = torch.relu(x + y)
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))
