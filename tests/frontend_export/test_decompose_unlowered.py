"""Ops without a lowering of ours that torch decomposes into ops with one compile through that
decomposition on the torch.export front end (``repeat``, ``isinf``); an op whose decomposition
would leave ops we cannot compile (``atan2`` -> ``prims.atan2``) is kept, so the report names the
op the user wrote."""

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


class Decomposed(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.repeat(2, 1, 3) + torch.isinf(x / (x > 0).float()).float().repeat(2, 1, 3)


class Angle(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.atan2(x, x + 1) * 2


def test_ops_torch_decomposes_into_compiled_ones_compile(tmp_path: Path) -> None:
    path = tmp_path / "d.ptl"
    liteexport.export(Decomposed(), path, input_shapes=[(2, 3, 4)], frontend="export")
    x = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(0))
    expected = Decomposed()(x).numpy()
    np.testing.assert_array_equal(runtime_py.load(path).forward(x.numpy()), expected)
    (native,) = run_native(path, [x.numpy()])
    np.testing.assert_array_equal(native, expected)


def test_an_op_whose_decomposition_does_not_compile_is_reported_by_its_own_name(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedNodesError) as info:
        liteexport.export(Angle(), tmp_path / "f.ptl", input_shapes=[(2, 3)], frontend="export")
    text = str(info.value)
    assert "aten::atan2" in text and "prims" not in text
    assert "test_decompose_unlowered.py" in text  # the user's line
