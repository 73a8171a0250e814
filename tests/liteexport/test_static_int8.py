"""--quantize int8 --calibration-inputs (issue 22, item 2): static post-training quantization of
the compiled float program. Checked against torch: the program computes what torch computes with
torch.fake_quantize_per_tensor_affine at the same places and torch.quantize_per_channel's
weights (within liteexport.quantized_parity.QUANTA quanta of the output's grid), its grids are
the observed ranges of the float model's activations, the int8 weights are torch's per-channel
symmetric ones, its FAKE_QUANTIZE steps sit where the native int8 kernels expect them, and the
export states (and holds to) its error against the float model."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.jit.mobile
import torch.nn.functional as F
from click.testing import CliRunner

import liteexport
import runtime_py
from bundle_format.program import OpCode, Program
from liteexport import pipeline
from liteexport.cli import cli
from liteexport.errors import VerificationError
from liteexport.inspect_bundle import delegate_contents
from liteexport.quantized_parity import QUANTA, output_quantum, quanta_apart
from liteexport.static_int8 import TOLERANCE, Grid
from liteexport.torch_backend import load_torch_backend
from runtime_py.errors import InputError
from runtime_py.quantized_tensor import QuantizedTensor
from tests.liteexport.int8_checks import assert_int8_contract, fake_quantize_grids
from tests.liteexport.models.residual_net import ResidualNet

pytestmark = pytest.mark.torch_oracle
MODEL = Path(__file__).resolve().parent / "models" / "residual_net.py"

SHAPE = (1, 3, 16, 16)


def _calibration(count: int = 4, scale: float = 1.0) -> list[tuple[np.ndarray]]:
    rng = np.random.default_rng(0)
    return [((scale * rng.standard_normal(SHAPE)).astype(np.float32),) for _ in range(count)]


def _export(path: Path, calibration: Sequence[tuple[np.ndarray, ...]] | None = None) -> list[str]:
    notes: list[str] = []
    request = pipeline.Request(input_shapes={"forward": ((SHAPE),)}, quantize="int8",
                               calibration={"forward": tuple(calibration or _calibration())})
    pipeline.export(ResidualNet().eval(), path, request, note=notes.append)
    return notes


def _program(path: Path) -> tuple[Program, tuple[object, ...]]:
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    return contents[0]["forward"], tuple(contents[1])


def _int8(w: torch.Tensor) -> torch.Tensor:
    """``w`` as torch quantizes it per output channel, symmetric over 127 steps."""
    w = w.detach()
    scales = w.abs().amax(dim=tuple(range(1, w.dim()))).double() / 127
    return torch.quantize_per_channel(w, scales, torch.zeros(len(scales), dtype=torch.long), 0, torch.qint8)


def _reference(model: ResidualNet, x: torch.Tensor, grids: list[tuple[float, int]]) -> torch.Tensor:
    """The quantized network in torch: fake quantization where the program has it, torch's
    per-channel int8 weights (batch norm folded first, as the compiler folds it)."""
    from torch.nn.utils.fusion import fuse_conv_bn_eval

    def fq(t: torch.Tensor, n: int) -> torch.Tensor:
        return torch.fake_quantize_per_tensor_affine(t, grids[n][0], grids[n][1], -128, 127)

    def conv(layer: torch.nn.Conv2d, t: torch.Tensor) -> torch.Tensor:
        return F.conv2d(t, _int8(layer.weight).dequantize(), layer.bias, padding=1)

    c1 = fuse_conv_bn_eval(model.c1, model.b1)
    x = fq(F.max_pool2d(fq(torch.relu(conv(c1, fq(x, 0))), 1), 2), 2)
    y = fq(conv(model.c3, fq(F.relu6(conv(model.c2, x)), 3)), 4)
    x = fq(F.adaptive_avg_pool2d(fq(torch.relu(x + y), 5), 1).flatten(1), 6)
    return fq(F.linear(x, _int8(model.fc.weight).dequantize(), model.fc.bias), 7)


def test_the_program_is_torchs_fake_quantized_network_on_the_observed_grids(tmp_path: Path) -> None:
    path = tmp_path / "int8.ptl"
    notes = _export(path)
    program, weights = _program(path)
    grids = fake_quantize_grids(program)
    # the input; conv1 (+relu); its grid again after max pooling (for conv2's input); conv2 (+relu6);
    # conv3; the residual add (+relu); its grid again after pooling and flatten (for fc); fc
    assert len(grids) == 8, grids
    assert grids[2] == grids[1] and grids[6] == grids[5]
    model = ResidualNet().eval()
    calibration = [torch.from_numpy(x) for (x,) in _calibration()[:3]]  # the last of 4 is held out
    with torch.no_grad():
        first = [torch.relu(model.b1(model.c1(x))) for x in calibration]
    for n, values in ((0, calibration), (1, first)):
        low, high = min(float(v.min()) for v in values), max(float(v.max()) for v in values)
        want = Grid.of_range(low, high)
        assert grids[n][0] == pytest.approx(want.scale, rel=1e-4) and abs(grids[n][1] - want.zero_point) <= 1

    stored = [w for w in weights if isinstance(w, QuantizedTensor)]
    assert len(stored) == 4  # c1 (batch norm folded in), c2, c3, fc
    for layer in (model.c2, model.c3, model.fc):
        mine = next(w for w in stored if w.shape == tuple(layer.weight.shape) and
                    np.allclose(w.scales, _int8(layer.weight).q_per_channel_scales().numpy()))
        np.testing.assert_array_equal(mine.int_repr, _int8(layer.weight).int_repr().numpy())
        assert mine.axis == 0 and not np.any(mine.zero_points) and np.abs(mine.int_repr).max() <= 127

    x = torch.from_numpy(np.random.default_rng(5).standard_normal(SHAPE).astype(np.float32))
    ours = np.asarray(runtime_py.load(path).forward(x.numpy()))
    with torch.no_grad():
        expected = _reference(model, x, grids).numpy()
        floating = model(x).numpy()
    quantum = output_quantum(program, 0)
    assert quantum == grids[7][0]
    assert quanta_apart(ours, expected, quantum) <= QUANTA + 1e-3
    assert np.abs(ours - floating).max() <= TOLERANCE * float(floating.max() - floating.min())
    assert not np.allclose(ours, floating, rtol=0, atol=1e-6)  # it is quantized

    cost = [n for n in notes if n.startswith("int8 weights and activations cost forward")]
    assert len(cost) == 2 and "on 3 of 4 calibration sets, top-1 agreement" in cost[0], notes
    assert "on 1 held-out calibration set of 4 (calibration input set 3), top-1 agreement" in cost[1]
    assert re.search(rf"\([0-9.e-]+ x the output's range; allowed: {TOLERANCE:g} x\)", cost[1]), cost[1]

    load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))(x).numpy()
    assert quanta_apart(lite, ours, quantum) <= QUANTA + 1e-3


def test_fake_quantize_steps_sit_where_the_int8_kernels_expect_them(tmp_path: Path) -> None:
    path = tmp_path / "int8.ptl"
    _export(path)
    program, weights = _program(path)
    assert assert_int8_contract(program, weights) == 4
    ops = [ins.op for ins in program.instructions]
    add = ops.index(OpCode.ADD)
    assert ops[add - 1] == OpCode.FAKE_QUANTIZE and ops[add + 1: add + 3] == [OpCode.RELU, OpCode.FAKE_QUANTIZE]


def test_an_error_beyond_the_stated_tolerance_fails_the_export(tmp_path: Path) -> None:
    """Calibrated on inputs 100 times smaller than the held-out set (the last of 4), the grids clip it."""
    path = tmp_path / "clipped.ptl"
    calibration = [*_calibration(3, scale=0.01), _calibration(1)[0]]
    with pytest.raises(VerificationError, match=r"on 1 held-out calibration set of 4 \(calibration input set 3\): "
                                                r"[0-9.]+ x the output's range, more than the 0.1 x allowed"):
        _export(path, calibration)
    assert not path.exists()


def test_api_checks_the_calibration_inputs(tmp_path: Path) -> None:
    out = tmp_path / "x.ptl"
    with pytest.raises(InputError, match="--quantize int8 needs calibration inputs"):
        liteexport.export(ResidualNet(), out, input_shapes=[SHAPE], quantize="int8")
    with pytest.raises(InputError, match="calibration inputs .* are for --quantize int8 only"):
        liteexport.export(ResidualNet(), out, input_shapes=[SHAPE], calibration_inputs=_calibration())
    with pytest.raises(InputError, match="calibration_inputs of forward: expected a list of input tuples"):
        liteexport.export(ResidualNet(), out, quantize="int8", calibration_inputs=[np.zeros(SHAPE, np.float32)])
    with pytest.raises(InputError, match="calibration input set 1 does not fit forward"):
        liteexport.export(ResidualNet(), out, input_shapes=[SHAPE], quantize="int8",
                          calibration_inputs=[_calibration()[0], (np.zeros((1, 3, 8, 8), np.float32),)])
    assert not out.exists()
    size = liteexport.export(ResidualNet(), out, input_shapes=[SHAPE], quantize="int8",
                             calibration_inputs=[(torch.from_numpy(x),) for (x,) in _calibration(2)])
    assert size == out.stat().st_size


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["export", f"{MODEL}:ResidualNet", *args], prog_name="liteexport")
    return result.exit_code, result.stderr if result.exit_code else result.output


def test_cli_usage_and_input_errors(tmp_path: Path) -> None:
    out = str(tmp_path / "m.ptl")
    code, text = _cli("-o", out, "--quantize", "int8")
    # option rules are checked once, by the pipeline, before the model is loaded (exit 6, as in the API)
    assert code == 6 and "--quantize int8 needs calibration inputs: give --calibration-inputs FILE" in text
    np.save(tmp_path / "x.npy", _calibration()[0][0])
    code, text = _cli("-o", out, "--calibration-inputs", str(tmp_path / "x.npy"))
    assert code == 6 and "calibration inputs (--calibration-inputs) are for --quantize int8 only" in text
    np.save(tmp_path / "small.npy", np.zeros((1, 3, 8, 8), np.float32))
    code, text = _cli("-o", out, "--input-shape", "1x3x16x16", "--quantize", "int8", "--calibration-inputs",
                      str(tmp_path / "x.npy"), "--calibration-inputs", str(tmp_path / "small.npy"))
    assert code == 6 and f"Error: --calibration-inputs {tmp_path / 'small.npy'} does not fit forward" in text, text
    code, text = _cli("-o", out, "--quantize", "int8", "--calibration-inputs", str(tmp_path / "missing.npy"))
    assert code == 6 and "cannot read input file" in text
    code, text = _cli("-o", out, "--quantize", "int8", "--calibration-inputs", f"embed:{tmp_path / 'x.npy'}")
    assert code == 6 and "--calibration-inputs names method 'embed', which the model does not have" in text
    assert not Path(out).exists()
    code, text = _cli("-o", out, "--input-shape", "1x3x16x16", "--quantize", "int8",
                      "--calibration-inputs", str(tmp_path / "x.npy"))
    assert code == 0 and Path(out).exists(), text


class MatMulHead(torch.nn.Module):
    """x @ W by a constant (as HF's Conv1D computes), relu, a linear layer."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.w = torch.nn.Parameter(torch.randn(16, 32) / 4)
        self.fc = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(x @ self.w))


