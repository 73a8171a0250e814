"""The working memory planned at export for the upper bounds of the named dims (issue 20: "memory is
planned for the upper bounds"; liteexport/compiler/working_memory.py): the figure a program carries,
what runtime_py and the native core do with it (a call's memory budget must hold it: a budget that
would fail the longest input fails every call), and where a user sees it (export notes, inspect)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import runtime_py
from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.input_spec import TensorSpec
from runtime_py.budgets import RunLimitExceeded
from tests.parity import parity_models
from tests.text_models.test_run_time_fills import DIMS, SPECS, CausalAttention
from tests.text_models.typed import assert_same, native_tool, native_tool_available

pytestmark = pytest.mark.torch_oracle


def _bundle(path: Path) -> int:
    """The causal-attention model compiled for S = 1..64, written to ``path``; its planned bytes."""
    compiled = compile_module(torch.jit.script(CausalAttention().eval()), input_shapes={"forward": SPECS}, dims=DIMS)
    write_bundle(compiled, path)
    (program,) = compiled.programs
    return program.working_memory


def test_a_budget_of_the_planned_bytes_runs_every_length_and_less_runs_none(tmp_path: Path) -> None:
    """runtime_py's budget counts the inputs besides the results: with the plan plus the longest input
    every length runs (the run at S = 64 too, which the per-step checks would refuse were the plan
    short of what it holds); a byte less than the plan refuses the shortest input as well."""
    path = tmp_path / "causal.ptl"
    planned = _bundle(path)
    # the scores (S x S floats) dominate: at least the softmax's input and result at S = 64
    assert planned >= 2 * 64 * 64 * 4
    longest = 64 * 8 * 4
    for length in (8, 16, 64):
        x = torch.randn(1, length, 8, generator=torch.Generator().manual_seed(length))
        with torch.no_grad():
            expected = [t.numpy() for t in CausalAttention().eval()(x)]
        bundle = runtime_py.load(path, max_memory=planned + longest)
        assert_same(bundle.run_method("forward", x.numpy()), expected)
    message = (rf"method 'forward' is planned to hold up to {planned} bytes of results at the upper bounds of "
               rf"S=1..64: more than the memory budget of {planned - 1} bytes")
    with pytest.raises(RunLimitExceeded, match=message):
        runtime_py.load(path, max_memory=planned - 1).run_method("forward", np.zeros((1, 1, 8), np.float32))


@pytest.mark.skipif(not native_tool_available(), reason="needs cmake and g++ for the native core")
def test_the_native_core_refuses_a_budget_below_the_plan(tmp_path: Path) -> None:
    path = tmp_path / "causal.ptl"
    planned = _bundle(path)
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 2, 8), np.float32))

    def run(budget: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(native_tool()), str(path), str(x), "--output", str(tmp_path / "out.npz"),
                               "--max-memory", str(budget)], capture_output=True, text=True, timeout=300, check=False)

    assert run(planned).returncode == 0  # the native core counts results only, as the plan does
    refused = run(planned - 1)
    assert refused.returncode == 7, refused.stderr
    assert (f"method 'forward' is planned to hold up to {planned} bytes of results at the upper bounds of S=1..64: "
            f"more than the memory budget of {planned - 1} bytes (option max_memory)") in refused.stderr


def test_only_programs_with_bounded_named_dims_are_planned() -> None:
    """A static program's one shape is what its first run measures; a dim without an upper bound
    has no bound to plan for."""
    static = compile_module(torch.jit.script(parity_models.MLP()), input_shapes={"forward": [(4, 20)]})
    unbounded = compile_module(torch.jit.script(CausalAttention().eval()), input_shapes={"forward": SPECS})
    assert static.programs[0].working_memory == 0 and unbounded.programs[0].working_memory == 0
    assert not [note for note in static.notes if "bytes of results" in note]


def test_the_export_notes_and_inspect_show_the_plan(tmp_path: Path) -> None:
    path = tmp_path / "causal.ptl"
    planned = _bundle(path)
    compiled = compile_module(torch.jit.script(CausalAttention().eval()), input_shapes={"forward": [
        TensorSpec((1, "S", 8), "float32")]}, dims=DIMS)
    assert (f"method 'forward' holds up to {planned:,} bytes of results at the upper bounds of S=1..64 (planned at "
            "export; a smaller memory budget is refused at every call)") in compiled.notes
    run = subprocess.run([sys.executable, "-m", "liteexport", "inspect", str(path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert f"  forward memory: up to {planned:,} bytes of results at S=1..64 (planned for the upper bounds)" in \
        run.stdout.splitlines()
