"""div with a rounding mode (issue 20): it has no instruction, so on values known at compile time
(edgenext's position table) torch computes it while compiling; on run-time values it is reported
at its source line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from liteexport.compiler import compile_module
from liteexport.errors import UnsupportedNodesError
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.plan import build_plan


class Table(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(8, dtype=torch.float32)
        return x * 10000 ** (2 * torch.div(positions, 2, rounding_mode="floor") / 8)


class OnInput(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.div(x, 2, rounding_mode="trunc")


def test_a_floor_division_of_constants_is_computed_at_compile_time() -> None:
    compiled = compile_module(torch.jit.script(Table()), input_shapes={"forward": [(2, 8)]})
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    (got,) = executor.run(build_plan(compiled.programs[0], compiled.weights), [x])
    np.testing.assert_allclose(got, Table()(torch.from_numpy(x)).numpy(), rtol=1e-6)


def test_one_on_run_time_values_is_reported() -> None:
    with pytest.raises(UnsupportedNodesError, match="div with rounding_mode='trunc' is compiled only on values"):
        compile_module(torch.jit.script(OnInput()), input_shapes={"forward": [(2, 8)]})
