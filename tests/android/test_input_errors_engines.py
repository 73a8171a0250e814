"""Issue 31, item 6: the same input mistake is the same error on every engine and every export path.

A wrong input shape or dtype is exit 6 / ``InputError`` in runtime_py (its API and ``liteexport
run``), the torch backend (torch's lite interpreter running our bundle) and the native core's host
tool (``liteexport_native_run``), with the same code, fields, debug handle and message, whether
the bundle was exported with ``--input-shape`` (the program checks its inputs up front:
``INPUT_MISMATCH``) or without (the instruction that cannot take the input is the check:
``INPUT_UNFIT``). Java's ``InputException`` is held to the same vectors by the host tests
(android_sample/scripts/make_host_test_vectors.py, HostTests.checkInputError).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import runtime_py
from bundle_format.error_codes import parse
from bundle_format.program import AxisAttrs, OpCode, Program
from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.model_loading import load_scripted
from runtime_py.errors import InputError
from tests import cpp_builds
from tests.android.test_android_sample import build_dir
from tests.runtime_py.backends.demo_backend_helpers import one_op_program

pytestmark = [pytest.mark.android, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None,
                                 reason="needs cmake and g++ to build C++")]

ROOT = Path(__file__).resolve().parents[2]
TINY_CNN = "examples/tiny_cnn.py:TinyCNN"
SHAPE = (1, 3, 32, 32)


def _f32(*shape: int) -> np.ndarray:
    return np.random.default_rng(3).standard_normal(shape).astype(np.float32)


# mistake -> (bundle exported with --input-shape?, the input, runtime_py's code)
MISTAKES: dict[str, tuple[bool, np.ndarray, str]] = {
    "channels, with --input-shape": (True, _f32(1, 4, 32, 32), "INPUT_MISMATCH"),
    "channels, without": (False, _f32(1, 4, 32, 32), "INPUT_UNFIT"),
    "rank, with --input-shape": (True, _f32(3, 32, 32), "INPUT_MISMATCH"),
    "rank, without": (False, _f32(3, 32, 32), "INPUT_UNFIT"),
    "dtype, with --input-shape": (True, np.zeros(SHAPE, np.int64), "INPUT_MISMATCH"),
    "dtype, without": (False, np.zeros(SHAPE, np.int64), "INPUT_MISMATCH"),
}
ENGINES = ("runtime_py", "liteexport run", "torch", "native")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[bool, Path]:
    out = tmp_path_factory.mktemp("input_errors")
    paths = {}
    for shaped in (True, False):
        # from the checkout, as the CLI would: the debug table's source paths are relative
        scripted = load_scripted(str(ROOT / TINY_CNN))
        compiled = compile_module(scripted, input_shapes={"forward": [SHAPE]} if shaped else None)
        paths[shaped] = out / f"tiny_{'shaped' if shaped else 'unshaped'}.ptl"
        write_bundle(compiled, paths[shaped])
    return paths


def _reference(bundle: Path, x: np.ndarray) -> InputError:
    with pytest.raises(InputError) as info:
        runtime_py.load(bundle).run_method("forward", x)
    return info.value


def _native_tool() -> Path:
    return build_dir(cpp_builds.wait("native-host")) / "liteexport_native_run"


Reported = tuple[int, str, int | None, tuple[str, dict[str, str]] | None]


def _engine_error(engine: str, bundle: Path, x: np.ndarray, tmp_path: Path) -> Reported:
    """(exit code, message, debug handle and (code, fields) when the engine reports them) of
    ``engine`` on ``x``; the tools report text only (the fields are read back from it)."""
    if engine == "runtime_py":
        error = _reference(bundle, x)
        return error.exit_code, str(error), error.debug_handle, (error.code, dict(error.fields))
    npy = tmp_path / "x.npy"
    np.save(npy, x)
    if engine == "liteexport run":
        result = subprocess.run([sys.executable, "-m", "liteexport", "run", str(bundle), "--input", str(npy)],
                                capture_output=True, text=True, check=False, cwd=ROOT)
        return result.returncode, result.stderr.strip().removeprefix("Error: "), None, None
    if engine == "native":
        result = subprocess.run([str(_native_tool()), str(bundle), str(npy)], capture_output=True, text=True,
                                check=False, timeout=120)
        return result.returncode, result.stderr.strip().removeprefix("Error: "), None, None
    from liteexport.profile import _torch_error
    from liteexport.torch_backend import debug_handle_of, load_torch_backend

    load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(str(bundle))
    with pytest.raises(RuntimeError) as info:
        lite(torch.from_numpy(x))
    mapped = _torch_error(info.value, runtime_py.load(bundle).debug_table, "forward")
    assert isinstance(mapped, InputError), info.value
    assert mapped.debug_handle == debug_handle_of(info.value)
    return mapped.exit_code, str(mapped), mapped.debug_handle, (mapped.code, dict(mapped.fields))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("mistake", sorted(MISTAKES))
def test_an_input_mistake_is_the_same_input_error_everywhere(mistake: str, engine: str, bundles: dict[bool, Path],
                                                             tmp_path: Path) -> None:
    shaped, x, code = MISTAKES[mistake]
    reference = _reference(bundles[shaped], x)
    assert reference.code == code and reference.exit_code == 6
    assert reference.fields["index"] == "0" and reference.debug_handle >= 0
    assert "Module hierarchy: top(TinyCNN)" in str(reference)
    exit_code, message, handle, structured = _engine_error(engine, bundles[shaped], x, tmp_path)
    if structured is not None:
        assert structured == (code, dict(reference.fields))
    assert exit_code == 6
    assert message == str(reference)  # the same words: the code's template with the same fields
    first = message.splitlines()[0].removeprefix("forward: ")
    assert parse(code, first) == dict(reference.fields)
    if handle is not None:
        assert handle == reference.debug_handle


def test_a_wrong_shape_is_exit_6_with_or_without_input_shapes_in_the_cli(bundles: dict[bool, Path],
                                                                        tmp_path: Path) -> None:
    """The issue's case: exit 6 with --input-shape and 7 without."""
    for shaped in (True, False):
        result = subprocess.run([sys.executable, "-m", "liteexport", "run", str(bundles[shaped]), "--random",
                                 "1x4x32x32"], capture_output=True, text=True, check=False, cwd=ROOT)
        assert result.returncode == 6, result.stderr
        assert "Traceback" not in result.stderr


