"""The Android sample, built and tested on this machine: the native core (normal and
ASan+UBSan builds, ctest) and the JNI bridge + Java API on the host JVM. Both compare
against runtime_py on the parity models and on malformed bundles."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "android_sample"

pytestmark = [pytest.mark.android, pytest.mark.slow]


def _missing(*tools: str) -> list[str]:
    return [tool for tool in tools if shutil.which(tool) is None]


def _run(script: Path, extra_env: dict[str, str] | None = None) -> str:
    env = {**os.environ, "PYTHON": sys.executable, **(extra_env or {})}
    result = subprocess.run(["bash", str(script)], cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    return output


@pytest.mark.skipif(bool(_missing("cmake", "g++")), reason=f"needs {_missing('cmake', 'g++')} to build C++")
def test_native_core_normal_and_sanitizer_builds() -> None:
    output = _run(SAMPLE / "native" / "run_tests.sh")
    runs = re.findall(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", output)
    assert len(runs) == 2, output[-2000:]  # the normal build and the sanitizer build
    assert all(failed == "0" and int(total) > 0 for _, failed, total in runs)
    assert "ERROR: AddressSanitizer" not in output and "runtime error:" not in output


@pytest.mark.skipif(bool(_missing("cmake", "g++", "javac", "java")),
                    reason=f"needs {_missing('cmake', 'g++', 'javac', 'java')} to build and run the JNI bridge")
def test_java_api_through_jni_on_the_host_jvm() -> None:
    output = _run(SAMPLE / "host_tests.sh")
    match = re.search(r"^(\d+) passed, (\d+) failed$", output, re.MULTILINE)
    assert match is not None, output[-2000:]
    assert int(match[1]) > 100 and match[2] == "0"
