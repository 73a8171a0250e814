"""Issue 18 (hostile input, round three) through the native host tool liteexport_native_run: a
slice step near INT64_MAX, a FIFO as the bundle path, the run-time memory budget and timeout, and the copying load of a
bundle that changes on disk after it is loaded."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from tests import cpp_builds
from tests.android.test_android_sample import build_dir

pytestmark = [pytest.mark.android, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None,
                                 reason="needs cmake and g++ to build C++")]


def _tool() -> Path:
    return build_dir(cpp_builds.wait("native-host")) / "liteexport_native_run"


def _write_tensor(path: Path, array: np.ndarray) -> None:
    """tools/tensor_io.h's LXT1 format."""
    array = np.ascontiguousarray(array, dtype="<f4")
    with open(path, "wb") as f:
        f.write(b"LXT1" + struct.pack("<I", array.ndim) + struct.pack(f"<{array.ndim}q", *array.shape))
        f.write(array.tobytes())


def _run(*argv: str | Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(_tool()), *map(str, argv)], capture_output=True, text=True, timeout=timeout, check=False)


class _MatMul(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x @ x


class _Outer(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a + b


class _Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.fc = torch.nn.Linear(64, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def _export(module: torch.nn.Module, path: Path, *shapes: tuple[int, ...]) -> Path:
    from liteexport.api import export

    export(module, path, input_shapes={"forward": [list(s) for s in shapes]}, check=False)
    return path


class _HugeStep(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[0:5:9223372036854775807]


def test_a_slice_step_near_int64_max_keeps_the_first_element(tmp_path: Path) -> None:
    """Python's and numpy's slice semantics (runtime_py's): one element. Before the fix the step
    overflowed (end - start + step - 1): UB, an empty result in the release build. (Eager torch
    2.13 itself returns an empty tensor here: its own overflow.)"""
    bundle = _export(_HugeStep(), tmp_path / "slice.ptl", (5,))
    x = tmp_path / "x.bin"
    _write_tensor(x, np.arange(5, dtype=np.float32))
    result = _run(bundle, x, "--output", tmp_path / "out.npz")
    assert result.returncode == 0, result.stdout + result.stderr
    with np.load(tmp_path / "out.npz") as outputs:
        np.testing.assert_array_equal(outputs["arr_0"], np.arange(5)[0:5:2**63 - 1])


def test_a_fifo_as_the_bundle_is_a_format_error_not_a_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "bundle.ptl"
    os.mkfifo(fifo)
    for extra in ([], ["--copy"]):
        result = _run(*extra, fifo, timeout=20)  # before the fix: blocked in open() until killed
        assert result.returncode == 5, result.stdout + result.stderr
        assert "not a regular file" in result.stderr


def test_an_8192_matmul_stops_at_its_timeout(tmp_path: Path) -> None:
    bundle = _export(_MatMul(), tmp_path / "matmul.ptl", (8192, 8192))
    x = tmp_path / "x.bin"
    _write_tensor(x, np.full((8192, 8192), 0.5, dtype=np.float32))
    start = time.monotonic()
    result = _run("--timeout", "1", bundle, x, timeout=300)
    elapsed = time.monotonic() - start
    assert result.returncode == 7, result.stdout + result.stderr  # an ExecutionError
    assert "exceeded its timeout of 1 s" in result.stderr and "matmul" in result.stderr.lower(), result.stderr
    assert elapsed < 20, elapsed  # generous: without the limit it runs for minutes on this machine


def test_a_broadcast_past_the_memory_budget_is_an_execution_error(tmp_path: Path) -> None:
    bundle = _export(_Outer(), tmp_path / "outer.ptl", (4096, 1), (1, 4096))
    a, b = tmp_path / "a.bin", tmp_path / "b.bin"
    _write_tensor(a, np.ones((4096, 1), np.float32))
    _write_tensor(b, np.ones((1, 4096), np.float32))
    result = _run("--max-memory", str(32 << 20), bundle, a, b)  # the (4096, 4096) result is 64 MiB
    assert result.returncode == 7, result.stdout + result.stderr
    assert "needs 67108864 bytes" in result.stderr and "memory budget of 33554432 bytes" in result.stderr
    assert "add" in result.stderr.lower(), result.stderr  # names the instruction
    assert _run(bundle, a, b).returncode == 0  # within the default budget of 1 GiB


def test_the_copying_load_is_unaffected_by_truncating_the_file(tmp_path: Path) -> None:
    """The tool loads then runs; a bundle truncated between the two is simulated by a FIFO-free
    route: load from a copy, truncate the copy while the tool waits on its input FIFO."""
    bundle = _export(_Linear(), tmp_path / "linear.ptl", (2, 64))
    x = np.linspace(-1, 1, 128, dtype=np.float32).reshape(2, 64)
    expected = _Linear()(torch.from_numpy(x)).detach().numpy()
    inputs = tmp_path / "x.fifo"
    os.mkfifo(inputs)
    target = tmp_path / "copy.ptl"
    for copy, survives in ((True, True), (False, False)):
        shutil.copy(bundle, target)
        args = [str(_tool()), *(["--copy"] if copy else []), str(target), str(inputs), "--output", str(target) + ".npz"]
        proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        with open(inputs, "wb") as f:  # opens once the tool has loaded the bundle and reads its input
            os.truncate(target, 0)
            data = np.ascontiguousarray(x, dtype="<f4")
            f.write(b"LXT1" + struct.pack("<I", 2) + struct.pack("<2q", 2, 64) + data.tobytes())
        out, err = proc.communicate(timeout=60)
        if survives:
            assert proc.returncode == 0, out + err
            with np.load(str(target) + ".npz") as outputs:
                np.testing.assert_allclose(outputs["arr_0"], expected, rtol=1e-4, atol=1e-5)
        else:  # the documented contract of the mapped load: the file must stay unchanged
            assert proc.returncode != 0
