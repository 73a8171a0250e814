"""Unsupported nodes: every live one reported at once, in the demo backend's words."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from bundle_format import ptmf
from liteexport.compiler import compile_module
from liteexport.compiler.source import display_path
from liteexport.errors import UnsupportedNodesError

from .models import unsupported, zoo

GOLDEN = Path(__file__).parent / "golden"
MODELS_DIR = display_path(str(Path(unsupported.__file__).resolve().parent))


def machine_independent(text: str) -> str:
    return text.replace(MODELS_DIR, "<models>")


def test_reports_every_unsupported_node_across_methods_golden() -> None:
    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(torch.jit.script(unsupported.Unsupported()))
    error = info.value
    assert len(error.reports) == 2
    assert error.reports[0].startswith(
        "The node of aten::erfinv is not supported in this compiler. Source code:   File ")
    assert error.reports[1].startswith(
        "The node of aten::to is not supported in this compiler"
        " (dtype float64 is not compiled (compiled: float32, int64, int32, bool)). Source code:")
    assert "aten::atan" not in str(error)  # dead
    assert machine_independent(str(error)) + "\n" == (GOLDEN / "unsupported.txt").read_text()


def test_selected_method_reports_only_its_nodes() -> None:
    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(torch.jit.script(unsupported.Unsupported()), methods=["other"])
    assert [r.splitlines()[0].split()[3] for r in info.value.reports] == ["aten::to"]


@pytest.mark.parametrize(("shape", "detail"), [
    ([-1, 3, 4], "dimension 0 is dynamic; give static input shapes (liteexport export --input-shape), "
                 "or name the dim (--input-shape forward:1xS --dim S=LO..HI)"),
    (None, "the input's rank is unknown; give static input shapes (liteexport export --input-shape)"),
])
def test_size_of_a_dynamic_dim_is_reported(shape: list[int] | None, detail: str) -> None:
    shapes = None if shape is None else {"forward": [shape]}
    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(torch.jit.script(zoo.DynamicView()), input_shapes=shapes)
    (report,) = info.value.reports
    assert report.startswith(
        "The node of aten::size is not supported in this compiler (its result is not static: "
        f"{detail})."
        " Source code:   File ")
    assert report.endswith("\nModule hierarchy: top(DynamicView)")


def test_training_mode_dropout_is_reported() -> None:
    with pytest.raises(UnsupportedNodesError, match="dropout in training mode"):
        compile_module(torch.jit.script(zoo.MLP().train()))


def test_unsupported_node_downstream_of_another_is_reported_too() -> None:
    class Downstream(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.erfinv(x.view(x.size(0), -1))

    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(torch.jit.script(Downstream()))
    kinds = [r.split()[3] for r in info.value.reports]
    assert kinds == ["aten::size", "aten::erfinv"]


def test_loop_over_a_dynamic_size_says_what_to_do() -> None:
    class Loop(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for _ in range(x.size(0)):
                x = x + 1
            return x

    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(torch.jit.script(Loop()))
    (report,) = info.value.reports
    assert report.startswith("The node of aten::size is not supported")
    assert "--input-shape" in report


def test_none_in_a_returned_named_tuple_is_a_constant_of_the_signature() -> None:
    from typing import NamedTuple, Optional

    class Outputs(NamedTuple):
        logits: torch.Tensor
        aux: Optional[torch.Tensor]  # noqa: UP045 (TorchScript reads the annotation)
        steps: int

    class Net(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> Outputs:
            return Outputs(x * 2.0, None, 3)

    globals()["Outputs"] = Outputs  # TorchScript resolves the annotation by name
    (method,) = compile_module(torch.jit.script(Net())).methods
    assert (method.num_outputs, method.constants) == (1, ((1, ptmf.NoneValue()), (2, ptmf.IntValue(3))))
    assert method.return_type == "Tuple[Tensor, NoneType, int]"


class _Labelled(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, str]:
        return x * 2.0, "label"


class _NoTensor(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[None, int]:
        return None, 3


@pytest.mark.parametrize("model, problem", [(_Labelled, "output 1 is a str"), (_NoTensor, "no output is a Tensor")])
def test_outputs_that_are_neither_tensors_nor_constants_name_the_output(model: type, problem: str) -> None:
    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(torch.jit.script(model()))
    (report,) = info.value.reports
    assert report.startswith("The node of prim::") and f"not supported in this compiler ({problem}:" in report


def test_named_tuple_of_tensors_compiles_as_a_tuple() -> None:
    from typing import NamedTuple

    class Pair(NamedTuple):
        a: torch.Tensor
        b: torch.Tensor

    class Net(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> Pair:
            return Pair(x * 2.0, x + 1.0)

    globals()["Pair"] = Pair
    compiled = compile_module(torch.jit.script(Net()))
    (method,) = compiled.methods
    assert method.returns_tuple and method.num_outputs == 2


def test_blockers_after_a_blocker_are_reported_with_shapes_known() -> None:
    # erfinv cannot be compiled, but torch's meta kernels give its result's shape: the size()
    # after it still folds, and the atan after that is reported too (35 hardtanh_ in
    # mobilenet_v2 are 35 sites, not one).
    class Chain(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.erfinv(x)
            z = y.view(y.size(0), -1)
            if z.is_floating_point():
                z = torch.atan(z)
            return torch.erfinv(z)

    with pytest.raises(UnsupportedNodesError) as info:
        compile_module(torch.jit.script(Chain()), input_shapes={"forward": [[2, 3, 4]]})
    assert info.value.counts == {"aten::erfinv": 2, "aten::atan": 1}


def test_round_to_decimals_is_reported_not_rounded_to_whole_numbers() -> None:
    """ROUND rounds to whole numbers: torch.round(x, decimals=2) is refused, never computed as round(x)."""
    class RoundDecimals(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.round(x, decimals=2) + torch.round(x)

    with pytest.raises(UnsupportedNodesError, match="decimals=2"):
        compile_module(torch.jit.script(RoundDecimals()), input_shapes={"forward": [(2, 3)]})
