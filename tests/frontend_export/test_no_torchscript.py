"""The torch.export front end uses no TorchScript: with torch.jit.script, trace and freeze and
torch._C._jit_to_backend made to raise, a model exports, and its bundle runs in runtime_py and in
torch's lite interpreter through liteexport's backend, and passes ``liteexport verify``."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport
import runtime_py
from liteexport.torch_backend import load_torch_backend
from liteexport.verify import verify_bundle

ROOT = Path(__file__).resolve().parents[2]


def _refuse(name: str) -> Any:
    def refused(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"{name} was called on the torch.export path")

    return refused


@pytest.fixture
def no_torchscript(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    load_torch_backend()  # built (or loaded) before the patch: loading it is no export step
    for owner, name in ((torch.jit, "script"), (torch.jit, "trace"), (torch.jit, "freeze"),
                        (torch._C, "_jit_to_backend")):
        monkeypatch.setattr(owner, name, _refuse(f"{owner.__name__}.{name}"))
    yield


@pytest.mark.parametrize("frontend", ["export", None])  # None: the default for a Python model
def test_a_python_model_exports_and_runs_without_torchscript(frontend: str | None, no_torchscript: None,
                                                             tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        from tiny_cnn import TinyCNN
    finally:
        sys.path.remove(str(ROOT / "examples"))
    model = TinyCNN().eval()
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(3))
    path = tmp_path / "tiny.ptl"
    exported = liteexport.export(model, path, example_inputs=[(x,)], frontend=frontend)
    assert not any("TorchScript" in note for note in exported.notes), exported.notes
    with pytest.raises(AssertionError, match="on the torch.export path"):
        torch.jit.script(model)  # the patch is on
    with torch.no_grad():
        expected = model(x).numpy()
    ours = runtime_py.load(path).forward(x.numpy())
    np.testing.assert_allclose(ours, expected, atol=1e-5, rtol=1e-5)
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    np.testing.assert_allclose(lite.forward(x).numpy(), expected, atol=1e-5, rtol=1e-5)
    report = verify_bundle(path, engines=("runtime_py", "torch"))
    assert report.checks and all(check.passed for check in report.checks)
    assert {check.engine for check in report.checks} == {"runtime_py", "torch"}


def test_a_pt2_file_exports_without_torchscript(no_torchscript: None, tmp_path: Path) -> None:
    from tests.frontend_export.models import Heads

    model = Heads().eval()
    x = torch.randn(3, 8, generator=torch.Generator().manual_seed(4))
    torch.export.save(torch.export.export(model, (x,)), tmp_path / "heads.pt2")
    liteexport.export(str(tmp_path / "heads.pt2"), tmp_path / "heads.ptl", example_inputs=[(x,)])
    with torch.no_grad():
        expected = model(x)
    ours = runtime_py.load(tmp_path / "heads.ptl").forward(x.numpy())
    assert list(ours) == ["logits", "score"]
    for key in expected:
        np.testing.assert_allclose(ours[key], expected[key].numpy(), atol=1e-6, rtol=1e-5)
    lite = torch.jit.mobile._load_for_lite_interpreter(str(tmp_path / "heads.ptl"))
    got = lite.forward(x)
    assert list(got) == ["logits", "score"]
    np.testing.assert_allclose(got["score"].numpy(), expected["score"].numpy(), atol=1e-6, rtol=1e-5)
    assert all(check.passed for check in verify_bundle(tmp_path / "heads.ptl", engines=("runtime_py", "torch")).checks)
