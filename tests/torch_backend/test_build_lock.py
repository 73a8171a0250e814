"""The torch backend's build folder (keyed by the build command) and its lock (never a hang)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

import liteexport.torch_backend as tb  # noqa: E402
from tests.cpp_builds import ROOT, wait  # noqa: E402

_LOAD = "from liteexport.torch_backend import load_torch_backend; load_torch_backend()"


def _load(**env: str) -> subprocess.CompletedProcess[str]:
    """load_torch_backend in a fresh process; a hang (the bug) fails on the timeout."""
    return subprocess.run([sys.executable, "-c", _LOAD], env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, timeout=120, check=False)


def test_different_build_commands_get_different_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    here = tb.extension_name()
    assert tb._source_hash() in here and here == tb.extension_name()
    monkeypatch.setattr(sys, "executable", "/opt/other-venv/bin/python")
    other_python = tb.extension_name()
    monkeypatch.undo()
    monkeypatch.setattr(tb, "_compiler", lambda: "/bin/sh")  # another compiler
    other_compiler = tb.extension_name()
    assert len({here, other_python, other_compiler}) == 3


def test_stale_torch_lock_of_a_killed_build_is_removed() -> None:
    wait("torch-extension")
    folder = tb._build_folder(tb.extension_name())
    baton = folder / "lock"
    baton.touch()  # what a build killed mid-way (SIGKILL, a CI timeout) leaves behind
    result = _load()
    assert result.returncode == 0, result.stderr
    assert f"removed {baton}" in result.stderr
    assert not baton.exists()


def test_live_build_holding_the_lock_gives_up_after_the_configured_wait() -> None:
    wait("torch-extension")
    folder = tb._build_folder(tb.extension_name())
    lock = folder / tb.BUILD_LOCK
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import fcntl,os,sys,time\nfd=os.open({str(lock)!r},os.O_RDWR|os.O_CREAT)\n"
         "fcntl.flock(fd,fcntl.LOCK_EX)\nos.ftruncate(fd,0)\nos.write(fd,b'pid %d on testhost' % os.getpid())\n"
         "print('held',flush=True)\ntime.sleep(120)"], stdout=subprocess.PIPE, text=True)
    baton = folder / "lock"
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        baton.touch()  # as torch's lock of a build in progress
        result = _load(**{tb.BUILD_WAIT_ENV: "1"})
        assert result.returncode != 0
        message = result.stderr.strip().splitlines()[-1]
        assert "TorchBackendUnavailable: Gave up after 1 s" in message, result.stderr
        assert f"pid {holder.pid} on testhost" in message and str(lock) in message
        assert baton.exists()  # a live build's lock is not touched
    finally:
        holder.kill()
        holder.wait()
        baton.unlink(missing_ok=True)
