"""Print the operators torch's lite-interpreter bytecode uses for the issue's nn modules.

Run: ``python tests/runtime_py/operators/discover_operators.py`` (needs torch). Each module is
scripted in eval mode, saved in the zip format and its bytecode's operator list is read back.
"""

from __future__ import annotations

import io
import pickle
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn


class _Bilinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.b = nn.Bilinear(3, 3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(x, x)


class _Mha(nn.Module):
    def __init__(self, batch_first: bool) -> None:
        super().__init__()
        self.m = nn.MultiheadAttention(8, 2, batch_first=batch_first)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        return self.m(x, x, x)


class _ModuleDict(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.d = nn.ModuleDict({"a": nn.ReLU(), "b": nn.Tanh()})
        self.l = nn.ModuleList([nn.Linear(4, 4), nn.ReLU()])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for m in self.l:
            x = m(x)
        return self.d["a"](x) + self.d["b"](x)


class _Lstm(nn.Module):
    def __init__(self, cell: type[nn.Module], **kw: object) -> None:
        super().__init__()
        self.r = cell(4, 5, **kw)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.r(x)[0]


# name -> a factory of the module in eval mode
MODULES: dict[str, Callable[[], nn.Module]] = {
    "Linear": lambda: nn.Linear(4, 3),
    "Bilinear": _Bilinear,
    "Conv1d": lambda: nn.Conv1d(2, 3, 3),
    "Conv2d": lambda: nn.Conv2d(2, 3, 3, padding=1),
    "ConvTranspose2d": lambda: nn.ConvTranspose2d(2, 3, 3, stride=2),
    "BatchNorm1d": lambda: nn.BatchNorm1d(3),
    "BatchNorm2d": lambda: nn.BatchNorm2d(3),
    "LayerNorm": lambda: nn.LayerNorm(4),
    "GroupNorm": lambda: nn.GroupNorm(2, 4),
    "Embedding": lambda: nn.Embedding(10, 4),
    "Dropout": lambda: nn.Dropout(0.5),
    "ReLU": nn.ReLU,
    "ReLU6": nn.ReLU6,
    "LeakyReLU": nn.LeakyReLU,
    "PReLU": nn.PReLU,
    "ELU": nn.ELU,
    "GELU": nn.GELU,
    "GELU_tanh": lambda: nn.GELU(approximate="tanh"),
    "SiLU": nn.SiLU,
    "Hardswish": nn.Hardswish,
    "Hardsigmoid": nn.Hardsigmoid,
    "Sigmoid": nn.Sigmoid,
    "Tanh": nn.Tanh,
    "Softmax": lambda: nn.Softmax(dim=-1),
    "LogSoftmax": lambda: nn.LogSoftmax(dim=1),
    "MaxPool2d": lambda: nn.MaxPool2d(2),
    "AvgPool2d": lambda: nn.AvgPool2d(2),
    "AdaptiveAvgPool2d": lambda: nn.AdaptiveAvgPool2d((2, 2)),
    "Flatten": nn.Flatten,
    "Upsample_nearest": lambda: nn.Upsample(scale_factor=2, mode="nearest"),
    "Upsample_bilinear": lambda: nn.Upsample(scale_factor=2, mode="bilinear"),
    "Upsample_bilinear_ac": lambda: nn.Upsample(size=(5, 7), mode="bilinear", align_corners=True),
    "Identity": nn.Identity,
    "Sequential": lambda: nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2)),
    "ModuleListDict": _ModuleDict,
    "LSTM": lambda: _Lstm(nn.LSTM),
    "LSTM_bi2": lambda: _Lstm(nn.LSTM, num_layers=2, bidirectional=True, batch_first=True),
    "GRU": lambda: _Lstm(nn.GRU),
    "GRU_bi2": lambda: _Lstm(nn.GRU, num_layers=2, bidirectional=True, batch_first=True),
    "MultiheadAttention": lambda: _Mha(False),
    "MultiheadAttention_bf": lambda: _Mha(True),
    "TransformerEncoderLayer": lambda: nn.TransformerEncoderLayer(8, 2, 16),
    "TransformerEncoderLayer_bf": lambda: nn.TransformerEncoderLayer(8, 2, 16, batch_first=True,
                                                                     norm_first=True, activation="gelu"),
}


def _operators_of_zip(data: bytes) -> set[str]:
    ops: set[str] = set()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        name = next(n for n in z.namelist() if n.endswith("/bytecode.pkl"))
        bytecode = pickle.loads(z.read(name))  # torch's own file, in a test tool only
    for function in bytecode[1:]:
        table = dict(function[1])  # (("instructions", ...), ("operators", ((name, overload, nargs), ...)), ...)
        for entry in table["operators"]:
            ops.add(f"{entry[0]}.{entry[1]}" if entry[1] else entry[0])
    return ops


def module_operators(name: str) -> set[str]:
    """The operators in the zip-format lite bytecode of MODULES[name], scripted in eval mode."""
    scripted = torch.jit.script(MODULES[name]().eval())
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.ptl"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            scripted._save_for_lite_interpreter(str(path))
        return _operators_of_zip(path.read_bytes())


def main() -> None:
    union: set[str] = set()
    for name in MODULES:
        ops = module_operators(name)
        union |= ops
        if "-v" in sys.argv:
            print(f"{name}: {sorted(ops)}")
    for op in sorted(union):
        print(op)


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    main()
