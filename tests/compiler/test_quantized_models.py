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
from bundle_format.program import OpCode
from liteexport.inspect_bundle import delegate_contents
from liteexport.quantized_parity import QUANTA, output_quantum, quanta_apart
from runtime_py.errors import UserError
from runtime_py.quantized_tensor import QuantizedTensor
from tests.compiler.models.quantized import small_quantized, torchvision_quantized

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
