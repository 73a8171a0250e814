"""liteexport.export returns (and logs through the ``liteexport`` logger) the notes the CLI
prints: the self-check's result, the cost of narrowed weights, float64 inputs converted."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import numpy as np
import pytest

import liteexport
import runtime_py
from liteexport.test_vectors import TEST_VECTORS_EXTRA_FILE, decode_test_vectors

pytestmark = pytest.mark.torch_oracle

ROOT = Path(__file__).resolve().parents[2]
TINY = f"{ROOT / 'examples' / 'tiny_cnn.py'}:TinyCNN"


def test_export_returns_and_logs_the_self_check_note(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    out = tmp_path / "tiny.ptl"
    with caplog.at_level(logging.INFO, logger="liteexport"):
        exported = liteexport.export(TINY, out, input_shapes=[(1, 3, 32, 32)])
    assert exported == out.stat().st_size and isinstance(exported, int)  # callers of the int keep working
    assert exported.size == exported and exported.path == str(out)
    copied = pickle.loads(pickle.dumps(exported))
    assert (copied, copied.notes, copied.summary) == (exported, exported.notes, exported.summary)
    assert exported.summary.startswith(f"Wrote {out}: {out.stat().st_size:,} bytes; methods: forward")
    checked = [n for n in exported.notes if n.startswith("self-check passed for forward: max abs error")]
    assert len(checked) == 1, exported.notes
    logged = [r.getMessage() for r in caplog.records if r.name == "liteexport" and r.levelno == logging.INFO]
    assert logged == list(exported.notes)
    stages = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert not stages  # stages are DEBUG, below the level asked for


def test_the_cost_of_fp16_weights_is_a_note(tmp_path: Path) -> None:
    exported = liteexport.export(TINY, tmp_path / "half.ptl", input_shapes=[(1, 3, 32, 32)], weights="fp16")
    assert any(n.startswith("6 of 6 weights stored as float16") for n in exported.notes), exported.notes
    assert any("float16 weights" in n and "max abs error" in n for n in exported.notes), exported.notes


def test_float64_example_inputs_are_converted_with_a_note(tmp_path: Path) -> None:
    import torch

    out = tmp_path / "tiny.ptl"
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32))  # float64, numpy's default
    exported = liteexport.export(TINY, out, example_inputs=[(x,), (torch.from_numpy(x * 2),)])
    converted = [n for n in exported.notes if "float64 (numpy's default); converted to float32" in n]
    assert converted == [
        "example_inputs of forward, set 0, input 0 is float64 (numpy's default); converted to float32, the dtype "
        "compiled programs compute in",
        "example_inputs of forward, set 1, input 0 is float64 (numpy's default); converted to float32, the dtype "
        "compiled programs compute in"]
    content = runtime_py.load(out).ptmf.extra_file(TEST_VECTORS_EXTRA_FILE)
    assert content is not None
    vectors = decode_test_vectors(bytes(content))["forward"]
    assert [v.inputs[0].dtype for v in vectors] == [np.float32, np.float32]
    np.testing.assert_array_equal(vectors[0].inputs[0], x.astype(np.float32))
