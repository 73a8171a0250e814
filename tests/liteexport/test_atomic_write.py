"""A failed or interrupted write leaves the old file (or nothing) at the target, never a partial one."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from liteexport import atomic_write
from liteexport.atomic_write import write_atomic
from liteexport.errors import OutputError


@pytest.fixture(params=["anonymous", "named"])
def temp_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both kinds of temporary file: anonymous (O_TMPFILE, where the OS has it) and named."""
    if request.param == "named":
        monkeypatch.setattr(atomic_write, "_ANONYMOUS", False)
    elif not atomic_write._ANONYMOUS:
        pytest.skip("needs O_TMPFILE (Linux)")
    return str(request.param)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_writes_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "out.ptl"
    write_atomic(target, b"first")
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failure_mid_write_keeps_the_old_file(tmp_path: Path, failure: BaseException, temp_kind: str) -> None:
    target = tmp_path / "out.ptl"
    target.write_bytes(b"precious")

    def pieces() -> Iterator[bytes]:
        yield b"x" * 100_000
        raise failure

    with pytest.raises(OutputError if isinstance(failure, OSError) else KeyboardInterrupt):
        write_atomic(target, pieces())
    assert target.read_bytes() == b"precious"
    assert _leftovers(tmp_path) == []


def test_pieces_are_written_in_order(tmp_path: Path) -> None:
    target = tmp_path / "out.ptl"
    write_atomic(target, [b"ab", memoryview(b"cd"), b""])
    assert target.read_bytes() == b"abcd"


def test_empty_data_makes_an_empty_file(tmp_path: Path) -> None:
    target = tmp_path / "out.ptl"
    target.write_bytes(b"old")
    write_atomic(target, [b"", b""])  # nothing to preallocate: posix_fallocate rejects length 0
    assert target.read_bytes() == b""


def test_no_room_for_the_preallocation_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           temp_kind: str) -> None:
    def no_space(fd: int, offset: int, length: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_write.os, "posix_fallocate", no_space, raising=False)
    target = tmp_path / "out.ptl"
    target.write_bytes(b"precious")
    with pytest.raises(OutputError, match="No space left"):
        write_atomic(target, b"data")
    assert target.read_bytes() == b"precious"
    assert _leftovers(tmp_path) == []


def test_failure_without_an_old_file_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     temp_kind: str) -> None:
    def fail(src: str, dst: str) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic_write.os, "replace", fail)
    with pytest.raises(OutputError, match="Input/output error"):
        write_atomic(tmp_path / "out.ptl", b"data")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("make_target, message", [
    (lambda d: d, "is a directory"),
    (lambda d: d / "missing" / "out.ptl", "No such file or directory"),
])
def test_unwritable_targets(tmp_path: Path, make_target: object, message: str) -> None:
    target = make_target(tmp_path)  # type: ignore[operator]
    with pytest.raises(OutputError, match=message):
        write_atomic(target, b"data")



_KILLED_WRITER = """
import pathlib, sys, time
from liteexport import atomic_write
atomic_write._ANONYMOUS = sys.argv[2] == "anonymous"

def pieces():
    yield b"x" * (8 << 20)
    pathlib.Path(sys.argv[3]).write_text("writing")  # the temporary file is open by now
    time.sleep(120)
    yield b"y"

atomic_write.write_atomic(sys.argv[1], pieces())
"""


def _killed_mid_write(tmp_path: Path, how: str) -> Path:
    """Run a writer of ``out.ptl`` in another process and SIGKILL it mid-write; return the output folder."""
    import signal
    import subprocess
    import sys
    import time

    out, marker = tmp_path / "out", tmp_path / "marker"
    out.mkdir()
    child = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(out / "out.ptl"), how, str(marker)],
                             cwd=Path(__file__).parents[2])
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert marker.exists(), "the writer did not start"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    return out


@pytest.mark.skipif(not atomic_write._ANONYMOUS, reason="needs O_TMPFILE (Linux)")
def test_sigkill_mid_write_leaves_nothing(tmp_path: Path) -> None:
    out = _killed_mid_write(tmp_path, "anonymous")
    assert list(out.iterdir()) == []  # the data had no name: the kernel freed it with the process


def test_without_anonymous_files_the_next_write_removes_what_a_kill_left(tmp_path: Path) -> None:
    out = _killed_mid_write(tmp_path, "named")
    (leftover,) = out.iterdir()
    assert leftover.name.startswith(".out.ptl.") and leftover.name.endswith(".tmp")
    alive = out / f".out.ptl.{os.getpid()}.inflight.tmp"  # a write in progress in a live process
    alive.write_bytes(b"")
    other = out / ".other.ptl.1.x.tmp"  # another target's: not ours to judge
    other.write_bytes(b"")
    write_atomic(out / "out.ptl", b"new")
    assert sorted(p.name for p in out.iterdir()) == sorted([alive.name, other.name, "out.ptl"])
    assert (out / "out.ptl").read_bytes() == b"new"


def test_anonymous_and_named_writes_give_the_same_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_atomic(tmp_path / "a.ptl", [b"ab", b"cd"])
    monkeypatch.setattr(atomic_write, "_ANONYMOUS", False)
    write_atomic(tmp_path / "b.ptl", [b"ab", b"cd"])
    a, b = tmp_path / "a.ptl", tmp_path / "b.ptl"
    assert a.read_bytes() == b.read_bytes() == b"abcd"
    assert a.stat().st_mode & 0o777 == b.stat().st_mode & 0o777 == 0o644
    assert _leftovers(tmp_path) == []
