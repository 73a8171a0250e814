"""Shared helpers of the compiler tests."""

from __future__ import annotations

import torch
from torch import nn


def prepare(model: nn.Module, seed: int = 0) -> torch.jit.ScriptModule:
    """Seeded weights, non-trivial batch norm statistics, eval mode, scripted."""
    torch.manual_seed(seed)
    for module in model.modules():
        for p in module.parameters(recurse=False):
            with torch.no_grad():
                p.copy_(torch.randn_like(p) * 0.5)
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.uniform_(-0.5, 0.5)
            module.running_var.uniform_(0.5, 2.0)
    return torch.jit.script(model.eval())
