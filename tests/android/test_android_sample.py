"""The Android sample, built and tested on this machine: the native core (host and ASan+UBSan
builds, ctest) and the JNI bridge + Java API on the host JVM. Both compare against runtime_py on
the parity models and on malformed bundles. The builds come from tests/cpp_builds.py (once per
run, in the background while the rest of the suite runs)."""

from __future__ import annotations

import os
import platform
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


def outputs(argv: list[str], env: dict[str, str] | None = None) -> list[tuple[str, list[float]]]:
    """`liteexport_tests outputs`: per test vector, "<case#> <bundle> <method>" and its output values."""
    result = subprocess.run([*argv, "outputs", str(cpp_builds.VECTORS)], capture_output=True, text=True, check=False,
                            env={**os.environ, **(env or {})})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    cases = []
    for line in result.stdout.splitlines():
        if line.startswith("outputs "):
            words = line.split()
            cases.append((" ".join(words[1:4]), [float(v) for v in words[4:]]))
    return cases


@pytest.mark.skipif(bool(_missing("cmake", "g++")), reason=f"needs {_missing('cmake', 'g++')} to build C++")
@pytest.mark.parametrize("variant", ["host", "sanitize"])
def test_native_core_ctest(variant: str) -> None:
    cpp_builds.wait("native-vectors")
    directory = build_dir(cpp_builds.wait(f"native-{variant}"))
    output = _run(["ctest", "--output-on-failure"], cwd=directory)
    summary = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", output)
    assert summary is not None and summary[2] == "0" and int(summary[3]) >= 6, output[-2000:]
    assert "ERROR: AddressSanitizer" not in output and "runtime error:" not in output
    cache = next(d / "CMakeCache.txt" for d in (directory, directory.parent) if (d / "CMakeCache.txt").is_file())
    sanitized = "LITEEXPORT_SANITIZE:BOOL=ON" in cache.read_text()
    assert sanitized == (variant == "sanitize")


@pytest.mark.skipif(bool(_missing("cmake", "g++", "javac", "java")),
                    reason=f"needs {_missing('cmake', 'g++', 'javac', 'java')} to build and run the JNI bridge")
def test_java_api_through_jni_on_the_host_jvm() -> None:
    cpp_builds.wait("native-host")  # host_tests.sh then finds the JNI library built
    output = _run(["bash", str(SAMPLE / "host_tests.sh")])
    match = re.search(r"^(\d+) passed, (\d+) failed$", output, re.MULTILINE)
    assert match is not None, output[-2000:]
    assert int(match[1]) > 100 and match[2] == "0"


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86-64 has three GEMM kernel variants")
@pytest.mark.skipif(bool(_missing("cmake", "g++")), reason=f"needs {_missing('cmake', 'g++')} to build C++")
def test_x86_kernel_variants_give_the_same_bits() -> None:
    """The own GEMM's SSE2 and AVX2 kernels (the widest the CPU has is picked at run time; the
    environment variable caps it) give the AVX-512 kernels' bits, on the exact-order unit tests and
    every vector (each value printed exactly; XNNPACK's steps do not read the variable)."""
    cpp_builds.wait("native-vectors")
    tests = str(build_dir(cpp_builds.wait("native-host")) / "liteexport_tests")
    widest = _exact(outputs([tests]))
    assert len(widest) > 20
    for isa in ("sse2", "avx2"):
        env = {**os.environ, "LITEEXPORT_GEMM_ISA": isa}
        # every GoogleTest case: the unit suites and the vectors' parity, errors and loading
        unit = subprocess.run([tests, f"--vectors={cpp_builds.VECTORS}"], capture_output=True, text=True, env=env,
                              check=False)
        assert unit.returncode == 0 and "[  PASSED  ]" in unit.stdout, unit.stdout[-4000:] + unit.stderr
        assert _exact(outputs([tests], {"LITEEXPORT_GEMM_ISA": isa})) == widest, isa


def _exact(cases: list[tuple[str, list[float]]]) -> list[tuple[str, list[str]]]:
    """Each value as Python spells it exactly: equal text is equal bits, a NaN equal to a NaN
    (float NaNs never compare equal) and -0.0 apart from 0.0 (they do)."""
    return [(case, [repr(v) for v in values]) for case, values in cases]
