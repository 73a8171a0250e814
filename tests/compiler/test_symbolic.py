"""Symbolic sizes (issue 20, item 3): ``x.size(1)`` of a named dim S is ``S`` at compile time, shape
inference keeps S (and S + c, 2 * S) through the ops, and where S must reach run time it becomes
-1 in a reshape, a slice counted from the end, or an ARANGE_LIKE of the input S comes from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import runtime_py
from bundle_format.program import AxisAttrs, OpCode, PermuteAttrs, ShapeAttrs
from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.compiler.shapes import infer_shape, infer_symbols
from liteexport.compiler.symbolic import SymbolicSizeError, SymSize
from liteexport.compiler.values import Sym, TensorConst
from liteexport.errors import UnsupportedNodesError
from liteexport.input_spec import DimRange, TensorSpec

S = SymSize("S")


def test_sizes_stay_of_the_form_scale_s_plus_offset() -> None:
    assert S + 1 == SymSize("S", 1, 1) and 1 + S == S + 1 and str(S + 1) == "S+1"
    assert (S + 3) - S == 3 and S - S == 0
    assert 2 * S - 1 == SymSize("S", 2, -1) and str(2 * S - 1) == "2*S-1"
    assert 5 - S == SymSize("S", -1, 5) and str(5 - S) == "-S+5"
    assert (2 * S + 3) // 2 == S + 1  # floor((2S + 3) / 2) for every S
    assert S != S + 1 and hash(S + 0) == hash(S)


@pytest.mark.parametrize("question", [
    lambda: S == 8, lambda: S > 1, lambda: S // 2, lambda: S * S, lambda: S + SymSize("T"), lambda: bool(S),
    lambda: int(S), lambda: range(S),
])
def test_questions_with_no_compile_time_answer_say_so(question: object) -> None:
    with pytest.raises(SymbolicSizeError, match="depends on a size known only at run time"):
        question()  # type: ignore[operator]


def _sym(*sizes: int | SymSize) -> Sym:
    return Sym(tuple(-1 if isinstance(d, SymSize) else d for d in sizes),
               symbols={i: d for i, d in enumerate(sizes) if isinstance(d, SymSize)})


def _inferred(op: OpCode, attrs: object, *inputs: Sym | TensorConst) -> dict[int, SymSize]:
    return infer_symbols(op, attrs, inputs, infer_shape(op, attrs, inputs))


def test_shape_inference_keeps_the_named_dim() -> None:
    x = _sym(1, S, 8)
    assert _inferred(OpCode.LINEAR, None, x, TensorConst(torch.zeros(4, 8))) == {1: S}
    assert _inferred(OpCode.RESHAPE, ShapeAttrs(dims=(1, -1, 2, 4)), x) == {1: S}
    assert _inferred(OpCode.TRANSPOSE, PermuteAttrs(perm=(1, 0, 2)), x) == {0: S}
    heads = _sym(1, 2, S, 4)
    assert _inferred(OpCode.MATMUL, None, heads, _sym(1, 2, 4, S)) == {2: S, 3: S}
    assert _inferred(OpCode.CAT, AxisAttrs(axis=1), x, x) == {1: 2 * S}
    assert _inferred(OpCode.CAT, AxisAttrs(axis=1), x, TensorConst(torch.zeros(1, 1, 8))) == {1: S + 1}


def test_a_dim_that_also_follows_an_unnamed_dim_is_not_symbolic() -> None:
    unnamed = Sym((1, -1, 8))
    assert _inferred(OpCode.CAT, AxisAttrs(axis=1), _sym(1, S, 8), unnamed) == {}
    assert _inferred(OpCode.ADD, None, _sym(1, S, 8), unnamed) == {}  # broadcasting S with an unknown size


class UsesLength(torch.nn.Module):
    """x.size(1) in a slice of a buffer, an arange, a view and a slice from the end."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.proj = torch.nn.Linear(8, 8)
        self.register_buffer("table", torch.linspace(0.5, 1.5, 64).reshape(1, 64))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.size(1)
        h = self.proj(x) * self.table[:, :n].unsqueeze(-1) + torch.arange(n).unsqueeze(-1).float() / 64
        heads = h.view(1, n, 2, 4).transpose(1, 2)
        scores = torch.softmax(heads @ heads.transpose(-1, -2), dim=-1)
        mixed = (scores @ heads).transpose(1, 2).reshape(1, n, 8)
        return mixed[:, n - 1:] + mixed[:, :n].mean(1, keepdim=True)


class Pairwise(torch.nn.Module):
    """Relative positions over S x S (T5's bias): integer abs and min, full_like of a run-time shape,
    and unit dims added and dropped beside two dynamic dims."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(x.size(1))
        rel = pos.unsqueeze(0) - pos.unsqueeze(1)
        near = torch.min(torch.abs(rel), torch.full_like(rel, 3))
        scores = x @ x.transpose(1, 2)
        return (scores.unsqueeze(1) - near.float().unsqueeze(0).unsqueeze(0)).squeeze(1)


def _compiled(module: torch.nn.Module) -> object:
    return compile_module(torch.jit.script(module), input_shapes={"forward": [TensorSpec((1, "S", 8))]},
                          dims={"S": DimRange("S", 1, 64)})


@pytest.mark.parametrize(("module", "ranges"), [(UsesLength(), 2), (Pairwise(), 1)])
def test_a_scripted_module_compiles_once_for_every_length(module: torch.nn.Module, ranges: int,
                                                          tmp_path: Path) -> None:
    compiled = _compiled(module.eval())
    (program,) = compiled.programs  # type: ignore[attr-defined]
    ops = [ins.op for ins in program.instructions]
    assert ops.count(OpCode.ARANGE_LIKE) == ranges  # UsesLength: the arange and the slice of the buffer
    reshapes = [ins.attributes for ins in program.instructions if ins.op == OpCode.RESHAPE]
    assert all(isinstance(a, ShapeAttrs) and -1 in a.dims for a in reshapes)
    write_bundle(compiled, tmp_path / "m.ptl")  # type: ignore[arg-type]
    loaded = runtime_py.load(tmp_path / "m.ptl")
    for length in (1, 5, 64):
        x = torch.randn(1, length, 8, generator=torch.Generator().manual_seed(length))
        with torch.no_grad():
            expected = module(x).numpy()
        np.testing.assert_allclose(loaded.forward(x.numpy()), expected, rtol=1e-5, atol=1e-6)


class Branches(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.size(1) > 4:
            return x * 2
        return x


class Zeros(torch.nn.Module):
    """zeros(S, 8) compiles (a FULL, tests/text_models/test_run_time_fills.py); zeros(2 * S) has no
    instruction to read it from."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.zeros(x.size(1) * 2, 8)[: x.size(1)]


@pytest.mark.parametrize(("module", "kind", "text"), [
    (Branches(), "aten::gt", "whether S > 4 depends on a size known only at run time"),
    (Zeros(), "aten::zeros", "a tensor of size (2*S, 8) is not compiled: a size known only at run time must be S + "
                             "a constant"),
])
def test_a_use_of_s_that_cannot_compile_is_reported_with_its_line(module: torch.nn.Module, kind: str,
                                                                  text: str) -> None:
    with pytest.raises(UnsupportedNodesError) as info:
        _compiled(module)
    (report,) = info.value.reports
    assert report.startswith(f"The node of {kind} is not supported") and text in report
    assert "x.size(1)" in report
