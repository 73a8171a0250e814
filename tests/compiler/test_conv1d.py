"""conv1d (issue 20: Whisper's audio stem) compiles as CONV2D over a height of 1 and matches torch:
stride, padding (numbers and 'same'), dilation, groups, with and without bias, scripted and traced."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bundle_format.program import OpCode
from liteexport.compiler import compile_module
from liteexport.parity import RTOL, scaled_atol
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.plan import build_plan


class Conv(torch.nn.Module):
    def __init__(self, **kwargs: object) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv1d(4, 6, **kwargs)  # type: ignore[arg-type]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


@pytest.mark.parametrize("kwargs", [{"kernel_size": 3}, {"kernel_size": 3, "stride": 2, "padding": 1},
                                    {"kernel_size": 5, "padding": "same", "dilation": 2},
                                    {"kernel_size": 1, "groups": 2, "bias": False}])
@pytest.mark.parametrize("traced", [False, True])
def test_conv1d_matches_torch(kwargs: dict[str, object], traced: bool) -> None:
    model = Conv(**kwargs).eval()
    x = np.random.default_rng(0).standard_normal((2, 4, 11)).astype(np.float32)
    module = torch.jit.trace(model, torch.from_numpy(x)) if traced else torch.jit.script(model)
    compiled = compile_module(module, input_shapes={"forward": [x.shape]})
    assert OpCode.CONV2D in {ins.op for ins in compiled.programs[0].instructions}
    (got,) = executor.run(build_plan(compiled.programs[0], compiled.weights), [x])
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=scaled_atol(expected))
