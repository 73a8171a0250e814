"""The export pipeline (liteexport.pipeline): one set of rules for the CLI and the Python API, its
stages in order, and the API's argument checks in liteexport's own errors."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import liteexport  # noqa: E402
import liteexport.input_spec  # noqa: E402
import runtime_py  # noqa: E402
from liteexport import pipeline  # noqa: E402
from liteexport.test_vectors import TEST_VECTORS_EXTRA_FILE, decode_test_vectors  # noqa: E402
from runtime_py.errors import InputError  # noqa: E402
from tests.to_backend import mixed_models  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.torch_oracle


Small = mixed_models.Encoder  # relu(Linear(4, 4)(x)), from a file: TorchScript needs its source


def _stages(path: Path, request: pipeline.Request) -> list[str]:
    heard: list[str] = []
    pipeline.export(Small(), path, request, progress=lambda text: heard.append(text.split(" ")[0].rstrip(":")))
    return heard


def test_stages_run_in_order_and_say_only_what_happens(tmp_path: Path) -> None:
    shapes = {"forward": ((2, 4),)}
    assert _stages(tmp_path / "a.ptl", pipeline.Request(input_shapes=shapes)) == [
        "loading", "exporting", "decomposing", "walked", "self-check", "packing"]
    # nothing to check: no "self-check" stage is announced (its note says why instead)
    heard = _stages(tmp_path / "b.ptl", pipeline.Request())
    assert "self-check" not in heard and heard[-1] == "packing"


def test_the_cli_and_the_api_share_the_pipeline() -> None:
    """Neither runs an export of its own: no lowering, packing or writing outside the pipeline."""
    for name in ("cli.py", "api.py"):
        tree = ast.parse((ROOT / "liteexport" / name).read_text())
        called = {node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                  for node in ast.walk(tree) if isinstance(node, ast.Call)}
        assert not called & {"preprocess", "write_bundle", "lower_partial", "reference_module", "mixed_bytes",
                             "check_vectors", "record_test_vectors", "write_atomic", "lower_selection"}, name


def test_api_takes_forward_shapes_as_a_list_and_checks_them(tmp_path: Path) -> None:
    out = tmp_path / "m.ptl"
    liteexport.export(Small(), out, input_shapes=[(2, 4)])
    x = np.ones((2, 4), np.float32)
    assert runtime_py.load(out).forward(x).shape == (2, 4)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"input_shapes": "2x4"}, "input_shapes: expected a mapping method -> shapes, or a list of shapes for forward"),
    ({"input_shapes": {"forward": [("2", 4)]}}, "input_shapes of forward: size '2' of ('2', 4) is neither"),
    ({"input_shapes": [(1, "S")]}, "the input shapes name dim S, which has no bounds"),
    ({"input_shapes": [(1, 4)], "dims": {"S": (1, 8)}}, "--dim S names a dim no input shape uses"),
    ({"input_shapes": [(1, "S")], "dims": {"S": (9, 8)}}, "dims['S']: dim S: bounds 9..8"),
    ({"input_shapes": {3: [(2, 4)]}}, "input_shapes: 3 is not a method name"),
    ({"example_inputs": [np.ones((2, 4), np.float32)]}, "example_inputs of forward: expected a list of input tuples"),
    ({"methods": "forward"}, "methods: expected a list of method names"),
    ({"lower": 3}, "lower: expected True, 'auto' or a list of submodule names"),
    ({"specialize": {"forward": 3}}, "specialize: expected a mapping method -> {argument: value}"),
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


def test_extra_files_are_stored_as_torch_stores_them(tmp_path: Path) -> None:
    from bundle_format.bundle_file import read_bundle_file

    out = tmp_path / "m.ptl"
    liteexport.export(Small(), out, extra_files={"labels.txt": "cat\ndog", "mean.bin": b"\x00\x01"})
    assert runtime_py.load(out).extra_files == {"labels.txt": b"cat\ndog", "mean.bin": b"\x00\x01"}
    # in the flatbuffer's extra_files, where torch's _save_for_lite_interpreter(_extra_files=...) puts them
    names = [e.name for e in read_bundle_file(out).extra_files]
    assert "labels.txt" in names and "mean.bin" in names
    from liteexport.torch_backend import load_torch_backend

    load_torch_backend()  # torch reads them too (it must be able to load the bundle's backend)
    read = torch._C._get_model_extra_files(str(out), {})
    assert read["labels.txt"] == b"cat\ndog" and read["mean.bin"] == b"\x00\x01"
    reference = tmp_path / "torch.ptl"
    torch.jit.script(Small())._save_for_lite_interpreter(str(reference), _extra_files={"labels.txt": "cat\ndog"},
                                                         _use_flatbuffer=True)
    assert runtime_py.load(reference).extra_files == {"labels.txt": b"cat\ndog"}
    with pytest.raises(InputError, match="not one under 'liteexport/'"):
        liteexport.export(Small(), tmp_path / "x.ptl", extra_files={"liteexport/debug_table": b""})


def test_cli_extra_file_and_strip_debug(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from liteexport.cli import cli

    labels = tmp_path / "labels.txt"
    labels.write_text("cat\ndog\n")
    out = tmp_path / "t.ptl"
    args = ["export", f"{ROOT / 'examples' / 'tiny_cnn.py'}:TinyCNN", "-o", str(out), "-q"]
    done = CliRunner().invoke(cli, [*args, "--extra-file", f"labels={labels}", "--extra-file", str(labels)])
    assert done.exit_code == 0, done.output
    with_debug = out.stat().st_size
    assert runtime_py.load(out).extra_files == {"labels": b"cat\ndog\n", "labels.txt": b"cat\ndog\n"}
    shown = CliRunner().invoke(cli, ["inspect", str(out)]).output
    assert "Extra files: 2" in shown and "labels.txt" in shown
    done = CliRunner().invoke(cli, [*args, "--strip-debug"])
    assert done.exit_code == 0, done.output
    assert runtime_py.load(out).debug_table is None and out.stat().st_size < with_debug - 100
    assert "Debug table: none (stripped" in CliRunner().invoke(cli, ["inspect", str(out)]).output
    done = CliRunner().invoke(cli, [*args, "--extra-file", f"x={tmp_path / 'missing'}"])
    assert done.exit_code == 6 and "--extra-file x=" in done.output and "cannot read it" in done.output


def test_source_paths_in_the_debug_table_are_never_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work, models = tmp_path / "work", tmp_path / "models"
    work.mkdir()
    models.mkdir()
    (models / "net.py").write_text((ROOT / "examples" / "tiny_cnn.py").read_text())
    monkeypatch.chdir(work)  # the model lies outside the working directory and every import root
    out = work / "t.ptl"
    liteexport.export(f"{models / 'net.py'}:TinyCNN", out)
    table = runtime_py.load(out).debug_table
    assert table is not None and table.entries
    files = {frame.file for e in table.entries for frame in e.frames}
    assert files and not any(f.startswith("/") for f in files), files
    assert "../models/net.py" in files, files


def test_a_model_in_training_mode_is_said_to_be_exported_in_eval_mode(tmp_path: Path) -> None:
    """Said when the mode changes what the model computes (dropout here), and only then."""
    model = torch.nn.Sequential(Small(), torch.nn.Dropout(0.5)).train()
    result = pipeline.export(model, tmp_path / "m.ptl", pipeline.Request())
    assert any("training mode; it is exported in eval mode" in n for n in result.notes), result.notes
    assert model.training  # the caller's module is left as it is
    for quiet in (model.eval(), Small().train()):  # in eval mode already; no layer reads the mode
        result = pipeline.export(quiet, tmp_path / "m.ptl", pipeline.Request())
        assert not any("training mode" in n for n in result.notes), result.notes


def test_cli_typed_inputs_with_a_bounded_dim_compile_once_and_check_three_sizes(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from liteexport.cli import cli

    model = tmp_path / "emb.py"
    model.write_text(
        "import torch\n\n\n"
        "class Embed(torch.nn.Module):\n"
        "    def __init__(self) -> None:\n"
        "        super().__init__()\n"
        "        self.emb = torch.nn.Embedding(50, 8)\n"
        "        self.fc = torch.nn.Linear(8, 3)\n\n"
        "    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:\n"
        "        return self.fc(self.emb(ids) * mask.unsqueeze(-1).to(torch.float32)).sum(1)\n")
    out = tmp_path / "emb.ptl"
    done = CliRunner().invoke(cli, ["export", f"{model}:Embed", "-o", str(out), "--input-shape",
                                    "forward:1xS:int64,1xS:int64", "--dim", "S=1..16"])
    assert done.exit_code == 0, done.output
    assert "self-check passed for forward: max abs error" in done.output
    assert "against torch on 3 input sets" in done.output  # S = 1, 16 and 8
    bundle = runtime_py.load(out)
    import importlib.util

    spec = importlib.util.spec_from_file_location("emb_oracle", model)
    assert spec is not None and spec.loader is not None
    source = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(source)
    for size in (1, 5, 16):  # one program for every size in the range, matching torch on the same weights
        ids, mask = np.arange(size, dtype=np.int64)[None] % 50, np.ones((1, size), np.int64)
        reference = source.Embed()
        scripted = torch.jit.script(reference)  # the bundle's weights are not reference's: compare shapes
        assert bundle.forward(ids, mask).shape == tuple(scripted(torch.from_numpy(ids), torch.from_numpy(mask)).shape)
    assert pipeline.dim_samples({"S": liteexport.input_spec.DimRange("S", 1, 16)}) == [{"S": 1}, {"S": 16}, {"S": 8}]
    assert pipeline.dim_samples({}) == [{}]
