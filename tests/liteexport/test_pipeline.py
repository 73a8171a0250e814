"""The export pipeline (liteexport.pipeline): one set of rules for the CLI and the Python API, its
stages in order, and the API's argument checks in liteexport's own errors."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import liteexport  # noqa: E402
import runtime_py  # noqa: E402
from liteexport import pipeline  # noqa: E402
from liteexport.test_vectors import TEST_VECTORS_EXTRA_FILE, decode_test_vectors  # noqa: E402
from runtime_py.errors import InputError  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.torch_oracle


class Small(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))


def _stages(path: Path, request: pipeline.Request) -> list[str]:
    heard: list[str] = []
    pipeline.export(Small(), path, request, progress=lambda text: heard.append(text.split(" ")[0].rstrip(":")))
    return heard


def test_stages_run_in_order_and_say_only_what_happens(tmp_path: Path) -> None:
    shapes = {"forward": ((2, 4),)}
    assert _stages(tmp_path / "a.ptl", pipeline.Request(input_shapes=shapes)) == [
        "loading", "walked", "packing", "self-check"]
    # nothing to check: no "self-check" stage is announced (its note says why instead)
    heard = _stages(tmp_path / "b.ptl", pipeline.Request())
    assert "self-check" not in heard and heard[-1] == "packing"


def test_the_cli_and_the_api_share_the_pipeline() -> None:
    """Neither runs an export of its own: no lowering, packing or writing outside the pipeline."""
    for name in ("cli.py", "api.py"):
        tree = ast.parse((ROOT / "liteexport" / name).read_text())
        called = {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                  for node in ast.walk(tree) if isinstance(node, ast.Call)}
        assert not called & {"preprocess", "write_bundle", "lower_partial", "specialized", "mixed_bytes",
                             "check_vectors", "record_test_vectors", "write_atomic", "lower_selection"}, name


def test_api_takes_forward_shapes_as_a_list_and_checks_them(tmp_path: Path) -> None:
    out = tmp_path / "m.ptl"
    liteexport.export(Small(), out, input_shapes=[(2, 4)])
    x = np.ones((2, 4), np.float32)
    assert runtime_py.load(out).forward(x).shape == (2, 3)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"input_shapes": "2x4"}, "input_shapes: expected a mapping method -> shapes, or a list of shapes for forward"),
    ({"input_shapes": {"forward": [("2", 4)]}}, "input_shapes of forward: expected a list of shapes"),
    ({"input_shapes": {3: [(2, 4)]}}, "input_shapes: 3 is not a method name"),
    ({"example_inputs": [np.ones((2, 4), np.float32)]}, "example_inputs of forward: expected a list of input tuples"),
    ({"methods": "forward"}, "methods: expected a list of method names"),
    ({"lower": 3}, "lower: expected True, 'auto' or a list of submodule names"),
    ({"specialize": {"forward": 3}}, "specialize: expected a mapping method -> {argument: value}"),
    ({"specialize": {"forward": {"k": 3}}, "methods": ["forward"]}, "specialize lowers the methods it names whole"),
    ({"specialize": {"forward": {"k": 3}}, "lower": "auto"}, "lower (--lower) and specialize (--specialize) exclude"),
])
def test_api_refuses_bad_arguments_in_its_own_errors(tmp_path: Path, kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(InputError) as caught:
        liteexport.export(Small(), tmp_path / "x.ptl", **kwargs)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message), str(caught.value)
    assert not (tmp_path / "x.ptl").exists()


def test_a_module_lowered_by_torch_stores_and_checks_example_inputs(tmp_path: Path) -> None:
    """Every mode stores example inputs as test vectors and self-checks them (they were dropped for
    modules lowered already)."""
    lowered = liteexport.lower(Small())
    x = torch.randn(2, 4)
    out = tmp_path / "l.ptl"
    result = pipeline.export(lowered, out, pipeline.Request(examples={"forward": ((x.numpy(),),)}))
    assert result.summary.endswith("(lowered by torch's to_backend)")
    assert [n for n in result.notes if n.startswith("self-check passed for forward")], result.notes
    vectors = decode_test_vectors(runtime_py.load(out).ptmf.extra_file(TEST_VECTORS_EXTRA_FILE))
    np.testing.assert_allclose(vectors["forward"][0].expected[0], lowered(x).numpy(), rtol=1e-6)
    with pytest.raises(InputError, match="the module is lowered already"):
        pipeline.export(lowered, tmp_path / "m.ptl", pipeline.Request(input_shapes={"forward": ((2, 4),)}))


def test_api_accepts_the_cli_model_text(tmp_path: Path) -> None:
    out = tmp_path / "t.ptl"
    size = liteexport.export(f"{ROOT / 'examples' / 'tiny_cnn.py'}:TinyCNN", out,
                             input_shapes={"forward": [(1, 3, 32, 32)]})
    assert size == out.stat().st_size > 0
