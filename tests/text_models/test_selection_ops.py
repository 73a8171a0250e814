"""triu/tril, argmax/argmin, max/min over a dim, topk (issue 20) against torch eager, compiled from traced and
scripted modules and run by runtime_py, by torch's lite interpreter with liteexport's backend and,
where it builds, by the native core (``run_engines``): integer results exactly, floats within the
parity tolerance.

Ties: argmax and max take the first maximum (argmin and min the first minimum), as torch documents, and
the int cases hold ties on purpose. torch.topk does not promise an order for equal values, so the topk
inputs have none (random floats; distinct integers from a permutation); our engines put equal values in
index order.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile  # noqa: F401 - run_engines loads bundles with it

import liteexport.torch_backend as tb
from bundle_format.program import OpCode
from liteexport.compiler import compile_module
from liteexport.input_spec import DimRange, TensorSpec
from liteexport.lowered import CompiledModule
from runtime_py.errors import ExecutionError
from tests.text_models.typed import assert_same, check_against_eager, compile_scripted, compile_traced, run_engines

pytestmark = pytest.mark.torch_oracle


@pytest.fixture(scope="module", autouse=True)
def backend() -> None:
    tb.load_torch_backend()


class Fn(torch.nn.Module):
    def __init__(self, fn: Callable[..., object]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *xs: torch.Tensor) -> object:
        return self.fn(*xs)


def make(kind: str, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """float32: random normals (no ties); int64/int32: small values with ties; bool; distinct: a
    permutation of distinct int64 values (topk of integers without ties)."""
    g = torch.Generator().manual_seed(seed)
    if kind == "float32":
        return torch.randn(shape, generator=g) * 3
    if kind == "bool":
        return torch.rand(shape, generator=g) < 0.5
    if kind == "distinct":
        return (torch.randperm(int(torch.tensor(shape).prod()), generator=g) - 7).reshape(shape)
    return torch.randint(-3, 4, shape, generator=g, dtype=getattr(torch, kind))


# name -> (inputs (kind, shape), the op's torch code, an opcode the program must hold)
CASES: dict[str, tuple[list[tuple[str, tuple[int, ...]]], Callable[..., object], OpCode]] = {}
for _kind in ("float32", "int64", "int32", "bool"):
    CASES[f"triu_{_kind}"] = ([(_kind, (2, 4, 5))], lambda x: (torch.triu(x), torch.triu(x, 2), x.triu(-1)),
                              OpCode.TRIU)
    CASES[f"tril_{_kind}"] = ([(_kind, (5, 4))], lambda x: (torch.tril(x), torch.tril(x, 1), x.tril(-2)), OpCode.TRIL)
for _kind in ("float32", "int64", "int32"):
    CASES[f"argmax_{_kind}"] = ([(_kind, (3, 4, 5))], lambda x: (
        torch.argmax(x, 1), torch.argmax(x, -1, keepdim=True), x.argmax(0), torch.argmax(x)), OpCode.ARGMAX)
    CASES[f"max_dim_{_kind}"] = ([(_kind, (3, 6))], lambda x: (*torch.max(x, 1), *torch.max(x, 0, keepdim=True)),
                                 OpCode.ARGMAX)
    CASES[f"argmin_{_kind}"] = ([(_kind, (3, 4, 5))], lambda x: (
        torch.argmin(x, 1), torch.argmin(x, -1, keepdim=True), x.argmin(0), torch.argmin(x)), OpCode.ARGMIN)
    CASES[f"min_dim_{_kind}"] = ([(_kind, (3, 6))], lambda x: (*torch.min(x, 1), *torch.min(x, 0, keepdim=True)),
                                 OpCode.ARGMIN)
for _kind in ("float32", "distinct"):
    CASES[f"topk_{_kind}"] = ([(_kind, (3, 7))], lambda x: (*torch.topk(x, 3), *torch.topk(x, 2, dim=0, largest=False),
                                                            *x.topk(7, 1)), OpCode.TOPK)
CASES["causal_mask"] = ([("float32", (2, 5, 5))], lambda s: s.masked_fill(
    torch.ones(5, 5, dtype=torch.bool).triu(1), float("-inf")).softmax(-1), OpCode.WHERE)
CASES["argmax_of_nan"] = ([("float32", (3, 4))], lambda x: (
    torch.where(x > 2, torch.full_like(x, float("nan")), x).argmax(1),
    *torch.max(torch.where(x < -2, torch.full_like(x, float("nan")), x), 1)), OpCode.ARGMAX)
CASES["argmin_of_nan"] = ([("float32", (3, 4))], lambda x: (
    torch.where(x > 2, torch.full_like(x, float("nan")), x).argmin(1),
    *torch.min(torch.where(x < -2, torch.full_like(x, float("nan")), x), 1)), OpCode.ARGMIN)


@pytest.mark.parametrize("name", sorted(CASES))
def test_traced_op_matches_torch_in_every_engine(name: str, tmp_path: Path) -> None:
    kinds, fn, opcode = CASES[name]
    module = Fn(fn)
    examples = [make(kind, shape, 0) for kind, shape in kinds]
    _, compiled = compile_traced(module, examples)
    assert opcode in {ins.op for ins in compiled.programs[0].instructions}
    for seed in (1, 2):
        inputs = [make(kind, shape, seed) for kind, shape in kinds]
        check_against_eager(module, compiled, tmp_path / f"{name}.ptl", inputs)


class Scripted(torch.nn.Module):
    """Every op of this file in TorchScript's own spelling (aten::max.dim, topk's tuple)."""

    def forward(self, x: torch.Tensor, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                                   torch.Tensor, torch.Tensor, torch.Tensor,
                                                                   torch.Tensor, torch.Tensor, torch.Tensor,
                                                                   torch.Tensor, torch.Tensor]:
        values, indices = torch.max(x, dim=-1)
        lows, low_indices = torch.min(ids, dim=0)
        top, where = torch.topk(x, 2, dim=1, largest=True, sorted=True)
        return (torch.triu(x, 1), ids.tril(), torch.argmax(ids, dim=0), values, indices, top, where,
                torch.argmax(x, 1, True), lows, low_indices, torch.argmin(x, 1, True))


def test_scripted_ops_match_torch_in_every_engine(tmp_path: Path) -> None:
    module = Scripted()
    compiled = compile_scripted(module, [make("float32", (4, 6), 0), make("int64", (4, 6), 0)])
    ops = {ins.op for ins in compiled.programs[0].instructions}
    assert {OpCode.TRIU, OpCode.TRIL, OpCode.ARGMAX, OpCode.ARGMIN, OpCode.TOPK, OpCode.GATHER} <= ops
    for seed in (1, 2):
        inputs = [make("float32", (4, 6), seed), make("int64", (4, 6), seed)]
        check_against_eager(module, compiled, tmp_path / "scripted.ptl", inputs)


class Unsorted(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        top, where = torch.topk(x, 3, dim=1, sorted=False)
        low, low_where = torch.topk(x, 2, dim=0, largest=False, sorted=False)
        return top, where, low, low_where


@pytest.mark.parametrize("scripted", [False, True], ids=["traced", "scripted"])
def test_topk_with_sorted_false_picks_the_same_elements_as_torch_in_every_engine(scripted: bool,
                                                                                 tmp_path: Path) -> None:
    """torch.topk(sorted=False) leaves the order of the k picked unspecified; ours is the sorted order
    (schema/demo_ops.toml's TopK), one torch may return. The elements picked are torch's: along the
    axis, the same set of indices, each with its value (the inputs have no ties)."""
    module = Unsorted()
    examples = [make("float32", (4, 7), 0)]
    compiled = compile_scripted(module, examples) if scripted else compile_traced(module, examples)[1]
    sorted_program = compile_traced(Fn(lambda x: (*torch.topk(x, 3, dim=1), *torch.topk(x, 2, dim=0, largest=False))),
                                    examples)[1].programs[0]
    assert [i.attributes for i in compiled.programs[0].instructions if i.op == OpCode.TOPK] == \
        [i.attributes for i in sorted_program.instructions if i.op == OpCode.TOPK]
    for seed in (1, 2):
        x = make("float32", (4, 7), seed)
        ours, lite = run_engines(compiled, tmp_path / "unsorted.ptl", [x])
        expected = module(x)
        for got in (ours, [t.numpy() for t in lite]):  # type: ignore[union-attr]
            for (values, indices), (want_values, want_indices), axis in zip(
                    [got[:2], got[2:]], [expected[:2], expected[2:]], (1, 0), strict=True):
                # both in index order along the axis: the same indices, the same values
                order, want_order = indices.argsort(axis), want_indices.numpy().argsort(axis)
                assert np.take_along_axis(indices, order, axis).tolist() == \
                    np.take_along_axis(want_indices.numpy(), want_order, axis).tolist()
                assert_same(np.take_along_axis(values, order, axis),
                            np.take_along_axis(want_values.numpy(), want_order, axis))
                # and each value is the input's at its index
                assert_same(values, np.take_along_axis(x.numpy(), indices, axis))


class OverS(torch.nn.Module):
    """The ops over a dim named S (--dim S=1..16): topk's k must fit the size S has at run time."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        values, indices = torch.topk(x, 3, dim=1)
        return values, indices, torch.argmax(x, 1), torch.tril(x.unsqueeze(1) * x.unsqueeze(2), -1)


def _over_s() -> CompiledModule:
    return compile_module(torch.jit.script(OverS()), input_shapes={"forward": [TensorSpec((2, "S"), "float32")]},
                          dims={"S": DimRange("S", 1, 16)})


@pytest.mark.parametrize("length", [3, 7, 16])
def test_ops_over_a_named_dim_match_torch_in_every_engine(length: int, tmp_path: Path) -> None:
    check_against_eager(OverS(), _over_s(), tmp_path / "s.ptl", [make("float32", (2, length), length)])


def test_a_k_larger_than_the_run_time_size_is_an_error_in_every_engine(tmp_path: Path) -> None:
    x = make("float32", (2, 2), 0)
    message = r"TOPK \(slots \[0\] -> \[1\]\): k=3 is larger than the size 2 of axis 1 \(input of shape \(2, 2\)\)"
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        OverS()(x)  # torch's own refusal
    # runtime_py's error, and (checked by run_engines) the native core's, kind and message the same
    with pytest.raises(ExecutionError, match=message):
        run_engines(_over_s(), tmp_path / "s.ptl", [x])
    lite = torch.jit.mobile._load_for_lite_interpreter(str(tmp_path / "s.ptl"))
    with pytest.raises(RuntimeError, match=message):
        lite.run_method("forward", x)
