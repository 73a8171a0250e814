"""The --quantize int8 check on held-out calibration inputs (issue 31, item 2).

The export used to measure the int8 program on standard-normal random inputs whatever the
calibration inputs looked like, so a CNN calibrated on images in [0, 1) was refused (exit 9) with
the advice to export without --quantize int8, and --no-check dropped the cost report. Now the last
quarter of the calibration sets is held out (a single set: sets drawn from its per-channel
statistics, liteexport.held_out), the check says which inputs it ran on, its advice names options
that exist, and --no-check still states the cost."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import liteexport
import runtime_py
from liteexport.cli import cli
from liteexport.errors import VerificationError
from liteexport.held_out import DRAWN, draw_like, hold_out
from liteexport.int8_cost import ON_CALIBRATION, ON_OTHERS
from liteexport.static_int8 import TOLERANCE

pytestmark = pytest.mark.torch_oracle
REPO = Path(__file__).resolve().parents[2]
TINY_CNN = f"{REPO / 'examples' / 'tiny_cnn.py'}:TinyCNN"
SHAPE = (1, 3, 32, 32)
COST = re.compile(r"cost forward: max abs error (\S+), mean \S+ against the float model on (.+?), top-1 agreement "
                  r"\d+/\d+ \((\S+) x the output's range; allowed: 0.1 x(.*)\)$")


def _images(folder: Path, count: int, scale: float = 1.0, seed: int = 0) -> list[str]:
    """``count`` image-like inputs in [0, scale), saved as .npy files named img0.npy..."""
    rng = np.random.default_rng(seed)
    paths = []
    for n in range(count):
        path = folder / f"img{seed}_{n}.npy"
        np.save(path, (scale * rng.random(SHAPE)).astype(np.float32))
        paths.append(str(path))
    return paths


def _export(out: Path, calibration: list[str], *options: str) -> tuple[int, list[str]]:
    args = ["export", TINY_CNN, "-o", str(out), "--input-shape", "1x3x32x32", "--quantize", "int8", *options]
    for path in calibration:
        args += ["--calibration-inputs", path]
    result = CliRunner().invoke(cli, args, prog_name="liteexport")
    return result.exit_code, result.stderr.splitlines()


def _costs(lines: list[str]) -> list[tuple[float, str, float, str]]:
    """(max abs error, the inputs it was measured on, the error over the output's range, the rest) per cost note."""
    found = [COST.search(line) for line in lines]
    return [(float(m[1]), m[2], float(m[3]), m[4]) for m in found if m]


# ---- the split --------------------------------------------------------------------------------

def test_the_last_quarter_of_the_sets_is_held_out() -> None:
    sets = [(np.full((1, 2), n, np.float32),) for n in range(8)]
    for count, fit in ((2, 1), (3, 2), (4, 3), (5, 4), (8, 6)):
        split = hold_out(sets[:count], "calibration", [f"s{n}.npy" for n in range(count)])
        assert len(split.fit) == fit and len(split.held_out) == count - fit and not split.drawn
        assert [int(x[0][0, 0]) for x in split.fit + split.held_out] == list(range(count))  # in order
    split = hold_out(sets[:4], "calibration", [f"s{n}.npy" for n in range(4)])
    assert split.fit_label == "3 of 4 calibration sets"
    assert split.held_out_label == "1 held-out calibration set of 4 (s3.npy)"
    assert hold_out(sets, "prompt").held_out_label == "2 held-out prompt sets of 8"


def test_a_single_set_draws_held_out_sets_from_its_per_channel_statistics() -> None:
    rng = np.random.default_rng(3)
    image = np.stack([rng.random((16, 16)), 10 + 10 * rng.random((16, 16))])[None].astype(np.float32)  # 2 channels
    ids = rng.integers(5, 9, size=(1, 12))
    split = hold_out([(image, ids)], "calibration")
    assert split.drawn and np.array_equal(split.fit[0][0], image)  # fitted on the set itself
    assert len(split.held_out) == DRAWN
    assert split.fit_label == "1 calibration set"
    assert split.held_out_label.startswith(f"{DRAWN} sets drawn from the calibration inputs' statistics")
    for drawn_image, drawn_ids in split.held_out:
        assert drawn_image.shape == image.shape and drawn_image.dtype == np.float32
        for channel in range(2):
            got, seen = drawn_image[0, channel], image[0, channel]
            assert seen.min() <= got.min() and got.max() <= seen.max()  # clipped to the channel's range
            assert abs(got.mean() - seen.mean()) < 0.15 * (seen.max() - seen.min())
        assert not np.array_equal(drawn_image, image)
        assert drawn_ids.dtype == ids.dtype and set(drawn_ids.ravel()) <= set(ids.ravel())  # ids stay valid
    again = hold_out([(image, ids)], "calibration")
    assert all(np.array_equal(a, b) for x, y in zip(split.held_out, again.held_out, strict=True)
               for a, b in zip(x, y, strict=True))  # deterministic
    assert draw_like(np.zeros(0, np.float32), rng).shape == (0,)
    row = np.linspace(-1, 1, 16, dtype=np.float32)[None]  # 1 x 16 features: one value per channel
    drawn = draw_like(row, rng)
    assert drawn.shape == row.shape and not np.allclose(drawn, row) and -1 <= drawn.min() and drawn.max() <= 1
    with pytest.raises(ValueError, match="at least one input set"):
        hold_out([], "calibration")


# ---- the export --------------------------------------------------------------------------------

def test_a_cnn_calibrated_on_images_exports_checked_on_a_held_out_image(tmp_path: Path) -> None:
    out = tmp_path / "tiny.ptl"
    calibration = _images(tmp_path, 4)
    code, lines = _export(out, calibration)
    assert code == 0 and out.exists(), lines
    (fit, held) = _costs(lines)
    assert fit[1] == "3 of 4 calibration sets" and fit[3] == ""
    assert held[1] == f"1 held-out calibration set of 4 ({calibration[3]})" and held[3] == ""
    assert held[2] <= TOLERANCE
    assert any("activation grids (per tensor), observed on 3 of 4 calibration sets" in line for line in lines)
    # what the note states is the bundle's error on that held-out image, against torch's float model
    from examples.tiny_cnn import TinyCNN

    x = np.load(calibration[3])
    with torch.no_grad():
        expected = TinyCNN().eval()(torch.from_numpy(x)).numpy()
    got = np.asarray(runtime_py.load(out).forward(x))
    assert float(np.abs(got - expected).max()) == pytest.approx(held[0], rel=1e-2)
    assert held[2] == pytest.approx(held[0] / float(expected.max() - expected.min()), rel=5e-2)


def test_a_single_calibration_set_is_checked_on_sets_drawn_from_it(tmp_path: Path) -> None:
    out = tmp_path / "tiny.ptl"
    code, lines = _export(out, _images(tmp_path, 1))
    assert code == 0, lines
    (fit, held) = _costs(lines)
    assert fit[1] == "1 calibration set"
    assert held[1] == (f"{DRAWN} sets drawn from the calibration inputs' statistics (per channel mean and std, "
                       "clipped to its min and max)")


def test_a_calibration_that_misses_the_held_out_range_fails_with_advice(tmp_path: Path) -> None:
    """Calibrated on images in [0, 0.01) and held out on one in [0, 10), the grids clip it: exit 9,
    nothing written, and advice that names options the CLI has."""
    out = tmp_path / "clipped.ptl"
    calibration = [*_images(tmp_path, 3, scale=0.01), *_images(tmp_path, 1, scale=10.0, seed=1)]
    code, lines = _export(out, calibration)
    assert code == 9 and not out.exists()
    error = lines[-1]
    assert re.fullmatch(
        rf"Error: self-check failed: with int8 weights and activations, forward is off the float model by \S+ on 1 "
        rf"held-out calibration set of 4 \({re.escape(calibration[3])}\): \S+ x the output's range, more than the 0.1 "
        rf"x allowed \(\S+\)\. Nothing was written; {re.escape(ON_OTHERS)}", error), error
    assert "export without" not in error
    help_text = CliRunner().invoke(cli, ["export", "--help"]).output
    for option in ("--calibration-inputs", "--quantize", "dynamic-int8", "--no-check"):
        assert option in ON_OTHERS and option in help_text


def test_no_check_writes_it_and_still_states_the_cost(tmp_path: Path) -> None:
    out = tmp_path / "clipped.ptl"
    calibration = [*_images(tmp_path, 3, scale=0.01), *_images(tmp_path, 1, scale=10.0, seed=1)]
    code, lines = _export(out, calibration, "--no-check")
    assert code == 0 and out.exists(), lines
    (fit, held) = _costs(lines)
    assert fit[1] == "3 of 4 calibration sets" and fit[2] <= TOLERANCE and fit[3] == ""
    assert held[1].startswith("1 held-out calibration set of 4") and held[2] > TOLERANCE
    assert held[3] == ", beyond it: written anyway (--no-check)"
    assert not any("give --input-shape" in line for line in lines), lines
    assert not any("self-check passed" in line for line in lines)  # the float check is skipped as asked


class _Cancelling(torch.nn.Module):
    """Outputs that are differences of nearly equal large activations: an 8-bit grid on those
    activations is far coarser than the outputs, on any input."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        w = torch.randn(4, 16) * 10
        self.up = torch.nn.Linear(16, 8, bias=False)
        self.down = torch.nn.Linear(8, 4, bias=False)
        with torch.no_grad():
            self.up.weight.copy_(torch.cat([w, w * 1.01]))
            self.down.weight.copy_(torch.cat([torch.eye(4), -torch.eye(4)], 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down(self.up(x))


def test_the_api_checks_and_advises_the_same(tmp_path: Path) -> None:
    """liteexport.export: the same split and messages; check=False writes with the cost stated by the CLI."""
    rng = np.random.default_rng(0)
    images = [(rng.random(SHAPE).astype(np.float32),) for _ in range(4)]
    from examples.tiny_cnn import TinyCNN

    out = tmp_path / "api.ptl"
    assert liteexport.export(TinyCNN(), out, input_shapes=[SHAPE], quantize="int8", calibration_inputs=images) > 0
    darker = [(x * 0.01,) for (x,) in images[:3]] + [(images[3][0] * 10,)]
    out.unlink()
    with pytest.raises(VerificationError) as caught:
        liteexport.export(TinyCNN(), out, input_shapes=[SHAPE], quantize="int8", calibration_inputs=darker)
    assert "on 1 held-out calibration set of 4 (calibration input set 3)" in caught.value.message
    assert caught.value.message.endswith(ON_OTHERS) and caught.value.exit_code == 9
    assert not out.exists()
    liteexport.export(TinyCNN(), out, input_shapes=[SHAPE], quantize="int8", calibration_inputs=darker, check=False)
    assert out.exists()

    features = [(rng.standard_normal((2, 16)).astype(np.float32),) for _ in range(4)]
    with pytest.raises(VerificationError) as caught:
        liteexport.export(_Cancelling(), tmp_path / "c.ptl", input_shapes=[(2, 16)], quantize="int8",
                          calibration_inputs=features)
    assert "on 3 of 4 calibration sets:" in caught.value.message and caught.value.message.endswith(ON_CALIBRATION)


@pytest.mark.slow
def test_torchvision_resnet18_quantizes_on_image_like_calibration(tmp_path: Path) -> None:
    """resnet18 with random weights (batch-norm statistics from random images, as benchmarks do) at
    1x3x64x64, calibrated on four images in [0, 1): exported, within the bound on the held-out image."""
    import sys

    sys.path.insert(0, str(REPO))
    from benchmarks.models import with_batch_norm_statistics
    from benchmarks.torchvision_shim import import_torchvision

    torch.manual_seed(0)
    model = with_batch_norm_statistics(import_torchvision().models.resnet18(weights=None), 64)
    rng = np.random.default_rng(1)
    images = [(rng.random((1, 3, 64, 64)).astype(np.float32),) for _ in range(4)]
    notes: list[str] = []
    from liteexport import pipeline

    pipeline.export(model, tmp_path / "r18.ptl", pipeline.Request(
        input_shapes={"forward": ((1, 3, 64, 64),)}, quantize="int8", calibration={"forward": tuple(images)}),
        note=notes.append)
    (fit, held) = _costs(notes)
    assert fit[1] == "3 of 4 calibration sets"
    assert held[1] == "1 held-out calibration set of 4 (calibration input set 3)"
    assert held[2] <= TOLERANCE and held[3] == ""
    assert any("21 conv/linear layers with int8 weights" in n for n in notes), notes
