"""Run one scripted model in torch's lite interpreter and in runtime_py, in both lite formats.

Used by the conformance suite and the control-flow tests: the model is scripted once,
saved by torch as a zip ``.ptl`` (bytecode 8) and as a flatbuffer (bytecode 9), run by
torch's own lite interpreter (the oracle) and by runtime_py on the same inputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

FORMATS = ("zip", "flatbuffer")
ATOL = 1e-5
RTOL = 1e-4


def save(scripted: Any, directory: Path, name: str, fmt: str, **kwargs: Any) -> Path:
    path = directory / f"{name}.{fmt}.ptl"
    scripted._save_for_lite_interpreter(str(path), _use_flatbuffer=(fmt == "flatbuffer"), **kwargs)
    return path


def to_numpy(value: Any) -> Any:
    """torch outputs in runtime_py's value conventions."""
    import torch

    if isinstance(value, torch.Tensor):
        # A copy: torch's flatbuffer loader may return tensors pointing into the loaded file's
        # buffer, which is freed with the lite module.
        return value.detach().numpy().copy()
    if isinstance(value, (list, tuple)):
        return type(value)(to_numpy(v) for v in value)
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    if isinstance(value, torch.dtype):
        return value
    return value


def to_torch(value: Any) -> Any:
    import torch

    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())
    if isinstance(value, (list, tuple)):
        return type(value)(to_torch(v) for v in value)
    return value


def assert_same(ours: Any, theirs: Any, where: str = "output") -> None:
    """Outputs equal up to float tolerance; containers element by element, types alike."""
    if isinstance(theirs, np.ndarray):
        assert isinstance(ours, np.ndarray), f"{where}: expected a tensor, got {type(ours).__name__}"
        assert ours.shape == theirs.shape, f"{where}: shape {ours.shape} != {theirs.shape}"
        assert ours.dtype == theirs.dtype, f"{where}: dtype {ours.dtype} != {theirs.dtype}"
        if theirs.dtype.kind in "fc":
            np.testing.assert_allclose(ours, theirs, atol=ATOL, rtol=RTOL, err_msg=where)
        else:
            np.testing.assert_array_equal(ours, theirs, err_msg=where)
    elif isinstance(theirs, (list, tuple)):
        assert isinstance(ours, type(theirs)), f"{where}: expected {type(theirs).__name__}, got {type(ours)}"
        assert len(ours) == len(theirs), f"{where}: length {len(ours)} != {len(theirs)}"
        for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
            assert_same(a, b, f"{where}[{i}]")
    elif isinstance(theirs, dict):
        assert isinstance(ours, dict) and ours.keys() == theirs.keys(), f"{where}: keys differ"
        for k in theirs:
            assert_same(ours[k], theirs[k], f"{where}[{k!r}]")
    elif isinstance(theirs, float):
        close = isinstance(ours, float) and np.isclose(ours, theirs, atol=ATOL, rtol=RTOL)
        assert close, f"{where}: {ours} != {theirs}"
    else:
        assert type(ours) is type(theirs) and ours == theirs, f"{where}: {ours!r} != {theirs!r}"


def run_both(path: Path, inputs: tuple[Any, ...], method: str = "forward") -> tuple[Any, Any]:
    """(runtime_py's output, torch lite interpreter's output) for ``inputs`` (numpy/Python values)."""
    import torch
    import torch.jit.mobile

    import runtime_py

    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    with torch.no_grad():
        theirs = to_numpy(lite.run_method(method, *to_torch(inputs)))
    ours = runtime_py.load(path).run_method(method, *inputs)
    return ours, theirs


def check(scripted: Any, directory: Path, name: str, fmt: str, inputs: tuple[Any, ...]) -> None:
    path = save(scripted, directory, name, fmt)
    ours, theirs = run_both(path, inputs)
    assert_same(ours, theirs)
