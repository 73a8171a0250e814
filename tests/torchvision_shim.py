"""torchvision's pure-Python models, importable with torch's CPU wheel.

The torchvision wheel here is a CUDA build whose C++ ops library does not load with the
CPU torch; importing torchvision then fails registering fake kernels for
``torchvision::nms`` and ``torchvision::qnms``, whose schemas came from that library.
Defining the two schemas ourselves first is enough for every model in
``torchvision.models`` (none calls them: only detection post-processing does).
"""

from __future__ import annotations

from types import ModuleType

import torch

_LIBRARY: torch.library.Library | None = None


def import_torchvision() -> ModuleType:
    """``torchvision``, imported once the two schemas it expects are defined."""
    global _LIBRARY
    if _LIBRARY is None and "torchvision::nms" not in torch._C._dispatch_get_all_op_names():
        _LIBRARY = torch.library.Library("torchvision", "DEF")
        _LIBRARY.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
        _LIBRARY.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    import torchvision

    return torchvision
