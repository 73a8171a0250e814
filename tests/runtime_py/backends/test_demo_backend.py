"""The backend registry and DemoBackend's compile/execute (the PyTorchBackendInterface)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from bundle_format.program import (
    Activation,
    Constant,
    FusedAttrs,
    Instruction,
    OpCode,
    Program,
    ValueInfo,
)
from runtime_py.backends import BACKENDS, Backend, get_backend
from runtime_py.backends.demo.backend import DemoBackend
from runtime_py.errors import FormatError

ROOT = Path(__file__).resolve().parents[3]
WEIGHT = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 10
BIAS = np.array([0.5, -0.25, 0.0], dtype=np.float32)


def linear_relu(method: str) -> Program:
    """method(x[?, 4]) -> (relu(x @ W.T + b), x)."""
    return Program(
        method=method,
        num_slots=4,
        inputs=(ValueInfo((-1, 4)),),
        constants=(Constant(1, 0), Constant(2, 1)),
        instructions=(Instruction(OpCode.LINEAR, (0, 1, 2), (3,), FusedAttrs(Activation.RELU), 7),),
        outputs=(3, 0),
        output_debug_handles=(7, -1),
    )


def expected(x: np.ndarray) -> np.ndarray:
    return np.maximum(x @ WEIGHT.T + BIAS, 0)


@pytest.mark.parametrize(
    "name", ["backend_with_compiler_demo", "__torch__.torch.classes.__backends__.backend_with_compiler_demo"]
)
def test_get_backend(name: str) -> None:
    backend = get_backend(name)
    assert isinstance(backend, DemoBackend) and isinstance(backend, Backend)
    assert backend.is_available()
    assert BACKENDS == {"backend_with_compiler_demo": DemoBackend}


def test_unknown_backend() -> None:
    with pytest.raises(FormatError) as info:
        get_backend("backend_with_magic")
    assert (
        str(info.value)
        == "unknown delegate backend 'backend_with_magic' (known backends: backend_with_compiler_demo)"
        " (at class backend_with_magic)"
    )


def test_compile_and_execute_decoded_programs() -> None:
    backend = get_backend("backend_with_compiler_demo")
    processed = {
        "programs": {"forward": linear_relu("forward"), "other": linear_relu("other")},
        "weights": [WEIGHT, BIAS],
    }
    handles = backend.compile(processed, {"forward": {}})
    assert set(handles) == {"forward", "other"}
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    y, same = backend.execute(handles["forward"], [x])
    assert isinstance(y, np.ndarray)
    np.testing.assert_allclose(y, expected(x), rtol=1e-6)
    assert same is x


def test_compile_decodes_flatbuffer_programs() -> None:
    codec = pytest.importorskip("bundle_format.program_codec")
    encoded = np.frombuffer(codec.encode_program(linear_relu("forward")), dtype=np.uint8)
    backend = get_backend("backend_with_compiler_demo")
    handles = backend.compile({"programs": {"forward": encoded}, "weights": [WEIGHT, BIAS]}, {"forward": {}})
    x = np.ones((3, 4), dtype=np.float32)
    (y, _) = backend.execute(handles["forward"], [x])
    assert isinstance(y, np.ndarray)
    np.testing.assert_allclose(y, expected(x), rtol=1e-6)


AT = "(at processed module of backend_with_compiler_demo)"


@pytest.mark.parametrize(
    ("processed", "spec", "message"),
    [
        ([1, 2], {}, f"expected a dict with keys 'programs' and 'weights', got list {AT}"),
        ({"programs": {}}, {}, f"expected a dict with keys 'programs' and 'weights', got ['programs'] {AT}"),
        ({"programs": [], "weights": []}, {}, f"'programs' must be a dict and 'weights' a list {AT}"),
        (
            {"programs": {"forward": linear_relu("forward")}, "weights": [WEIGHT, BIAS]},
            {"forward": {}, "backward": {}, "aux": {}},
            f"no program for method(s) aux, backward {AT}",
        ),
        (
            {"programs": {"forward": linear_relu("other")}, "weights": [WEIGHT, BIAS]},
            {"forward": {}},
            f"program 'other' is stored as method 'forward' {AT}",
        ),
    ],
)
def test_malformed_processed_modules(processed: object, spec: dict[str, object], message: str) -> None:
    with pytest.raises(FormatError) as info:
        DemoBackend().compile(processed, spec)
    assert str(info.value) == message


@pytest.mark.parametrize("handle", ["forward", True, None])
def test_a_foreign_handle_is_the_bundles_fault(handle: object) -> None:
    # a bundle's wrapper bytecode decides what it passes to execute: a corrupted one passes anything
    with pytest.raises(FormatError, match=f"execute was given a {type(handle).__name__} as the method handle") as info:
        DemoBackend().execute(handle, [])
    assert info.value.exit_code == 5 and "execute" in info.value.where


BLOCKED_TORCH = """
import sys
class BlockTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("torch is blocked in this test")
sys.meta_path.insert(0, BlockTorch())
import numpy as np
from runtime_py.backends import get_backend
from bundle_format.program import OpCode, Instruction, Program, ValueInfo, GeluAttrs
program = Program("forward", 2, (ValueInfo((3,)),), (),
                  (Instruction(OpCode.GELU, (0,), (1,), GeluAttrs(), 1),), (1,), (1,))
backend = get_backend("backend_with_compiler_demo")
handles = backend.compile({"programs": {"forward": program}, "weights": []}, {"forward": {}})
(y,) = backend.execute(handles["forward"], [np.array([-1.0, 0.0, 1.0], dtype=np.float32)])
assert "torch" not in sys.modules
print(" ".join(f"{v:.4f}" for v in y))
"""


def test_the_backend_runs_with_torch_blocked() -> None:
    result = subprocess.run(
        [sys.executable, "-c", BLOCKED_TORCH], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["-0.1587", "0.0000", "0.8413"]
