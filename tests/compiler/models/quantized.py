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


class DepthwiseBlock(nn.Module):
    """A mobilenet-style block quantized for fbgemm (issue 31): an RGB conv, a 3x3 and a strided
    5x5 depthwise conv (two outputs per channel), a 1x1 conv, a residual add and a linear head.
    The stem and depthwise filters are positive (smoothing, as trained ones often are), so on
    images in [0, 1) the depthwise inputs sit high on their grid, and neighbouring taps overflow
    fbgemm's int16 pairs of products, which torch's result keeps."""

    def __init__(self) -> None:
        super().__init__()
        self.quant = tq.QuantStub()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.stem_relu = nn.ReLU()
        self.depthwise = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.depthwise_relu = nn.ReLU()
        self.wide = nn.Conv2d(16, 32, 5, stride=2, padding=2, groups=16)  # two outputs per channel
        self.project = nn.Conv2d(32, 16, 1)
        self.skip = nn.Conv2d(16, 16, 1, stride=2)
        self.add = nnq.FloatFunctional()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(16, 10)
        self.dequant = tq.DeQuantStub()
        with torch.no_grad():
            self.stem.weight.uniform_(0.0, 0.2)
            for conv in (self.depthwise, self.wide):
                conv.weight.uniform_(0.3, 1.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.stem_relu(self.stem(self.quant(x)))
        z = self.project(self.wide(self.depthwise_relu(self.depthwise(y))))
        joined = self.add.add_relu(z, self.skip(y))
        return self.dequant(self.fc(torch.flatten(self.pool(joined), 1)))


def depthwise_fbgemm() -> nn.Module:
    """DepthwiseBlock calibrated on seeded random images in [0, 1) and converted for fbgemm with
    per-channel weights (as torchvision's quantize_model) and activations observed on all 8 bits
    (torch's default_observer keeps them to 0..127, so that only inputs beyond the calibrated range
    overflow the pairs)."""
    torch.manual_seed(0)
    torch.backends.quantized.engine = "fbgemm"
    model = DepthwiseBlock().eval()
    model.qconfig = tq.QConfig(activation=tq.MinMaxObserver.with_args(dtype=torch.quint8),
                             weight=tq.default_per_channel_weight_observer)
    model = tq.fuse_modules(model, [["stem", "stem_relu"], ["depthwise", "depthwise_relu"]])
    tq.prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            model(torch.rand(2, 3, 24, 24))
    tq.convert(model, inplace=True)
    return model
