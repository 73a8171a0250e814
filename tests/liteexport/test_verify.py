"""export --example-inputs stores test vectors; verify checks them on each engine and
names the first diverging instruction when an engine is wrong."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from liteexport.cli import cli
from liteexport.test_vectors import TestVector, decode_test_vectors, encode_test_vectors
from liteexport.verify import verify_bundle
from runtime_py.backends.demo import kernels
from runtime_py.errors import FormatError
from runtime_py.format.program import OpCode

ROOT = Path(__file__).resolve().parents[2]
TINY_CNN = f"{ROOT}/examples/tiny_cnn.py:TinyCNN"

pytestmark = pytest.mark.torch_oracle


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    for n, batch in enumerate((2, 1)):
        np.save(tmp_path / f"x{n}.npy", rng.standard_normal((batch, 3, 32, 32)).astype(np.float32))
    out = tmp_path / "tiny.ptl"
    result = CliRunner().invoke(cli, ["export", TINY_CNN, "-o", str(out), "-q", "--example-inputs",
                                      str(tmp_path / "x0.npy"), "--example-inputs", f"forward:{tmp_path / 'x1.npy'}"])
    assert result.exit_code == 0, result.output
    return out


def test_vectors_round_trip() -> None:
    vectors = {"forward": [TestVector((np.ones((2, 3), np.float32),), (np.zeros(4, np.float32), np.eye(2)))]}
    decoded = decode_test_vectors(encode_test_vectors(vectors))
    (vector,) = decoded["forward"]
    assert [x.tolist() for x in vector.inputs] == [[[1.0] * 3] * 2]
    assert [x.tolist() for x in vector.expected] == [[0.0] * 4, np.eye(2).tolist()]
    assert encode_test_vectors(vectors) == encode_test_vectors(vectors)


@pytest.mark.parametrize("content", [b"", b"not a zip", b"PK\x03\x04" + bytes(30)])
def test_malformed_vectors_are_format_errors(content: bytes) -> None:
    with pytest.raises(FormatError):
        decode_test_vectors(content)


def test_verify_passes_on_runtime_py(bundle: Path) -> None:
    result = CliRunner().invoke(cli, ["verify", str(bundle)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == "2 passed, 0 failed"
    assert sum(line.startswith("runtime_py  forward") and line.endswith("pass") for line in lines) == 2


def test_verify_names_the_diverging_instruction(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A wrong max-pool kernel in runtime_py: verify fails and points at the pool's source."""
    spec = kernels.KERNELS[OpCode.MAX_POOL2D]
    broken = dataclasses.replace(
        spec, factory=lambda attrs, n, **kw: (lambda x: spec.factory(attrs, n, **kw)(x) * 1.5))
    monkeypatch.setitem(kernels.KERNELS, OpCode.MAX_POOL2D, broken)
    report = verify_bundle(bundle)
    assert not report.passed
    assert {(d.method, d.vector) for d in report.divergences} == {("forward", 0), ("forward", 1)}
    divergence = report.divergences[0]
    assert divergence.instruction.startswith("instruction #1 MAX_POOL2D")
    assert divergence.location.endswith("tiny_cnn.py:47")  # x = self.features(x)
    assert divergence.module_hierarchy == "top(TinyCNN).features(Sequential).3(MaxPool2d)"
    result = CliRunner().invoke(cli, ["verify", str(bundle)])
    assert result.exit_code == 9
    assert "engines diverge first at instruction #1 MAX_POOL2D" in result.stdout


def test_verify_without_vectors_says_how_to_add_them(tmp_path: Path) -> None:
    out = tmp_path / "plain.ptl"
    assert CliRunner().invoke(cli, ["export", TINY_CNN, "-o", str(out), "-q"]).exit_code == 0
    result = CliRunner().invoke(cli, ["verify", str(out)])
    assert result.exit_code == 1
    assert "--example-inputs" in result.stderr
