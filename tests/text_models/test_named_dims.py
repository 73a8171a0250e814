"""Named dims with bounds (issue 20, item 3): ``--dim S=2..16`` is recorded in the program (its
SymbolicDims and each input dim's symbol), and every engine checks it on each call: a size
outside the bounds, or two inputs disagreeing on S, is an input error (exit 6) naming the input,
the dim and the bounds. Malformed references in a program are format errors."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport
import liteexport.torch_backend as tb
import runtime_py
from bundle_format.program import SymbolicDim, ValueInfo
from bundle_format.program_codec import decode_program, encode_program
from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.input_spec import DimRange, TensorSpec
from runtime_py.backends.demo.plan import build_plan
from runtime_py.errors import FormatError, InputError
from tests.text_models.typed import native_tool_available, run_native

pytestmark = pytest.mark.torch_oracle


class Tagged(torch.nn.Module):
    """Embeds ids and scales them by a mask of the same length."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.nn.Embedding(50, 8)

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self.table(ids) * mask.unsqueeze(-1)


SPECS = [TensorSpec((1, "S"), "int64"), TensorSpec((1, "S"), "float32")]


def _compiled(bounds: tuple[int, int] = (2, 16)) -> liteexport.lowered.CompiledModule:
    return compile_module(torch.jit.script(Tagged()), input_shapes={"forward": SPECS},
                          dims={"S": DimRange("S", *bounds)})


def _inputs(ids_length: int, mask_length: int) -> tuple[np.ndarray, np.ndarray]:
    return np.arange(ids_length, dtype=np.int64)[None] % 50, np.ones((1, mask_length), np.float32)


def test_the_program_records_the_named_dim_and_its_bounds() -> None:
    (program,) = _compiled().programs
    assert program.symbolic_dims == (SymbolicDim("S", 2, 16),)
    assert [info.dim_symbols for info in program.inputs] == [(-1, 0), (-1, 0)]
    assert [info.shape for info in program.inputs] == [(1, -1), (1, -1)]
    assert decode_program(encode_program(program)) == program


def test_runtime_py_checks_bounds_and_agreement(tmp_path: Path) -> None:
    path = tmp_path / "tagged.ptl"
    write_bundle(_compiled(), path)
    module = runtime_py.load(path)
    for length in (2, 9, 16):
        ids, mask = _inputs(length, length)
        expected = Tagged()(torch.from_numpy(ids), torch.from_numpy(mask)).detach().numpy()
        np.testing.assert_allclose(module.forward(ids, mask), expected, rtol=1e-6)
    for length in (1, 17):
        with pytest.raises(InputError) as info:
            module.forward(*_inputs(length, length))
        assert info.value.code == "INPUT_DIM_RANGE" and info.value.exit_code == 6
        assert f"input 0: dim 1 is S = {length}, outside S=2..16" in str(info.value)
    with pytest.raises(InputError) as info:
        module.forward(*_inputs(5, 6))
    assert info.value.code == "INPUT_DIM_AGREE"
    assert "input 1: dim 1 is S = 6, but input 0 has it = 5" in str(info.value)


def test_the_cli_exits_6_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "tagged.ptl"
    write_bundle(_compiled(), path)
    ids, mask = _inputs(17, 17)
    np.savez(tmp_path / "in.npz", ids=ids, mask=mask)
    run = subprocess.run([sys.executable, "-m", "liteexport", "run", str(path), "--input", str(tmp_path / "in.npz")],
                         capture_output=True, text=True)
    assert run.returncode == 6, run.stderr
    assert "dim 1 is S = 17, outside S=2..16" in run.stderr and "Traceback" not in run.stderr


def test_the_torch_backend_checks_them_too(tmp_path: Path) -> None:
    tb.load_torch_backend()
    path = tmp_path / "tagged.ptl"
    write_bundle(_compiled(), path)
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    ids, mask = _inputs(9, 9)
    np.testing.assert_allclose(lite.forward(torch.from_numpy(ids), torch.from_numpy(mask)).numpy(),
                               runtime_py.load(path).forward(ids, mask), rtol=1e-6)
    for lengths, text in (((17, 17), "dim 1 is S = 17, outside S=2..16"),
                          ((5, 6), "dim 1 is S = 6, but input 0 has it = 5")):
        with pytest.raises(RuntimeError, match=text):
            lite.forward(*(torch.from_numpy(a) for a in _inputs(*lengths)))


@pytest.mark.parametrize(("change", "code"), [
    (lambda p: dataclasses.replace(p, symbolic_dims=()), "DIM_SYMBOL_RANGE"),
    (lambda p: dataclasses.replace(p, symbolic_dims=(SymbolicDim("S", 5, 4),)), "DIM_BOUNDS"),
    (lambda p: dataclasses.replace(p, inputs=(ValueInfo((1, 8), p.inputs[0].dtype, (-1, 0)), *p.inputs[1:])),
     "DIM_SYMBOL_STATIC"),
    (lambda p: dataclasses.replace(p, inputs=(ValueInfo((1, -1), p.inputs[0].dtype, (0,)), *p.inputs[1:])),
     "DIM_SYMBOLS_LENGTH"),
])
def test_malformed_references_are_format_errors(change: object, code: str) -> None:
    compiled = _compiled()
    (program,) = compiled.programs
    broken = change(program)  # type: ignore[operator]
    with pytest.raises(FormatError) as info:
        build_plan(decode_program(encode_program(broken)), compiled.weights)
    assert info.value.code == code


def test_inspect_shows_dtypes_and_named_dims(tmp_path: Path) -> None:
    path = tmp_path / "tagged.ptl"
    write_bundle(_compiled(), path)
    run = subprocess.run([sys.executable, "-m", "liteexport", "inspect", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "  forward(ids: Tensor[1xS:int64], mask: Tensor[1xS]) -> Tensor  where S=2..16" in run.stdout.splitlines()
    assert "1xS:int64, 1xS (S=2..16)" in run.stdout


@pytest.mark.android
@pytest.mark.skipif(not native_tool_available(), reason="needs cmake and g++ to build the native core")
def test_the_native_core_checks_them_with_runtime_pys_words(tmp_path: Path) -> None:
    path = tmp_path / "tagged.ptl"
    write_bundle(_compiled(), path)
    ids, mask = _inputs(9, 9)
    np.testing.assert_allclose(run_native(path, [ids, mask])[0], runtime_py.load(path).forward(ids, mask),
                               rtol=1e-6, atol=1e-6)
    for lengths in ((17, 17), (1, 1), (5, 6)):
        with pytest.raises(InputError) as ours:
            runtime_py.load(path).forward(*_inputs(*lengths))
        with pytest.raises(InputError) as native:
            run_native(path, list(_inputs(*lengths)))
        assert str(native.value) == str(ours.value)  # the same words, and the module reading the input
