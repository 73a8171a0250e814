"""liteexport.lower / liteexport.export, partial lowering (--lower), and lowered modules saved by
torch (torch.jit.save / _save_for_lite_interpreter) in torch, runtime_py and the CLI; every output
is compared with torch's on the same inputs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from torch.jit.mobile import _load_for_lite_interpreter

import liteexport
import liteexport.partial
import runtime_py
from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE
from liteexport.errors import ModelError, UnsupportedNodesError
from liteexport.test_vectors import TEST_VECTORS_EXTRA_FILE, decode_test_vectors
from runtime_py.errors import ExecutionError, InputError
from tests.cli.conftest import invoke
from tests.to_backend import mixed_models

pytestmark = [pytest.mark.torch_oracle, pytest.mark.usefixtures("backend")]

ATOL, RTOL = 1e-5, 1e-4
MODELS = Path(mixed_models.__file__)


def _close(ours: Any, theirs: torch.Tensor) -> None:
    np.testing.assert_allclose(np.asarray(ours), theirs.detach().numpy(), atol=ATOL, rtol=RTOL)


def _close_all(ours: Any, theirs: Any) -> None:
    for mine, torchs in zip(ours, theirs, strict=True):
        _close(mine, torchs)


def _mixed_inputs() -> tuple[Any, ...]:
    return torch.randn(2, 4), 3, 0.5, True, [1, 2]


@pytest.fixture(scope="module")
def mixed() -> torch.nn.Module:
    torch.manual_seed(0)
    return mixed_models.Mixed().eval()


def test_lower_runs_in_torchscript_saves_and_loads_everywhere(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = mixed_models.Pair().eval()
    lowered = liteexport.lower(model)
    x, h = torch.randn(2, 4), torch.randn(2, 4)
    expected = model(x, h)
    _close_all(lowered(x, h), expected)
    # torch.jit.save / torch.jit.load of what _jit_to_backend produced
    archive = tmp_path / "lowered.pt"
    torch.jit.save(lowered, str(archive))
    _close_all(torch.jit.load(str(archive))(x, h), expected)
    # _save_for_lite_interpreter, both formats: torch's lite interpreter and runtime_py
    for flatbuffer in (False, True):
        path = tmp_path / f"lowered_{flatbuffer}.ptl"
        path.write_bytes(lowered._c._save_to_buffer_for_mobile({}, False, flatbuffer))
        _close_all(_load_for_lite_interpreter(str(path))(x, h), expected)
        _close_all(runtime_py.load(path).forward(x.numpy(), h.numpy()), expected)


def test_lower_with_input_shapes_checks_them() -> None:
    model = mixed_models.Encoder().eval()
    lowered = liteexport.lower(model, input_shapes={"forward": [[2, 4]]})
    x = torch.randn(2, 4)
    _close(lowered(x), model(x))
    with pytest.raises(RuntimeError, match=r"\(3, 4\)"):
        lowered(torch.randn(3, 4))


def test_lower_reports_torch_wording() -> None:
    with pytest.raises(RuntimeError) as info:
        liteexport.lower(mixed_models.Sorter())
    assert str(info.value).startswith("The node of aten::logsumexp is not supported in this compiler. "
                                      "Source code:   File ")
    assert "Module hierarchy: top(Sorter)" in str(info.value)


def test_export_whole_module_with_test_vectors(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = mixed_models.Pair().eval()
    x, h = torch.randn(2, 4), torch.randn(2, 4)
    path = tmp_path / "pair.ptl"
    size = liteexport.export(model, path, example_inputs=[(x, h)])
    assert size == path.stat().st_size
    bundle = runtime_py.load(path)
    _close_all(bundle.forward(x.numpy(), h.numpy()), model(x, h))
    vectors = decode_test_vectors(bundle.ptmf.extra_file(TEST_VECTORS_EXTRA_FILE))
    assert len(vectors["forward"]) == 1


@pytest.mark.parametrize("lower", [["enc", "head"], "auto"])
def test_partial_export_runs_in_runtime_py_and_torch_lite(tmp_path: Path, mixed: torch.nn.Module,
                                                         lower: Any) -> None:
    path = tmp_path / "mixed.ptl"
    liteexport.export(mixed, path, lower=lower)
    inputs = _mixed_inputs()
    expected = mixed(*inputs)
    bundle = runtime_py.load(path)
    _close(bundle.forward(inputs[0].numpy(), *inputs[1:]), expected)
    _close(_load_for_lite_interpreter(str(path))(*inputs), expected)
    # the lowered parts' debug table, in the handles the compiled programs carry, each node seen
    # from the outer module's call (torch's levels)
    assert bundle.debug_table is not None
    assert {e.module_hierarchy for e in bundle.debug_table.entries} == {
        "top(Mixed)::<unknown>.enc(Encoder)::forward.__loweredModule__(Encoder)::forward.l(Linear)",
        "top(Mixed)::<unknown>.head(Sequential)::forward.__loweredModule__(Sequential)::forward.0(Linear)"}
    assert bundle.ptmf.extra_file(DEBUG_TABLE_EXTRA_FILE) is not None


def test_partial_lowering_maps_a_failure_in_a_lowered_part(tmp_path: Path, mixed: torch.nn.Module) -> None:
    path = tmp_path / "mixed.ptl"
    liteexport.export(mixed, path, lower=["enc"])
    # a width the lowered linear cannot take: its input's error (exit 6), naming the instruction and
    # the lowered part's module hierarchy (issue 31 item 6: a wrong shape is exit 6 on every path)
    with pytest.raises(InputError) as info:
        runtime_py.load(path).forward(np.ones((2, 5), np.float32), 3, 0.5, True, [1])
    assert info.value.code == "INPUT_UNFIT" and "instruction #0 LINEAR" in str(info.value)
    assert "enc(Encoder)::forward.__loweredModule__(Encoder)::forward.l(Linear)" in str(info.value)


def test_partial_lowering_called_twice_names_no_call_site(tmp_path: Path) -> None:
    """A lowered submodule called from two places: torch's lite interpreter tells the calls apart
    by the caller's handle, which a flatbuffer bundle cannot carry, so neither engine is given a
    call site that may be the wrong one: both name the lowered module's own hierarchy."""
    from tests.to_backend.torch_source import define

    a = define("A", "\n    def forward(self, x, y):\n      return x + y\n  ")
    c = define("C", "\n    def forward(self, x, y):\n      return self.A0.forward(x, y) + self.A0.forward(y, x)\n  ",
               A0=a)
    path = tmp_path / "twice.ptl"
    liteexport.export(c, path, lower=["A0"])
    bad = (torch.rand(2, 4), torch.rand(13, 9))
    with pytest.raises(ExecutionError) as info:
        runtime_py.load(path).forward(*(x.numpy() for x in bad))
    assert "Module hierarchy:top(A)::<unknown>.aten::add\n" in str(info.value)
    with pytest.raises(RuntimeError) as torch_info:
        _load_for_lite_interpreter(str(path))(*bad)
    assert "Module hierarchy:top(A)::<unknown>.aten::add\n" in str(torch_info.value)


