"""Ops compiled as other ops (liteexport/compiler/composite_ops.py, issue 33's list of ops models
use): isnan, amax/amin, any/all, var/std, flip, log10/log2 and logical_xor, on both front ends,
equal to eager torch on runtime_py and the native core, NaN and infinities included."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from tests.text_models.typed import run_native

pytestmark = pytest.mark.torch_oracle

Op = Callable[[torch.Tensor], torch.Tensor]
CASES: dict[str, Op] = {
    "isnan": lambda x: torch.isnan(x).float() + torch.where(torch.isnan(x), 0.0, x),
    "amax": lambda x: x.amax(dim=(0, 2)),
    "amin_keepdim": lambda x: x.amin(dim=-1, keepdim=True),
    "amax_all": lambda x: x.amax(),
    "any_dim": lambda x: (x > 0.5).any(dim=1).float(),
    "all_keepdim": lambda x: x.isnan().logical_not().all(dim=2, keepdim=True).float(),
    "any_of_floats": lambda x: x.any().float(),
    "var": lambda x: x.var(dim=1),
    "var_population": lambda x: x.var(dim=(1, 2), unbiased=False, keepdim=True),
    "std": lambda x: x.std(dim=-1),
    "std_correction": lambda x: torch.std(x, dim=0, correction=0),
    "flip": lambda x: torch.flip(x, [0, 2]) * 2,
    "log10_log2": lambda x: torch.log10(x.abs() + 1) + torch.log2(x.abs() + 2),
    "logical_xor": lambda x: torch.logical_xor(x > 0, x < 0.5).float(),
}
NAN_TOLERANT = {"isnan", "amax", "amin_keepdim", "amax_all", "any_of_floats", "all_keepdim"}


class Wrapped(torch.nn.Module):
    def __init__(self, op: Op) -> None:
        super().__init__()
        self.op = op

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.op(x)


def _input(name: str) -> torch.Tensor:
    x = torch.randn(3, 4, 5, generator=torch.Generator().manual_seed(len(name)))
    if name in NAN_TOLERANT:  # the extremes, NaN and infinities as torch treats them
        x[0, 1, 2], x[1, 2, 3], x[2, 0, 0] = float("nan"), float("inf"), float("-inf")
    return x


@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")
@pytest.mark.parametrize("frontend", ["torchscript", "export"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_composite_op_matches_torch(name: str, frontend: str, tmp_path: Path) -> None:
    model, path, x = Wrapped(CASES[name]), tmp_path / "op.ptl", _input(name)
    # the TorchScript front end takes the model traced (a lambda cannot be scripted)
    given = torch.jit.trace(model, (x,)) if frontend == "torchscript" else model
    liteexport.export(given, path, input_shapes=[(3, 4, 5)], check=False)
    expected = model(x).numpy()
    for engine, got in (("runtime_py", runtime_py.load(path).forward(x.numpy())),
                        ("native", run_native(path, [x.numpy()])[0])):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=engine)
