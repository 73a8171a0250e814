"""Narrow weights on the native core (issue 22): float16 (--weights fp16) and per-channel qint8
(--quantize dynamic-int8) weights are widened to float32 at load, as runtime_py and the torch
backend widen them; the native core's outputs match runtime_py's within the parity tolerance, and a
quantized weight with malformed parameters is a format error (exit 5) naming it."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_file
from bundle_format.ptmf_writer import encode_module
from liteexport.parity import RTOL, scaled_atol
from runtime_py.errors import FormatError
from tests.text_models.typed import native_tool_available, run_native

pytestmark = [pytest.mark.android, pytest.mark.slow,
              pytest.mark.skipif(not native_tool_available(), reason="needs cmake and g++ to build C++")]


class _Tagger(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.nn.Embedding(50, 16)
        self.gru = torch.nn.GRU(16, 32, batch_first=True)
        self.out = torch.nn.Linear(32, 5)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        y, _ = self.gru(self.table(ids))
        return self.out(y)


@pytest.mark.parametrize("options", [{"weights": "fp16"}, {"quantize": "dynamic-int8"},
                                     {"quantize": "dynamic-int8", "weights": "fp16"}])
def test_the_native_core_widens_narrow_weights_as_runtime_py_does(options: dict[str, str], tmp_path: Path) -> None:
    path = tmp_path / "tagger.ptl"
    liteexport.export(_Tagger(), path, input_shapes=["2x6:int64"], **options)
    stored = {t.scalar_type for t in read_bundle_file(path).ivalues if isinstance(t, ptmf.TensorMetadata)}
    assert stored & {ptmf.ScalarType.HALF, ptmf.ScalarType.QINT8}
    ids = np.random.default_rng(0).integers(0, 50, size=(2, 6)).astype(np.int64)
    ours = runtime_py.load(path).forward(ids)
    (native,) = run_native(path, [ids])
    np.testing.assert_allclose(native, ours, rtol=RTOL, atol=scaled_atol(ours))


def test_malformed_quantization_parameters_are_a_format_error(tmp_path: Path) -> None:
    path = tmp_path / "tagger.ptl"
    liteexport.export(_Tagger(), path, input_shapes=["2x6:int64"], quantize="dynamic-int8")
    module = read_bundle_file(path)
    index, quantized = next((i, v) for i, v in enumerate(module.ivalues)
                            if isinstance(v, ptmf.TensorMetadata) and v.quantized_schema is not None)
    assert quantized.quantized_schema is not None
    broken = dataclasses.replace(quantized, quantized_schema=dataclasses.replace(quantized.quantized_schema, axis=5))
    ivalues = list(module.ivalues)
    ivalues[index] = broken
    bad = tmp_path / "bad.ptl"
    bad.write_bytes(encode_module(dataclasses.replace(module, ivalues=tuple(ivalues))))
    with pytest.raises(FormatError, match="per-channel axis 5 is out of range"):
        run_native(bad, [np.zeros((2, 6), np.int64)])
