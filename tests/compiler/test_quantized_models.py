"""Quantized TorchScript models (issue 22) lower whole: their quantized ops compile to float ops
on the activations' grids (FAKE_QUANTIZE) and their int8 weights are stored as torch quantized
them. runtime_py matches torch's quantized engine within liteexport.quantized_parity.QUANTA quanta
of the output's grid (one per op where float and integer rounding part), with the same top class."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from benchmarks.models import torchvision_quantized
from bundle_format.program import OpCode
from liteexport.errors import VerificationError
from liteexport.inspect_bundle import delegate_contents
from liteexport.parity import RTOL, scaled_atol
from liteexport.quantized_parity import DYNAMIC_TOLERANCE, QUANTA, output_quantum, quanta_apart
from runtime_py.errors import UserError
from runtime_py.quantized_tensor import QuantizedTensor
from tests.compiler.models.quantized import small_quantized

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for the shared shim
from benchmarks.torchvision_shim import import_torchvision  # noqa: E402

pytestmark = pytest.mark.torch_oracle


@pytest.fixture(autouse=True)
def _engine():  # type: ignore[no-untyped-def]
    previous = torch.backends.quantized.engine
    yield
    torch.backends.quantized.engine = previous


def _export(model: torch.nn.Module, shape: tuple[int, ...], path: Path) -> tuple[np.ndarray, np.ndarray, float]:
    """Exports ``model`` (lowered whole, self-checked) and runs it: (ours, torch's, output quantum)."""
    liteexport.export(model, path, input_shapes=[shape])
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(x))
    expected = (expected[0] if isinstance(expected, tuple) else expected).numpy()
    got = runtime_py.load(path).forward(x)
    got = got[0] if isinstance(got, tuple) else got
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    quantum = output_quantum(contents[0]["forward"], 0)
    assert quantum is not None, "the output is not a quantized value"
    return np.asarray(got), expected, quantum


@pytest.mark.parametrize("engine", ["qnnpack", "fbgemm"])
def test_small_quantized_model_matches_torch_within_a_quantum(engine: str, tmp_path: Path) -> None:
    model = small_quantized(engine)
    got, expected, quantum = _export(model, (1, 3, 16, 16), tmp_path / "small.ptl")
    assert quanta_apart(got, expected, quantum) <= 1 + 1e-3  # one layer deep from the last requantization
    assert quantum == pytest.approx(model.fc.scale)
    program = delegate_contents(runtime_py.load(tmp_path / "small.ptl").ptmf)[0]["forward"]  # type: ignore[index]
    ops = [ins.op for ins in program.instructions]
    # every quantized op's result is rounded to its grid: the input's quantize, conv_relu, conv2,
    # add_relu, hardswish, hardsigmoid (torch's fixed grid), mul, conv3, avg_pool2d, cat, the
    # global average pool and the linear layer; max pooling and flatten keep their input's grid
    assert ops.count(OpCode.FAKE_QUANTIZE) == 12, ops


def test_quantized_weights_are_stored_as_torch_quantized_them(tmp_path: Path) -> None:
    model = small_quantized("fbgemm")
    path = tmp_path / "small.ptl"
    liteexport.export(model, path, input_shapes=[(1, 3, 16, 16)])
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    stored = [w for w in contents[1] if isinstance(w, QuantizedTensor)]
    assert len(stored) == 4  # conv, conv2, conv3, fc
    fc = model.fc.weight()
    mine = next(w for w in stored if w.shape == tuple(fc.shape))
    np.testing.assert_array_equal(mine.int_repr, fc.int_repr().numpy())
    np.testing.assert_array_equal(mine.scales, fc.q_per_channel_scales().numpy())


def test_an_op_without_a_quantized_meaning_is_reported(tmp_path: Path) -> None:
    class Exp(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.quant = torch.ao.quantization.QuantStub()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.exp(self.quant(x)).dequantize()

    model = Exp().eval()
    model.quant = torch.ao.nn.quantized.Quantize(0.1, 10, torch.quint8)  # type: ignore[assignment]
    with pytest.raises(UserError) as failure:
        liteexport.export(model, tmp_path / "exp.ptl", input_shapes=[(1, 4)])
    assert "aten::exp on a quantized tensor is not compiled (dequantize it first)" in str(failure.value)


def _dynamic(fused: bool) -> tuple[torch.nn.Module, torch.nn.Module]:
    """(the float MLP, it quantized by torch.ao's quantize_dynamic): linear_dynamic, and with the
    first Linear+ReLU fused, linear_relu_dynamic."""
    import torch.ao.nn.intrinsic as nni
    import torch.ao.quantization as tq

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).eval()
    source = tq.fuse_modules(model, [["0", "1"]]) if fused else model
    return model, tq.quantize_dynamic(source, {torch.nn.Linear, nni.LinearReLU}, dtype=torch.qint8)


