"""Side effects are compiled (list and dict writes, in-place updates the walk can follow)
or reported, never dropped; loops with a static trip count are unrolled."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from liteexport.compiler import compile_module
from liteexport.compiler.reports import WHAT_TO_TRY
from liteexport.errors import UnsupportedNodesError

from .conftest import prepare
from .models import effects
from .reference import run_method


def compiled_matches_eager(model: torch.nn.Module, *shapes: tuple[int, ...]) -> None:
    scripted = prepare(model)
    compiled = compile_module(scripted, input_shapes={"forward": [list(s) for s in shapes]})
    torch.manual_seed(1)
    inputs = [torch.randn(s) for s in shapes]
    expected = scripted(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = run_method(compiled, "forward", *inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-4)


def blocker(model: torch.nn.Module) -> str:
    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(torch.jit.script(model), input_shapes={"forward": [[2, 3]]})
    (report,) = info.value.reports
    return report


def test_densenet_style_append_then_cat_regression() -> None:
    # densenet121 used to export with its appends dropped (most of the network gone)
    compiled_matches_eager(effects.DenseBlock(), (1, 3, 4, 4))
    program = compile_module(prepare(effects.DenseBlock()), input_shapes={"forward": [[1, 3, 4, 4]]}).programs[0]
    assert sum(ins.op.name == "CONV2D" for ins in program.instructions) == 3


def test_list_and_dict_writes_loops_and_len() -> None:
    compiled_matches_eager(effects.ListEdits(), (2, 3))


def test_in_place_update_of_a_constant_computed_at_compile_time() -> None:
    compiled_matches_eager(effects.InPlaceOnComputedConstant(), (2, 3))


def test_constant_built_by_slice_assignment_compiles_with_torch_aliasing() -> None:
    compiled_matches_eager(effects.MaskBuiltInPlace(), (2, 4, 4))


def test_in_place_update_seen_through_a_list() -> None:
    compiled_matches_eager(effects.InPlaceInList(), (2, 3))


def test_memo_written_to_a_module_dict_in_a_branch_is_read_back_regression() -> None:
    # timm's efficientvit_m0 and levit_128s exited 70 (KeyError: 'cpu'): every read of the cache
    # attribute was a fresh copy, so the entry the branch wrote was not there when read back
    compiled_matches_eager(effects.CachedAttentionBias(), (1, 2, 4, 3))


def test_a_buffer_updated_in_place_is_program_state() -> None:
    """``self.total.add_(1.0)`` with an unused result: the buffer is state the program writes
    (STATE_WRITE), kept across calls, not dropped as dead code."""
    from bundle_format.program import OpCode
    from liteexport.compiler import compile_module
    from runtime_py.backends.demo.executor import run
    from runtime_py.backends.demo.plan import build_plan

    compiled = compile_module(torch.jit.script(effects.InPlaceOnBuffer()), input_shapes={"forward": [(2,)]})
    (program,) = compiled.programs
    assert [s.name for s in program.states] == ["total"]
    assert OpCode.STATE_WRITE in {i.op for i in program.instructions}
    plan = build_plan(program, list(compiled.weights))
    for _ in range(3):
        run(plan, [np.ones(2, np.float32)])
    assert plan.module_state is not None
    np.testing.assert_array_equal(plan.module_state.arrays["total"], [3.0, 3.0, 3.0])


@pytest.mark.parametrize(("model", "kind", "reason"), [
    (effects.AttributeWrite, "prim::SetAttr", "writes to module attributes"),
    (effects.InPlaceOnView, "aten::relu_", "shares memory with another (a view)"),
    (effects.InPlaceOnInput, "aten::mul_", "in-place update of a method input"),
    (effects.RunTimeValueCached, "aten::_set_item", "held by a module attribute (state kept across calls)"),
])
def test_uncompilable_side_effects_are_reported_even_when_their_result_is_unused(
        model: type[torch.nn.Module], kind: str, reason: str) -> None:
    report = blocker(model())
    assert report.startswith(f"The node of {kind} is not supported in this compiler (")
    assert reason in report.splitlines()[0]
    assert "<--- HERE" in report  # with its source line


def test_dead_append_of_an_unsupported_value_stays_silent() -> None:
    compile_module(torch.jit.script(effects.DeadAppend()))


def test_unsupported_value_appended_to_a_live_list_is_reported() -> None:
    assert blocker(effects.UnsupportedAppended()).startswith("The node of aten::erfinv is not supported")


def test_data_dependent_condition_says_what_to_do() -> None:
    report = blocker(effects.DataDependentIf())
    assert report.startswith("The node of aten::Bool is not supported in this compiler (it reads a tensor's "
                             "values at compile time (data-dependent control flow or sizes); compute the "
                             "decision outside the model, or use torch.where)")


def test_repeated_sites_are_grouped_with_counts() -> None:
    class Block(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.erfinv(x)

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = torch.nn.Sequential(Block(), Block(), Block())

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.atan(self.blocks(x))

    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(torch.jit.script(Net()))
    error = info.value
    assert error.counts == {"aten::erfinv": 3, "aten::atan": 1}
    assert str(error).startswith("4 unsupported nodes of 2 kinds:\n  aten::erfinv  3 sites\n  aten::atan    1 site\n"
                                 f"{WHAT_TO_TRY}\n\n")
    erfinv_report, atan_report = error.reports
    assert [line for line in erfinv_report.splitlines() if line.startswith("Module hierarchy:")] == [
        f"Module hierarchy: top(Net).blocks(Sequential).{i}(Block)" for i in range(3)]
    assert atan_report.startswith("The node of aten::atan")
