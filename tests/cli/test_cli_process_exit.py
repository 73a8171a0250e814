"""A model file that ends the process, and Ctrl-C during an export (subprocesses: the real exits)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
MODEL = "import os, sys, time, torch\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n\n"


def _export(model: Path, out: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # SIGINT at its default (a background shell ignores it), as in a terminal
    return subprocess.Popen([sys.executable, "-m", "liteexport", "export", f"{model}:build", "-o", str(out)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


@pytest.mark.parametrize(("where", "code"), [
    ("import", "os._exit(0)\ndef build():\n    return M()\n"),
    ("factory", "def build():\n    os._exit(0)\n"),
    ("factory", "def build():\n    sys.exit(0)\n"),
    ("import", "exit()\ndef build():\n    return M()\n"),
])
def test_model_file_ending_the_process_is_an_error(tmp_path: Path, where: str, code: str) -> None:
    model = tmp_path / "ender.py"
    model.write_text(MODEL + code)
    proc = _export(model, tmp_path / "out.ptl")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err
    assert err.startswith("Error: the model file ended the process: "), err
    assert f"{model}:" in err and "Traceback" not in err
    assert not (tmp_path / "out.ptl").exists()


# The model file signals the test (a marker file) at a moment of the export, then sleeps there.
_AT_LOADING = "def build():\n    open(MARK, 'w').close()\n    time.sleep(60)\n"
_AT_WRITING = ("import liteexport.atomic_write as aw\n"
               "def slow_fallocate(fd, offset, size):\n    open(MARK, 'w').close()\n    time.sleep(60)\n"
               "def build():\n    aw._ANONYMOUS = ANONYMOUS\n"
               "    aw.os = type('os', (), {**vars(os), 'posix_fallocate': staticmethod(slow_fallocate)})\n"
               "    return M()\n")


@pytest.mark.parametrize(("moment", "named_temp"), [("loading", False), ("writing", True), ("writing", False)])
def test_ctrl_c_keeps_the_old_bundle(tmp_path: Path, moment: str, named_temp: bool) -> None:
    mark, out = tmp_path / "mark", tmp_path / "out.ptl"
    out.write_bytes(b"the old bundle")
    model = tmp_path / "slow.py"
    code = _AT_LOADING if moment == "loading" else _AT_WRITING
    model.write_text(f"{MODEL}MARK = {str(mark)!r}\nANONYMOUS = {not named_temp}\n{code}")
    proc = _export(model, out)
    deadline = time.monotonic() + 120
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mark.exists(), proc.communicate()[1]
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "Error: interrupted (SIGINT); nothing was written", err
    assert "Traceback" not in err
    assert out.read_bytes() == b"the old bundle"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mark", "out.ptl", "slow.py"]
