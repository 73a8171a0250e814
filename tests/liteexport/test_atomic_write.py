"""A failed or interrupted write leaves the old file (or nothing) at the target, never a partial one."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from liteexport import atomic_write
from liteexport.atomic_write import write_atomic
from runtime_py.errors import OutputError


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_writes_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "out.ptl"
    write_atomic(target, b"first")
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("failure", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failure_mid_write_keeps_the_old_file(tmp_path: Path, failure: BaseException) -> None:
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


def test_no_room_for_the_preallocation_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_space(fd: int, offset: int, length: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_write.os, "posix_fallocate", no_space, raising=False)
    target = tmp_path / "out.ptl"
    target.write_bytes(b"precious")
    with pytest.raises(OutputError, match="No space left"):
        write_atomic(target, b"data")
    assert target.read_bytes() == b"precious"
    assert _leftovers(tmp_path) == []


def test_failure_without_an_old_file_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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

