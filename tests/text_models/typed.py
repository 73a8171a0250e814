"""Shared by the typed-ops and text-model tests: compile a traced module with typed input specs,
run it in runtime_py and through the torch backend (torch's lite interpreter), compare with eager.
Where cmake and g++ are installed the native core runs every bundle too (liteexport_native_run),
its outputs compared with the lite interpreter's within the same tolerance."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

import runtime_py
from liteexport.backend import DEMO_BACKEND
from liteexport.bundle import write_bundle
from liteexport.input_spec import TensorSpec
from liteexport.lowered import CompiledModule
from liteexport.parity import as_outputs, scaled_atol
from runtime_py.errors import ExecutionError, FormatError, InputError, LiteExportError

RTOL = 1e-4
_NAMES = {torch.float32: "float32", torch.int64: "int64", torch.int32: "int32", torch.bool: "bool"}


def spec_of(t: torch.Tensor) -> TensorSpec:
    return TensorSpec(tuple(t.shape), _NAMES[t.dtype])


def compile_traced(module: torch.nn.Module, examples: Sequence[torch.Tensor]) -> tuple[torch.jit.ScriptModule,
                                                                                        CompiledModule]:
    traced = torch.jit.trace(module.eval(), tuple(examples), strict=False)
    compiled = DEMO_BACKEND.preprocess(traced, input_shapes={"forward": [spec_of(t) for t in examples]})
    return traced, compiled


def compile_scripted(module: torch.nn.Module, examples: Sequence[torch.Tensor]) -> CompiledModule:
    """``module`` scripted and compiled for inputs of the examples' shapes and dtypes."""
    return DEMO_BACKEND.preprocess(torch.jit.script(module.eval()),
                                   input_shapes={"forward": [spec_of(t) for t in examples]})


def assert_same(got: object, expected: object) -> float:
    """Same structure, dtypes and shapes; floats within the parity tolerance (atol 1e-5 scaled by the
    output's magnitude, rtol 1e-4), integers and bools exactly. Returns the largest float error."""
    largest = 0.0
    got_outputs, expected_outputs = as_outputs(got), as_outputs(expected)
    assert len(got_outputs) == len(expected_outputs)
    for g, e in zip(got_outputs, expected_outputs, strict=True):
        g, e = np.asarray(g), np.asarray(e)
        assert (g.dtype, g.shape) == (e.dtype, e.shape)
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, atol=scaled_atol(e), rtol=RTOL)
            if e.size:
                largest = max(largest, float(np.nanmax(np.abs(g.astype(np.float64) - e))))
        else:
            np.testing.assert_array_equal(g, e)
    return largest


def run_engines(compiled: CompiledModule, path: Path, inputs: Sequence[torch.Tensor]) -> tuple[object, object]:
    """The method's results from runtime_py and from torch's lite interpreter with liteexport's backend;
    the native core's (where it builds) must match the lite interpreter's. When runtime_py raises, the
    native core must raise the same error (kind and message), and runtime_py's is raised."""
    write_bundle(compiled, path)
    arrays = [t.numpy() for t in inputs]
    try:
        ours = runtime_py.load(path).run_method("forward", *arrays)
    except LiteExportError as exc:
        if native_tool_available():
            try:
                run_native(path, arrays)
            except LiteExportError as native:
                assert (type(native), str(native)) == (type(exc), str(exc))
            else:
                raise AssertionError(f"the native core ran where runtime_py raised {exc!r}") from exc
        raise
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    expected = lite.run_method("forward", *inputs)
    if native_tool_available():
        assert_same(run_native(path, arrays), expected)
    return ours, expected


def check_against_eager(module: torch.nn.Module, compiled: CompiledModule, path: Path,
                        inputs: Sequence[torch.Tensor]) -> None:
    """Every engine's results on ``inputs`` (``run_engines``) against ``module`` run eagerly."""
    with torch.no_grad():
        result = module(*inputs)
    expected = [t.numpy() for t in (result if isinstance(result, tuple) else (result,))]
    ours, lite = run_engines(compiled, path, inputs)
    assert_same(ours, expected)
    assert_same(lite, expected)


def native_tool_available() -> bool:
    return shutil.which("cmake") is not None and shutil.which("g++") is not None


def native_tool() -> Path:
    """liteexport_native_run of the host build (tests/cpp_builds.py builds it once per run)."""
    from tests import cpp_builds
    from tests.android.test_android_sample import build_dir

    return build_dir(cpp_builds.wait("native-host")) / "liteexport_native_run"


# the host tool's exit codes (native_run.cpp) and runtime_py's errors of the same kind
_NATIVE_ERRORS: dict[int, type[LiteExportError]] = {5: FormatError, 6: InputError, 7: ExecutionError}


def run_native(path: Path, inputs: Sequence[np.ndarray], tool: Path | None = None) -> list[np.ndarray]:
    """The outputs of ``forward`` on ``inputs`` (saved as .npy) by the native core's host tool; its
    errors as runtime_py's error of the same kind, with the tool's message."""
    files = []
    for i, value in enumerate(inputs):
        files.append(path.with_name(f"{path.name}.in{i}.npy"))
        np.save(files[-1], np.asarray(value))  # not ascontiguousarray: it makes a 0-d array 1-d
    out = path.with_name(f"{path.name}.native.npz")
    result = subprocess.run([str(tool or native_tool()), str(path), *map(str, files), "--output", str(out)],
                            capture_output=True, text=True, timeout=600, check=False)
    if result.returncode in _NATIVE_ERRORS:
        raise _NATIVE_ERRORS[result.returncode](result.stderr.strip().removeprefix("Error: "))
    assert result.returncode == 0, result.stdout + result.stderr
    with np.load(out) as archive:
        return [archive[name] for name in sorted(archive.files, key=lambda name: int(name.removeprefix("arr_")))]
