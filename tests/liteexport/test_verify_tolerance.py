"""An export with narrowed weights (--weights fp16, --quantize dynamic-int8, --quantize int8) stores
the float model's outputs as test vectors and, beside them, the tolerance its self-check accepted
(liteexport/test_tolerances.json); verify uses that tolerance by default, says where its tolerance
came from, and --atol/--rtol override it. Without the file verify behaves as it always did."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from bundle_format import ptmf
from bundle_format.bundle_file import read_bundle_file
from bundle_format.ptmf_writer import encode_module
from liteexport import test_vectors as tv
from liteexport.cli import cli
from liteexport.static_int8 import TOLERANCE
from liteexport.torch_backend import torch_backend_available
from liteexport.verify import DEFAULT, GIVEN, STORED, verify_bundle
from liteexport.weight_precision import FP16_TOLERANCE, INT8_TOLERANCE
from runtime_py.errors import FormatError

pytestmark = pytest.mark.torch_oracle
MODEL = f"{Path(__file__).resolve().parent / 'models' / 'residual_net.py'}:ResidualNet"
SHAPE = (1, 3, 16, 16)
# option -> (export arguments, the self-check's factor, what it multiplies)
NARROWINGS = {
    "int8": (["--quantize", "int8"], TOLERANCE, "range"),
    "fp16": (["--weights", "fp16"], FP16_TOLERANCE, "magnitude"),
    "dynamic-int8": (["--quantize", "dynamic-int8"], INT8_TOLERANCE, "magnitude"),
}


def invoke(args: list[str]) -> Result:
    return CliRunner().invoke(cli, args, prog_name="liteexport")


def _save(path: Path, scale: float, seed: int) -> Path:
    np.save(path, (scale * np.random.default_rng(seed).standard_normal(SHAPE)).astype(np.float32))
    return path


def _export(folder: Path, option: str, example_scale: float = 1.0) -> tuple[Path, list[str]]:
    out = folder / f"{option}.ptl"
    args = ["export", MODEL, "-o", str(out), "--example-inputs", str(_save(folder / "x.npy", example_scale, 1)),
            *NARROWINGS[option][0]]
    if option == "int8":
        args += ["--calibration-inputs", str(_save(folder / "calibration.npy", 1.0, 0))]
    result = invoke(args)
    assert result.exit_code == 0, result.output
    return out, result.stderr.splitlines()


@pytest.fixture(scope="module", params=list(NARROWINGS))
def narrowed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """ResidualNet exported with example inputs and each narrowing, once per module."""
    option = request.param
    return option, _export(tmp_path_factory.mktemp(option), option)[0]


def _extra(path: Path, name: str) -> bytes | None:
    return read_bundle_file(path).extra_file(name)


def _rewrite(path: Path, out: Path, name: str, content: bytes | None) -> Path:
    """``path``'s bundle with extra file ``name`` replaced by ``content`` (None: left out), at ``out``."""
    module = read_bundle_file(path)
    kept = tuple(e for e in module.extra_files if e.name != name)
    added = (ptmf.ExtraFile(name, content),) if content is not None else ()
    out.write_bytes(encode_module(dataclasses.replace(module, extra_files=kept + added)))
    return out


def _expected_atol(path: Path, option: str) -> float:
    """The self-check's limit on the stored output: factor x its magnitude (at least 1) or range."""
    (vector,) = tv.decode_test_vectors(_extra(path, tv.TEST_VECTORS_EXTRA_FILE) or b"")["forward"]
    (e,) = vector.expected
    _, factor, relative_to = NARROWINGS[option]
    return factor * (float(e.max() - e.min()) if relative_to == "range" else max(1.0, float(np.abs(e).max())))