class _AuxOuter(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        from tests.parity.parity_models import AuxiliaryHeads

        self.net = AuxiliaryHeads()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).logits


def test_lower_refuses_constant_outputs_torchs_wrapper_cannot_take(tmp_path: Path) -> None:
    """googlenet-like (logits, None, None): torch's to_backend wrapper unpacks every element from
    execute, which runs a program of tensors only, so lowering through it refuses the method (and
    --lower auto does not choose it), while the bundle liteexport writes returns the None."""
    from liteexport.partial import choose_auto
    from tests.parity.parity_models import AuxiliaryHeads

    with pytest.raises(RuntimeError, match=r"output 1 is None, output 2 is None: .*torch's to_backend wrapper"):
        liteexport.lower(AuxiliaryHeads())
    chosen, unlowered = choose_auto(torch.jit.script(_AuxOuter().eval()))
    assert chosen == ["net.body", "net.head", "net.aux"]
    assert [name for name, _ in unlowered] == ["net"]
    assert unlowered[0][1].startswith("not compiled here: prim::TupleConstruct (1 site: output 1 is None, output 2 "
                                      "is None: a method must return a Tensor")
    x = np.ones((2, 8), np.float32)
    liteexport.export(AuxiliaryHeads(), tmp_path / "aux.ptl")
    assert runtime_py.load(tmp_path / "aux.ptl").forward(x)[1:] == (None, None)


