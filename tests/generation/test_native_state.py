"""Program state on the native core against runtime_py, the reference: the same sequence of calls
on one loaded module (state carried from call to call, reset_state, refused positions, a call
failing part-way) gives the same outputs, errors and states; and the tiny Hugging Face Llama
(static KV cache) gives the same logits over a prefill and 8 decode steps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import liteexport
import runtime_py
from tests.generation.native_calls import Call, Entry, Result, export_tiny_llama, host_tool, run_native, run_py
from tests.generation.stateful_models import RowCache, TwoCaches, export_stateful
from tests.text_models.typed import assert_same, native_tool_available

pytestmark = pytest.mark.skipif(not native_tool_available(), reason="needs cmake and g++ to build the native core")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import torch

    out = tmp_path_factory.mktemp("native_state")
    torch.manual_seed(0)
    liteexport.export(export_stateful(RowCache(), 4), out / "row.ptl", input_shapes={"forward": ["1xSx4", "S:int64"]},
                      dims={"S": (1, 4)})
    liteexport.export(export_stateful(TwoCaches(), 2), out / "two.ptl", input_shapes={"forward": ["1xSx2", "S:int64"]},
                      dims={"S": (1, 4)})
    return {"row": out / "row.ptl", "two": out / "two.ptl"}


def _rows(positions: list[int], width: int, rng: np.random.Generator) -> Call:
    x = rng.standard_normal((1, len(positions), width)).astype(np.float32)
    return Call((x, np.array(positions, dtype=np.int64)))


def _compare(native: list[Result], reference: list[Result]) -> None:
    """Entry by entry: outputs and states within the parity tolerance (integers exactly: the call
    counter), errors' code and fields equal."""
    assert len(native) == len(reference)
    for index, (got, expected) in enumerate(zip(native, reference, strict=True)):
        assert got.error == expected.error, f"entry {index}"
        assert_same(got.outputs, expected.outputs)
        assert got.states.keys() == expected.states.keys(), f"entry {index}"
        for name, value in expected.states.items():
            assert_same([got.states[name]], [value])


def test_row_cache_sequence_matches_runtime_py(bundles: dict[str, Path], tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    entries: list[Entry] = [_rows([0, 1, 2], 4, rng), _rows([3], 4, rng), "state", _rows([4, 5], 4, rng),
                            _rows([2, 9], 4, rng), "state",  # 9 is outside the cache: refused, nothing written
                            _rows([1], 4, rng), _rows([7, 6, 5, 4], 4, rng), _rows([0, 0], 4, rng), "state",
                            "reset", "state", _rows([0, 1, 2], 4, rng), _rows([-1], 4, rng), "state"]
    reference, final = run_py(bundles["row"], entries)
    native, report = run_native(host_tool(), bundles["row"], entries, tmp_path)
    _compare(native, reference)
    # the refusals happened, with runtime_py's code and fields
    errors = [r.error for r in reference if r.error]
    assert [e["code"] for e in errors] == ["STATE_POSITION", "STATE_POSITION"]
    assert errors[0]["fields"]["position"] == "9" and errors[0]["fields"]["state"] == "cache"
    np.testing.assert_array_equal(native[14].states["calls"], 1)  # one call after the reset, one refused
    listed = {s["name"]: (s["dtype"], tuple(s["shape"]), s["bytes"]) for s in report["states"]}
    assert listed == {name: (str(value.dtype), value.shape, value.nbytes) for name, value in final.items()}


def test_two_caches_failing_part_way_is_undone_as_in_runtime_py(bundles: dict[str, Path], tmp_path: Path) -> None:
    """[2, 5] fits the long cache (8) but not the short one (4): the long cache's write is undone."""
    rng = np.random.default_rng(4)
    entries: list[Entry] = [_rows([0, 1], 2, rng), "state", _rows([2, 5], 2, rng), "state", _rows([3, 2], 2, rng),
                            "state", "reset", "state"]
    reference, _ = run_py(bundles["two"], entries)
    native, _ = run_native(host_tool(), bundles["two"], entries, tmp_path)
    _compare(native, reference)
    assert reference[2].error is not None and reference[2].error["code"] == "STATE_POSITION"
    assert reference[2].error["fields"]["state"] == "short_cache"
    for name in ("long_cache", "short_cache"):  # the failed call changed neither
        np.testing.assert_array_equal(native[3].states[name], native[1].states[name])
    np.testing.assert_array_equal(native[7].states["short_cache"], np.full((1, 4, 2), 0.5, np.float32))


def test_tiny_llama_prefill_and_decode_logits_match_runtime_py(tmp_path: Path) -> None:
    bundle = export_tiny_llama(tmp_path / "llama.ptl")
    prompt = np.array([[5, 17, 33, 2, 9, 101, 64]], dtype=np.int64)
    # a prefill in two chunks, then 8 decode steps fed runtime_py's greedy choices (the same
    # tokens for both engines)
    entries: list[Entry] = [Call((prompt[:, :4], np.arange(4))), Call((prompt[:, 4:], np.arange(4, 7)))]
    module = runtime_py.load(bundle)
    logits = [module.forward(*call.inputs) for call in entries if isinstance(call, Call)][-1]
    for step in range(8):
        call = Call((np.array([[int(np.argmax(logits[0, -1]))]], dtype=np.int64), np.array([7 + step])))
        entries.append(call)
        logits = module.forward(*call.inputs)
    entries.append("state")
    reference, _ = run_py(bundle, entries)
    native, report = run_native(host_tool(), bundle, entries, tmp_path / "native")
    assert len(report["states"]) == 6  # keys and values of 2 layers, and a length per layer
    for got, expected in zip(native[:-1], reference[:-1], strict=True):
        assert got.error is None and expected.error is None
        assert_same(got.outputs, expected.outputs)
    for name, value in reference[-1].states.items():
        assert_same([native[-1].states[name]], [value])
