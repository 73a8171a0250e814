"""What the lowerings added for real models emit (compile-time work where shapes are static)
and how they report what they cannot compile."""

from __future__ import annotations

from collections import Counter

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from liteexport.compiler import compile_module
from liteexport.errors import UnsupportedNodesError

from .conftest import prepare
from .reference import run_method


def _ops(module: nn.Module, *shapes: tuple[int, ...]) -> Counter[str]:
    compiled = compile_module(prepare(module), ["forward"], {"forward": [list(s) for s in shapes]})
    return Counter(i.op.name for i in compiled.programs[0].instructions)


class Activations(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu6(x) + F.hardtanh(x) + F.hardswish(x) + F.hardsigmoid(x) + F.silu(x)


def test_activations_are_one_instruction_each() -> None:
    ops = _ops(Activations(), (2, 3))
    assert ops == Counter({"CLAMP": 2, "HARDSWISH": 1, "HARDSIGMOID": 1, "SILU": 1, "ADD": 4})


class StaticWork(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x[:, :].unsqueeze(0).squeeze(0) + torch.zeros(2, 3) + torch.ones_like(x) * torch.full([3], 2.0)
        return y.expand(2, 3) + x.contiguous().clone()[0]


def test_shapes_and_factories_are_compile_time_work() -> None:
    # the full slice and the no-op expand vanish; unsqueeze then squeeze cancel; zeros, ones and
    # full are constants (ones * full folds into one); clone is x * 1; x[0] is a slice and a reshape
    assert _ops(StaticWork(), (2, 3)) == Counter({"ADD": 3, "MUL": 1, "SLICE": 1, "RESHAPE": 1})


class Chunk(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = x.chunk(2, 1)
        return a * b


def test_a_split_of_a_dynamic_dim_asks_for_static_shapes() -> None:
    with pytest.raises(UnsupportedNodesError, match="(?s)aten::chunk.*dimension 1 is dynamic.*--input-shape"):
        compile_module(prepare(Chunk()), ["forward"], {"forward": [[2, -1]]})
    assert _ops(Chunk(), (-1, 4)) == Counter({"SLICE": 2, "MUL": 1})  # the batch dim may stay dynamic


class Recurrent(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(3, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lstm(x)[0]


def test_a_recurrent_layer_needs_a_static_sequence_length() -> None:
    with pytest.raises(UnsupportedNodesError, match="(?s)aten::lstm.*sequence length must be static"):
        compile_module(prepare(Recurrent()), ["forward"], {"forward": [[-1, 1, 3]]})


class EllipsisEinsum(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("...i,ij->...j", x, x)


class DiagonalEinsum(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.einsum("ii->i", x)


class FlatRoll(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.roll(x, 1)


class CircularPad(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.pad(x, [1, 1], mode="circular")


@pytest.mark.parametrize(("module", "reason"), [
    (EllipsisEinsum, "no '...'"),
    (DiagonalEinsum, "only einsum of two operands"),
    (FlatRoll, "one dim per shift"),
    (CircularPad, "only 'constant', 'reflect' and 'replicate'"),
])
def test_unsupported_forms_say_why(module: type[nn.Module], reason: str) -> None:
    with pytest.raises(UnsupportedNodesError, match=reason):
        compile_module(prepare(module()), ["forward"], {"forward": [[3, 3]]})


class IndexBuffers(nn.Module):
    """swin's relative position bias: a parameter table indexed by an int64 buffer, and
    torch.tensor of a number: constants folded with torch, of any dtype."""

    def __init__(self) -> None:
        super().__init__()
        self.table = nn.Parameter(torch.linspace(-1.0, 1.0, 12).reshape(6, 2))
        self.register_buffer("index", torch.tensor([[0, 5, 2], [1, 1, 4]]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        bias = self.table[self.index.view(-1)].view(2, 3, 2).permute(2, 0, 1)
        mask = (self.index != 1).float()
        return x + bias + mask * torch.tensor(0.5)


def test_integer_buffers_fold_at_export() -> None:
    module = IndexBuffers()
    compiled = compile_module(prepare(module), ["forward"], {"forward": [[2, 2, 3]]})
    assert [i.op.name for i in compiled.programs[0].instructions] == ["ADD", "ADD"]
    x = torch.randn(2, 2, 3)
    (got,) = run_method(compiled, "forward", x)
    torch.testing.assert_close(got, module(x), atol=1e-5, rtol=1e-4)


class ReshapeAs(nn.Module):
    """levit's LinearNorm: ``self.bn(x.flatten(0, 1)).reshape_as(x)`` (levit_128s exited 4 on it)."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return (x.flatten(0, 1) * 2.0).reshape_as(x) + y.view_as(x)


def test_reshape_as_and_view_as_are_a_reshape_to_the_other_shape() -> None:
    scripted = prepare(ReshapeAs())
    compiled = compile_module(scripted, ["forward"], {"forward": [[2, 3, 4], [6, 4]]})
    x, y = torch.randn(2, 3, 4), torch.randn(6, 4)
    torch.testing.assert_close(run_method(compiled, "forward", x, y)[0], scripted(x, y))
