"""The torch.export front end on the command line: a .pt2 file exports, and each way it fails is
one ``Error:`` paragraph with the documented exit code, the user's line and what to try, no
traceback, and nothing written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import torch

from tests.frontend_export.models import Heads

ROOT = Path(__file__).resolve().parents[2]
MODELS = "tests/frontend_export/models.py"


def _export(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "liteexport", "export", *args, "-q"], capture_output=True,
                          text=True, cwd=ROOT)


def _refused(run: subprocess.CompletedProcess[str], code: int, output: Path) -> str:
    assert run.returncode == code, run.stderr
    assert run.stderr.startswith("Error: ") and "Traceback" not in run.stderr
    assert not output.exists()
    return run.stderr


def test_a_data_dependent_branch_is_one_error_naming_the_line(tmp_path: Path) -> None:
    out = tmp_path / "m.ptl"
    text = _refused(_export(f"{MODELS}:DataBranch", "-o", str(out), "--frontend", "export",
                            "--input-shape", "forward:2x8"), 3, out)
    assert "torch.export cannot export DataBranch: a branch or size that depends on a tensor's values" in text
    assert f"at {MODELS}:62 (if x.sum() > 0:)" in text
    assert "torch.cond" in text and "--frontend torchscript" in text


def test_a_guard_contradicting_the_dims_names_the_dim_and_the_fix(tmp_path: Path) -> None:
    out = tmp_path / "m.ptl"
    text = _refused(_export(f"{MODELS}:FixedLength", "-o", str(out), "--frontend", "export",
                            "--input-shape", "forward:1xSx8", "--dim", "S=1..16"), 3, out)
    assert "a guard that contradicts the given dims" in text
    assert "Constraints violated (S)" in text and "--dim bounds" in text


def test_unsupported_ops_are_listed_at_once_with_their_lines(tmp_path: Path) -> None:
    out = tmp_path / "m.ptl"
    text = _refused(_export(f"{MODELS}:Unsupported", "-o", str(out), "--frontend", "export",
                            "--input-shape", "forward:2x8"), 4, out)
    assert "2 unsupported nodes of 2 kinds" in text
    assert f'File "{MODELS}", line 71\n        y = torch.special.erfcx(x)' in text
    assert f'File "{MODELS}", line 72\n        return torch.special.i0(y) + 1' in text
    assert "Module hierarchy: top(Unsupported)" in text and "--frontend torchscript --lower auto" in text


def test_a_pt2_file_exports_on_the_command_line(tmp_path: Path) -> None:
    model = Heads().eval()
    x = torch.randn(2, 8)
    torch.export.save(torch.export.export(model, (x,)), tmp_path / "heads.pt2")
    np.save(tmp_path / "x.npy", x.numpy())
    out = tmp_path / "heads.ptl"
    run = _export(str(tmp_path / "heads.pt2"), "-o", str(out), "--example-inputs", str(tmp_path / "x.npy"))
    assert run.returncode == 0, run.stderr
    verify = subprocess.run([sys.executable, "-m", "liteexport", "verify", str(out)], capture_output=True,
                            text=True, cwd=ROOT)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_a_pt2_file_refuses_the_torchscript_front_end(tmp_path: Path) -> None:
    torch.export.save(torch.export.export(Heads().eval(), (torch.randn(2, 8),)), tmp_path / "heads.pt2")
    out = tmp_path / "heads.ptl"
    text = _refused(_export(str(tmp_path / "heads.pt2"), "-o", str(out), "--frontend", "torchscript"), 6, out)
    assert "is a torch.export program" in text and "--frontend export" in text


def test_a_file_that_is_no_pt2_is_a_model_error(tmp_path: Path) -> None:
    (tmp_path / "bad.pt2").write_bytes(b"not a zip")
    out = tmp_path / "bad.ptl"
    text = _refused(_export(str(tmp_path / "bad.pt2"), "-o", str(out)), 3, out)
    assert "cannot load" in text and "torch.export program (written by torch.export.save)" in text
