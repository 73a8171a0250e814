"""export --example-inputs stores test vectors; verify checks them on each engine and
names the first diverging instruction when an engine is wrong."""

from __future__ import annotations

import dataclasses
import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from bundle_format.program import OpCode
from liteexport.cli import cli
from liteexport.test_vectors import TEST_VECTORS_EXTRA_FILE, TestVector, decode_test_vectors, encode_test_vectors
from liteexport.torch_backend import torch_backend_available
from liteexport.verify import verify_bundle
from runtime_py.backends.demo import kernels
from runtime_py.errors import FormatError
from runtime_py.module import load

ROOT = Path(__file__).resolve().parents[2]
TINY_CNN = f"{ROOT}/examples/tiny_cnn.py:TinyCNN"

pytestmark = pytest.mark.torch_oracle


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    for n, batch in enumerate((2, 1)):
        np.save(tmp_path / f"x{n}.npy", rng.standard_normal((batch, 3, 32, 32)).astype(np.float32))
    out = tmp_path / "tiny.ptl"
    result = CliRunner().invoke(cli, ["export", TINY_CNN, "-o", str(out), "-q", "--input-shape", "forward:Bx3x32x32",
                                      "--dim", "B=1..2", "--example-inputs",
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


def test_vectors_keep_constant_outputs() -> None:
    expected = (np.zeros(2, np.float32), None, 3, True, 2.5, float("nan"))
    vectors = {"forward": [TestVector((np.ones(2, np.float32),), expected)]}
    (vector,) = decode_test_vectors(encode_test_vectors(vectors))["forward"]
    assert vector.expected[0].tolist() == [0.0, 0.0]
    assert vector.expected[1:5] == (None, 3, True, 2.5)
    assert [type(v) for v in vector.expected[1:]] == [type(None), int, bool, float, float]
    assert np.isnan(vector.expected[5])


@pytest.mark.parametrize("stored", [np.array("[1, 2]"), np.array("{"), np.array(["null"]), np.zeros(1)])
def test_a_constant_output_that_is_no_constant_is_a_format_error(stored: np.ndarray) -> None:
    content = encode_test_vectors({"forward": [TestVector((np.ones(2, np.float32),), (np.zeros(1, np.float32),))]})
    buffer = io.BytesIO(content)
    with zipfile.ZipFile(buffer, "a") as archive:
        member = io.BytesIO()
        np.lib.format.write_array(member, stored, allow_pickle=False)
        archive.writestr("forward/0/constant_1.npy", member.getvalue())
    with pytest.raises(FormatError, match="constant_1 is not a constant"):
        decode_test_vectors(buffer.getvalue())


@pytest.fixture
def aux_bundle(tmp_path: Path) -> Path:
    """The parity suite's googlenet-like model: forward returns (logits, None, None), pair (x, None)."""
    import torch

    import liteexport
    from tests.parity.parity_models import AuxiliaryHeads

    x = np.random.default_rng(0).standard_normal((2, 8)).astype(np.float32)
    out = tmp_path / "aux.ptl"
    liteexport.export(AuxiliaryHeads(), out, example_inputs={"forward": [(x,)], "pair": [(x,)]})
    assert isinstance(torch.jit.script(AuxiliaryHeads().eval())(torch.from_numpy(x)).aux1, type(None))
    return out


@pytest.mark.skipif(not torch_backend_available(), reason="no C++ compiler, ninja or flatbuffers headers found: "
                    "liteexport's torch backend needs them to build")
def test_verify_compares_none_outputs_on_both_engines(aux_bundle: Path) -> None:
    vectors = decode_test_vectors(_stored_vectors(aux_bundle))
    assert vectors["forward"][0].expected[1:] == (None, None)
    assert vectors["pair"][0].expected[1:] == (None,)
    report = verify_bundle(aux_bundle, engines=("runtime_py", "torch"))
    assert report.passed
    # forward: 3 outputs, pair: 2 outputs, on each engine
    assert sorted((c.engine, c.method, c.output) for c in report.checks) == sorted(
        (engine, method, i) for engine in ("runtime_py", "torch") for method, n in (("forward", 3), ("pair", 2))
        for i in range(n))


def test_verify_fails_when_a_constant_output_differs(aux_bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine returning a tensor where torch returned None fails that output, by name."""
    import liteexport.verify as verify

    real = verify._runtime_py_runner

    def tensor_for_none(module: object) -> verify.Runner:
        run = real(module)  # type: ignore[arg-type]
        return lambda method, inputs: tuple(np.zeros(1, np.float32) if v is None else v for v in run(method, inputs))

    monkeypatch.setattr(verify, "_runtime_py_runner", tensor_for_none)
    report = verify_bundle(aux_bundle)
    failed = [c for c in report.checks if not c.passed]
    assert [(c.method, c.output) for c in failed] == [("forward", 1), ("forward", 2), ("pair", 1)]
    assert failed[0].problem == "got a float32[1] tensor, expected None"


def _stored_vectors(path: Path) -> bytes:
    content = load(path).ptmf.extra_file(TEST_VECTORS_EXTRA_FILE)
    assert content is not None
    return content