def test_a_matmul_by_a_constant_is_quantized_per_output_column(tmp_path: Path) -> None:
    path = tmp_path / "matmul.ptl"
    rng = np.random.default_rng(0)
    liteexport.export(MatMulHead(), path, input_shapes=[(8, 16)], quantize="int8",
                      calibration_inputs=[(rng.standard_normal((8, 16)).astype(np.float32),) for _ in range(4)])
    program, weights = _program(path)
    (w,) = [w for w in weights if isinstance(w, QuantizedTensor) and w.shape == (16, 32)]
    np.testing.assert_array_equal(w.int_repr, _int8(MatMulHead().w.T).int_repr().numpy().T)  # a scale per column
    assert w.axis == 1
    ops = [ins.op for ins in program.instructions]
    assert ops == [OpCode.FAKE_QUANTIZE, OpCode.MATMUL, OpCode.RELU, OpCode.FAKE_QUANTIZE, OpCode.LINEAR,
                   OpCode.FAKE_QUANTIZE], ops
    x = rng.standard_normal((8, 16)).astype(np.float32)
    with torch.no_grad():
        floating = MatMulHead()(torch.from_numpy(x)).numpy()
    ours = np.asarray(runtime_py.load(path).forward(x))
    assert np.abs(ours - floating).max() <= TOLERANCE * float(floating.max() - floating.min())
