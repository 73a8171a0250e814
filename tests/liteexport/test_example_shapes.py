"""Example inputs alone imply the static shapes and dtypes a method is compiled for, on both front
ends (issue 33 item 2): a model whose ops need their input's rank (flatten, a linear layer after
it) exports from its example inputs, with a note that says which shapes it was compiled for."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from runtime_py.errors import InputError

pytestmark = pytest.mark.torch_oracle


class FlattenHead(torch.nn.Module):
    """Flattens all but the batch dim: its compile needs the input's rank."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(2 * 3 * 4, 5)

    def forward(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(x, 1)) + positions.float()


def _model() -> torch.nn.Module:
    torch.manual_seed(3)
    return FlattenHead().eval()


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
def test_example_inputs_alone_give_the_shapes_and_dtypes(frontend: str, tmp_path: Path) -> None:
    model, out = _model(), tmp_path / "head.ptl"
    generator = torch.Generator().manual_seed(0)
    sets = [(torch.randn(2, 2, 3, 4, generator=generator), torch.arange(5).expand(2, 5).contiguous())
            for _ in range(2)]
    exported = liteexport.export(model, out, example_inputs=sets, frontend=frontend)
    assert "forward is compiled for its example inputs' shapes, 2x2x3x4, 2x5:int64 (give input shapes, with " \
           "named dims, for other sizes)" in exported.notes
    loaded = runtime_py.load(out)
    x, positions = torch.randn(2, 2, 3, 4), torch.randint(0, 9, (2, 5))
    got = loaded.forward(x.numpy(), positions.numpy())
    np.testing.assert_allclose(got, model(x, positions).detach().numpy(), rtol=1e-5, atol=1e-5)
    with pytest.raises(InputError):  # compiled static: another batch size does not fit
        loaded.forward(np.zeros((3, 2, 3, 4), np.float32), np.zeros((3, 5), np.int64))


def test_a_size_the_example_sets_disagree_on_is_any_on_the_torchscript_front_end(tmp_path: Path) -> None:
    model, out = _model(), tmp_path / "head.ptl"
    sets = [(torch.randn(n, 2, 3, 4), torch.zeros(n, 5, dtype=torch.int64)) for n in (1, 2)]
    exported = liteexport.export(model, out, example_inputs=sets, frontend="torchscript")
    assert "forward is compiled for its example inputs' shapes, -1x2x3x4, -1x5:int64 (give input shapes, with " \
           "named dims, for other sizes)" in exported.notes
    x, positions = torch.randn(6, 2, 3, 4), torch.randint(0, 9, (6, 5))
    got = runtime_py.load(out).forward(x.numpy(), positions.numpy())
    np.testing.assert_allclose(got, model(x, positions).detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("frontend", ["export", None])  # None: the default, torch.export
def test_the_export_front_end_asks_for_a_named_dim_where_example_sets_differ(frontend: str | None,
                                                                             tmp_path: Path) -> None:
    sets = [(torch.randn(n, 2, 3, 4), torch.zeros(n, 5, dtype=torch.int64)) for n in (1, 2)]
    with pytest.raises(InputError, match=r"^example inputs of forward differ in size \(-1x2x3x4, -1x5:int64, -1 where "
                                         r"they differ\); torch.export traces one size per dim unless it is named: "
                                         r"give input shapes with a named dim") as info:
        liteexport.export(_model(), tmp_path / "head.ptl", example_inputs=sets, frontend=frontend)
    assert info.value.exit_code == 6 and not (tmp_path / "head.ptl").exists()


def test_example_sets_of_different_ranks_are_an_input_error(tmp_path: Path) -> None:
    sets = [(torch.randn(2, 2, 3, 4), torch.zeros(2, 5, dtype=torch.int64)),
            (torch.randn(2, 24), torch.zeros(2, 5, dtype=torch.int64))]
    with pytest.raises(InputError, match=r"^example inputs of forward: input 0 \(x\) is 4-d float32 in set 0 and 2-d "
                                         r"float32 in set 1; a compiled input has one rank and dtype: give input "
                                         r"shapes \(--input-shape\) to say which$") as info:
        liteexport.export(_model(), tmp_path / "head.ptl", example_inputs=sets)
    assert info.value.exit_code == 6 and not (tmp_path / "head.ptl").exists()


def test_input_shapes_given_win_over_the_examples(tmp_path: Path) -> None:
    sets = [(torch.randn(2, 2, 3, 4), torch.zeros(2, 5, dtype=torch.int64))]
    exported = liteexport.export(_model(), tmp_path / "head.ptl", example_inputs=sets,
                                 input_shapes=["Bx2x3x4", "Bx5:int64"], dims={"B": (1, 8)})
    assert not any("example inputs' shapes" in n for n in exported.notes)
    loaded = runtime_py.load(tmp_path / "head.ptl")
    assert loaded.forward(np.zeros((7, 2, 3, 4), np.float32), np.zeros((7, 5), np.int64)).shape == (7, 5)
