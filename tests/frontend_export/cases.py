"""The models the torch.export front end is measured on, each with its input shapes and named
dims: examples/tiny_cnn.py, torchvision's resnet18 and mobilenet_v2, a transformer block over a
named dim S, and models returning a dict and a tuple. Shared by the parity test and report.py."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import torch

from tests.frontend_export import models

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[], torch.nn.Module]
    shapes: tuple[str, ...]  # CLI text, e.g. "1xS:int64"
    dims: dict[str, tuple[int, int]] = field(default_factory=dict)
    sizes: tuple[dict[str, int], ...] = ({},)  # the named dims' sizes the parity test runs at


def _tiny_cnn() -> torch.nn.Module:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from tiny_cnn import TinyCNN
    finally:
        sys.path.remove(str(ROOT / "examples"))
    return TinyCNN()


def _torchvision(name: str) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        try:
            from torchvision_shim import import_torchvision
        finally:
            sys.path.remove(str(ROOT / "benchmarks"))
        torch.manual_seed(0)
        return getattr(import_torchvision().models, name)()

    return build


CASES = (
    Case("tiny_cnn", _tiny_cnn, ("1x3x32x32",)),
    Case("resnet18", _torchvision("resnet18"), ("1x3x224x224",)),
    Case("mobilenet_v2", _torchvision("mobilenet_v2"), ("1x3x224x224",)),
    Case("transformer block (S)", models.Block, ("1xSx64",), {"S": (1, 64)}, ({"S": 1}, {"S": 7}, {"S": 64})),
    Case("dict output", models.Heads, ("2x8",)),
    Case("tuple output", models.Pair, ("2x8",)),
)


def inputs(case: Case, sizes: dict[str, int], seed: int = 0) -> tuple[torch.Tensor, ...]:
    """Float inputs of the case's shapes with the named dims at ``sizes``."""
    generator = torch.Generator().manual_seed(seed)
    return tuple(torch.randn([sizes[d] if not d.isdigit() else int(d) for d in shape.split("x")], generator=generator)
                 for shape in case.shapes)


def flat(result: object) -> list[torch.Tensor]:
    """A model's result (tensor, tuple, dict) as its tensors in order."""
    if isinstance(result, dict):
        return list(result.values())
    if isinstance(result, (tuple, list)):
        return list(result)
    assert isinstance(result, torch.Tensor)
    return [result]