def test_auto_lists_what_stayed_torchscript(mixed: torch.nn.Module, tmp_path: Path) -> None:
    from liteexport.partial import select_submodules
    from liteexport.pipeline import Request, export

    result = select_submodules(torch.jit.script(mixed), ["auto"])
    assert result.chosen == ("enc", "head")
    assert result.unlowered == (("sorter", "unsupported: aten::logsumexp (1 site)"),)
    summary = export(torch.jit.script(mixed), tmp_path / "auto.ptl", Request(lower=("auto",))).summary
    assert "kept as TorchScript bytecode:\n  sorter: unsupported: aten::logsumexp (1 site)\nruns in:" in summary


def test_partial_refuses_bad_names_and_shared_types(tmp_path: Path, mixed: torch.nn.Module) -> None:
    with pytest.raises(ModelError, match="no submodule 'nope'"):
        liteexport.export(mixed, tmp_path / "x.ptl", lower=["nope"])
    # an archive's types are fixed: one instance of a shared type is refused (exit 4)
    with pytest.raises(UnsupportedNodesError, match="same TorchScript type"):
        liteexport.export(torch.jit.script(mixed_models.Twins().eval()), tmp_path / "x.ptl", lower=["a"])
    assert not (tmp_path / "x.ptl").exists()
    # both instances of the type, or an nn.Module (scripted with a type per module): fine
    twins = mixed_models.Twins().eval()
    x = torch.randn(2, 4)
    for lower in (["a", "b"], ["a"]):
        liteexport.export(twins, tmp_path / "twins.ptl", lower=lower)
        _close(runtime_py.load(tmp_path / "twins.ptl").forward(x.numpy()), twins(x))


def _runs_as_torch(path: Path, model: torch.nn.Module) -> None:
    x = torch.randn(3, 4)
    _close(runtime_py.load(path).forward(x.numpy()), model(x))
    _close(_load_for_lite_interpreter(str(path))(x), model(x))


def test_auto_on_an_archive_with_shared_types_picks_what_torch_accepts_regression(tmp_path: Path) -> None:
    # repvit_m1_0, mobileone_s0, ghostnetv2_100, edgenext_xx_small, lraspp_mobilenet_v3_large
    # archives exited 70 ("Selective lowering is only supported for module hierarchies with unique types")
    torch.manual_seed(0)
    model = mixed_models.SharedBlocks().eval()
    result = liteexport.partial.select_submodules(torch.jit.script(model), ["auto"])
    assert result.chosen == ("head",)
    assert dict(result.unlowered)["blocks.0"].endswith(
        "its submodules stay TorchScript too: blocks.1 share its TorchScript type, and torch lowers "
        "submodules only of a parent of its own type")
    liteexport.export(torch.jit.script(model), tmp_path / "a.ptl", lower="auto")
    _runs_as_torch(tmp_path / "a.ptl", model)


