"""The Android sample, built and tested on this machine: the native core (host and ASan+UBSan
builds, ctest) and the JNI bridge + Java API on the host JVM. Both compare against runtime_py on
the parity models and on malformed bundles. The builds come from tests/cpp_builds.py (once per
run, in the background while the rest of the suite runs)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import cpp_builds

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "android_sample"

pytestmark = [pytest.mark.android, pytest.mark.slow]


def _missing(*tools: str) -> list[str]:
    return [tool for tool in tools if shutil.which(tool) is None]


def _run(argv: list[str], cwd: Path = ROOT) -> str:
    env = {**os.environ, "PYTHON": sys.executable, "BUILD_ROOT": str(cpp_builds.BUILD_ROOT)}
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    return output


def build_dir(step: cpp_builds.Step) -> Path:
    """build.sh prints the core's build directory on its last line."""
    return Path(step.output.strip().splitlines()[-1])


@pytest.mark.skipif(bool(_missing("cmake", "g++")), reason=f"needs {_missing('cmake', 'g++')} to build C++")
@pytest.mark.parametrize("variant", ["host", "sanitize"])
def test_native_core_ctest(variant: str) -> None:
    cpp_builds.wait("native-vectors")
    directory = build_dir(cpp_builds.wait(f"native-{variant}"))
    output = _run(["ctest", "--output-on-failure"], cwd=directory)
    summary = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", output)
    assert summary is not None and summary[2] == "0" and int(summary[3]) >= 6, output[-2000:]
    assert "ERROR: AddressSanitizer" not in output and "runtime error:" not in output
    sanitized = "LITEEXPORT_SANITIZE:BOOL=ON" in (directory / "CMakeCache.txt").read_text()
    assert sanitized == (variant == "sanitize")


@pytest.mark.skipif(bool(_missing("cmake", "g++", "javac", "java")),
                    reason=f"needs {_missing('cmake', 'g++', 'javac', 'java')} to build and run the JNI bridge")
def test_java_api_through_jni_on_the_host_jvm() -> None:
    cpp_builds.wait("native-host")  # host_tests.sh then finds the JNI library built
    output = _run(["bash", str(SAMPLE / "host_tests.sh")])
    match = re.search(r"^(\d+) passed, (\d+) failed$", output, re.MULTILINE)
    assert match is not None, output[-2000:]
    assert int(match[1]) > 100 and match[2] == "0"
