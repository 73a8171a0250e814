"""torch.export is the default front end for a Python model (issue 33 item 1): ``file.py:Name`` and
``liteexport.export(module, ...)`` export with torch.export; a request only TorchScript can serve
(``--lower``, ``--specialize``, methods other than forward, no inputs to trace) scripts the model
with a note saying why, and ``--frontend export`` refuses it instead."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import liteexport
import runtime_py
from liteexport.cli import cli
from liteexport.errors import ModelError
from runtime_py.errors import InputError

pytestmark = pytest.mark.torch_oracle

ROOT = Path(__file__).resolve().parents[2]
TINY_CNN = f"{ROOT}/examples/tiny_cnn.py:TinyCNN"
LEGACY = "scripted with TorchScript, the legacy front end: "


class WithEmbed(torch.nn.Module):
    """forward and an @torch.jit.export method: TorchScript compiles both, torch.export forward alone."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(5)
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x))

    @torch.jit.export
    def embed(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) * 2


def _scripting_counted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the modules torch.jit.script is called on from here on."""
    calls: list[str] = []
    script = torch.jit.script

    def counted(obj: object, *args: object, **kwargs: object) -> object:
        calls.append(type(obj).__name__)
        return script(obj, *args, **kwargs)

    monkeypatch.setattr(torch.jit, "script", counted)
    return calls


def test_a_python_file_with_an_input_shape_takes_torch_export(monkeypatch: pytest.MonkeyPatch,
                                                              tmp_path: Path) -> None:
    calls = _scripting_counted(monkeypatch)
    out = tmp_path / "tiny.ptl"
    result = CliRunner().invoke(cli, ["export", TINY_CNN, "--input-shape", "forward:1x3x32x32", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert LEGACY not in result.output
    assert calls == []  # torch.export traced it: nothing was scripted
    assert runtime_py.load(out).forward(np.zeros((1, 3, 32, 32), np.float32)).shape == (1, 10)


def test_no_input_shapes_script_the_model_with_a_note(tmp_path: Path) -> None:
    out = tmp_path / "tiny.ptl"
    result = CliRunner().invoke(cli, ["export", TINY_CNN, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert (f"Note: {LEGACY}torch.export traces the model on inputs, and none were given (give --input-shape or "
            "--example-inputs to export with torch.export)") in result.output
    assert out.exists()


def test_the_export_front_end_asked_for_without_inputs_says_what_to_give(tmp_path: Path) -> None:
    out = tmp_path / "tiny.ptl"
    result = CliRunner().invoke(cli, ["export", TINY_CNN, "--frontend", "export", "-o", str(out)])
    assert result.exit_code == ModelError.exit_code, result.output
    assert "the torch.export front end traces TinyCNN on inputs: give their shapes (--input-shape" in result.output
    assert not out.exists()


def test_jit_exported_methods_keep_the_torchscript_path_unless_forward_alone_is_asked(tmp_path: Path) -> None:
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    both = liteexport.export(WithEmbed(), tmp_path / "both.ptl", input_shapes={"forward": [(2, 4)],
                                                                                 "embed": [(2, 4)]})
    assert any(note.startswith(LEGACY) and "(embed)" in note for note in both.notes), both.notes
    loaded = runtime_py.load(tmp_path / "both.ptl")
    assert set(loaded.method_names) == {"forward", "embed"}
    np.testing.assert_allclose(loaded.embed(x), WithEmbed().embed(torch.from_numpy(x)).detach().numpy(), atol=1e-6)

    one = liteexport.export(WithEmbed(), tmp_path / "one.ptl", methods=["forward"], input_shapes=[(2, 4)])
    assert not any(note.startswith(LEGACY) for note in one.notes), one.notes
    assert runtime_py.load(tmp_path / "one.ptl").method_names == ("forward",)


def test_a_class_with_jit_exported_methods_names_them_in_the_note(tmp_path: Path) -> None:
    exported = liteexport.export(WithEmbed(), tmp_path / "m.ptl", input_shapes=[(2, 4)])
    assert (f"{LEGACY}the model's @torch.jit.export methods (embed) are compiled with forward (give --method "
            "forward to export forward alone with torch.export)") in exported.notes


@pytest.mark.parametrize(("options", "why"), [
    (["--lower", "auto"], "--lower is the TorchScript front end's"),
    (["--method", "forward", "--method", "embed"], "methods other than forward (embed) are the TorchScript"),
])
def test_requests_only_torchscript_serves_script_the_model(options: list[str], why: str, tmp_path: Path) -> None:
    model = tmp_path / "m.py"
    model.write_text("import torch\n\n\nclass M(torch.nn.Module):\n"
                     "    def forward(self, x):\n        return torch.sort(x)[0] + 1\n\n"
                     "    @torch.jit.export\n    def embed(self, x):\n        return x * 2\n")
    result = CliRunner().invoke(cli, ["export", f"{model}:M", "--input-shape", "forward:2x4", "-o",
                                      str(tmp_path / "m.ptl"), *options])
    assert f"Note: {LEGACY}{why}" in result.output, result.output


def test_the_export_front_end_refuses_what_only_torchscript_serves(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--lower, --specialize and methods other than forward are the TorchScript "
                                         "front end's: give --frontend torchscript"):
        liteexport.export(WithEmbed(), tmp_path / "m.ptl", input_shapes=[(2, 4)], lower=["fc"], frontend="export")
    assert not (tmp_path / "m.ptl").exists()


def test_an_eager_quantized_model_is_scripted_with_a_note(tmp_path: Path) -> None:
    model = torch.nn.Sequential(torch.ao.quantization.QuantStub(), torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(),
                                torch.ao.quantization.DeQuantStub()).eval()
    engine = torch.backends.quantized.engine
    torch.backends.quantized.engine = "qnnpack"
    try:
        model.qconfig = torch.ao.quantization.get_default_qconfig("qnnpack")
        torch.ao.quantization.prepare(model, inplace=True)
        model(torch.randn(1, 3, 8, 8))
        torch.ao.quantization.convert(model, inplace=True)
        exported = liteexport.export(model, tmp_path / "q.ptl", input_shapes=[(1, 3, 8, 8)])
    finally:
        torch.backends.quantized.engine = engine
    assert (f"{LEGACY}torch's eager-mode quantized modules (Quantize, Conv2d, DeQuantize) hold packed weights "
            "torch.export cannot trace") in exported.notes, exported.notes
    assert runtime_py.load(tmp_path / "q.ptl").forward(np.zeros((1, 3, 8, 8), np.float32)).shape == (1, 4, 6, 6)
