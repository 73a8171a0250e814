"""A float64 .npy/.npz (numpy's default) is converted to float32 with a note wherever an input
file is read (run, profile, --example-inputs, --calibration-inputs); integer arrays stay as they are."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from liteexport.run_inputs import read_input_file

from .conftest import TINY_CNN, invoke

NOTE = "is float64 (numpy's default); converted to float32, the dtype compiled programs compute in"


def test_run_converts_a_float64_npy_with_a_note(tiny_bundle: Path, tmp_path: Path) -> None:
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32))
    np.save(tmp_path / "x64.npy", x)
    np.save(tmp_path / "x32.npy", x.astype(np.float32))
    wide = invoke(["run", str(tiny_bundle), "--input", str(tmp_path / "x64.npy")])
    narrow = invoke(["run", str(tiny_bundle), "--input", str(tmp_path / "x32.npy")])
    assert wide.exit_code == 0, wide.output
    assert wide.stdout == narrow.stdout  # the same float32 input
    assert wide.stderr == f"Note: input file {tmp_path / 'x64.npy'} {NOTE}\n"
    assert narrow.stderr == ""


def test_npz_members_are_named_and_integers_kept(tmp_path: Path) -> None:
    path = tmp_path / "pair.npz"
    np.savez(path, ids=np.arange(4, dtype=np.int64), x=np.ones(3), h=np.ones(3, np.float16))
    notes: list[str] = []
    ids, x, h = read_input_file(path, ["ids", "x", "h"], notes.append)
    assert [str(a.dtype) for a in (ids, x, h)] == ["int64", "float32", "float16"]
    assert notes == [f"input file {path}, array 'x' {NOTE}"]


@pytest.mark.torch_oracle
def test_export_example_inputs_in_float64(tmp_path: Path) -> None:
    np.save(tmp_path / "x64.npy", np.random.default_rng(1).standard_normal((1, 3, 32, 32)))
    out = tmp_path / "tiny.ptl"
    result = invoke(["export", f"{TINY_CNN}:TinyCNN", "-o", str(out), "--example-inputs", str(tmp_path / "x64.npy")])
    assert result.exit_code == 0, result.output
    assert f"Note: input file {tmp_path / 'x64.npy'} {NOTE}" in result.stderr.splitlines()
    assert "Note: self-check passed for forward" in result.stderr
    verified = invoke(["verify", str(out)])
    assert verified.exit_code == 0, verified.output
