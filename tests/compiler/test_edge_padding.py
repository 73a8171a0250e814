"""Reflect and replicate padding (issue 33: ``F.pad(x, ..., mode="reflect")`` in vision and audio
models, torch's ``reflection_pad2d`` / ``replication_pad2d`` in Core ATen): compiled as slices of
the edge concatenated around the tensor, on both front ends, equal to torch on runtime_py and the
native core. A pad as wide as the dim is refused, as torch refuses it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from liteexport.errors import UnsupportedNodesError
from tests.text_models.typed import run_native

pytestmark = pytest.mark.torch_oracle


class Padded(torch.nn.Module):
    def __init__(self, pad: tuple[int, ...], mode: str) -> None:
        super().__init__()
        self.pad, self.mode = pad, mode

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.pad(x, self.pad, mode=self.mode) * 2


CASES = [((2, 1), "reflect", (1, 3, 6)), ((1, 2, 3, 0), "reflect", (1, 2, 5, 6)), ((3, 1), "replicate", (2, 3, 4)),
         ((0, 2, 1, 1), "replicate", (1, 2, 3, 4)), ((1, 1, 1, 1, 1, 1), "replicate", (1, 1, 2, 3, 4))]


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize(("pad", "mode", "shape"), CASES)
def test_edge_padding_matches_torch(frontend: str, pad: tuple[int, ...], mode: str, shape: tuple[int, ...],
                                    tmp_path: Path) -> None:
    model, path = Padded(pad, mode), tmp_path / "pad.ptl"
    liteexport.export(model, path, input_shapes=[shape], frontend=frontend)
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(len(pad)))
    expected = model(x).numpy()
    np.testing.assert_array_equal(runtime_py.load(path).forward(x.numpy()), expected)
    (native,) = run_native(path, [x.numpy()])
    np.testing.assert_array_equal(native, expected)


def test_a_reflect_pad_as_wide_as_the_dim_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedNodesError, match=r"reflect padding 3 must be less than the dim's size 3"):
        liteexport.export(Padded((3, 0), "reflect"), tmp_path / "pad.ptl", input_shapes=[(1, 2, 3)],
                          frontend="torchscript")
