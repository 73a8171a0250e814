"""fbgemm-quantized models compile to torch's result (issue 31, item 1): fbgemm's depthwise
convolution adds pairs of products in int16 with saturation (liteexport/compiler/int16_pairs.py),
which the compiled program now does too, as torch says its kernel does; a kernel that computes
neither that nor the exact sums is refused. Every check is on held-out inputs (seeds the export
did not see), in quanta of the output's grid."""

from __future__ import annotations

import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from benchmarks.models import with_batch_norm_statistics
from bundle_format.program import OpCode
from liteexport.compiler import int16_pairs
from liteexport.compiler.values import Unsupported
from liteexport.errors import UnsupportedNodesError
from liteexport.inspect_bundle import delegate_contents
from liteexport.quantized_parity import QUANTA, output_quantum, quanta_apart
from tests.compiler.models.quantized import depthwise_fbgemm
from tests.compiler.test_quantized_models import _engine  # noqa: F401  (autouse: restores torch's engine)

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for the shared shim
from benchmarks.torchvision_shim import import_torchvision  # noqa: E402

pytestmark = pytest.mark.torch_oracle
HELD_OUT = range(100, 112)
WINDOW = ((1, 1), (1, 1))  # stride, dilation  # the export's own check uses seed 0


def _worst(path: Path, model: torch.nn.Module, shape: tuple[int, ...], images: bool) -> float:
    """The largest difference from torch over the held-out inputs, in quanta of the output."""
    bundle = runtime_py.load(path)
    contents = delegate_contents(bundle.ptmf)
    assert contents is not None
    quantum = output_quantum(contents[0]["forward"], 0)
    assert quantum is not None
    worst = 0.0
    for seed in HELD_OUT:
        rng = np.random.default_rng(seed)
        x = (rng.random(shape) if images else rng.standard_normal(shape)).astype(np.float32)
        with torch.no_grad():
            expected = model(torch.from_numpy(x)).numpy()
        worst = max(worst, quanta_apart(np.asarray(bundle.forward(x)), expected, quantum))
    return worst


def _clamps(path: Path) -> int:
    contents = delegate_contents(runtime_py.load(path).ptmf)
    assert contents is not None
    return sum(ins.op == OpCode.CLAMP for ins in contents[0]["forward"].instructions)


def test_fbgemm_pairs_are_taken_within_each_four_taps() -> None:
    assert int16_pairs.pair_taps(3, 3) == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]
    assert int16_pairs.pair_taps(5, 5)[-2:] == [[22, 23], [24]]
    assert len(int16_pairs.pair_taps(7, 7)) == 25


def test_saturating_depthwise_convolutions_compile_to_torchs_result(tmp_path: Path) -> None:
    """Both depthwise convs (3x3, and 5x5 strided with two outputs per channel) saturate in torch
    on images in [0, 1): the exact convolution is far off torch (what the compiler gave before),
    the compiled int16 pairs are within a quantum."""
    model = depthwise_fbgemm()
    shape = (1, 3, 24, 24)
    path = tmp_path / "dw.ptl"
    liteexport.export(model, path, input_shapes=[shape])
    assert _clamps(path) == 2  # one CLAMP to int16 per depthwise conv
    assert _worst(path, model, shape, images=True) <= 1 + 1e-3

    exact = tmp_path / "exact.ptl"
    with mock.patch.object(int16_pairs, "torch_kernel", return_value=int16_pairs.EXACT):
        liteexport.export(model, exact, input_shapes=[shape], check=False)
    assert _clamps(exact) == 0
    assert _worst(exact, model, shape, images=True) > 3 * QUANTA  # measured: 23


def test_a_depthwise_kernel_that_sums_exactly_keeps_the_plain_convolution() -> None:
    """The same weights packed for qnnpack (int32 sums): torch says exact, nothing is emulated."""
    model = depthwise_fbgemm()
    conv = model.depthwise
    weight, bias = conv.weight(), conv.bias()
    assert int16_pairs.torch_kernel(conv._packed_params, weight, bias, 16, WINDOW, "conv") == int16_pairs.PAIRS
    torch.backends.quantized.engine = "qnnpack"
    packed = torch.ops.quantized.conv2d_prepack(weight, bias, [1, 1], [1, 1], [1, 1], 16)
    assert int16_pairs.torch_kernel(packed, weight, bias, 16, WINDOW, "conv") == int16_pairs.EXACT


def test_a_kernel_computing_something_else_is_refused(tmp_path: Path) -> None:
    """A kernel whose probe matches neither the exact sums nor the int16 pairs: exit 4 naming the
    op, nothing written."""
    model = depthwise_fbgemm()
    with mock.patch.object(int16_pairs, "_probe", side_effect=lambda *a: np.full((1, 16, 5, 5), 255, np.int64)):
        with pytest.raises(Unsupported, match="computes neither the exact sums nor fbgemm's int16 pairs"):
            int16_pairs.torch_kernel(model.depthwise._packed_params, model.depthwise.weight(),
                                     model.depthwise.bias(), 16, WINDOW, "quantized::conv2d_relu")
        with pytest.raises(UnsupportedNodesError) as failure:
            liteexport.export(model, tmp_path / "dw.ptl", input_shapes=[(1, 3, 24, 24)])
    assert failure.value.exit_code == 4
    assert "quantized::conv2d_relu" in str(failure.value)
    assert not (tmp_path / "dw.ptl").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["mobilenet_v2", "resnet18"])
def test_torchvision_classifier_quantized_for_fbgemm_matches_torch(name: str, tmp_path: Path) -> None:
    """torchvision's quantize_model(model, "fbgemm") at 96x96: within the self-check's allowance
    of torch on held-out standard normal inputs (measured: 1 quantum each)."""
    torchvision = import_torchvision()
    from torchvision.models.quantization.utils import quantize_model
    torch.manual_seed(0)
    model = getattr(torchvision.models.quantization, name)(weights=None, quantize=False)
    quantize_model(with_batch_norm_statistics(model, 96), "fbgemm")
    path = tmp_path / f"{name}.ptl"
    liteexport.export(model, path, input_shapes=[(1, 3, 96, 96)])
    if name == "mobilenet_v2":  # its 17 depthwise convs can saturate: each compiles to int16 pairs
        assert _clamps(path) == 17
    assert _worst(path, model, (1, 3, 96, 96), images=False) <= QUANTA + 1e-3


def test_other_convolutions_are_probed_for_exact_sums() -> None:
    """A GEMM-based convolution (the stem, 3x3 over 3 channels) sums exactly here (AVX512-VNNI or
    not fbgemm); a kernel whose probe says otherwise (fbgemm's int16 pairs on an AVX2-only CPU)
    is refused."""
    model = depthwise_fbgemm()
    stem = model.stem
    args = (stem._packed_params, stem.weight(), stem.bias(), 1, WINDOW, "quantized::conv2d_relu")
    assert int16_pairs.torch_kernel(*args) == int16_pairs.EXACT
    with mock.patch.object(int16_pairs, "_probe", side_effect=lambda *a: np.full((1, 16, 4, 4), 255, np.int64)):
        with pytest.raises(Unsupported, match="computes no exact int32 sums"):
            int16_pairs.torch_kernel(*args)
