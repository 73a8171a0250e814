"""--quantize dynamic-int8 (issue 22, item 2): the weights of linear layers (and LSTM/GRU cells)
stored as torch's per-channel qint8 tensors, symmetric (zero point 0); runtime_py and the torch
backend dequantize them when loading and compute in float. Checked against torch: the stored
integers are what torch.quantize_per_channel makes of the float weights, the outputs equal the
float model with those dequantized weights (parity tolerance), and the export states the error
against the float model."""

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
from bundle_format.ptmf import QScheme, ScalarType, TensorMetadata
from liteexport import pipeline
from liteexport.input_spec import TensorSpec
from liteexport.inspect_bundle import describe
from liteexport.parity import RTOL, scaled_atol
from liteexport.weight_precision import INT8_TOLERANCE
from runtime_py.errors import InputError

pytestmark = pytest.mark.torch_oracle


class Tagger(torch.nn.Module):
    """A GRU over features, then two linear layers: every large weight is a linear layer's."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.gru = torch.nn.GRU(32, 64, batch_first=True)
        self.hidden = torch.nn.Linear(64, 1024)
        self.out = torch.nn.Linear(1024, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.gru(x)
        return self.out(torch.relu(self.hidden(y)))


SHAPE = (2, 5, 32)


def _torch_int8_rows(w: torch.Tensor) -> torch.Tensor:
    """``w`` as torch quantizes it per row, symmetric over 127 steps, dequantized: the reference."""
    scales = w.abs().amax(1).double() / 127
    zeros = torch.zeros(len(scales), dtype=torch.long)
    return torch.quantize_per_channel(w, scales, zeros, 0, torch.qint8).dequantize()


def _export(tmp_path: Path, quantize: str) -> tuple[Path, list[str]]:
    path = tmp_path / f"tagger-{quantize}.ptl"
    notes: list[str] = []
    pipeline.export(Tagger().eval(), path, pipeline.Request(input_shapes={"forward": (TensorSpec(SHAPE),)},
                                                             quantize=quantize), note=notes.append)
    return path, notes


def _quantized(path: Path) -> list[TensorMetadata]:
    return [t for t in read_bundle_file(path).ivalues
            if isinstance(t, TensorMetadata) and t.scalar_type == ScalarType.QINT8]


def test_linear_weights_are_torchs_per_channel_int8_and_every_engine_runs_them(tmp_path: Path) -> None:
    full, _ = _export(tmp_path, "none")
    small, notes = _export(tmp_path, "dynamic-int8")
    stored = _quantized(small)
    assert len(stored) >= 4  # hidden, out, and the GRU's input and hidden weights
    assert all(t.quantized_schema is not None and t.quantized_schema.qscheme == QScheme.PER_CHANNEL_AFFINE
               for t in stored)
    float_bytes, int8_bytes = (describe(p)["delegate"]["weights"]["total_bytes"] for p in (full, small))
    assert int8_bytes < 0.33 * float_bytes  # with the scales (float64) and zero points (int64) of each channel
    assert any(n.startswith("int8 weights cost forward: max abs error") for n in notes), notes

    model = Tagger().eval()
    x = torch.randn(*SHAPE, generator=torch.Generator().manual_seed(3))
    # the float model with each linear weight as torch quantizes it per channel (symmetric, 127 steps)
    reference = Tagger().eval()
    with torch.no_grad():
        for w in (reference.hidden.weight, reference.out.weight,
                  *(w for name, w in reference.gru.named_parameters() if name.startswith("weight"))):
            w.copy_(_torch_int8_rows(w))
        expected = reference(x).numpy()
        floating = model(x).numpy()
    ours = runtime_py.load(small).forward(x.numpy())
    np.testing.assert_allclose(ours, expected, rtol=RTOL, atol=scaled_atol(expected))
    assert np.abs(ours - floating).max() <= INT8_TOLERANCE * max(1.0, np.abs(floating).max())
    assert not np.allclose(ours, floating, rtol=0, atol=1e-6)  # the int8 weights were used
    tb.load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(str(small))
    np.testing.assert_allclose(lite.forward(x).numpy(), ours, rtol=RTOL, atol=scaled_atol(ours))


def test_api_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="quantize: expected one of none, dynamic-int8"):
        liteexport.export(Tagger(), tmp_path / "x.ptl", quantize="int4")
    with pytest.raises(InputError, match="--quantize dynamic-int8 applies to a model lowered whole"):
        liteexport.export(Tagger(), tmp_path / "x.ptl", lower="auto", quantize="dynamic-int8")
    assert not (tmp_path / "x.ptl").exists()
    size = liteexport.export(Tagger(), tmp_path / "both.ptl", input_shapes=[SHAPE], quantize="dynamic-int8",
                             weights="fp16")
    kinds = {t.scalar_type for t in read_bundle_file(tmp_path / "both.ptl").ivalues if isinstance(t, TensorMetadata)}
    assert {ScalarType.QINT8, ScalarType.HALF} <= kinds and size > 0  # biases in float16, linear weights in int8


class Embed(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.nn.Embedding(500, 64)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids) * 2


def test_embedding_tables_are_int8_per_row(tmp_path: Path) -> None:
    path = tmp_path / "embed.ptl"
    liteexport.export(Embed(), path, input_shapes=["2x7:int64"], quantize="dynamic-int8")
    (stored,) = _quantized(path)
    assert stored.sizes == (500, 64) and stored.quantized_schema is not None and stored.quantized_schema.axis == 0
    rows = _torch_int8_rows(Embed().table.weight.detach())
    ids = np.random.default_rng(1).integers(0, 500, size=(2, 7)).astype(np.int64)
    np.testing.assert_array_equal(runtime_py.load(path).forward(ids), rows.numpy()[ids] * 2)
