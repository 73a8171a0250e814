"""export -> inspect -> run on the shipped example, compared with torch eager."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from liteexport.compiler.source import display_path

from .conftest import TINY_CNN, invoke

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch_oracle


def _eager(x: np.ndarray) -> np.ndarray:
    import importlib.util

    spec = importlib.util.spec_from_file_location("tiny_cnn_oracle", TINY_CNN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with torch.no_grad():
        return module.TinyCNN().eval()(torch.from_numpy(x)).numpy()


def test_export_reports_progress_and_summary(tmp_path: Path) -> None:
    out = tmp_path / "tiny.ptl"
    result = invoke(["export", f"{TINY_CNN}:TinyCNN", "-o", str(out), "--input-shape", "forward:1x3x32x32"])
    assert result.exit_code == 0, result.output
    # progress only once an export takes a second: stage lines with the time spent, if any;
    # always the self-check's result
    lines = result.stderr.splitlines()
    assert [line for line in lines if line.startswith("Note: self-check passed for forward: ")], result.stderr
    assert all(re.match(r"\[ *\d+\.\ds\] |Note: ", line) for line in lines), result.stderr
    size = out.stat().st_size
    assert result.stdout.startswith(f"Wrote {out}: {size:,} bytes; methods: forward; ")
    assert result.stdout.count("\n") == 1
    assert [p.name for p in tmp_path.iterdir()] == ["tiny.ptl"]


def test_quiet_export_prints_only_the_summary(tmp_path: Path) -> None:
    result = invoke(["export", f"{TINY_CNN}:TinyCNN", "-o", str(tmp_path / "t.ptl"), "-q"])
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_inspect_tiny(tiny_bundle: Path) -> None:
    d = json.loads(invoke(["inspect", str(tiny_bundle), "--json"]).stdout)
    assert d["methods"] == [{"name": "forward", "signature": "forward(x: Tensor) -> Tensor"}]
    (program,) = d["delegate"]["programs"]
    ops = program["op_histogram"]
    assert ops["CONV2D"] == 2 and ops["LINEAR"] == 1
    assert "CHANNEL_AFFINE" not in ops  # batch norm folded into the convolutions
    assert sum(ops.values()) == program["instructions"]
    handles = {e["handle"] for e in d["debug_table"]["entries"]}
    assert handles and all("top(TinyCNN)" in e["module_hierarchy"] for e in d["debug_table"]["entries"])
    # every entry points at the model's own file, not at torch's implementation of a module
    assert all(e["location"].startswith(f"{display_path(str(TINY_CNN))}:") for e in d["debug_table"]["entries"])
    human = invoke(["inspect", str(tiny_bundle)])
    assert human.exit_code == 0 and "Delegate: backend_with_compiler_demo" in human.stdout


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_run_matches_torch(tiny_bundle: Path, tmp_path: Path, seed: int) -> None:
    x = np.random.default_rng(seed).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    result = invoke(["run", str(tiny_bundle), "--input", str(tmp_path / "x.npy"),
                     "-o", str(tmp_path / "y.npz")])
    assert result.exit_code == 0, result.output
    with np.load(tmp_path / "y.npz") as y:
        np.testing.assert_allclose(y["output_0"], _eager(x), atol=1e-5, rtol=1e-4)


def test_run_random_prints(tiny_bundle: Path) -> None:
    result = invoke(["run", str(tiny_bundle), "--random", "1x3x32x32"])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("output_0: shape (1, 10), dtype float32\n[[")
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    printed = result.stdout.split("\n", 1)[1].replace("[", " ").replace("]", " ").split()
    np.testing.assert_allclose(np.array(printed, dtype=np.float32), _eager(x)[0], atol=1e-5, rtol=1e-4)


def test_torchscript_archive(tmp_path: Path) -> None:
    archive = tmp_path / "model.pt"
    from liteexport.model_loading import load_scripted

    load_scripted(f"{TINY_CNN}:TinyCNN").save(str(archive))
    result = invoke(["export", str(archive), "-o", str(tmp_path / "a.ptl"), "-q"])
    assert result.exit_code == 0, result.output
    x = np.random.default_rng(5).standard_normal((1, 3, 32, 32)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert invoke(["run", str(tmp_path / "a.ptl"), "-i", str(tmp_path / "x.npy"),
                   "-o", str(tmp_path / "y.npz")]).exit_code == 0
    with np.load(tmp_path / "y.npz") as y:
        np.testing.assert_allclose(y["output_0"], _eager(x), atol=1e-5, rtol=1e-4)


def test_inspect_plain_torch_flatbuffer(tmp_path: Path) -> None:
    """A bundle torch wrote itself (not lowered): methods and storage, no delegate."""
    from liteexport.model_loading import load_scripted

    path = tmp_path / "plain.ptl"
    load_scripted(f"{TINY_CNN}:TinyCNN")._save_for_lite_interpreter(str(path), _use_flatbuffer=True)
    d = json.loads(invoke(["inspect", str(path), "--json"]).stdout)
    assert d["delegate"] is None and d["debug_table"] is None
    assert d["methods"] == [{"name": "forward", "signature": "forward(x: Tensor) -> Tensor"}]
    assert d["storage"]["count"] > 0 and d["sizes"]["other_storage"] == d["storage"]["total_bytes"]
    human = invoke(["inspect", str(path)]).stdout
    assert "Delegate: none (not a lowered module)" in human
