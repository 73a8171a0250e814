"""Import torchvision's pure-Python models without its C++ ops.

The torchvision wheel on PyPI is a CUDA build whose C++ extension does not load next to
torch's CPU build; importing torchvision then fails on the first ``register_fake`` of an op
the extension would have defined. Defining those ops' schemas first (no kernels: the models
never call them) lets the models import (and transformers, which imports torchvision). Used by the
benchmarks, the tests and the README's examples; torchvision and torch must be installed.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

_LIBRARY: Any = None  # the torch.library.Library must stay alive for the ops to exist


def import_torchvision() -> ModuleType:
    global _LIBRARY
    import torch

    try:
        torch.ops.torchvision.nms  # noqa: B018  (defined already: by the extension, or by an earlier call)
    except (AttributeError, RuntimeError):
        _LIBRARY = torch.library.Library("torchvision", "DEF")
        _LIBRARY.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _LIBRARY.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    return importlib.import_module("torchvision")
