"""Small models with control flow, scripted by torch, saved in both lite formats, run by
runtime_py and compared with torch's lite interpreter on the same inputs."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from runtime_py.errors import ExecutionError
from tests.conformance.lite_oracle import FORMATS, check, save

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message="Lite Interpreter is deprecated")
pytestmark = pytest.mark.torch_oracle


class Loops(torch.nn.Module):
    def forward(self, x: torch.Tensor, n: int) -> tuple[torch.Tensor, int, list[int]]:
        total = 0
        seen: list[int] = []
        for i in range(n):
            x = x * 2 + i
            total += i
            seen.append(i)
        while total > 3:
            total -= 3
        return x, total, seen


class Branches(torch.nn.Module):
    def forward(self, x: torch.Tensor, k: int) -> torch.Tensor:
        if k == 0:
            return x
        elif k < 0:
            y = x - 1
        else:
            y = x + 1
        return y * k


class Containers(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.scales: dict[str, float] = {"a": 0.5, "b": 2.0}
        self.names: list[str] = ["a", "b"]

    def forward(self, x: torch.Tensor) -> tuple[dict[str, torch.Tensor], str, int]:
        out: dict[str, torch.Tensor] = {}
        for name in self.names:
            out[name] = x * self.scales[name]
        text = "{} has {} entries, first {}".format("out", len(out), self.scales["a"])
        first, second = self.names
        return out, text + first + second, x.dim()


class Optionals(torch.nn.Module):
    def forward(self, x: torch.Tensor, bias: torch.Tensor | None = None,  # noqa: UP007
                scale: float | None = None) -> torch.Tensor:  # noqa: UP007
        if bias is not None:
            x = x + bias
        if scale is None:
            return x
        return x * scale


class Inner(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(3, 3)
        self.calls = 2

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for _ in range(self.calls):
            x = torch.relu(self.lin(x))
        return x

    @torch.jit.export
    def twice(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward(self.forward(x))


class Outer(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Inner()

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.inner(x), self.inner.twice(x)


class Checks(torch.nn.Module):
    def forward(self, x: torch.Tensor, limit: int) -> torch.Tensor:
        assert x.dim() == 2, "expected a matrix"
        if limit < 0:
            raise ValueError("limit must be non-negative")
        return x[:limit]


def _x(*shape: int) -> np.ndarray:
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


CASES: list[tuple[str, Any, tuple[Any, ...]]] = [
    ("loops", Loops, (_x(2, 3), 4)),
    ("loops_zero", Loops, (_x(2, 3), 0)),
    ("branch_zero", Branches, (_x(3), 0)),
    ("branch_neg", Branches, (_x(3), -2)),
    ("branch_pos", Branches, (_x(3), 3)),
    ("containers", Containers, (_x(2, 2),)),
    ("optional_none", Optionals, (_x(2),)),
    ("optional_given", Optionals, (_x(2), _x(2), 3.0)),
    ("submodule_methods", Outer, (_x(2, 3),)),
    ("checks_ok", Checks, (_x(4, 2), 2)),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name, model, inputs", CASES, ids=[c[0] for c in CASES])
def test_model_matches_torch_lite(name: str, model: Any, inputs: tuple[Any, ...], fmt: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    check(torch.jit.script(model().eval()), tmp_path, name, fmt, inputs)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("inputs, message", [
    ((_x(4), 2), "AssertionError: expected a matrix"),
    ((_x(4, 2), -1), "builtins.ValueError: limit must be non-negative"),
])
def test_model_exceptions_surface(fmt: str, inputs: tuple[Any, ...], message: str, tmp_path: Path) -> None:
    import runtime_py

    path = save(torch.jit.script(Checks()), tmp_path, "checks", fmt)
    with pytest.raises(ExecutionError, match=message):
        runtime_py.load(path).forward(*inputs)