@pytest.mark.parametrize("how", ["script", "trace"])
@pytest.mark.parametrize(("engine", "fused"), [("qnnpack", False), ("fbgemm", False), ("qnnpack", True)])
def test_dynamically_quantized_linear_layers_lower_with_torchs_int8_weights(how: str, engine: str, fused: bool,
                                                                           tmp_path: Path) -> None:
    """quantized::linear_dynamic / linear_relu_dynamic compile to LINEAR on float activations with
    torch's int8 weights: equal (parity tolerance) to the float model given those weights, and
    within DYNAMIC_TOLERANCE of torch, which also rounds each layer's input to 8 bits."""
    torch.backends.quantized.engine = engine
    model, quantized = _dynamic(fused)
    x = torch.from_numpy(np.random.default_rng(1).standard_normal((4, 16)).astype(np.float32))
    scripted = torch.jit.script(quantized) if how == "script" else torch.jit.trace(quantized, x)
    path = tmp_path / "dynamic.ptl"
    liteexport.export(scripted, path, input_shapes=[(4, 16)])  # self-checked against torch
    assert ("quantized::linear_relu_dynamic" in str(scripted.inlined_graph)) == fused
    ours = np.asarray(runtime_py.load(path).forward(x.numpy()))
    with torch.no_grad():
        theirs = scripted(x).numpy()
        layers = [m for m in quantized if hasattr(m, "weight") and callable(m.weight)]
        for layer, index in zip(layers, (0, 2), strict=True):
            model[index].weight.copy_(layer.weight().dequantize())
        expected = model(x).numpy()
    np.testing.assert_allclose(ours, expected, rtol=RTOL, atol=scaled_atol(expected))
    assert np.abs(ours - theirs).max() <= DYNAMIC_TOLERANCE * max(1.0, float(np.abs(theirs).max()))
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    stored = [w for w in contents[1] if isinstance(w, QuantizedTensor)]
    assert [w.int_repr.tolist() for w in stored] == [layer.weight().int_repr().tolist() for layer in layers]


TORCHVISION = {"resnet18": 224, "mobilenet_v2": 224, "mobilenet_v3_large": 224, "shufflenet_v2_x1_0": 224,
               "googlenet": 224, "inception_v3": 299}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TORCHVISION))
def test_torchvision_quantized_classifier_lowers_whole_and_matches_qnnpack(name: str, tmp_path: Path) -> None:
    size = TORCHVISION[name]
    model = torchvision_quantized(import_torchvision(), name, size)
    got, expected, quantum = _export(model, (1, 3, size, size), tmp_path / f"{name}.ptl")
    assert quanta_apart(got, expected, quantum) <= QUANTA + 1e-3
    assert got.argmax() == expected.argmax()


def test_a_dynamically_quantized_model_beyond_the_tolerance_fails_the_self_check(tmp_path: Path) -> None:
    """x[0] - x[1] of two inputs near 1000: torch rounds them to 8 bits (a step of 1000 / 255)
    before the difference, the float activations do not, and the results part by far more than the
    tolerance: exit 9, nothing written."""
    import torch.ao.quantization as tq

    torch.backends.quantized.engine = "qnnpack"
    difference = torch.nn.Linear(2, 1, bias=False)
    with torch.no_grad():
        difference.weight.copy_(torch.tensor([[1.0, -1.0]]))
    quantized = tq.quantize_dynamic(torch.nn.Sequential(difference).eval(), {torch.nn.Linear}, dtype=torch.qint8)
    x = np.array([[1000.5, 1000.0]], np.float32)
    with pytest.raises(VerificationError, match="allowed for its 1 dynamically quantized linear layer "):
        liteexport.export(quantized, tmp_path / "d.ptl", example_inputs=[(x,)])
    assert not (tmp_path / "d.ptl").exists()
