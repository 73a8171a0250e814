"""liteexport profile --engine native|torch (issue 23): the native core's Module::profile (through
liteexport_native_run --profile) and torch's lite interpreter (our backend's steps as torch.profiler
user scopes) name the same instructions, with the same source lines, as runtime_py's profile."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests import cpp_builds
from tests.android.test_android_sample import build_dir
from tests.cli.conftest import invoke

pytestmark = [pytest.mark.android, pytest.mark.torch_oracle,
              pytest.mark.skipif(shutil.which("cmake") is None or shutil.which("g++") is None,
                                 reason="needs cmake and g++ to build C++")]

TINY_CNN = Path(__file__).resolve().parents[2] / "examples" / "tiny_cnn.py"
RUNS = 3


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("profile") / "tiny.ptl"
    result = invoke(["export", f"{TINY_CNN}:TinyCNN", "--input-shape", "forward:1x3x32x32", "-o", str(path),
                     "--quiet"])
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def engine_ready(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The engine of the test's parameter, built: the native host tool, or the torch extension."""
    engine: str = request.param
    if engine == "native":
        monkeypatch.setenv("LITEEXPORT_NATIVE_RUN", str(build_dir(cpp_builds.wait("native-host")) /
                                                        "liteexport_native_run"))
    else:
        cpp_builds.wait("torch-extension")
    return engine


def _report(bundle: Path, *args: str) -> dict:  # type: ignore[type-arg]
    result = invoke(["profile", str(bundle), "--random", "1x3x32x32", "--runs", str(RUNS), "--json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)  # type: ignore[no-any-return]


def _described(report: dict) -> set[tuple[object, ...]]:  # type: ignore[type-arg]
    return {(i["method"], i["index"], i["op"], i["node"], i["location"], i["module_hierarchy"])
            for i in report["instructions"]}


@pytest.mark.parametrize("engine_ready", ["native", "torch"], indirect=True)
def test_engines_profile_the_instructions_runtime_py_names(tiny: Path, engine_ready: str) -> None:
    reference = _report(tiny)
    report = _report(tiny, "--engine", engine_ready)
    assert report["engine"] == engine_ready and report["runs"] == RUNS
    # the same instructions, each mapped through the debug table to the same line and module
    assert _described(report) == _described(reference)
    assert any(i["location"].endswith("examples/tiny_cnn.py:47") and i["op"] == "CONV2D"
               for i in report["instructions"])
    assert all(i["calls"] == RUNS and i["seconds"] > 0 for i in report["instructions"])
    seconds = [i["seconds"] for i in report["instructions"]]
    assert seconds == sorted(seconds, reverse=True)
    # the steps and the bytecode around them account for the method's time
    total = sum(o["share"] for o in report["ops"]) + report["other_share"]
    assert 0.98 < total < 1.02, total
    assert sum(i["seconds"] for i in report["instructions"]) <= report["total_seconds"] * 1.02


@pytest.mark.parametrize("engine_ready", ["native", "torch"], indirect=True)
@pytest.mark.parametrize(("args", "message"), [
    (["--random", "1x4x32x32"], "forward: instruction #0 CONV2D (slots [0, 1, 2] -> [7]): input 0: expected "
                                "float32 of shape (1, 3, 32, 32), got float32 of shape (1, 4, 32, 32)\n"
                                "Module hierarchy: top(TinyCNN).features(Sequential).0(Conv2d)"),
    # torch's lite interpreter does not count inputs itself (two inputs for one crashed it)
    (["--random", "1x3x32x32", "--random", "1x3"], "forward(x) takes 1 input(s), got 2"),
])
def test_engines_refuse_misfit_inputs_with_exit_6(tiny: Path, engine_ready: str, args: list[str],
                                                  message: str) -> None:
    result = invoke(["profile", str(tiny), *args, "--engine", engine_ready, "--runs", "1", "--warmup", "0"])
    assert result.exit_code == 6, result.output
    assert result.stderr == f"Error: {message}\n", result.stderr


def test_native_tool_missing_is_a_clear_error(tiny: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITEEXPORT_NATIVE_RUN", str(tmp_path / "nowhere"))
    result = invoke(["profile", str(tiny), "--random", "1x3x32x32", "--engine", "native"])
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Error: LITEEXPORT_NATIVE_RUN={tmp_path / 'nowhere'}: no such file\n", result.stderr


def test_native_tool_profile_json_and_threads(tiny: Path, tmp_path: Path) -> None:
    """The host tool's own flags: --profile OUT.json with --repeat, --warmup and --threads."""
    tool = build_dir(cpp_builds.wait("native-host")) / "liteexport_native_run"
    np.save(tmp_path / "x.npy", np.random.default_rng(0).random((1, 3, 32, 32), dtype=np.float32))
    out = tmp_path / "p.json"
    done = subprocess.run([str(tool), "--repeat", "4", "--warmup", "0", "--threads", "2", str(tiny),
                           str(tmp_path / "x.npy"), "--profile", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "profile of 4 runs: " in done.stdout and str(out) in done.stdout
    data = json.loads(out.read_text())
    assert data["runs"] == 4 and data["method"] == "forward"
    assert [i["index"] for i in sorted(data["instructions"], key=lambda i: i["index"])] == list(range(6))
    assert {i["calls"] for i in data["instructions"]} == {4}
