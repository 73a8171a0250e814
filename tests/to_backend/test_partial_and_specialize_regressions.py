"""Issue 31's partial-lowering and --specialize regressions: a quantized tensor at a lowered
submodule's boundary, a --lower NAME that does not compile (exit 4, not 70), the mixed self-check
on torch's lite interpreter, the auto report of an op that compiles elsewhere, and --specialize as
a whole lowering (input shapes, debug table, run, native core). Outputs are compared with torch's."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.jit.mobile import _load_for_lite_interpreter

import liteexport
import runtime_py
from liteexport.errors import ModelError, UnsupportedNodesError
from liteexport.partial import select_submodules
from runtime_py.errors import InputError
from tests import cpp_builds
from tests.cli.conftest import invoke
from tests.to_backend import mixed_models
from tests.to_backend.test_native_mixed import _tensor_file

pytestmark = [pytest.mark.torch_oracle, pytest.mark.usefixtures("backend")]

MODELS = Path(mixed_models.__file__)
SCALARS = {"k": 3, "scale": 0.5, "flag": True, "dims": [2, 5]}


def _error(stderr: str) -> str:
    """The error the CLI printed, without the progress lines before it (a slow run prints some)."""
    return stderr[stderr.index("Error: "):]


@pytest.fixture
def engine() -> Iterator[None]:
    """torch's quantized engine as it was (the quantized models here set fbgemm's)."""
    before = torch.backends.quantized.engine
    yield
    torch.backends.quantized.engine = before


# ---- A: a quantized tensor at a lowered submodule's boundary --------------------------------------

@pytest.mark.usefixtures("engine")
def test_auto_keeps_submodules_with_a_quantized_boundary_regression(tmp_path: Path) -> None:
    # mobilenet_v2 for fbgemm: --lower auto lowered quant (returning floats) and wrote, with exit 0, a bundle
    # no engine ran ("quantized::conv2d_relu expects a quantized tensor, got a float tensor")
    out = tmp_path / "q.ptl"
    result = invoke(["export", f"{MODELS}:quantized_body", "-o", str(out), "--lower", "auto",
                     "--input-shape", "1x3x8x8"])
    assert result.exit_code == 0, result.stderr
    assert "lowered: head\n" in result.stdout
    assert "  quant: it returns a quantized tensor, which a lowered module would return as floats\n" in result.stdout
    assert "  relu: its input is a quantized tensor, which a lowered module would read as floats\n" in result.stdout
    assert "  dequant: its input is a quantized tensor" in result.stdout
    assert "self-check passed for forward" in result.stderr
    model = mixed_models.quantized_body()
    x = torch.rand(1, 3, 8, 8)
    expected = model(x).detach().numpy()
    np.testing.assert_allclose(runtime_py.load(out).forward(x.numpy()), expected, atol=1e-5)
    np.testing.assert_allclose(_load_for_lite_interpreter(str(out))(x).numpy(), expected, atol=1e-5)
    # without input shapes the walk cannot follow the code before head: it stays TorchScript, saying why
    with pytest.raises(ModelError, match=r"head: its input or result may be a quantized tensor, which a lowered "
                                         r"module would take and return as floats \(the compiler cannot follow"):
        select_submodules(torch.jit.script(model), ["auto"])


@pytest.mark.usefixtures("engine")
def test_lower_named_submodule_with_a_quantized_boundary_exits_4(tmp_path: Path) -> None:
    result = invoke(["export", f"{MODELS}:quantized_body", "-o", str(tmp_path / "q.ptl"), "--lower", "relu"])
    assert result.exit_code == 4, result.stderr
    assert _error(result.stderr).startswith(
        "Error: --lower relu: its input is a quantized tensor, which a lowered module would read as floats; a lowered "
        "module takes and returns float tensors"), result.stderr
    with pytest.raises(UnsupportedNodesError, match="--lower quant: it returns a quantized tensor"):
        liteexport.export(mixed_models.quantized_body(), tmp_path / "q.ptl", lower=["quant"])
    assert not (tmp_path / "q.ptl").exists()


@pytest.mark.slow
@pytest.mark.usefixtures("engine")
def test_auto_on_torchvision_mobilenet_v2_for_fbgemm_says_it_compiles_whole_regression(tmp_path: Path) -> None:
    from benchmarks.models import with_batch_norm_statistics
    from benchmarks.torchvision_shim import import_torchvision

    torchvision = import_torchvision()  # (before torchvision's own imports: it defines the ops they need)
    torch.manual_seed(0)
    torch.backends.quantized.engine = "fbgemm"
    model = torchvision.models.quantization.mobilenet_v2(weights=None, quantize=False)
    torchvision.models.quantization.utils.quantize_model(with_batch_norm_statistics(model, 96), "fbgemm")
    with pytest.raises(ModelError) as info:
        liteexport.export(model, tmp_path / "m.ptl", lower="auto", input_shapes=[[1, 3, 96, 96]])
    text = str(info.value)
    assert text.startswith("--lower auto: no submodule can be lowered on its own; the module compiles whole: export "
                           "it without --lower (")
    assert "quant: it returns a quantized tensor" in text
    assert "dequant: its input is a quantized tensor" in text
    assert not (tmp_path / "m.ptl").exists()


# ---- B: --lower NAME on a submodule that does not compile ---------------------------------------

def test_lower_named_submodule_that_does_not_compile_exits_4_regression(tmp_path: Path) -> None:
    # exited 70: "internal error ... RuntimeError: The node of aten::logsumexp is not supported"
    out = tmp_path / "x.ptl"
    result = invoke(["export", f"{MODELS}:Mixed", "-o", str(out), "--lower", "enc", "--lower", "sorter"])
    assert result.exit_code == 4, result.stderr
    assert _error(result.stderr).startswith(
        "Error: --lower sorter: the submodule does not compile. 1 unsupported node of 1 kind:\n"
        "  aten::logsumexp  1 site\n"
    ), result.stderr
    assert 'File "tests/to_backend/mixed_models.py", line 19' in result.stderr
    assert "return x - torch.logsumexp(x, -1, keepdim=True)" in result.stderr
    assert "internal error" not in result.stderr
    assert not out.exists()
    # a submodule whose result torch's to_backend wrapper cannot take: reported too (exit 4)
    from tests.to_backend.test_api_and_partial import _AuxOuter

    with pytest.raises(UnsupportedNodesError, match=r"(?s)--lower net: the submodule does not compile\..*output 1 is "
                                                    r"None, output 2 is None"):
        liteexport.export(_AuxOuter().eval(), out, lower=["net"])
    # --lower with --specialize: refused before anything is lowered (exit 6)
    result = invoke(["export", f"{MODELS}:Mixed", "-o", str(out), "--lower", "enc", "--lower", "head",
                     "--specialize", "k=3"])
    assert result.exit_code == 6, result.stderr
    assert not out.exists()


# ---- C: the mixed self-check's engine; the auto report ------------------------------------------

def test_auto_report_gives_the_reason_of_an_op_that_compiles_elsewhere_regression() -> None:
    # listed "c: unsupported: aten::cumsum (1 site)", though cumsum compiles (given its input's rank)
    with pytest.raises(ModelError) as info:
        liteexport.export(mixed_models.CumsumThenSort().eval(), "unused.ptl", lower="auto")
    assert ("c: not compiled here: aten::cumsum (1 site: the input's rank is not known); "
            "sorter: unsupported: aten::logsumexp (1 site)") in str(info.value)


def test_mixed_self_check_runs_where_runtime_py_cannot_and_catches_a_difference(tmp_path: Path) -> None:
    from liteexport import self_check
    from liteexport.errors import VerificationError
    from liteexport.test_vectors import TestVector

    path = tmp_path / "e.ptl"
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    torch.manual_seed(0)
    model = mixed_models.Erfinv().eval()
    liteexport.export(model, path, lower="auto", check=False)
    expected = model(torch.from_numpy(x)).detach().numpy()
    notes = self_check.check_mixed(path.read_bytes(), {"forward": [TestVector((x,), (expected,))]})
    assert notes[0].startswith("self-check passed for forward: max abs error 0 against torch on 1 input set (torch's "
                               "lite interpreter with liteexport's backend, mixed bundle)")
    # a wrong reference: torch's lite interpreter's outputs differ, exit 9
    with pytest.raises(VerificationError, match="output 0 of the mixed bundle in torch's lite interpreter with "
                                                "liteexport's backend differs from torch's"):
        self_check.check_mixed(path.read_bytes(), {"forward": [TestVector((x,), (expected + 1.0,))]})


# ---- D: --specialize ---------------------------------------------------------------------------------

def test_specialize_with_input_shapes_keeps_the_debug_table_regression(tmp_path: Path) -> None:
    # --specialize with --input-shape exited 6; the specialized bundle had no source-mapped errors
    torch.manual_seed(0)
    model = mixed_models.Scalars().eval()
    x = torch.randn(2, 4)
    path = tmp_path / "s.ptl"
    liteexport.export(model, path, specialize={"forward": SCALARS}, input_shapes={"forward": [[2, 4]]},
                      example_inputs=[(x,)])
    expected = model(x, *SCALARS.values()).detach().numpy()
    bundle = runtime_py.load(path)
    np.testing.assert_allclose(bundle.forward(x.numpy()), expected, atol=1e-5, rtol=1e-4)
    np.testing.assert_allclose(_load_for_lite_interpreter(str(path))(x).numpy(), expected, atol=1e-5, rtol=1e-4)
    assert bundle.debug_table is not None
    with pytest.raises(InputError) as info:  # another shape than compiled: named with the model's source line
        bundle.forward(np.ones((3, 4), np.float32))
    assert "expected float32 of shape (2, 4), got float32 of shape (3, 4)" in str(info.value)
    assert "Module hierarchy: top(Scalars).l(Linear)" in str(info.value)
    verified = invoke(["verify", str(path)])  # the stored test vector, on the compiled program
    assert verified.exit_code == 0, verified.stderr


def test_cli_specialize_with_input_shape_and_run_regression(tmp_path: Path) -> None:
    out = tmp_path / "s.ptl"
    args = ["export", f"{MODELS}:Scalars", "-o", str(out), "--specialize", "forward:k=3", "--specialize", "scale=0.5",
            "--specialize", "flag=True", "--specialize", "dims=[2, 5]"]
    torch.manual_seed(0)  # the CLI runs in this process: its Scalars() gets seed 0's weights
    result = invoke([*args, "--input-shape", "2x4"])
    assert result.exit_code == 0, result.stderr
    assert "self-check passed for forward" in result.stderr
    assert ("methods: forward; compiled for forward:k=3, forward:scale=0.5, forward:flag=True, forward:dims=[2, 5];"
            in result.stdout)
    # liteexport run needs the Tensor only: the values are compiled in
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    ran = invoke(["run", str(out), "-i", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npz")])
    assert ran.exit_code == 0, ran.stderr
    torch.manual_seed(0)
    expected = mixed_models.Scalars().eval()(torch.from_numpy(x), *SCALARS.values()).detach().numpy()
    with np.load(tmp_path / "y.npz") as outputs:
        np.testing.assert_allclose(outputs["output_0"], expected, atol=1e-5, rtol=1e-4)
    # a whole lowering: narrow weights apply too
    narrow = invoke([*args, "--input-shape", "2x4", "--weights", "fp16"])
    assert narrow.exit_code == 0, narrow.stderr
    assert "2 of 2 weights stored as float16" in narrow.stderr
    extra = invoke(["run", str(out), "-i", str(tmp_path / "x.npy"), "-i", str(tmp_path / "x.npy")])
    assert extra.exit_code == 6
    assert "forward(x) takes 1 input(s), got 2" in extra.stderr
    # what cannot be specialized says so, writing nothing
    for flag, message in ((["--specialize", "flag=3"], "--specialize forward:flag=3: forward's argument flag is bool"),
                          (["--specialize", "nope:k=3"], "--specialize names method 'nope'")):
        refused = invoke(["export", f"{MODELS}:Scalars", "-o", str(tmp_path / "r.ptl"), "--specialize", "k=3",
                          "--specialize", "scale=0.5", "--specialize", "dims=[1]", *flag])
        assert refused.exit_code == 3, refused.stderr
        assert message in refused.stderr, refused.stderr
    assert not (tmp_path / "r.ptl").exists()


@pytest.mark.android
@pytest.mark.slow
def test_native_core_runs_a_specialized_bundle_regression(tmp_path: Path) -> None:
    # refused at load: "operators the native runtime does not implement: aten::ne.int"
    torch.manual_seed(0)
    model = mixed_models.Scalars().eval()
    bundle = tmp_path / "s.ptl"
    liteexport.export(model, bundle, specialize={"forward": SCALARS}, input_shapes={"forward": [[2, 4]]})
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    native = Path(cpp_builds.wait("native-host").output.strip().splitlines()[-1]) / "liteexport_native_run"
    result = subprocess.run([str(native), str(bundle), str(_tensor_file(tmp_path / "x.bin", x)),
                             "--output", str(tmp_path / "out.npz")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    with np.load(tmp_path / "out.npz") as outputs:
        ours = outputs["arr_0"]
    expected = model(torch.from_numpy(x), *SCALARS.values()).detach().numpy()
    np.testing.assert_allclose(ours, expected, atol=1e-5, rtol=1e-4)
