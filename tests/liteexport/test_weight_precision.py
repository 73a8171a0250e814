"""--weights fp16 (issue 22, item 2): float32 weights stored as float16 halve the bundle; runtime_py
and the torch backend widen them when loading and compute in float32; the export states the error
against the float model and fails beyond the stated tolerance."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile

import liteexport
import liteexport.torch_backend as tb
import runtime_py
from bundle_format.bundle_file import read_bundle_file
from bundle_format.ptmf import ScalarType
from liteexport import pipeline
from liteexport.errors import VerificationError
from liteexport.parity import RTOL, scaled_atol
from liteexport.weight_precision import FP16_TOLERANCE, half_weights, weight_cost
from runtime_py.errors import InputError

pytestmark = pytest.mark.torch_oracle


class Net(torch.nn.Module):
    """Conv, batch norm, linear; plus a float constant float16 cannot hold (beyond its 65504)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.conv = torch.nn.Conv2d(3, 64, 3)
        self.bn = torch.nn.BatchNorm2d(64)
        self.fc = torch.nn.Linear(64, 1000)
        self.register_buffer("scale", torch.full((1000,), 1e5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.bn(self.conv(x))).mean((2, 3))
        return self.fc(y) * self.scale


def _export(tmp_path: Path, weights: str) -> tuple[Path, list[str]]:
    path = tmp_path / f"net-{weights}.ptl"
    notes: list[str] = []
    request = pipeline.Request(input_shapes={"forward": (liteexport.input_spec.TensorSpec((2, 3, 16, 16)),)},
                               weights=weights)
    pipeline.export(Net().eval(), path, request, note=notes.append)
    return path, notes


def test_fp16_halves_the_weights_and_every_engine_stays_near_the_float_model(tmp_path: Path) -> None:
    full, _ = _export(tmp_path, "fp32")
    half, notes = _export(tmp_path, "fp16")
    stored = [ScalarType(t.scalar_type) for t in read_bundle_file(half).ivalues if hasattr(t, "scalar_type")]
    assert stored.count(ScalarType.HALF) >= 4 and ScalarType.FLOAT in stored  # the 1e5 scale stays float32
    assert half.stat().st_size < 0.55 * full.stat().st_size
    from liteexport.inspect_bundle import describe

    kinds = describe(half)["delegate"]["weights"]["by_dtype"]
    assert set(kinds) == {"float16", "float32"} and kinds["float32"]["count"] == 1  # inspect's size by dtype
    assert any(n.startswith("float16 weights cost forward: max abs error") and "top-1 agreement 2/2" in n
               for n in notes), notes
    x = torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(5))
    expected = Net().eval()(x).detach().numpy()
    ours = runtime_py.load(half).forward(x.numpy())
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, expected, atol=FP16_TOLERANCE * max(1.0, np.abs(expected).max()))
    assert not np.array_equal(ours, runtime_py.load(full).forward(x.numpy()))  # the narrow weights were used
    tb.load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(str(half))
    np.testing.assert_allclose(lite.forward(x).numpy(), ours, rtol=RTOL, atol=scaled_atol(ours))  # float32 parity


def test_an_error_beyond_the_tolerance_fails_the_export(tmp_path: Path) -> None:
    path, _ = _export(tmp_path, "fp32")
    compiled = liteexport.compiler.compile_module(torch.jit.script(Net().eval()),
                                                  input_shapes={"forward": [(2, 3, 16, 16)]})
    narrowed, count = half_weights(compiled)
    assert count == len(compiled.weights) - 1
    from liteexport.test_vectors import record_test_vectors

    inputs = (np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32),)
    vectors = record_test_vectors(torch.jit.script(Net().eval()), {"forward": [inputs]})
    assert weight_cost(narrowed, vectors)  # within the tolerance
    with pytest.raises(VerificationError, match="with float16 weights, forward is off the float model"):
        weight_cost(narrowed, vectors, tolerance=1e-7)


def test_fp16_needs_a_whole_lowering(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--weights fp16 applies to a model lowered whole"):
        liteexport.export(Net(), tmp_path / "x.ptl", input_shapes=[(2, 3, 16, 16)], lower="auto", weights="fp16")
    with pytest.raises(InputError, match="weights: expected one of fp32, fp16"):
        liteexport.export(Net(), tmp_path / "x.ptl", weights="int4")
    assert not (tmp_path / "x.ptl").exists()


def test_no_check_still_states_the_cost_on_the_example_inputs(tmp_path: Path) -> None:
    """With --no-check (check=False) nothing is enforced, but the cost is still stated where there are
    inputs to measure it on: the stored example inputs (issue 31, item 2)."""
    x = np.random.default_rng(0).standard_normal((2, 3, 16, 16)).astype(np.float32)
    notes: list[str] = []
    request = pipeline.Request(examples={"forward": ((x,),)}, weights="fp16", check=False)
    pipeline.export(Net().eval(), tmp_path / "n.ptl", request, note=notes.append)
    (cost,) = [n for n in notes if n.startswith("float16 weights cost forward")]
    assert "against the float model on 1 input set, top-1 agreement 2/2" in cost, cost
    assert not any("self-check" in n for n in notes), notes
