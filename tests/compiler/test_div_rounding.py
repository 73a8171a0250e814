"""div with a rounding mode (issue 20): on values known at compile time (edgenext's position table)
torch computes it while compiling; on run-time values it is FLOOR_DIV or TRUNC_DIV (their parity
with torch in every engine: tests/text_models/test_rounding_ops.py); a mode torch does not know is
reported at its source line."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bundle_format.program import OpCode
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


class UnknownMode(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.div(x, 2, rounding_mode="round")


def test_a_floor_division_of_constants_is_computed_at_compile_time() -> None:
    compiled = compile_module(torch.jit.script(Table()), input_shapes={"forward": [(2, 8)]})
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    (got,) = executor.run(build_plan(compiled.programs[0], compiled.weights), [x])
    np.testing.assert_allclose(got, Table()(torch.from_numpy(x)).numpy(), rtol=1e-6)


def test_one_on_run_time_values_is_an_instruction() -> None:
    compiled = compile_module(torch.jit.script(OnInput()), input_shapes={"forward": [(2, 8)]})
    assert [ins.op for ins in compiled.programs[0].instructions] == [OpCode.TRUNC_DIV]
    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32) * 5
    (got,) = executor.run(build_plan(compiled.programs[0], compiled.weights), [x])
    np.testing.assert_array_equal(got, OnInput()(torch.from_numpy(x)).numpy())


def test_an_unknown_rounding_mode_is_reported() -> None:
    with pytest.raises(UnsupportedNodesError, match="div with rounding_mode='round' is not compiled"):
        compile_module(torch.jit.script(UnknownMode()), input_shapes={"forward": [(2, 8)]})
