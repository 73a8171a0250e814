"""What the torch.export front end takes that TorchScript does not, and the export options that
work on the compiled program whichever front end made it (--weights fp16, --quantize)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from benchmarks.torchvision_shim import import_torchvision
from liteexport.errors import ModelError
from tests.frontend_export.cases import CASES

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _classifier() -> torch.nn.Module:
    import_torchvision()  # transformers imports torchvision, whose CUDA wheel's C++ ops do not load here
    import transformers

    torch.manual_seed(0)
    config = transformers.DistilBertConfig(vocab_size=100, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                                           max_position_embeddings=64, num_labels=2)
    return transformers.DistilBertForSequenceClassification(config).eval()


def test_a_hugging_face_classifier_returning_model_output_exports(tmp_path: Path) -> None:
    model = _classifier()
    with pytest.raises(Exception, match="source"):  # TorchScript cannot script its config
        torch.jit.script(model)
    path = tmp_path / "sentiment.ptl"
    liteexport.export(model, path, input_shapes=["1x16:int64", "1x16:int64"], frontend="export")
    ids = torch.randint(0, 100, (1, 16), generator=torch.Generator().manual_seed(5))
    mask = torch.ones(1, 16, dtype=torch.int64)
    mask[0, 12:] = 0
    with torch.no_grad():
        expected = model(ids, mask).logits.numpy()
    got = runtime_py.load(path).forward(ids.numpy(), mask.numpy())
    assert list(got) == ["logits"]  # the ModelOutput's fields, as a dict
    np.testing.assert_allclose(got["logits"], expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("options", [{"weights": "fp16"}, {"quantize": "dynamic-int8"},
                                     {"quantize": "int8", "calibration_inputs": "random"}],
                         ids=["fp16", "dynamic-int8", "int8"])
def test_narrowed_weights_work_on_the_exported_program(options: dict[str, object], tmp_path: Path) -> None:
    model = next(c for c in CASES if c.name == "tiny_cnn").build().eval()
    if options.get("calibration_inputs") == "random":
        generator = torch.Generator().manual_seed(6)
        options = {**options, "calibration_inputs": [(torch.randn(1, 3, 32, 32, generator=generator),)
                                                     for _ in range(4)]}
    full = liteexport.export(model, tmp_path / "float.ptl", input_shapes=[(1, 3, 32, 32)], frontend="export")
    narrow = liteexport.export(model, tmp_path / "narrow.ptl", input_shapes=[(1, 3, 32, 32)], frontend="export",
                               **options)  # type: ignore[arg-type]
    assert narrow < full  # the self-check bounded the error, or the export raised
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        expected = model(x).numpy()
    got = runtime_py.load(tmp_path / "narrow.ptl").forward(x.numpy())
    assert np.abs(got - expected).max() <= 0.1 * max(1.0, float(np.abs(expected).max()))


def test_the_export_front_end_needs_shapes_or_examples(tmp_path: Path) -> None:
    model = next(c for c in CASES if c.name == "dict output").build()
    with pytest.raises(ModelError, match="traces Heads on inputs: give their shapes"):
        liteexport.export(model, tmp_path / "m.ptl", frontend="export")
    assert not (tmp_path / "m.ptl").exists()
