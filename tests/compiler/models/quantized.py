"""Small quantized models (torch.ao eager mode), as PyTorch Mobile users quantize theirs: every
quantized op liteexport compiles (conv with and without relu, grouped and strided, add_relu,
mul, cat, hardswish, linear) and the ATen ops torch runs on quantized tensors (max and average
pooling, hardsigmoid, flatten), quantized for qnnpack (per-tensor weights) or fbgemm
(per-channel weights)."""

from __future__ import annotations

import torch
import torch.ao.nn.quantized as nnq
import torch.ao.quantization as tq
from torch import nn


class SmallQuantized(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(3, 2, 1)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, groups=2)
        self.conv3 = nn.Conv2d(8, 8, 1, stride=2)
        self.add = nnq.FloatFunctional()
        self.mul = nnq.FloatFunctional()
        self.cat = nnq.FloatFunctional()
        self.hardswish = nn.Hardswish()
        self.gate = nn.Hardsigmoid()
        self.avg = nn.AvgPool2d(2)
        self.global_pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 5)
        self.dequant = tq.DeQuantStub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.pool(self.relu(self.conv(self.quant(x))))
        z = self.add.add_relu(self.conv2(y), y)
        gated = self.mul.mul(self.hardswish(z), self.gate(z))
        w = self.cat.cat([self.conv3(gated), self.avg(gated)], 1)
        return self.dequant(self.fc(torch.flatten(self.global_pool(w), 1)))


def small_quantized(engine: str = "qnnpack") -> nn.Module:
    """SmallQuantized, calibrated on seeded random images and converted for ``engine``."""
    torch.manual_seed(0)
    torch.backends.quantized.engine = engine
    model = SmallQuantized().eval()
    model.qconfig = tq.get_default_qconfig(engine)
    model = tq.fuse_modules(model, [["conv", "relu"]])
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(2, 3, 16, 16))
    tq.convert(model, inplace=True)
    return model
