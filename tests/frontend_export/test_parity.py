"""Parity of the torch.export front end with eager torch on the same inputs, on runtime_py (every
case) and torch's lite interpreter through liteexport's backend (the small ones), and the same
program as the TorchScript front end's where both compile the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport
import runtime_py
from liteexport.inspect_bundle import delegate_contents
from liteexport.torch_backend import load_torch_backend
from tests.frontend_export import models
from tests.frontend_export.cases import CASES, Case, flat, inputs


def _ops(path: Path) -> list[str]:
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    return [instruction.op.name for instruction in contents[0]["forward"].instructions]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_export_front_end_matches_eager_torch(case: Case, tmp_path: Path) -> None:
    model = case.build().eval()
    path = tmp_path / "m.ptl"
    liteexport.export(model, path, input_shapes=list(case.shapes), dims=case.dims or None, frontend="export")
    bundle = runtime_py.load(path)
    small = sum(p.numel() for p in model.parameters()) < 1_000_000
    if small:
        load_torch_backend()
        lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    for seed, sizes in enumerate(case.sizes):
        xs = inputs(case, sizes, seed)
        with torch.no_grad():
            expected = [t.numpy() for t in flat(model(*xs))]
        got = bundle.forward(*[x.numpy() for x in xs])
        ours = list(got.values()) if isinstance(got, dict) else list(got) if isinstance(got, tuple) else [got]
        assert len(ours) == len(expected)
        for g, e in zip(ours, expected, strict=True):
            np.testing.assert_allclose(g, e, atol=1e-4, rtol=1e-4)
        if small:
            for g, e in zip(flat(lite.forward(*xs)), expected, strict=True):
                np.testing.assert_allclose(g.numpy(), e, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("case", [c for c in CASES if c.name in ("tiny_cnn", "resnet18", "dict output")],
                         ids=lambda c: c.name)
def test_both_front_ends_compile_the_same_instructions(case: Case, tmp_path: Path) -> None:
    for frontend in ("export", "torchscript"):
        liteexport.export(case.build().eval(), tmp_path / f"{frontend}.ptl", input_shapes=list(case.shapes),
                          frontend=frontend)
    # torch.export writes flatten as the view it is (Core ATen has no flatten): a RESHAPE, the same copy
    scripted = ["RESHAPE" if op == "FLATTEN" else op for op in _ops(tmp_path / "torchscript.ptl")]
    assert _ops(tmp_path / "export.ptl") == scripted


def test_an_exported_program_with_a_named_dim_keeps_it_on_every_engine(tmp_path: Path) -> None:
    from runtime_py.errors import InputError

    model = models.Block().eval()
    program = torch.export.export(model, (torch.randn(1, 8, 64),),
                                  dynamic_shapes=({1: torch.export.Dim("S", min=1, max=64)},))
    path = tmp_path / "block.ptl"
    liteexport.export(program, path, input_shapes=["1xSx64"], dims={"S": (1, 64)})
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    (dim,) = contents[0]["forward"].symbolic_dims
    assert (dim.name, dim.lo, dim.hi) == ("S", 1, 64)
    x = torch.randn(1, 5, 64)
    with torch.no_grad():
        np.testing.assert_allclose(runtime_py.load(path).forward(x.numpy()), model(x).numpy(), atol=1e-5, rtol=1e-5)
    with pytest.raises(InputError, match="S = 65, outside S=1..64"):
        runtime_py.load(path).forward(np.zeros((1, 65, 64), np.float32))
    with pytest.raises(InputError, match="input shapes 1xSx32 do not match the exported program.s inputs 1xSx64"):
        liteexport.export(program, tmp_path / "bad.ptl", input_shapes=["1xSx32"], dims={"S": (1, 64)})
    assert not (tmp_path / "bad.ptl").exists()
