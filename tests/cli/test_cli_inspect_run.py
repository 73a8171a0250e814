"""inspect and run on a hand-built bundle: needs neither the compiler nor torch."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from liteexport.lowered import CompiledModule

from .conftest import invoke


def _expected(module: CompiledModule, x: np.ndarray) -> np.ndarray:
    weight, bias = module.weights
    return np.maximum(x @ weight.T + bias, 0)


def test_inspect_human(hand_bundle: Path) -> None:
    result = invoke(["inspect", str(hand_bundle)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    size = hand_bundle.stat().st_size
    assert lines[0] == f"{hand_bundle}: {size:,} bytes, PTMF flatbuffer, bytecode version 9"
    assert "Operators: 1 (runtime_py has all)" in lines  # the wrapper's prim::unchecked_cast
    assert "  forward(x: Tensor[?x4]) -> Tuple[Tensor, Tensor]" in lines  # the compiled input shape
    assert "Delegate: backend_with_compiler_demo" in lines
    assert "  forward ops: LINEAR 1" in lines
    assert "Weights: 2 tensors, 60 bytes, all float32" in lines
    assert "Debug table: 1 entry" in lines
    assert any(line.split() == ["7", "aten::linear", "m.py:7", "top(M).l(Linear)"] for line in lines)
    assert lines[-1].split()[:2] == ["total", f"{size:,}"]


def test_inspect_json(hand_bundle: Path) -> None:
    result = invoke(["inspect", str(hand_bundle), "--json"])
    assert result.exit_code == 0, result.output
    d = json.loads(result.stdout)
    assert d["file_size"] == hand_bundle.stat().st_size
    assert d["bytecode_version"] == 9
    assert d["methods"] == [{"name": "forward", "signature": "forward(x: Tensor[?x4]) -> Tuple[Tensor, Tensor]"}]
    delegate = d["delegate"]
    assert delegate["backend"] == "backend_with_compiler_demo"
    assert delegate["programs"] == [{"method": "forward", "format_version": 2, "instructions": 1,
                                     "op_histogram": {"LINEAR": 1}, "inputs": [[-1, 4]], "input_specs": ["?x4"],
                                     "dims": [], "outputs": 2, "constants": 2, "slots": 4,
                                     "working_memory": 0, "states": []}]
    assert delegate["states"] == [] and d["generation"] is None
    assert delegate["weights"] == {"count": 2, "total_bytes": 60, "by_dtype": {"float32": {"count": 2, "bytes": 60}},
                                   "tensors": [
        {"index": 0, "shape": [3, 4], "dtype": "float32", "bytes": 48},
        {"index": 1, "shape": [3], "dtype": "float32", "bytes": 12}]}
    assert d["debug_table"]["count"] == 1
    assert d["debug_table"]["entries"] == [{"handle": 7, "method": "forward", "node_kind": "aten::linear",
                                            "module_hierarchy": "top(M).l(Linear)", "location": "m.py:7"}]
    sizes = d["sizes"]
    assert sizes["weights"] == 60 and sizes["programs"] > 0 and sizes["debug_table"] > 0
    assert sum(v for k, v in sizes.items() if k != "total") == sizes["total"] == d["file_size"]


def test_run_prints_outputs(hand_bundle: Path, linear_relu_module: CompiledModule, tmp_path: Path) -> None:
    x = np.array([[1, 2, 3, 4], [-1, 0, 1, 0.5]], dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    result = invoke(["run", str(hand_bundle), "--input", str(tmp_path / "x.npy")])
    assert result.exit_code == 0, result.output
    with np.printoptions(threshold=100, edgeitems=3, linewidth=100):
        assert result.stdout == (f"output_0: shape (2, 3), dtype float32\n"
                                 f"{np.array2string(_expected(linear_relu_module, x))}\n"
                                 f"output_1: shape (2, 4), dtype float32\n{np.array2string(x)}\n")


@pytest.mark.parametrize("keys", [("x",), ("arr_0",)])
def test_run_npz_to_npz(hand_bundle: Path, linear_relu_module: CompiledModule, tmp_path: Path,
                        keys: tuple[str, ...]) -> None:
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    np.savez(tmp_path / "in.npz", **{keys[0]: x})
    out = tmp_path / "out.npz"
    result = invoke(["run", str(hand_bundle), "-i", str(tmp_path / "in.npz"), "--output", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"Wrote {out}: 2 output(s)\n"
    with np.load(out) as saved:
        assert saved.files == ["output_0", "output_1"]
        np.testing.assert_allclose(saved["output_0"], _expected(linear_relu_module, x), atol=1e-6)
        np.testing.assert_array_equal(saved["output_1"], x)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left


def test_run_random_is_seeded(hand_bundle: Path, linear_relu_module: CompiledModule, tmp_path: Path) -> None:
    outs = []
    for n, seed in enumerate(["3", "3", "4"]):
        out = tmp_path / f"out{n}.npz"
        assert invoke(["run", str(hand_bundle), "--random", "5,4:float32", "--seed", seed,
                       "-o", str(out)]).exit_code == 0
        with np.load(out) as saved:
            outs.append(saved["output_1"])
    assert outs[0].shape == (5, 4) and outs[0].dtype == np.float32
    np.testing.assert_array_equal(outs[0], outs[1])
    assert not np.array_equal(outs[0], outs[2])
    expected = np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_array_equal(outs[0], expected)


def test_run_shows_none_outputs_and_saves_the_tensors(linear_relu_module: CompiledModule, tmp_path: Path) -> None:
    """googlenet-like (y, None, x): the None is printed as such, and left out of the npz, saying so."""
    import dataclasses

    from bundle_format import ptmf
    from liteexport.bundle import write_bundle

    (sig,) = linear_relu_module.methods
    with_none = dataclasses.replace(sig, constants=((1, ptmf.NoneValue()),))
    bundle = tmp_path / "none.ptl"
    write_bundle(dataclasses.replace(linear_relu_module, methods=(with_none,)), bundle)
    x = np.ones((1, 4), np.float32)
    np.save(tmp_path / "x.npy", x)
    shown = invoke(["run", str(bundle), "--input", str(tmp_path / "x.npy")])
    assert shown.exit_code == 0, shown.output
    assert [line for line in shown.stdout.splitlines() if line.startswith("output_")] == [
        "output_0: shape (1, 3), dtype float32", "output_1: None", "output_2: shape (1, 4), dtype float32"]
    out = tmp_path / "out.npz"
    saved = invoke(["run", str(bundle), "--input", str(tmp_path / "x.npy"), "--output", str(out)])
    assert saved.stdout == f"Wrote {out}: 2 output(s) (output_1: constants, not saved)\n"
    with np.load(out, allow_pickle=False) as arrays:
        assert arrays.files == ["output_0", "output_2"]
        np.testing.assert_array_equal(arrays["output_2"], x)
