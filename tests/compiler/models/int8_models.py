"""torchvision's resnet18 and mobilenet_v2 exported float and --quantize int8, for
tests/compiler/test_static_int8_models.py and int8_report.py (the figures of issue 22)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import torch

from liteexport import pipeline

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))  # the repository, for the shared shim
from benchmarks.models import with_batch_norm_statistics  # noqa: E402
from benchmarks.torchvision_shim import import_torchvision  # noqa: E402

SHAPE = (1, 3, 224, 224)


def float_model(name: str) -> torch.nn.Module:
    """torchvision's ``name`` with random weights (seed 0), its batch-norm statistics from random images."""
    torch.manual_seed(0)
    return with_batch_norm_statistics(getattr(import_torchvision().models, name)(weights=None), SHAPE[-1])


def calibration(count: int = 4) -> tuple[tuple[np.ndarray, ...], ...]:
    """``count`` standard normal images (seed 0)."""
    rng = np.random.default_rng(0)
    return tuple((rng.standard_normal(SHAPE).astype(np.float32),) for _ in range(count))


def export_both(model: torch.nn.Module, folder: Path) -> tuple[pipeline.Result, pipeline.Result, float, float]:
    """(the float bundle, the int8 bundle, their export times in seconds) of ``model``, both
    self-checked (the int8 one against the float model on the calibration and held-out inputs)."""
    shapes = {"forward": (SHAPE,)}
    start = time.perf_counter()
    plain = pipeline.export(model, folder / "float.ptl", pipeline.Request(input_shapes=shapes))
    middle = time.perf_counter()
    int8 = pipeline.export(model, folder / "int8.ptl", pipeline.Request(
        input_shapes=shapes, quantize="int8", calibration={"forward": calibration()}))
    return plain, int8, middle - start, time.perf_counter() - middle
