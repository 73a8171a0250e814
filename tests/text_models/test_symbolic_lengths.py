"""The tiny text models compiled ONCE with a named sequence length (issue 20, item 3):
``--input-shape forward:1xS:int64,1xS:int64 --dim S=1..64``. Each is traced at length 8; the one
program then runs at S = 8, 16 and 64 (padding in the mask) in runtime_py, in torch's lite
interpreter with liteexport's backend and in the native core, compared with the eager model at the
same inputs; S = 65 is outside the bounds (max_position_embeddings is 64) and an input error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.jit.mobile

import liteexport.torch_backend as tb
import runtime_py
from bundle_format.program import OpCode, SymbolicDim
from liteexport.compiler import compile_module
from liteexport.input_spec import DimRange, TensorSpec
from runtime_py.errors import ExecutionError, InputError
from tests.text_models.test_text_models import LEFT_PADDED, MODELS, VOCAB, _inputs, _model
from tests.text_models.typed import assert_same, native_tool_available, run_engines, run_native

pytestmark = pytest.mark.torch_oracle

SPECS = [TensorSpec((1, "S"), "int64")] * 2
DIMS = {"S": DimRange("S", 1, 64)}


@pytest.fixture(scope="module", autouse=True)
def backend() -> None:
    tb.load_torch_backend()


def _at_length(name: str, length: int, seed: int) -> list[torch.Tensor]:
    """Ids and a mask of one sequence of ``length``, a quarter of it padding (on the left for decoders)."""
    ids = torch.randint(0, VOCAB, (1, length), generator=torch.Generator().manual_seed(seed))
    mask = torch.ones(1, length, dtype=torch.int64)
    padding = length // 4
    mask[0, slice(0, padding) if name in LEFT_PADDED else slice(length - padding, length)] = 0
    return [ids, mask]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_one_program_serves_every_length(name: str, tmp_path: Path) -> None:
    model = _model(name)
    traced = torch.jit.trace(model, tuple(_inputs(0, 0)), strict=False)
    compiled = compile_module(traced, input_shapes={"forward": SPECS}, dims=DIMS)
    (program,) = compiled.programs
    assert program.symbolic_dims == (SymbolicDim("S", 1, 64),)
    assert [info.shape for info in program.inputs] == [(1, -1), (1, -1)]
    path = tmp_path / f"{name}.ptl"
    for length in (8, 16, 64):
        inputs = _at_length(name, length, seed=length)
        with torch.no_grad():
            expected = model(*inputs).numpy()
        assert expected.shape[1] == length
        ours, lite = run_engines(compiled, path, inputs)
        assert_same(ours, expected)
        assert_same(lite.numpy(), expected)  # type: ignore[attr-defined]
    with pytest.raises(InputError) as info:
        runtime_py.load(path).run_method("forward", *[t.numpy() for t in _at_length(name, 65, seed=65)])
    assert info.value.code == "INPUT_DIM_RANGE"
    if native_tool_available():  # run_engines ran the native core at 8, 16 and 64; 65 is its exit 6 too
        with pytest.raises(InputError, match="outside S=1..64"):
            run_native(path, [t.numpy() for t in _at_length(name, 65, seed=65)])
    lite_module = torch.jit.mobile._load_for_lite_interpreter(str(path))
    with pytest.raises(RuntimeError, match="dim 1 is S = 65, outside S=1..64"):
        lite_module.run_method("forward", *_at_length(name, 65, seed=65))


def test_positions_are_a_range_over_the_run_time_length() -> None:
    """Llama's position ids (arange of the embeddings' length) read S from the ids input."""
    traced = torch.jit.trace(_model("llama"), tuple(_inputs(0, 0)), strict=False)
    (program,) = compile_module(traced, input_shapes={"forward": SPECS}, dims=DIMS).programs
    ranges = [ins for ins in program.instructions if ins.op == OpCode.ARANGE_LIKE]
    assert ranges and all(ins.inputs[0] in (0, 1) for ins in ranges)


def test_written_once_read_back() -> None:
    """The program with ARANGE_LIKE survives its codec."""
    from bundle_format.program_codec import decode_program, encode_program

    traced = torch.jit.trace(_model("distilbert"), tuple(_inputs(0, 0)), strict=False)
    (program,) = compile_module(traced, input_shapes={"forward": SPECS}, dims=DIMS).programs
    assert decode_program(encode_program(program)) == program


class Ranges(torch.nn.Module):
    """ARANGE_LIKE with a start and an end offset, and cast to float32."""

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.arange(2, ids.size(1) - 1), torch.arange(ids.size(1), dtype=torch.float32) * 0.5


def test_arange_like_in_every_engine(tmp_path: Path) -> None:
    compiled = compile_module(torch.jit.script(Ranges()), input_shapes={"forward": [TensorSpec((1, "S"), "int64")]})
    (program,) = compiled.programs
    assert [ins.op for ins in program.instructions][:2] == [OpCode.ARANGE_LIKE, OpCode.ARANGE_LIKE]
    path = tmp_path / "ranges.ptl"
    for length in (3, 7, 64):
        ids = torch.zeros(1, length, dtype=torch.int64)
        ours, lite = run_engines(compiled, path, [ids])
        assert_same(ours, Ranges()(ids))
        assert_same(lite, Ranges()(ids))
    short = torch.zeros(1, 2, dtype=torch.int64)  # arange(2, 1): torch refuses it, and so do the engines
    with pytest.raises(RuntimeError, match="upper bound and lower bound inconsistent"):
        Ranges()(short)
    refused = r"the range's end 1 \(size 2 of axis 1 -1\) is before its start 2"
    with pytest.raises(ExecutionError, match=refused) as info:
        runtime_py.load(path).run_method("forward", short.numpy())
    assert info.value.code == "KERNEL_FAILED"
    with pytest.raises(RuntimeError, match=refused):
        torch.jit.mobile._load_for_lite_interpreter(str(path)).run_method("forward", short)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_cli_exports_a_saved_trace_and_self_checks_it_at_the_bounds(name: str, tmp_path: Path) -> None:
    """A saved traced archive keeps Python numbers as 0-d tensor constants (``seq_length + 0``,
    float64 ``0.5``); the export self-checks the program at S = 1, 64 and 32."""
    model = _model(name)
    torch.jit.save(torch.jit.trace(model, tuple(_inputs(0, 0)), strict=False), str(tmp_path / "model.pt"))
    out = tmp_path / "model.ptl"
    run = subprocess.run([sys.executable, "-m", "liteexport", "export", str(tmp_path / "model.pt"), "-o", str(out),
                          "--input-shape", "forward:1xS:int64,1xS:int64", "--dim", "S=1..64"],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "self-check passed for forward" in run.stderr and "on 3 input sets" in run.stderr
    inputs = _at_length(name, 20, seed=20)
    with torch.no_grad():
        expected = model(*inputs).numpy()
    assert_same(runtime_py.load(out).run_method("forward", *[t.numpy() for t in inputs]), expected)
