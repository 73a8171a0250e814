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


class _UserCode(nn.Module):
    """Tensor methods and Python-level operations typical user code scripts to (x: a 4x4 tensor)."""

    def forward(self, x: torch.Tensor, idx: torch.Tensor, n: int, s: str) -> tuple[torch.Tensor, list[int], str]:
        a = x[0] + x[:, 1:3].sum() + x[..., -1].unsqueeze(-1).mean()
        b = (x[idx] * 2.0 - 1).sum(0)
        c = x.float() + x.long().double() + x.int() + x.to(torch.float16) + x.type_as(a)
        d = x[x > 0.5]
        x[0, 0] = 3.0
        x[1] += 1
        m = torch.max(x, dim=1)
        e = torch.cat([x, x], 1) + torch.stack([x, x]).sum(0).repeat(1, 2)
        f = torch.where(x > 0, x, torch.zeros_like(x)).clamp(min=0.1, max=0.9).clamp(0.2)
        g = torch.arange(10) + torch.arange(1, 11, 2).sum() + torch.arange(0.0, 1.0, 0.1).sum()
        h = (torch.ones(2, 3) + torch.full((2, 3), 1.5) + torch.zeros(2, 3, dtype=torch.float64)
             + torch.empty(2, 3).fill_(1))
        out: list[int] = []
        for i in range(n):
            out.append(i * 2 // 3 % 4)
        out2 = out[1:]
        out2.extend(out)
        out2.insert(0, 1)
        out2.pop()
        dd: dict[str, int] = {"a": 1}
        dd["b"] = 2
        t = "x{}y{}".format(n, s) + str(n) + s[0] + f"{n}"  # noqa: UP032 (aten::format)
        if "a" in dd and n in out:
            t = t + "z"
        z = x.view(-1).reshape(2, -1).permute(1, 0).transpose(0, 1).t().contiguous().flatten().squeeze().squeeze(0)
        y = torch.matmul(x, x.t()) + torch.mm(x, x.t()) + x @ x.t() + torch.addmm(x, x, x.t()[:, :x.size(1)])
        r = x.abs().exp().log().sqrt().rsqrt().sin().cos().tanh().sigmoid().floor().ceil().round().neg().reciprocal()
        q = torch.softmax(x, -1) + torch.log_softmax(x, dim=1) + nn.functional.relu(x) + x.relu() + r.pow(2).erf()
        k = (x.argmax(1).float().sum() + x.argmin() + x.amax(1).sum() + x.prod() + x.std() + x.var(1).sum() + x.min()
             + x.sum(dim=[0, 1], keepdim=True))
        u = (x.masked_fill(x > 0, 0.0) + x.expand(2, 4, 4).sum(0) + x.expand_as(x) + (x == 1).float() + (x != 1).float()
             + (x <= 1) + (x >= 1) + (x < 1).long())
        sp = torch.split(x, 1) + x.chunk(2) + x.unbind(0)
        it = int(x.sum().item()) + int(x[0, 0]) + float(x.mean())
        total = (a + b + c.sum() + d.sum() + m.values.sum() + e.sum() + f + g.sum() + h.sum() + z.sum() + y + q + k + u
                 + sp[0].sum() + it)
        return total, out2, t


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
    "UserCode": _UserCode,
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
