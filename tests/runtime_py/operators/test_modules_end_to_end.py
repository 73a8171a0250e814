"""Every listed nn module, scripted and saved by torch (zip format), runs in runtime_py with
the outputs of torch's own lite interpreter (uses the interpreter and zip loader too)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")
mobile = pytest.importorskip("torch.jit.mobile")

import runtime_py  # noqa: E402
from tests.runtime_py.operators.discover_operators import MODULES  # noqa: E402

# module name -> input shape (default (2, 4))
SHAPES: dict[str, tuple[int, ...]] = {
    "Bilinear": (3,), "Conv1d": (1, 2, 9), "Conv2d": (1, 2, 6, 6), "ConvTranspose2d": (1, 2, 4, 4),
    "BatchNorm1d": (4, 3), "BatchNorm2d": (2, 3, 4, 4), "GroupNorm": (2, 4, 3), "PReLU": (2, 3),
    "MaxPool2d": (1, 2, 6, 6), "AvgPool2d": (1, 2, 6, 6), "AdaptiveAvgPool2d": (1, 2, 7, 5), "Flatten": (2, 3, 4),
    "Upsample_nearest": (1, 2, 3, 4), "Upsample_bilinear": (1, 2, 3, 4), "Upsample_bilinear_ac": (1, 2, 3, 4),
    "LSTM": (5, 2, 4), "LSTM_bi2": (2, 5, 4), "GRU": (5, 2, 4), "GRU_bi2": (2, 5, 4),
    "MultiheadAttention": (5, 2, 8), "MultiheadAttention_bf": (2, 5, 8), "TransformerEncoderLayer": (5, 2, 8),
    "TransformerEncoderLayer_bf": (2, 5, 8), "UserCode": (4, 4),
}


def _inputs(name: str) -> tuple[Any, ...]:
    if name == "Embedding":
        return (torch.randint(0, 10, (2, 3)),)
    x = torch.rand(*SHAPES.get(name, (2, 4)))
    if name == "UserCode":
        return x, torch.tensor([1, 0, 1]), 5, "hey"
    return (x,)


def _compare(mine: Any, expected: Any) -> None:
    if isinstance(expected, torch.Tensor):
        wanted = expected.detach().numpy()
        np.testing.assert_allclose(mine, wanted, rtol=1e-4, atol=1e-5)
        assert mine.dtype == wanted.dtype
    elif isinstance(expected, tuple | list):
        assert len(mine) == len(expected)
        for m, e in zip(mine, expected, strict=True):
            _compare(m, e)
    else:
        assert mine == expected


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_matches_torch_lite_interpreter(name: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    path = tmp_path / "m.ptl"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.jit.script(MODULES[name]().eval())._save_for_lite_interpreter(str(path))
        lite = mobile._load_for_lite_interpreter(str(path))
    inputs = _inputs(name)
    expected = lite(*[v.clone() if isinstance(v, torch.Tensor) else v for v in inputs])
    mine = runtime_py.load(path).forward(*[v.numpy().copy() if isinstance(v, torch.Tensor) else v for v in inputs])
    _compare(mine, expected)
