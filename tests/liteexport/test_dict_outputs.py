"""Dict outputs (issue 20): a method returning a dict of tensors keyed by strings, as torchvision's
segmentation models return {"out": ..., "aux": ...}, compiles whole; the wrapper rebuilds the dict
from the program's outputs, in the dict's order, and runtime_py (its fast path and its interpreter)
and torch's lite interpreter return it."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport
import liteexport.torch_backend as tb
import runtime_py
from bundle_format.lowered_bytecode import DICT_RESULT_TYPE
from liteexport.errors import UnsupportedNodesError
from liteexport.parity import RTOL, scaled_atol
from tests.text_models.typed import native_tool_available, run_native

pytestmark = pytest.mark.torch_oracle


class TwoHeads(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.body = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.head = torch.nn.Conv2d(8, 4, 1)
        self.aux = torch.nn.Conv2d(8, 2, 1)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        features = torch.relu(self.body(x))
        result = OrderedDict()
        result["out"] = self.head(features)
        result["aux"] = self.aux(features)
        return result


class WithNone(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor | None]:
        return {"out": x * 2, "aux": None}


def test_a_dict_of_tensors_comes_back_as_a_dict_in_every_engine(tmp_path: Path) -> None:
    path = tmp_path / "heads.ptl"
    liteexport.export(TwoHeads(), path, input_shapes=[(1, 3, 8, 8)])
    x = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = TwoHeads()(x)
    module = runtime_py.load(path)
    assert module.method_schema("forward").returns[0].type == DICT_RESULT_TYPE
    got = module.forward(x.numpy())
    assert list(got) == ["out", "aux"]
    for key in got:
        np.testing.assert_allclose(got[key], expected[key].numpy(), rtol=RTOL, atol=scaled_atol(expected[key].numpy()))
    assert list(module._loaded.lowered_calls)  # the wrapper is recognized: the fast path ran it
    tb.load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))(x)
    assert list(lite) == ["out", "aux"]
    for key in lite:
        np.testing.assert_allclose(lite[key].numpy(), got[key], rtol=RTOL, atol=scaled_atol(got[key]))


def test_a_dict_entry_that_is_not_a_tensor_is_reported(tmp_path: Path) -> None:
    with pytest.raises(UnsupportedNodesError, match="entry 'aux' is None: a method must return"):
        liteexport.export(WithNone(), tmp_path / "x.ptl", input_shapes=[(2, 2)])


@pytest.mark.android
@pytest.mark.skipif(not native_tool_available(), reason="needs cmake and g++ to build the native core")
def test_the_native_core_returns_the_dicts_values_in_order(tmp_path: Path) -> None:
    path = tmp_path / "heads.ptl"
    liteexport.export(TwoHeads(), path, input_shapes=[(1, 3, 8, 8)])
    x = np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32)
    ours = runtime_py.load(path).forward(x)
    native = run_native(path, [x])
    assert len(native) == 2
    for got, key in zip(native, ("out", "aux"), strict=True):
        np.testing.assert_allclose(got, ours[key], rtol=RTOL, atol=scaled_atol(ours[key]))
