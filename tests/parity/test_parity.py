"""End to end: export -> bundle on disk -> runtime_py, compared with torch eager on the same inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import runtime_py
from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.errors import UnsupportedNodesError
from tests.parity.outputs import assert_same_outputs
from tests.parity.parity_models import CASES, NEEDS_STATIC_SHAPES

pytestmark = pytest.mark.torch_oracle

def _export(name: str, tmp_path: Path, static: bool) -> tuple[torch.nn.Module, runtime_py.Module]:
    factory, shapes = CASES[name]
    eager = factory().eval()
    compiled = compile_module(torch.jit.script(eager), input_shapes=shapes if static else None)
    path = tmp_path / f"{name}.ptl"
    write_bundle(compiled, path)
    return eager, runtime_py.load(path)


def _variants() -> list[tuple[str, bool]]:
    return [(name, static) for name in sorted(CASES) for static in (False, True)
            if static or name not in NEEDS_STATIC_SHAPES]


@pytest.mark.parametrize("name, static", _variants())
def test_runtime_matches_eager(name: str, static: bool, tmp_path: Path) -> None:
    eager, bundle = _export(name, tmp_path, static)
    _, shapes = CASES[name]
    assert set(bundle.method_names) == set(shapes)
    for method, input_shapes in shapes.items():
        for seed in range(3):
            gen = torch.Generator().manual_seed(seed)
            inputs = [torch.randn(s, generator=gen) * (1 + seed) for s in input_shapes]
            with torch.no_grad():
                expected = getattr(eager, method)(*inputs)
            assert_same_outputs(bundle.run_method(method, *[t.numpy() for t in inputs]), expected)


@pytest.mark.parametrize("name", sorted(NEEDS_STATIC_SHAPES))
def test_without_shapes_the_export_asks_for_them(name: str, tmp_path: Path) -> None:
    with pytest.raises(UnsupportedNodesError, match="input shapes"):
        _export(name, tmp_path, static=False)
    assert not (tmp_path / f"{name}.ptl").exists()


def test_dynamic_batch_runs_other_batch_sizes(tmp_path: Path) -> None:
    eager, bundle = _export("convnet", tmp_path, static=False)
    for batch in (1, 5):
        x = torch.randn(batch, 3, 32, 32)
        with torch.no_grad():
            expected = eager(x).numpy()
        np.testing.assert_allclose(bundle.forward(x.numpy()), expected, atol=1e-5, rtol=1e-4)
