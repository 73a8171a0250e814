"""Models for the partial-lowering and API tests (in a file: TorchScript needs their source)."""

from __future__ import annotations

import torch


class Encoder(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.l(x))


class Sorter(torch.nn.Module):  # aten::logsumexp: the TorchScript front end refuses it
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x - torch.logsumexp(x, -1, keepdim=True)


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


class SortedBlock(torch.nn.Module):
    """A block that does not compile (the sort) around a child that does."""

    def __init__(self, enc: torch.nn.Module | None = None) -> None:
        super().__init__()
        self.enc = Encoder() if enc is None else enc
        self.sorter = Sorter()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sorter(self.enc(x))


class SharedBlocks(torch.nn.Module):
    """repvit/mobileone's shape: repeated blocks (one TorchScript type) holding compilable children,
    beside a head whose type is its own. torch's selective lowering refuses the blocks' children
    (their parent's type is shared) unless the blocks are scripted with a type each."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.Sequential(SortedBlock(), SortedBlock())
        self.head = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.blocks(x))


class ReadsChildWeight(torch.nn.Module):
    """edgenext's positional encoding reads ``self.token_projection.weight.dtype``: the child
    compiles, but a lowered module has no ``weight`` (torch fails at save)."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.sorter = Sorter()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sorter(self.proj(x).to(self.proj.weight.dtype))


def doubled(x: torch.Tensor) -> torch.Tensor:
    return x * 2.0


class CallsFunction(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return doubled(x) + 1.0


def function_child() -> SortedBlock:
    """A child calling a free function (in a loaded archive, that lives in the archive's unit)."""
    return SortedBlock(CallsFunction())


class Erfinv(torch.nn.Module):  # aten::erfinv: neither the demo compiler nor runtime_py has it
    def __init__(self) -> None:
        super().__init__()
        self.enc = Encoder()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.erfinv(torch.tanh(self.enc(x)))


class DictOut(torch.nn.Module):  # torchvision's segmentation models return {"out": ...}
    def __init__(self) -> None:
        super().__init__()
        self.enc = Encoder()
        self.sorter = Sorter()

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"out": self.sorter(self.enc(x)), "aux": x}


class QuantizedBody(torch.nn.Module):
    """torch.ao eager quantization's shape: quantize, quantized conv and ReLU, dequantize, and a
    float head (with a sort the compiler refuses) after the dequantize."""

    def __init__(self) -> None:
        super().__init__()
        self.quant = torch.ao.quantization.QuantStub()
        self.conv = torch.nn.Conv2d(3, 4, 3)
        self.relu = torch.nn.ReLU()
        self.dequant = torch.ao.quantization.DeQuantStub()
        self.head = Encoder()
        self.sorter = Sorter()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.dequant(self.relu(self.conv(self.quant(x))))
        return self.sorter(self.head(y.mean((2, 3))))


def quantized_body(engine: str = "fbgemm") -> torch.nn.Module:
    """QuantizedBody quantized for ``engine`` by torch.ao's eager flow (calibrated on random images;
    the head stays float)."""
    torch.manual_seed(0)
    torch.backends.quantized.engine = engine
    model = QuantizedBody().eval()
    model.qconfig = torch.ao.quantization.get_default_qconfig(engine)
    model.head.qconfig = None
    model.sorter.qconfig = None
    torch.ao.quantization.prepare(model, inplace=True)
    with torch.no_grad():
        for _ in range(4):
            model(torch.rand(1, 3, 8, 8))
    return torch.ao.quantization.convert(model, inplace=True)


class CumsumChild(torch.nn.Module):  # aten::cumsum compiles for an input of known rank
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, 1)


class CumsumThenSort(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c = CumsumChild()
        self.sorter = Sorter()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sorter(self.c(x))
