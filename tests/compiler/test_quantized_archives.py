"""Quantized models as users hand them over (issue 22): a TorchScript archive, scripted or traced,
saved by torch and exported from its path (`liteexport export model.pt`), not only from the
Python source. The loaded archive has no Python modules behind it: the compiler meets its
quantized ops (packed weights, scales, zero points) as the archive stores them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from benchmarks.models import torchvision_quantized
from liteexport.inspect_bundle import delegate_contents
from liteexport.quantized_parity import QUANTA, output_quantum, quanta_apart
from tests.compiler.models.quantized import small_quantized
from tests.compiler.test_quantized_models import (
    TORCHVISION,
    _engine,  # noqa: F401  (autouse: restores torch's quantized engine)
    import_torchvision,
)

pytestmark = pytest.mark.torch_oracle


def _archive(model: torch.nn.Module, how: str, shape: tuple[int, ...], path: Path) -> Path:
    example = torch.from_numpy(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
    with torch.no_grad():
        saved = torch.jit.script(model) if how == "scripted" else torch.jit.trace(model, example)
    saved.save(str(path))
    return path


def _quanta_from_torch(archive: Path, bundle: Path, shape: tuple[int, ...]) -> tuple[float, bool]:
    """Exports the archive by its path; (quanta between ours and the loaded archive's output on a
    fresh input, whether the top class agrees)."""
    liteexport.export(str(archive), bundle, input_shapes=[shape])
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        expected = torch.jit.load(str(archive))(torch.from_numpy(x)).numpy()
    got = np.asarray(runtime_py.load(bundle).forward(x))
    contents = delegate_contents(runtime_py.load(bundle).ptmf)
    assert contents is not None
    quantum = output_quantum(contents[0]["forward"], 0)
    assert quantum is not None, "the output is not a quantized value"
    return quanta_apart(got, expected, quantum), bool(got.argmax() == expected.argmax())


@pytest.mark.parametrize("engine", ["qnnpack", "fbgemm"])
@pytest.mark.parametrize("how", ["scripted", "traced"])
def test_small_quantized_archive_matches_torch_within_a_quantum(engine: str, how: str, tmp_path: Path) -> None:
    shape = (1, 3, 16, 16)
    archive = _archive(small_quantized(engine), how, shape, tmp_path / "small.pt")
    quanta, _ = _quanta_from_torch(archive, tmp_path / "small.ptl", shape)
    assert quanta <= 1 + 1e-3


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TORCHVISION))
def test_torchvision_quantized_archive_lowers_and_matches(name: str, tmp_path: Path) -> None:
    size = TORCHVISION[name]
    shape = (1, 3, size, size)
    model = torchvision_quantized(import_torchvision(), name, size)
    # traced: the graph furthest from the Python source test's (test_quantized_models.py), which scripts
    archive = _archive(model, "traced", shape, tmp_path / f"{name}.pt")
    quanta, same_top1 = _quanta_from_torch(archive, tmp_path / f"{name}.ptl", shape)
    assert quanta <= QUANTA + 1e-3
    assert same_top1
