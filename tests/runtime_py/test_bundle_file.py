"""How runtime_py opens a bundle file (issue 18): anything but a regular file is refused before a
read can block on it, and a loaded bundle is a snapshot: truncating or overwriting the file
afterwards neither kills the process (SIGBUS, as with a memory-mapped file) nor changes outputs."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))
import harness  # noqa: E402

import runtime_py  # noqa: E402
from runtime_py.errors import FormatError  # noqa: E402
from tests.watchdog import watchdog  # noqa: E402

REPO = Path(__file__).parents[2]


def _fails_if_it_blocks(seconds: int = 20) -> AbstractContextManager[None]:
    return watchdog(seconds, "blocked on the file")


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "bundle.ptl"
    os.mkfifo(fifo)
    with _fails_if_it_blocks(), pytest.raises(FormatError, match=r"is a FIFO \(named pipe\), not a bundle file"):
        runtime_py.load(fifo)


def test_a_device_and_a_directory_are_refused(tmp_path: Path) -> None:
    with _fails_if_it_blocks(), pytest.raises(FormatError, match="is a character device, not a bundle file"):
        runtime_py.load("/dev/zero")  # a read of it would never end
    with pytest.raises(FormatError, match="is a directory, not a bundle file"):
        runtime_py.load(tmp_path)


def test_a_loaded_bundle_survives_the_file_being_truncated_or_overwritten(tmp_path: Path) -> None:
    """In a child process: a SIGBUS would kill it, where it would kill pytest in-process."""
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    linear = seeds / "linear.ptl"
    linear.write_bytes(harness.load_seeds()["torch_linear.ptmf.bin"])
    other = harness.load_seeds()["torch_stateful.ptmf.bin"]
    script = textwrap.dedent(f"""
        import os, sys, numpy as np, runtime_py
        path = {str(linear)!r}
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        module = runtime_py.load(path)
        before = module.forward(x)
        with open(path, "r+b") as f:
            f.truncate(100)  # mapped pages past the end would raise SIGBUS on first touch
        truncated = module.forward(x)
        with open(path, "r+b") as f:  # in place, as cp does
            f.write({other!r})
        overwritten = module.forward(x)
        assert np.array_equal(before, truncated) and np.array_equal(before, overwritten), "outputs changed"
        print("same outputs")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, f"exit {result.returncode}: {result.stderr[-2000:]}"
    assert result.stdout.strip() == "same outputs"


def test_weights_read_from_the_file_stay_read_only(tmp_path: Path) -> None:
    path = tmp_path / "linear.ptl"
    path.write_bytes(harness.load_seeds()["torch_linear.ptmf.bin"])
    module = runtime_py.load(path)
    assert module.ptmf.storage_data and all(not a.flags.writeable for a in module.ptmf.storage_data)
