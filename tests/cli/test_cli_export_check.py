"""export: archives (scripted and traced, each in a fresh process, where the archive's own
compilation unit is the only place its functions live), the self-check against torch,
and progress."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from liteexport.progress import Progress

from .conftest import REPO, TINY_CNN, invoke

torch = pytest.importorskip("torch")


def _tiny_cnn() -> torch.nn.Module:
    from liteexport.model_loading import _import_file

    return _import_file(TINY_CNN).TinyCNN().eval()


@pytest.mark.parametrize("how", ["script", "trace"])
def test_archive_exports_in_a_fresh_process_and_matches_torch(tmp_path: Path, how: str) -> None:
    model = _tiny_cnn()
    x = torch.randn(1, 3, 32, 32)
    saved = torch.jit.script(model) if how == "script" else torch.jit.trace(model, x)
    archive, bundle = tmp_path / "model.pt", tmp_path / "model.ptl"
    saved.save(str(archive))
    done = subprocess.run([sys.executable, "-m", "liteexport", "export", str(archive), "-o", str(bundle),
                           "--input-shape", "forward:1x3x32x32", "-q"],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr  # the self-check compared it with torch already
    import runtime_py

    got = runtime_py.load(bundle).forward(x.numpy())
    np.testing.assert_allclose(got, model(x).detach().numpy(), atol=1e-5, rtol=1e-4)


def test_self_check_fails_a_miscompiled_export_naming_the_instruction(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A compiler bug, planted: ReLU lowered as a sigmoid.
    from bundle_format.program import OpCode
    from liteexport.compiler import lowerings, ops

    monkeypatch.setitem(lowerings.LOWERINGS, "aten::relu", ops._unary(OpCode.SIGMOID))
    out = tmp_path / "bad.ptl"
    args = ["export", f"{TINY_CNN}:TinyCNN", "-o", str(out), "--input-shape", "forward:1x3x32x32", "-q"]
    result = invoke(args)
    assert result.exit_code == 9, result.output
    message = result.stderr
    assert message.startswith("Error: self-check failed: forward output 0 differs from torch's on inputs 1x3x32x32")
    assert "instruction #" in message and "tiny_cnn.py:" in message and "top(TinyCNN)" in message
    assert not out.exists()  # nothing written
    assert invoke([*args, "--no-check"]).exit_code == 0  # the check is what caught it
    assert out.exists()


def test_self_check_uses_example_inputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bundle_format.program import OpCode
    from liteexport.compiler import lowerings, ops

    monkeypatch.setitem(lowerings.LOWERINGS, "aten::relu", ops._unary(OpCode.SIGMOID))
    np.save(tmp_path / "x.npy", np.ones((2, 3, 32, 32), np.float32))
    result = invoke(["export", f"{TINY_CNN}:TinyCNN", "-o", str(tmp_path / "b.ptl"),
                     "--example-inputs", str(tmp_path / "x.npy"), "-q"])
    assert result.exit_code == 9
    assert "on inputs 2x3x32x32" in result.stderr


def test_a_passing_self_check_says_what_it_compared(tmp_path: Path) -> None:
    np.save(tmp_path / "x.npy", np.ones((2, 3, 32, 32), np.float32))
    result = invoke(["export", f"{TINY_CNN}:TinyCNN", "-o", str(tmp_path / "b.ptl"),
                     "--example-inputs", str(tmp_path / "x.npy"), "--example-inputs", str(tmp_path / "x.npy")])
    assert result.exit_code == 0, result.output
    match = re.search(r"self-check passed for forward: max abs error (\S+) against torch on 2 input sets",
                      result.stderr)
    assert match is not None, result.stderr
    assert 0 <= float(match.group(1)) < 1e-5


def test_self_check_compares_constant_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """googlenet-like (logits, None, None): a planted bug returning 0 for None fails the check."""
    import liteexport
    from bundle_format import ptmf
    from liteexport.compiler import assembly
    from liteexport.errors import VerificationError
    from tests.parity.parity_models import AuxiliaryHeads

    shapes = {"forward": [[2, 8]], "pair": [[2, 8]]}
    liteexport.export(AuxiliaryHeads(), tmp_path / "good.ptl", input_shapes=shapes)  # checked, passes
    monkeypatch.setitem(assembly._CONSTANT_OUTPUTS, type(None), lambda _: ptmf.IntValue(0))
    with pytest.raises(VerificationError, match=r"forward returns another structure than torch's "
                                                r"\(output 1: got 0, expected None\)"):
        liteexport.export(AuxiliaryHeads(), tmp_path / "bad.ptl", input_shapes=shapes)
    assert not (tmp_path / "bad.ptl").exists()


def test_progress_waits_a_second_then_shows_each_stage() -> None:
    shown: list[str] = []
    quick = Progress(enabled=True, echo=shown.append)
    quick("loading")
    assert shown == []  # an export under a second prints nothing
    slow = Progress(enabled=True, delay=0.0, echo=shown.append)
    slow("loading model.pt")
    slow("compiling forward: 1000 nodes walked")
    slow("compiling forward: 2000 nodes walked")  # same stage within half a second: not repeated
    slow("packing out.ptl")
    assert [line.split("] ", 1)[1] for line in shown] == [
        "loading model.pt", "compiling forward: 1000 nodes walked", "packing out.ptl"]
    silent = Progress(enabled=False, delay=0.0, echo=shown.append)
    silent("loading")
    assert len(shown) == 3
