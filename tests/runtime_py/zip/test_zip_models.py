"""Zip models written by torch: state, tensors in place, older bytecode versions, debug info."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import runtime_py
from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_file
from runtime_py.errors import ExecutionError
from tests.conformance.lite_oracle import assert_same, run_both, save

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Lite Interpreter is deprecated")
pytestmark = pytest.mark.torch_oracle

from tests.fuzz.make_seeds import Holder  # noqa: E402  (a class with __setstate__; needs torch)


class Stateful(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.holder = Holder(3)
        self.idx = torch.tensor([1, 2], dtype=torch.int64)
        self.mask = torch.tensor([True, False])
        self.half = torch.arange(4, dtype=torch.float64).reshape(2, 2)[:, 1]  # a strided view
        self.table: dict[str, int] = {"a": 1}

    def forward(self) -> tuple[int, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
        return self.holder.v, self.holder.t, self.idx, self.mask, self.half, self.table["a"]


def test_state_of_every_kind_loads(tmp_path: Path) -> None:
    for fmt in ("zip", "flatbuffer"):
        path = save(torch.jit.script(Stateful()), tmp_path, "stateful", fmt)
        ours, theirs = run_both(path, ())
        assert ours[0] == 103  # rebuilt by the class's own __setstate__
        assert_same(ours, theirs)


def test_weights_are_views_of_the_file(tmp_path: Path) -> None:
    path = save(torch.jit.script(torch.nn.Linear(64, 32)), tmp_path, "linear", "zip")
    module = read_bundle_file(path)
    assert module.bytecode_version == 8
    assert all(not s.flags.owndata and not s.flags.writeable for s in module.storage_data)
    weight = [v for v in module.ivalues if isinstance(v, ptmf.TensorMetadata) and v.sizes == (32, 64)]
    assert len(weight) == 1


@pytest.mark.parametrize("version", [5, 6, 7])
def test_backported_bytecode_versions_run(tmp_path: Path, version: int) -> None:
    import torch.jit.mobile

    path = save(torch.jit.script(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())), tmp_path, "m", "zip")
    old = tmp_path / f"m_v{version}.ptl"
    assert torch.jit.mobile._backport_for_mobile(str(path), str(old), version)
    assert read_bundle_file(old).bytecode_version == version
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    ours, theirs = run_both(old, (x,))
    assert_same(ours, theirs)


class Sub(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * 2


class Failing(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.sub = Sub()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.sub(x)
        return torch.matmul(y, x)


def test_runtime_errors_are_mapped_to_source(tmp_path: Path) -> None:
    path = save(torch.jit.script(Failing().eval()), tmp_path, "failing", "zip", _save_mobile_debug_info=True)
    module = runtime_py.load(path)
    assert module.debug_table is not None
    with pytest.raises(ExecutionError) as info:
        module.forward(np.ones((2, 5), dtype=np.float32))  # the Linear inside Sub fails
    message = str(info.value)
    assert "Module hierarchy:top(Failing)::<unknown>.sub(Sub)::forward.lin(Linear)::forward.aten::linear" in message
    assert "y = self.sub(x)" in message and "return self.lin(x) * 2" in message
    assert "F.linear(input, self.weight, self.bias)" in message
    with pytest.raises(ExecutionError) as info:
        module.forward(np.ones((2, 4), dtype=np.float32))  # the matmul in forward fails
    message = str(info.value)
    assert "Module hierarchy:top(Failing)::<unknown>.aten::matmul" in message
    assert "return torch.matmul(y, x)\n" in message and "<--- HERE" in message
    assert f'File "{Path(__file__)}", line' in message
