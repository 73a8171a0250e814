"""Program state on runtime_py: buffers a model writes in place are kept across calls, in place,
per loaded module, restored by reset_state(), and left unchanged by a refused call."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from bundle_format.program import OpCode
from liteexport.compiler.exported import compile_exported
from runtime_py.errors import InputError
from tests.generation.stateful_models import RowCache, TwoCaches, export_stateful

SHAPES = {"forward": ["1xSx4", "S:int64"]}
DIMS = {"S": (1, 4)}


@pytest.fixture(scope="module")
def row_cache(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, torch.nn.Module]:
    torch.manual_seed(0)
    model = RowCache()
    program = export_stateful(model, 4)
    path = tmp_path_factory.mktemp("state") / "row_cache.ptl"
    liteexport.export(program, path, input_shapes=SHAPES, dims=DIMS)
    return path, model


def _calls() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((1, len(p), 4)).astype(np.float32), np.array(p, dtype=np.int64))
            for p in ([0, 1, 2], [3], [4, 5], [1], [7, 6, 5, 4])]


def test_state_is_declared_and_written_in_place() -> None:
    compiled = compile_exported(export_stateful(RowCache(), 4))
    (program,) = compiled.programs
    assert {(s.name, s.shape) for s in program.states} == {("cache", (1, 8, 4)), ("calls", ())}
    assert program.format_version == 3
    writes = {i.op: i for i in program.instructions if i.op in (OpCode.INDEX_COPY, OpCode.STATE_WRITE)}
    slots = {s.name: s.slot for s in program.states}
    # each write reads its state's slot and writes that same slot: no copy of the cache
    assert writes[OpCode.INDEX_COPY].inputs[0] == writes[OpCode.INDEX_COPY].outputs[0] == slots["cache"]
    assert writes[OpCode.STATE_WRITE].inputs[0] == writes[OpCode.STATE_WRITE].outputs[0] == slots["calls"]


def test_calls_see_earlier_calls_as_torch_does(row_cache: tuple[Path, torch.nn.Module]) -> None:
    path, model = row_cache
    module = runtime_py.load(path)
    reference = export_stateful(model, 4).module()  # a fresh copy of the model's buffers
    for x, positions in _calls():
        ours = module.forward(x, positions)
        with torch.no_grad():
            expected = reference(torch.from_numpy(x), torch.from_numpy(positions)).numpy()
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-5)
    assert int(module.state["calls"]) == len(_calls())


def test_reset_state_and_separate_loads(row_cache: tuple[Path, torch.nn.Module]) -> None:
    path, _ = row_cache
    first, second = runtime_py.load(path), runtime_py.load(path)
    x, positions = _calls()[0]
    fresh = first.forward(x, positions)
    again = first.forward(x, positions)
    assert not np.allclose(fresh, again)  # the counter and the cache moved on
    np.testing.assert_array_equal(second.forward(x, positions), fresh)  # the other load did not see it
    first.reset_state()
    assert int(first.state["calls"]) == 0 and not first.state["cache"].any()
    np.testing.assert_array_equal(first.forward(x, positions), fresh)


def test_an_output_never_aliases_the_state(row_cache: tuple[Path, torch.nn.Module]) -> None:
    path, _ = row_cache
    module = runtime_py.load(path)
    x, positions = _calls()[0]
    out = module.forward(x, positions)
    kept = out.copy()
    module.forward(x, positions)
    np.testing.assert_array_equal(out, kept)
    with pytest.raises(ValueError):
        module.state["cache"][0, 0, 0] = 1.0  # read-only views


def test_a_position_outside_the_cache_is_refused_and_undone(tmp_path: Path) -> None:
    """Position 5 fits the long cache (8) but not the short one (4): the call fails after the
    first write, which is undone, so both caches are as before the call."""
    path = tmp_path / "two.ptl"
    liteexport.export(export_stateful(TwoCaches(), 2), path, input_shapes={"forward": ["1xSx2", "S:int64"]},
                      dims={"S": (1, 4)})
    module = runtime_py.load(path)
    module.forward(np.ones((1, 2, 2), np.float32), np.array([0, 1]))
    before = {name: array.copy() for name, array in module.state.items()}
    with pytest.raises(InputError) as info:
        module.forward(np.full((1, 2, 2), 7, np.float32), np.array([2, 5]))
    assert info.value.code == "STATE_POSITION"
    assert info.value.fields["position"] == "5" and info.value.fields["size"] == "4"
    assert info.value.fields["state"] == "short_cache"
    assert "position 5 is outside the state 'short_cache', which holds 4 positions" in str(info.value)
    for name, array in module.state.items():
        np.testing.assert_array_equal(array, before[name])
    with pytest.raises(InputError):
        module.forward(np.ones((1, 1, 2), np.float32), np.array([-1]))
    for name, array in module.state.items():
        np.testing.assert_array_equal(array, before[name])


def _lite(path: Path) -> object:
    import torch.jit.mobile

    from liteexport.torch_backend import load_torch_backend

    load_torch_backend()
    return torch.jit.mobile._load_for_lite_interpreter(str(path))


def test_torch_lite_interpreter_keeps_the_state_in_the_backend(row_cache: tuple[Path, torch.nn.Module]) -> None:
    """torch's lite interpreter with our backend: the same outputs as runtime_py over a sequence
    of calls, and two loads of the bundle have separate state."""
    path, _ = row_cache
    ours, lite, other = runtime_py.load(path), _lite(path), _lite(path)
    for x, positions in _calls():
        expected = ours.forward(x, positions)
        got = lite.forward(torch.from_numpy(x), torch.from_numpy(positions)).numpy()  # type: ignore[attr-defined]
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    x, positions = _calls()[0]
    first = other.forward(torch.from_numpy(x), torch.from_numpy(positions)).numpy()  # type: ignore[attr-defined]
    np.testing.assert_allclose(first, runtime_py.load(path).forward(x, positions), rtol=1e-6, atol=1e-6)


def test_torch_lite_interpreter_refuses_a_bad_position_and_undoes(tmp_path: Path) -> None:
    from liteexport.torch_backend import demo_error_of

    path = tmp_path / "two.ptl"
    liteexport.export(export_stateful(TwoCaches(), 2), path, input_shapes={"forward": ["1xSx2", "S:int64"]},
                      dims={"S": (1, 4)})
    ours, lite = runtime_py.load(path), _lite(path)
    ones, first = np.ones((1, 2, 2), np.float32), np.array([0, 1])
    ours.forward(ones, first)
    lite.forward(torch.from_numpy(ones), torch.from_numpy(first))  # type: ignore[attr-defined]
    bad = (np.full((1, 2, 2), 7, np.float32), np.array([2, 5]))
    with pytest.raises(InputError) as expected:
        ours.forward(*bad)
    with pytest.raises(RuntimeError) as got:
        lite.forward(*map(torch.from_numpy, bad))  # type: ignore[attr-defined]
    assert demo_error_of(got.value) == (expected.value.code, expected.value.fields)
    # the state is as before the bad call: the next call gives what runtime_py gives
    nxt = (np.full((1, 1, 2), 3, np.float32), np.array([3]))
    np.testing.assert_allclose(lite.forward(*map(torch.from_numpy, nxt)).numpy(),  # type: ignore[attr-defined]
                               ours.forward(*nxt), rtol=1e-6)


def test_inspect_lists_the_state(row_cache: tuple[Path, torch.nn.Module]) -> None:
    from liteexport.inspect_bundle import describe, format_description

    path, _ = row_cache
    description = describe(path)
    states = {s["name"]: s for s in description["delegate"]["states"]}
    assert states["cache"] == {"name": "cache", "shape": [1, 8, 4], "dtype": "float32", "bytes": 128,
                               "initial": "zeros", "methods": ["forward"]}
    assert states["calls"]["dtype"] == "int64" and states["calls"]["bytes"] == 8
    text = format_description(description)
    assert "State: 2 tensors kept across calls, 136 bytes" in text
    assert description["generation"] is None  # forward(x, positions) is not a decoder LM's
