"""group_norm (issue 20: mobilevitv2) compiles to existing instructions: RESHAPE to [N, G, rest],
LAYER_NORM over the last dim, RESHAPE back, CHANNEL_AFFINE; it matches torch with and without an
affine, and with a batch size known only at run time."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bundle_format.program import OpCode
from liteexport.compiler import compile_module
from liteexport.errors import UnsupportedNodesError
from liteexport.parity import RTOL, scaled_atol
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.plan import build_plan


class Norm(torch.nn.Module):
    def __init__(self, groups: int, channels: int, affine: bool) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.norm = torch.nn.GroupNorm(groups, channels, affine=affine)
        if affine:
            with torch.no_grad():
                self.norm.weight.uniform_(0.5, 2)
                self.norm.bias.uniform_(-1, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x)


@pytest.mark.parametrize(("groups", "affine", "batch"), [(1, True, 2), (3, True, 1), (6, False, 3), (2, True, -1)])
def test_group_norm_matches_torch(groups: int, affine: bool, batch: int) -> None:
    model = Norm(groups, 6, affine).eval()
    compiled = compile_module(torch.jit.script(model), input_shapes={"forward": [(batch, 6, 5, 4)]})
    assert OpCode.LAYER_NORM in {ins.op for ins in compiled.programs[0].instructions}
    x = (np.random.default_rng(groups).standard_normal((abs(batch) + 1, 6, 5, 4)) * 3 + 1).astype(np.float32)
    if batch > 0:
        x = x[:batch]
    (got,) = executor.run(build_plan(compiled.programs[0], compiled.weights), [x])
    expected = model(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, expected, rtol=RTOL, atol=scaled_atol(expected))


def test_channels_that_do_not_split_into_the_groups_are_reported() -> None:
    class Odd(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.group_norm(x, 4)

    with pytest.raises(UnsupportedNodesError, match="6 channels do not split into 4 groups"):
        compile_module(torch.jit.script(Odd()), input_shapes={"forward": [(1, 6, 2, 2)]})
