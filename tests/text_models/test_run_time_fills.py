"""torch.ones / zeros / full / new_* over a size known only at run time (issue 20): a causal mask built
in the model from ``x.size(1)``, compiled ONCE with ``--dim S=1..64`` and run at S = 8, 16 and 64 by
runtime_py, torch's lite interpreter with liteexport's backend and (where it builds) the native core,
each against the eager model at the same inputs. The sizes reach the program as one FULL instruction
reading them from the input S comes from, never as a constant of the traced length."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import torch.jit.mobile  # noqa: F401 - run_engines loads bundles with it

import liteexport.torch_backend as tb
from bundle_format.program import FillAttrs, OpCode
from liteexport.compiler import compile_module
from liteexport.input_spec import DimRange, TensorSpec
from liteexport.lowered import CompiledModule
from runtime_py.errors import ExecutionError, InputError
from tests.text_models.typed import check_against_eager, run_engines

pytestmark = pytest.mark.torch_oracle

DIMS = {"S": DimRange("S", 1, 64)}
SPECS = [TensorSpec((1, "S", 8), "float32")]


@pytest.fixture(scope="module", autouse=True)
def backend() -> None:
    tb.load_torch_backend()


class CausalAttention(torch.nn.Module):
    """One head of causal self-attention whose masks are built from the run-time length, the ways
    models spell them: an additive -inf mask (full + triu), a boolean keep-mask (ones + tril), and
    zeros / new_ones / an int64 full over S and S + 1 mixed with static sizes."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.qkv = torch.nn.Linear(8, 24)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        length = x.size(1)
        q, k, v = self.qkv(x).chunk(3, -1)
        scores = q @ k.transpose(1, 2) / math.sqrt(8)
        additive = torch.full((length, length), float("-inf")).triu(1)
        keep = torch.ones(length, length, dtype=torch.bool).tril()
        scores = (scores + additive).masked_fill(~keep, -1e9) + torch.zeros(1, length, 1)
        out = scores.softmax(-1) @ v + x.new_ones(length, 1)
        return out, torch.full((length, length + 1), 2).cumsum(1), torch.ones(1, length)


def _compiled(scripted: bool) -> CompiledModule:
    model = CausalAttention().eval()
    module = torch.jit.script(model) if scripted else torch.jit.trace(model, (torch.randn(1, 8, 8),), strict=False)
    return compile_module(module, input_shapes={"forward": SPECS}, dims=DIMS)


@pytest.mark.parametrize("scripted", [False, True], ids=["traced", "scripted"])
def test_a_causal_mask_over_the_run_time_length_matches_torch_in_every_engine(scripted: bool,
                                                                              tmp_path: Path) -> None:
    compiled = _compiled(scripted)
    (program,) = compiled.programs
    fills = [ins for ins in program.instructions if ins.op == OpCode.FULL]
    # every factory of the model is a FULL reading S (axis 1) from the input, in slot 0
    assert len(fills) == 6 and all(ins.inputs[1] == 0 for ins in fills)
    assert FillAttrs(dims=(0, 1), axes=(1, 1)) in [ins.attributes for ins in fills]  # (S, S + 1)
    assert FillAttrs(dims=(1, 0, 1), axes=(-1, 1, -1)) in [ins.attributes for ins in fills]  # (1, S, 1)
    for length in (8, 16, 64):
        x = torch.randn(1, length, 8, generator=torch.Generator().manual_seed(length))
        check_against_eager(CausalAttention().eval(), compiled, tmp_path / "causal.ptl", [x])
    with pytest.raises(InputError) as info:
        run_engines(compiled, tmp_path / "causal.ptl", [torch.randn(1, 65, 8)])
    assert info.value.code == "INPUT_DIM_RANGE"


class Shorter(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros(x.size(1) - 3, 2) + 1


def test_a_negative_run_time_size_is_an_error_in_every_engine(tmp_path: Path) -> None:
    """zeros(S - 3) at S = 2: torch refuses it, and every engine names the dim and the sizes."""
    compiled = compile_module(torch.jit.script(Shorter()), input_shapes={"forward": [TensorSpec((1, "S"), "float32")]})
    check_against_eager(Shorter(), compiled, tmp_path / "shorter.ptl", [torch.randn(1, 5)])
    with pytest.raises(RuntimeError, match="must be non-negative"):
        Shorter()(torch.randn(1, 2))
    message = r"FULL \(slots \[\d+, 0\] -> \[\d+\]\): dim 0 has the negative size -1 \(size 2 of axis 1 -3\)"
    with pytest.raises(ExecutionError, match=message) as info:
        run_engines(compiled, tmp_path / "shorter.ptl", [torch.randn(1, 2)])  # the native core's too
    assert info.value.code == "KERNEL_FAILED"
    with pytest.raises(RuntimeError, match=message):
        torch.jit.mobile._load_for_lite_interpreter(str(tmp_path / "shorter.ptl")).run_method("forward",
                                                                                               torch.randn(1, 2))


class Doubled(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.ones(2 * x.size(1))


def test_a_size_that_is_not_s_plus_a_constant_is_reported() -> None:
    from liteexport.errors import UnsupportedNodesError

    with pytest.raises(UnsupportedNodesError, match=r"a tensor of size \(2\*S\) is not compiled: a size known only "
                                                    r"at run time must be S \+ a constant"):
        compile_module(torch.jit.script(Doubled()), input_shapes={"forward": [TensorSpec((1, "S"), "float32")]})


def test_the_cli_exports_the_trace_and_self_checks_it_at_the_bounds(tmp_path: Path) -> None:
    """`--input-shape forward:1xSx8 --dim S=1..64` on a saved trace: the export self-checks the one
    program at S = 1, 64 and between them."""
    archive, out = tmp_path / "causal.pt", tmp_path / "causal.ptl"
    torch.jit.save(torch.jit.trace(CausalAttention().eval(), (torch.randn(1, 8, 8),), strict=False), str(archive))
    run = subprocess.run([sys.executable, "-m", "liteexport", "export", str(archive), "-o", str(out),
                          "--input-shape", "forward:1xSx8", "--dim", "S=1..64"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "self-check passed for forward" in run.stderr and "on 3 input sets" in run.stderr
