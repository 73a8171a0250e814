"""Models for the partial-lowering and API tests (in a file: TorchScript needs their source)."""

from __future__ import annotations

import torch


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.l(x))


class Sorter(torch.nn.Module):  # aten::sort: the demo compiler refuses it
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sort(x)[0]


class Mixed(torch.nn.Module):
    """Non-Tensor arguments in the method that stays TorchScript; two submodules that compile."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = Encoder()
        self.sorter = Sorter()
        self.head = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())

    def forward(self, x: torch.Tensor, k: int, scale: float, flag: bool, dims: list[int]) -> torch.Tensor:
        y = self.sorter(self.enc(x)) * k * scale
        if flag:
            y = y + len(dims)
        return self.head(y)


class Twins(torch.nn.Module):
    """Two instances of one class: TorchScript gives them one type."""

    def __init__(self) -> None:
        super().__init__()
        self.a = Encoder()
        self.b = Encoder()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.a(x) + self.b(x)


class Pair(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.enc = Encoder()

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.enc(x) + h, x - h


def combine(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a + b


class Projector(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.project(x, y)

    def project(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return combine(self.l(x), y)


class Calls(torch.nn.Module):
    """A submodule, a method of that submodule, a free function: three kinds of call."""

    def __init__(self) -> None:
        super().__init__()
        self.enc = Projector()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return self.enc(x, y) * 2


class Scalars(torch.nn.Module):
    """A method whose non-Tensor arguments change what it computes."""

    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, k: int, scale: float, flag: bool, dims: list[int]) -> torch.Tensor:
        y = self.l(x) * k * scale
        if flag:
            y = torch.relu(y)
        return y + dims[0] + len(dims)


class MulA(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * y


class TwoMuls(torch.nn.Module):
    """test_lite_script_module.py's module-hierarchy model: A0 and A1, one class."""

    def __init__(self) -> None:
        super().__init__()
        self.A0 = MulA()
        self.A1 = MulA()

    def forward(self, x: torch.Tensor, y: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return self.A0(x, y) + self.A1(y, z)
