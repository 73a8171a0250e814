"""TinyCNN: a small real CNN to try liteexport on (input: 1x3x32x32 images, 10 classes).

    liteexport export examples/tiny_cnn.py:TinyCNN -o tiny.ptl
    liteexport run tiny.ptl --random 1x3x32x32

Weights and batch-norm statistics are seeded, so every export gives the same bundle, and
the running statistics are far from their defaults (mean 0, var 1) so that folding batch
norm into the preceding convolution actually changes numbers.
"""

from __future__ import annotations

import torch
from torch import nn

SEED = 0


class TinyCNN(nn.Module):
    """conv-bn-relu-pool, conv-bn-relu-global pool, dropout, linear."""

    def __init__(self) -> None:
        super().__init__()
        generator = torch.Generator().manual_seed(SEED)
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.dropout = nn.Dropout(0.2)
        self.classifier = nn.Linear(16, 10)
        with torch.no_grad():
            for param in self.parameters():  # deterministic, independent of the global RNG
                param.copy_(torch.randn(param.shape, generator=generator) * 0.3)
            for module in self.modules():
                if isinstance(module, nn.BatchNorm2d):
                    channels = module.num_features
                    module.running_mean.copy_(torch.randn(channels, generator=generator) * 0.5)
                    module.running_var.copy_(torch.rand(channels, generator=generator) * 1.5 + 0.25)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.features(x)
        x = torch.flatten(x, 1)
        return self.classifier(self.dropout(x))
