"""`liteexport run/verify` on hostile bundles and inputs: a bundle whose forward loops forever
stops at --max-instructions/--timeout (exit 7); inputs that claim more memory than they can
have are bad inputs (exit 6). One `Error:` paragraph, no traceback, nothing written."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_bytes
from bundle_format.ptmf_writer import encode_module
from liteexport.test_vectors import TEST_VECTORS_EXTRA_FILE, TestVector, encode_test_vectors

from .conftest import invoke

sys.path.insert(0, str(Path(__file__).parents[1] / "fuzz"))
import crafted  # noqa: E402


def _with_vector(data: bytes, shape: tuple[int, ...]) -> bytes:
    """The bundle ``data`` with a test vector of ones of ``shape`` (for verify to run)."""
    module = read_bundle_bytes(data)
    x = np.ones(shape, np.float32)
    vectors = encode_test_vectors({"forward": [TestVector((x,), (x,))]})
    return encode_module(replace(module, extra_files=module.extra_files
                                 + (ptmf.ExtraFile(TEST_VECTORS_EXTRA_FILE, vectors),)))


def _endless(tmp_path: Path, with_vectors: bool = False) -> Path:
    data = crafted.forward_jmp_self()
    path = tmp_path / "endless.ptl"
    path.write_bytes(_with_vector(data, (2, 4)) if with_vectors else data)
    return path


def _fails(args: list[str], exit_code: int, message: str, folder: Path) -> str:
    before = sorted(folder.iterdir())
    result = invoke(args)
    assert result.exit_code == exit_code, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ") and message in result.stderr, result.stderr
    assert "Traceback (most recent call last)" not in result.output and "internal error" not in result.stderr
    assert sorted(folder.iterdir()) == before
    return result.stderr


@pytest.mark.parametrize("limit, message", [
    (["--max-instructions", "5000"], "exceeded the instruction budget of 5000 instructions"),
    (["--timeout", "0.3"], "ran longer than the time limit of 0.3 s"),
])
def test_run_stops_an_endless_forward(tmp_path: Path, limit: list[str], message: str) -> None:
    bundle = _endless(tmp_path)
    _fails(["run", str(bundle), "--random", "2x4", "-o", str(tmp_path / "out.npz"), *limit], 7, message, tmp_path)


def test_verify_stops_an_endless_forward(tmp_path: Path) -> None:
    bundle = _endless(tmp_path, with_vectors=True)
    _fails(["verify", str(bundle), "--max-instructions", "5000"], 7, "exceeded the instruction budget", tmp_path)


@pytest.mark.parametrize("option, value", [("--max-instructions", "0"), ("--timeout", "0"), ("--timeout", "-1")])
def test_limits_must_be_positive(tmp_path: Path, option: str, value: str) -> None:
    result = invoke(["run", str(_endless(tmp_path)), "--random", "2x4", option, value])
    assert result.exit_code == 2 and "Invalid value" in result.stderr


def _npy_claiming(shape: tuple[int, ...]) -> bytes:
    """A .npy whose header claims ``shape`` (float32) followed by 16 bytes of data."""
    import io

    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": "<f4", "fortran_order": False, "shape": shape})
    return out.getvalue() + bytes(16)


@pytest.mark.parametrize("kind", ["npy", "npz"])
def test_input_header_claiming_too_much_is_a_bad_input(tmp_path: Path, hand_bundle: Path, kind: str) -> None:
    import zipfile

    data = _npy_claiming((10 ** 15,))
    path = tmp_path / f"x.{kind}"
    if kind == "npy":
        path.write_bytes(data)
    else:
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("x.npy", data)
    stderr = _fails(["run", str(hand_bundle), "--input", str(path)], 6, "(4,000,000,000,000,000 bytes), but only 16",
                    tmp_path)
    assert "shape (1000000000000000,)" in stderr


def test_random_input_bigger_than_memory_is_a_bad_input(tmp_path: Path, hand_bundle: Path) -> None:
    _fails(["run", str(hand_bundle), "--random", "100000x100000x100000"], 6,
           "--random 100000x100000x100000 needs 8,000,000,000,000,000 bytes, more than this machine's memory",
           tmp_path)


@pytest.mark.parametrize("command", [["inspect"], ["run", "--random", "2x4"], ["verify"]])
def test_a_fifo_bundle_is_refused_with_exit_5_without_blocking(tmp_path: Path, command: list[str]) -> None:
    import os

    from tests.watchdog import watchdog

    fifo = tmp_path / "bundle.ptl"
    os.mkfifo(fifo)
    with watchdog(20, "liteexport blocked on the FIFO"):
        _fails([command[0], str(fifo), *command[1:]], 5, "is a FIFO (named pipe), not a bundle file", tmp_path)


def test_a_fifo_input_is_refused_with_exit_6(tmp_path: Path) -> None:
    import os

    bundle = tmp_path / "linear.ptl"
    bundle.write_bytes(crafted.harness.load_seeds()["torch_linear.ptmf.bin"])
    fifo = tmp_path / "x.npy"
    os.mkfifo(fifo)
    _fails(["run", str(bundle), "--input", str(fifo)], 6, "is not a regular file", tmp_path)


@pytest.mark.parametrize("command", ["run", "verify"])
def test_max_memory_stops_a_compiled_broadcast_with_exit_7(tmp_path: Path, command: str) -> None:
    data = crafted.program_broadcast_16_gib()
    bundle = tmp_path / "broadcast.ptl"
    bundle.write_bytes(_with_vector(data, (4, 20)) if command == "verify" else data)
    args = [command, str(bundle), "--max-memory", "300K"] + (["--random", "4x20"] if command == "run" else [])
    _fails(args, 7, "instruction #3 EXPAND (slots [2] -> [4]) would allocate up to 262144 bytes while 262464 are "
           "live: more than the memory budget of 307200 bytes", tmp_path)


def test_run_timeout_stops_a_long_compiled_matmul(tmp_path: Path) -> None:
    bundle = tmp_path / "matmul.ptl"
    bundle.write_bytes(crafted.program_matmul_8192())
    _fails(["run", str(bundle), "--random", "4x20", "--timeout", "0.5"], 7,
           "ran longer than the time limit of 0.5 s (instruction #3 MATMUL", tmp_path)


@pytest.mark.parametrize("text", ["0", "-5", "2X", "G", "1.5G"])
def test_max_memory_must_be_a_size(tmp_path: Path, text: str) -> None:
    result = invoke(["run", str(tmp_path / "any.ptl"), "--max-memory", text])
    assert result.exit_code == 2 and "is not a size in bytes" in result.stderr
