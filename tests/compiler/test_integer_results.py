"""Wrong answers the OpInfo run found, now refused or fixed (issue 33: "none of the samples that
exported gave a wrong answer; keep it that way"): pow of integers, which torch computes in the
integers, is refused rather than answered in float32 (relu, sign and the rounding ops of integers
now compute in the integers: tests/compiler/test_model_ops.py); index_select of a 0-d tensor is
0-d, as torch's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from liteexport.errors import UnsupportedNodesError

pytestmark = pytest.mark.torch_oracle


class Power(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.pow(x, x)


class Exp(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x)


class Select(torch.nn.Module):
    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, 0, index) * 2


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize(("model", "words"), [
    (Power, "pow of int64 tensors is not compiled (it computes in float32)"),
])
def test_integer_ops_torch_keeps_in_the_integers_are_refused(model: type[torch.nn.Module], words: str, frontend: str,
                                                             tmp_path: Path) -> None:
    with pytest.raises(UnsupportedNodesError, match=words.replace("(", r"\(").replace(")", r"\)")):
        liteexport.export(model(), tmp_path / "m.ptl", input_shapes=["2x3:int64"], frontend=frontend)
    assert not (tmp_path / "m.ptl").exists()


def test_a_float_function_of_integers_still_computes_in_float32(tmp_path: Path) -> None:
    liteexport.export(Exp(), tmp_path / "e.ptl", input_shapes=["2x3:int64"])
    x = torch.arange(6).reshape(2, 3)
    np.testing.assert_allclose(runtime_py.load(tmp_path / "e.ptl").forward(x.numpy()), torch.exp(x).numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
def test_index_select_of_a_0d_tensor_is_0d(frontend: str, tmp_path: Path) -> None:
    x, index = torch.tensor(2.5), torch.tensor([0])
    liteexport.export(Select(), tmp_path / "s.ptl", example_inputs=[(x, index)], frontend=frontend)
    got = runtime_py.load(tmp_path / "s.ptl").forward(x.numpy(), index.numpy())
    assert np.asarray(got).shape == () and float(got) == 5.0
