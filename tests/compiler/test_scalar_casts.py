"""aten::to of a number (issue 20): a traced model that casts a size computed from the input's shape
(transformers' torch_int(torch.ceil(h / p) * p), MobileViT's unfolding) holds the size as its number
at compile time, so the cast folds with Python's conversion, as torch's Tensor.to converts a 0-d
tensor: toward zero to an integer type, nonzero to True."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from liteexport.compiler import compile_module
from liteexport.compiler.scalars import SCALAR_FOLDS
from liteexport.compiler.symbolic import SymSize
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.plan import build_plan


class PadToMultiple(torch.nn.Module):
    """Resizes the last dim up to a multiple of 4 and splits it in patches of 4, the sizes cast as
    transformers' torch_int does (MobileViT's unfolding)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        width = x.shape[-1]
        padded = (torch.ceil(width / 4) * 4).to(torch.int64) if torch.jit.is_tracing() else width
        resized = F.interpolate(x, size=(x.shape[2], padded), mode="nearest")
        return resized.reshape(x.shape[0], x.shape[1], x.shape[2], padded // 4, 4) * 2


@pytest.mark.parametrize("width", [5, 8])
def test_a_traced_size_cast_folds_and_the_model_matches_eager(width: int) -> None:
    x = torch.randn(1, 2, 3, width, generator=torch.Generator().manual_seed(width))
    traced = torch.jit.trace(PadToMultiple(), (x,), check_trace=False)
    assert "aten::to" in {n.kind() for n in traced.inlined_graph.nodes()}
    compiled = compile_module(traced, input_shapes={"forward": [tuple(x.shape)]})
    (got,) = executor.run(build_plan(compiled.programs[0], compiled.weights), [x.numpy()])
    expected = traced(x).numpy()
    assert got.shape == expected.shape == (1, 2, 3, 2, 4)
    np.testing.assert_array_equal(got, expected)


def test_the_fold_converts_as_torch_does() -> None:
    to = SCALAR_FOLDS["aten::to"]
    cases = [(to(7.9, 4, False, False, None), 7), (to(-2.5, 3, False, False, None), -2), (to(3, 6), 3.0),
             (to(0.0, 11), False), (to(2, "cpu", 7, False, False), 2.0), (to(12.0, "cpu", None, False), 12.0)]
    for got, expected in cases:
        assert (got, type(got)) == (expected, type(expected))
    size = SymSize("S", 2, 1)  # a size known only at run time stays one through an integer cast
    assert to(size, 4, False, False, None) is size
    with pytest.raises(TypeError, match="known only at run time"):
        to(size, 6)