def test_auto_from_python_source_scripts_a_type_per_module_when_needed_regression(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = mixed_models.SharedBlocks().eval()
    liteexport.export(model, tmp_path / "m.ptl", lower="auto")
    _runs_as_torch(tmp_path / "m.ptl", model)
    out = tmp_path / "cli.ptl"
    result = invoke(["export", f"{MODELS}:SharedBlocks", "-o", str(out), "--lower", "auto"])
    assert result.exit_code == 0, result.stderr
    assert "lowered: blocks.0.enc, blocks.1.enc, head" in result.stdout
    result = invoke(["export", f"{MODELS}:SharedBlocks", "-o", str(out), "--lower", "blocks.0.enc"])
    assert result.exit_code == 0, result.stderr


def test_auto_keeps_a_child_whose_attributes_the_parent_reads_regression(tmp_path: Path) -> None:
    # edgenext_xx_small exited 70 at save: the lowered token_projection has no weight
    torch.manual_seed(0)
    model = mixed_models.ReadsChildWeight().eval()
    with pytest.raises(ModelError, match="no submodule can be lowered on its own"):
        liteexport.export(model, tmp_path / "r.ptl", lower="auto")
    with pytest.raises(UnsupportedNodesError, match="reads proj.weight"):
        liteexport.export(model, tmp_path / "r.ptl", lower=["proj"])


def test_cli_lower_auto_and_lowered_archive(tmp_path: Path, mixed: torch.nn.Module) -> None:
    out = tmp_path / "auto.ptl"
    result = invoke(["export", f"{MODELS}:Mixed", "-o", str(out), "--lower", "auto"])
    assert result.exit_code == 0, result.stderr
    assert "lowered: enc, head" in result.stdout
    assert "sorter: unsupported: aten::logsumexp (1 site)" in result.stdout
    described = invoke(["inspect", str(out)])
    assert described.exit_code == 0, described.stderr
    assert "Delegate: none at the root; 2 lowered submodule types (partially lowered)" in described.stdout
    # a torch.jit.save'd module lowered by _jit_to_backend exports as it is (.pt export)
    torch.manual_seed(0)
    model = mixed_models.Pair().eval()
    archive = tmp_path / "lowered.pt"
    torch.jit.save(liteexport.lower(model), str(archive))
    bundle = tmp_path / "from_pt.ptl"
    result = invoke(["export", str(archive), "-o", str(bundle)])
    assert result.exit_code == 0, result.stderr
    x, h = torch.randn(2, 4), torch.randn(2, 4)
    _close_all(runtime_py.load(bundle).forward(x.numpy(), h.numpy()), model(x, h))
    _close_all(_load_for_lite_interpreter(str(bundle))(x, h), model(x, h))


def test_cli_specialize_refuses_an_argument_left_unspecialized(tmp_path: Path) -> None:
    result = invoke(["export", f"{MODELS}:Mixed", "-o", str(tmp_path / "x.ptl"), "--specialize", "k=3",
                     "--method", "forward"])
    assert result.exit_code == 3
    error = result.stderr[result.stderr.index("Error: "):]  # (after any progress lines)
    assert error.startswith("Error: --specialize: forward's argument scale is float too: give --specialize "
                            "forward:scale=VALUE as well"), result.stderr
    assert not (tmp_path / "x.ptl").exists()


def test_cli_lower_auto_self_checks_the_mixed_bundle_regression(tmp_path: Path) -> None:
    # --lower auto refused --method, --input-shape and --example-inputs (exit 6) and checked nothing
    out = tmp_path / "s.ptl"
    args = ["export", f"{MODELS}:SharedBlocks", "-o", str(out), "--lower", "auto", "--method", "forward"]
    result = invoke([*args, "--input-shape", "forward:3x4"])
    assert result.exit_code == 0, result.stderr
    assert "self-check passed for forward: max abs error" in result.stderr
    assert "(runtime_py, mixed bundle)" in result.stderr
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    result = invoke([*args, "--example-inputs", str(tmp_path / "x.npy")])
    assert result.exit_code == 0, result.stderr
    assert "self-check passed for forward" in result.stderr
    vectors = decode_test_vectors(runtime_py.load(out).ptmf.extra_file(TEST_VECTORS_EXTRA_FILE))
    np.testing.assert_array_equal(vectors["forward"][0].inputs[0], x)
    # runtime_py cannot run it: torch's lite interpreter with our backend checks it, and the note says so
    result = invoke(["export", f"{MODELS}:Erfinv", "-o", str(out), "--lower", "auto", "--input-shape", "forward:3x4"])
    assert result.exit_code == 0, result.stderr
    assert ("self-check passed for forward: max abs error 0 against torch on 1 input set (torch's lite interpreter "
            "with liteexport's backend, mixed bundle) (runtime_py cannot run it: forward: operator aten::erfinv"
            in result.stderr), result.stderr


def test_torch_saved_zip_with_debug_info_runs_in_runtime_py(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = mixed_models.Pair().eval()
    lowered = liteexport.lower(model)
    path = tmp_path / "dbg.ptl"
    path.write_bytes(lowered._c._save_to_buffer_for_mobile({}, True, False))
    x, h = torch.randn(2, 4), torch.randn(2, 4)
    _close_all(runtime_py.load(path).forward(x.numpy(), h.numpy()), model(x, h))



def test_specialized_non_tensor_arguments_lower(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = mixed_models.Scalars().eval()
    path = tmp_path / "spec.ptl"
    liteexport.export(model, path, specialize={"forward": {"k": 3, "scale": 0.5, "flag": True, "dims": [2, 5]}})
    x = torch.randn(2, 4)
    expected = model(x, 3, 0.5, True, [2, 5])
    # the values are compiled in: the bundle's forward takes the Tensor only, on every engine
    _close(runtime_py.load(path).forward(x.numpy()), expected)
    _close(_load_for_lite_interpreter(str(path))(x), expected)
    with pytest.raises(InputError, match=r"forward\(x\) takes 1 input\(s\), got 2"):
        runtime_py.load(path).forward(x.numpy(), 3)
    with pytest.raises(ModelError, match="has no argument q"):
        liteexport.export(model, tmp_path / "x.ptl", specialize={"forward": {"q": 1}})
    with pytest.raises(ModelError, match="only int, float, bool and lists of them"):
        liteexport.export(model, tmp_path / "x.ptl", specialize={"forward": {"k": "3"}})
    assert not (tmp_path / "x.ptl").exists()


def test_cli_specialize(tmp_path: Path) -> None:
    bundle = tmp_path / "spec.ptl"
    result = invoke(["export", f"{MODELS}:Scalars", "-o", str(bundle), "--specialize", "forward:k=3",
                     "--specialize", "scale=0.5", "--specialize", "flag=False", "--specialize", "dims=[4]"])
    assert result.exit_code == 0, result.stderr
    assert "compiled for forward:k=3, forward:scale=0.5, forward:flag=False, forward:dims=[4]" in result.stdout
    torch.manual_seed(0)
    x = torch.randn(2, 4)
    # the same bundle (same weights) in torch's lite interpreter and in runtime_py
    _close(runtime_py.load(bundle).forward(x.numpy()), _load_for_lite_interpreter(str(bundle))(x))
    # the error for an int argument recommends --specialize, and following it works (above)
    refused = invoke(["export", f"{MODELS}:Scalars", "-o", str(tmp_path / "x.ptl")])
    assert refused.exit_code == 3
    assert "--specialize forward:k=VALUE" in refused.stderr
    bad = invoke(["export", f"{MODELS}:Scalars", "-o", str(tmp_path / "x.ptl"), "--specialize", "k=abc"])
    assert bad.exit_code == 2
    assert "is not an int, float, bool or list of them" in bad.stderr


def test_auto_on_an_archive_finds_its_free_functions_regression(tmp_path: Path) -> None:
    # every timm archive's BatchNormAct2d (F.batch_norm: a prim::CallFunction) was kept as TorchScript
    import subprocess
    import sys

    archive = tmp_path / "f.pt"
    # saved by another process: here the function exists only in the archive's compilation unit
    subprocess.run([sys.executable, "-c", "import torch; from tests.to_backend.mixed_models import function_child; "
                    f"torch.jit.save(torch.jit.script(function_child().eval()), {str(archive)!r})"],
                   check=True, cwd=Path(__file__).resolve().parents[2])
    out = tmp_path / "f.ptl"
    result = invoke(["export", str(archive), "-o", str(out), "--lower", "auto"])
    assert result.exit_code == 0, result.stderr
    assert "lowered: enc" in result.stdout
    _runs_as_torch(out, mixed_models.function_child().eval())


def test_partial_export_says_which_engines_run_the_bundle_regression(tmp_path: Path) -> None:
    # GPT-2/Llama --lower auto bundles exported with exit 0 that runtime_py could not run (aten::diff)
    out = tmp_path / "e.ptl"
    result = invoke(["export", f"{MODELS}:Erfinv", "-o", str(out), "--lower", "auto"])
    assert result.exit_code == 0, result.stderr
    assert ("runs in:\n  torch lite interpreter (with liteexport's torch extension): yes\n"
            "  runtime_py: only calls that reach none of aten::erfinv (operators it lacks)\n"
            "  native core: no (it runs fully lowered bundles only"
            in result.stdout)
    result = invoke(["export", f"{MODELS}:Mixed", "-o", str(out), "--lower", "auto"])
    assert "  runtime_py: yes\n" in result.stdout


def test_self_check_of_a_mixed_bundle_returning_a_dict_regression(tmp_path: Path) -> None:
    # lraspp_mobilenet_v3_large --lower auto --input-shape exited 70 (its {"out": ...} compared as one array)
    liteexport.export(mixed_models.DictOut().eval(), tmp_path / "d.ptl", lower="auto",
                      input_shapes={"forward": [[3, 4]]})