# --- softmax of a 0-d tensor (a hostile program): computed as torch does, on every engine ---

def _scalar_softmax_bundle(op: OpCode, axis: int, path: Path) -> Path:
    from bundle_format.debug_table import DebugTable
    from liteexport.lowered import CompiledModule, MethodSignature

    program: Program = one_op_program(op, AxisAttrs(axis), [()])
    signature = MethodSignature("forward", ("x0",), False, 1)
    write_bundle(CompiledModule("__torch__.m.M", (signature,), (program,), (), DebugTable(())), path)
    return path


@pytest.mark.parametrize("axis", [0, -1])
@pytest.mark.parametrize("op", [OpCode.SOFTMAX, OpCode.LOG_SOFTMAX])
def test_softmax_of_a_scalar_is_torchs_on_every_engine(op: OpCode, axis: int, tmp_path: Path) -> None:
    bundle = _scalar_softmax_bundle(op, axis, tmp_path / "scalar_softmax.ptl")
    for value in (2.5, float("inf")):
        x = torch.tensor(value)
        expected = (torch.softmax if op == OpCode.SOFTMAX else torch.log_softmax)(x, axis).numpy()
        ours = runtime_py.load(bundle).run_method("forward", x.numpy())
        np.testing.assert_array_equal(ours, expected)
        from liteexport.torch_backend import load_torch_backend

        load_torch_backend()
        lite = torch.jit.mobile._load_for_lite_interpreter(str(bundle))
        np.testing.assert_array_equal(lite(x).numpy(), expected)
        np.save(tmp_path / "x.npy", x.numpy())
        out = tmp_path / "out.npz"
        result = subprocess.run([str(_native_tool()), str(bundle), str(tmp_path / "x.npy"), "--output", str(out)],
                                capture_output=True, text=True, check=False, timeout=120)
        assert result.returncode == 0, result.stderr
        with np.load(out) as native:
            np.testing.assert_array_equal(native["arr_0"], expected)


def test_softmax_of_a_scalar_on_a_missing_axis_is_refused_alike(tmp_path: Path) -> None:
    bundle = _scalar_softmax_bundle(OpCode.SOFTMAX, 1, tmp_path / "bad_axis.ptl")
    x = np.array(2.0, np.float32)
    np.save(tmp_path / "x.npy", x)
    with pytest.raises(IndexError, match="out of range"):
        torch.softmax(torch.from_numpy(x), 1)  # torch refuses it: "Dimension out of range"
    result = subprocess.run([sys.executable, "-m", "liteexport", "run", str(bundle), "--input",
                             str(tmp_path / "x.npy")], capture_output=True, text=True, check=False, cwd=ROOT)
    # the program declares its 0-d input, which fits: the program is at fault (KERNEL_FAILED, exit 7)
    assert result.returncode == 7, result.stderr
    native = subprocess.run([str(_native_tool()), str(bundle), str(tmp_path / "x.npy")], capture_output=True,
                            text=True, check=False, timeout=120)
    assert native.returncode == result.returncode
    assert native.stderr.strip() == result.stderr.strip()
