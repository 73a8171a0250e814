"""Every typed op (issue 20) against torch eager across dtypes, compiled from a traced module with
typed input specs and run by runtime_py and by torch's lite interpreter with liteexport's backend."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport.torch_backend as tb
from bundle_format.program import OpCode
from runtime_py.errors import ExecutionError, InputError
from tests.text_models.typed import assert_same, compile_traced, run_engines

pytestmark = pytest.mark.torch_oracle


@pytest.fixture(scope="module", autouse=True)
def backend() -> None:
    tb.load_torch_backend()


class Fn(torch.nn.Module):
    def __init__(self, fn: Callable[..., torch.Tensor]) -> None:
        super().__init__()
        self.fn = fn
        self.table = torch.nn.Parameter(torch.randn(11, 4, generator=torch.Generator().manual_seed(3)))

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        return self.fn(self, *xs)


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _make(kind: str, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    g = _gen(seed)
    if kind == "float32":
        return torch.randn(shape, generator=g) * 3
    if kind == "bool":
        return torch.rand(shape, generator=g) < 0.5
    if kind == "ids":
        return torch.randint(0, 11, shape, generator=g)
    if kind == "ids32":
        return torch.randint(0, 11, shape, generator=g, dtype=torch.int32)
    if kind.startswith("ids<"):  # indices of an axis of that size
        return torch.randint(0, int(kind[4:]), shape, generator=g)
    return torch.randint(-5, 6, shape, generator=g, dtype=torch.int64 if kind == "int64" else torch.int32)


# name -> (inputs (kind, shape), the op's torch code, an opcode the program must hold)
CASES: dict[str, tuple[list[tuple[str, tuple[int, ...]]], Callable[..., torch.Tensor], OpCode]] = {
    "embedding_int64": ([("ids", (2, 5))], lambda m, i: torch.nn.functional.embedding(i, m.table), OpCode.EMBEDDING),
    "embedding_int32": ([("ids32", (7,))], lambda m, i: torch.nn.functional.embedding(i, m.table), OpCode.EMBEDDING),
}
for _src in ("float32", "int64", "int32", "bool"):
    for _dst in (torch.float32, torch.int64, torch.int32, torch.bool):
        if str(_dst) == f"torch.{_src}":  # the identity: no instruction
            continue
        CASES[f"cast_{_src}_to_{str(_dst).removeprefix('torch.')}"] = (
            [(_src, (3, 4))], lambda m, x, d=_dst: x.to(d) + torch.zeros((), dtype=d) if d != torch.bool else x.to(d),
            OpCode.CAST)
for _kind in ("float32", "int64", "int32"):
    for _name, _fn in (("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("le", torch.le), ("gt", torch.gt),
                       ("ge", torch.ge)):
        CASES[f"{_name}_{_kind}"] = ([(_kind, (2, 3, 4)), (_kind, (3, 1))], lambda m, a, b, f=_fn: f(a, b),
                                     OpCode[_name.upper()])
        CASES[f"{_name}_{_kind}_scalar"] = ([(_kind, (2, 3, 4))], lambda m, a, f=_fn: f(a, 1), OpCode[_name.upper()])
    CASES[f"where_{_kind}"] = ([("bool", (3, 4)), (_kind, (3, 4)), (_kind, (4,))],
                               lambda m, c, a, b: torch.where(c, a, b), OpCode.WHERE)
    CASES[f"masked_fill_{_kind}"] = ([(_kind, (3, 4)), ("bool", (4,))], lambda m, x, c: x.masked_fill(c, -2),
                                     OpCode.WHERE)
    CASES[f"gather_{_kind}"] = ([(_kind, (4, 5)), ("ids<4", (3, 5))],
                                lambda m, x, i: torch.gather(x, 0, i), OpCode.GATHER)
    CASES[f"index_select_{_kind}"] = ([(_kind, (4, 5)), ("ids<5", (6,))],
                                      lambda m, x, i: torch.index_select(x, 1, i), OpCode.INDEX_SELECT)
for _kind in ("float32", "int64", "int32", "bool"):
    CASES[f"cumsum_{_kind}"] = ([(_kind, (3, 6))], lambda m, x: torch.cumsum(x, 1), OpCode.CUMSUM)
    CASES[f"reshape_cat_{_kind}"] = ([(_kind, (2, 6)), (_kind, (3, 4))],
                                     lambda m, a, b: torch.cat([a.reshape(3, 4), b.t().reshape(3, 4)], 0), OpCode.CAT)
for _kind in ("bool", "int64", "int32"):
    CASES[f"bitwise_{_kind}"] = ([(_kind, (3, 4)), (_kind, (4,))], lambda m, a, b: (~a & b) | (a & ~b),
                                 OpCode.BITWISE_OR)
for _kind in ("int64", "int32"):
    CASES[f"arith_{_kind}"] = ([(_kind, (3, 4)), (_kind, (4,))],
                               lambda m, a, b: torch.add(a * b, 3, alpha=2) - torch.sub(b, a, alpha=3) + 1 - a,
                               OpCode.MUL)
    CASES[f"promote_{_kind}"] = ([(_kind, (3, 4)), ("float32", (4,))], lambda m, a, b: a + b * 0.5 + a / 2,
                                 OpCode.CAST)
CASES["sin_cos_float32"] = ([("float32", (3, 5))], lambda m, x: torch.sin(x) * torch.cos(x * 2), OpCode.SIN)
CASES["sin_cos_int64"] = ([("int64", (3, 5))], lambda m, x: torch.sin(x) + torch.cos(x), OpCode.COS)
CASES["logical"] = ([("int64", (3, 4)), ("float32", (3, 4))],
                    lambda m, a, b: torch.logical_and(a, b) | torch.logical_not(torch.logical_or(a, b)),
                    OpCode.BITWISE_AND)


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_torch_in_runtime_py_and_the_torch_backend(name: str, tmp_path: Path) -> None:
    kinds, fn, opcode = CASES[name]
    module = Fn(fn)
    examples = [_make(kind, shape, 0) for kind, shape in kinds]
    traced, compiled = compile_traced(module, examples)
    assert opcode in {ins.op for ins in compiled.programs[0].instructions}
    for seed in (1, 2):
        inputs = [_make(kind, shape, seed) for kind, shape in kinds]
        with torch.no_grad():
            expected = module(*inputs)
        ours, lite = run_engines(compiled, tmp_path / f"{name}.ptl", inputs)
        assert_same(ours, expected.numpy())
        assert_same(lite.numpy(), expected.numpy())  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [-1, 11])
def test_an_id_outside_the_table_is_an_error_in_every_engine(bad: int, tmp_path: Path) -> None:
    module = Fn(lambda m, i: torch.nn.functional.embedding(i, m.table))
    _, compiled = compile_traced(module, [torch.zeros(4, dtype=torch.int64)])
    ids = torch.tensor([0, 3, bad, 1])
    with pytest.raises(ExecutionError, match=rf"index {bad} is out of range \[0, 11\)"):
        run_engines(compiled, tmp_path / "m.ptl", [ids])
    lite = torch.jit.mobile._load_for_lite_interpreter(str(tmp_path / "m.ptl"))
    with pytest.raises(RuntimeError, match=rf"index {bad} is out of range \[0, 11\)"):
        lite.run_method("forward", ids)


def test_an_input_of_another_dtype_is_refused_in_every_engine(tmp_path: Path) -> None:
    module = Fn(lambda m, i: torch.nn.functional.embedding(i, m.table))
    _, compiled = compile_traced(module, [torch.zeros(4, dtype=torch.int64)])
    assert compiled.programs[0].inputs[0].dtype.name == "INT64"
    ids = torch.zeros(4, dtype=torch.int32)
    with pytest.raises(InputError, match=r"input 0: expected int64 of shape \(4,\), got int32 of shape \(4,\)"):
        run_engines(compiled, tmp_path / "m.ptl", [ids])
    lite = torch.jit.mobile._load_for_lite_interpreter(str(tmp_path / "m.ptl"))
    with pytest.raises(RuntimeError, match=r"input 0: expected int64 of shape \(4,\), got int32"):
        lite.run_method("forward", ids)


def test_every_slot_holds_one_dtype_and_results_keep_torchs() -> None:
    module = Fn(lambda m, i, mask: torch.nn.functional.embedding(i, m.table) * mask.unsqueeze(-1).float())
    _, compiled = compile_traced(module, [torch.zeros(2, 5, dtype=torch.int64), torch.ones(2, 5, dtype=torch.int64)])
    program = compiled.programs[0]
    assert len(program.slot_dtypes) == program.num_slots
    assert [d.name for d in program.slot_dtypes[:2]] == ["INT64", "INT64"]
    cast = next(ins for ins in program.instructions if ins.op == OpCode.CAST)
    assert program.slot_dtypes[cast.outputs[0]].name == "FLOAT32"
    assert np.dtype(compiled.weights[0].dtype) == np.float32