def test_verify_passes_with_the_tolerance_the_export_stored(narrowed: tuple[str, Path]) -> None:
    option, path = narrowed
    stored = json.loads(_extra(path, tv.TOLERANCES_EXTRA_FILE) or b"")
    entry = stored["methods"]["forward"]
    assert stored["format"] == 1 and entry["rtol"] == 0.0
    assert entry["atol"] == pytest.approx(_expected_atol(path, option), rel=1e-12)
    result = invoke(["verify", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == f"tolerance: atol {entry['atol']:g}, rtol 0 (stored by export: {entry['rule']})"
    assert f"--{'weights' if option == 'fp16' else 'quantize'} {option}" in entry["rule"]
    assert lines[-1] == "1 passed, 0 failed"
    report = verify_bundle(path)
    assert (report.tolerances["forward"].atol_from, report.tolerances["forward"].rtol_from) == (STORED, STORED)


def test_the_vectors_are_beyond_the_default_tolerance(narrowed: tuple[str, Path], tmp_path: Path) -> None:
    """Without the stored tolerance (a bundle of an older liteexport), verify uses the default, as
    it always did, and the narrowed program fails it: the stored tolerance is what passes it."""
    _, path = narrowed
    old = _rewrite(path, tmp_path / "old.ptl", tv.TOLERANCES_EXTRA_FILE, None)
    result = invoke(["verify", str(old)])
    assert result.exit_code == 9
    assert result.stdout.splitlines()[0] == "tolerance: atol 1e-05, rtol 0.0001 (default)"
    report = verify_bundle(old)
    assert report.tolerances["forward"].atol_from == DEFAULT and not report.passed


def test_a_given_tighter_atol_fails(narrowed: tuple[str, Path]) -> None:
    _, path = narrowed
    atol = tv.decode_tolerances(_extra(path, tv.TOLERANCES_EXTRA_FILE) or b"")["forward"].atol
    result = invoke(["verify", str(path), "--atol", "1e-6"])
    assert result.exit_code == 9
    assert result.stdout.splitlines()[0].startswith("tolerance: atol 1e-06 (given), rtol 0 (stored by export: ")
    both = verify_bundle(path, atol=atol / 1000, rtol=0.0)
    assert not both.passed
    assert (both.tolerances["forward"].atol, both.tolerances["forward"].atol_from) == (atol / 1000, GIVEN)
    assert both.tolerances["forward"].rtol_from == GIVEN


def test_a_tampered_output_still_fails(narrowed: tuple[str, Path], tmp_path: Path) -> None:
    """The stored tolerance is the self-check's, not a blanket pass: an expected output moved by
    twice that tolerance fails."""
    _, path = narrowed
    atol = tv.decode_tolerances(_extra(path, tv.TOLERANCES_EXTRA_FILE) or b"")["forward"].atol
    vectors = tv.decode_test_vectors(_extra(path, tv.TEST_VECTORS_EXTRA_FILE) or b"")
    (vector,) = vectors["forward"]
    moved = vector.expected[0].copy()
    moved.flat[3] += 2 * atol
    tampered = _rewrite(path, tmp_path / "tampered.ptl", tv.TEST_VECTORS_EXTRA_FILE,
                        tv.encode_test_vectors({"forward": [tv.TestVector(vector.inputs, (moved,))]}))
    result = invoke(["verify", str(tampered)])
    assert result.exit_code == 9
    (row,) = [line for line in result.stdout.splitlines() if line.startswith("runtime_py")]
    assert row.endswith("FAIL")
    assert "(stored by export: " in result.stdout.splitlines()[0]
    (check,) = verify_bundle(tampered).checks
    assert check.max_abs > atol and not check.passed


def test_int8_export_checks_the_example_inputs_themselves(tmp_path: Path) -> None:
    """With --quantize int8 the stored vectors are checked against the tolerance stored for them:
    example inputs far outside the calibration range fail the export (exit 9), nothing written."""
    _, notes = _export(tmp_path, "int8")
    assert any("against the float model on 1 example input set" in n for n in notes)
    assert any("liteexport verify checks forward's test vectors within atol" in n for n in notes)
    out = tmp_path / "int8.ptl"
    out.unlink()
    args = ["export", MODEL, "-o", str(out), "--quantize", "int8", "--example-inputs",
            str(_save(tmp_path / "far.npy", 50.0, 1)), "--calibration-inputs", str(tmp_path / "calibration.npy")]
    result = invoke(args)
    assert result.exit_code == 9, result.output
    assert "off the float model by" in result.stderr and "on 1 example input set: " in result.stderr
    assert not out.exists()


def test_a_float_export_stores_no_tolerance(tmp_path: Path) -> None:
    out = tmp_path / "float.ptl"
    args = ["export", MODEL, "-o", str(out), "-q", "--example-inputs", str(_save(tmp_path / "x.npy", 1.0, 1))]
    assert invoke(args).exit_code == 0
    assert _extra(out, tv.TOLERANCES_EXTRA_FILE) is None
    assert verify_bundle(out).tolerances["forward"].atol_from == DEFAULT


def test_tolerances_round_trip() -> None:
    tolerances = {"forward": tv.StoredTolerance(0.0123, 0.0, "0.05 x the output's magnitude"),
                  "encode": tv.StoredTolerance(2, 1e-3)}
    decoded = tv.decode_tolerances(tv.encode_tolerances(tolerances))
    assert decoded == {"forward": tolerances["forward"], "encode": tv.StoredTolerance(2.0, 1e-3, "")}
    assert tv.encode_tolerances(tolerances) == tv.encode_tolerances(dict(reversed(tolerances.items())))
    # the rule is printed by verify: control characters (a hostile bundle's terminal escapes) are dropped
    hostile = tv.encode_tolerances({"forward": tv.StoredTolerance(0.1, 0.0, "\x1b[2Jcleared")})
    assert tv.decode_tolerances(hostile)["forward"] == tv.StoredTolerance(0.1, 0.0, "")


@pytest.mark.parametrize("content", [
    b"", b"\xff", b"[]", b'{"format": 1}', b'{"format": 2, "methods": {}}',
    b'{"format": 1, "methods": {"forward": 0.1}}',
    b'{"format": 1, "methods": {"forward": {"atol": -1, "rtol": 0}}}',
    b'{"format": 1, "methods": {"forward": {"atol": NaN, "rtol": 0}}}',
    b'{"format": 1, "methods": {"forward": {"atol": true, "rtol": 0}}}',
    b'{"format": 1, "methods": {"forward": {"atol": 0.1}}}',
])
def test_malformed_tolerances_are_format_errors(content: bytes) -> None:
    with pytest.raises(FormatError, match="malformed test tolerances"):
        tv.decode_tolerances(content)


def test_verify_refuses_a_bundle_with_malformed_tolerances(narrowed: tuple[str, Path], tmp_path: Path) -> None:
    _, path = narrowed
    bad = _rewrite(path, tmp_path / "bad.ptl", tv.TOLERANCES_EXTRA_FILE, b'{"format": 1, "methods": {"forward": 1}}')
    result = invoke(["verify", str(bad)])
    assert result.exit_code == 5
    assert tv.TOLERANCES_EXTRA_FILE in result.stderr


@pytest.mark.skipif(not torch_backend_available(), reason="no C++ compiler, ninja or flatbuffers headers found: "
                    "liteexport's torch backend needs them to build")
def test_torchs_lite_interpreter_runs_the_bundle_with_its_stored_tolerance(narrowed: tuple[str, Path]) -> None:
    """torch's _load_for_lite_interpreter reads the bundle with the new extra file; its outputs pass
    against the stored tolerance too."""
    _, path = narrowed
    report = verify_bundle(path, engines=("runtime_py", "torch"))
    assert report.passed
    assert sorted(c.engine for c in report.checks) == ["runtime_py", "torch"]
