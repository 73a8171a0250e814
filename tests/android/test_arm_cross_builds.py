"""The native core on the ARM ABIs the app ships (arm64-v8a, armeabi-v7a), without a phone:
cross-built with Debian's g++-aarch64-linux-gnu / g++-arm-linux-gnueabihf (.ci/run installs
them; XNNPACK is cross-built from its pinned sources), its ctest suite run under qemu-user,
and its outputs on every test vector compared with the x86-64 build's within the parity tolerance
(XNNPACK's kernels differ between ABIs in vector width and FMA use, so not bit for bit)."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from tests import cpp_builds
from tests.android.test_android_sample import _run, build_dir, outputs

pytestmark = [
    pytest.mark.android, pytest.mark.slow,
    pytest.mark.skipif(bool(cpp_builds.cross_tools_missing()),
                       reason=f"needs {cpp_builds.cross_tools_missing()}: apt-get install g++-aarch64-linux-gnu "
                              "g++-arm-linux-gnueabihf qemu-user (as .ci/run does)"),
]

EMULATORS = {"aarch64": ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"],
             "armv7": ["qemu-arm", "-L", "/usr/arm-linux-gnueabihf"]}
MACHINES = {"aarch64": "ARM aarch64", "armv7": "ARM, EABI5"}


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_ctest_suite_under_qemu(arch: str) -> None:
    cpp_builds.wait("native-vectors")
    directory = build_dir(cpp_builds.wait(f"native-{arch}"))
    tests = directory / "liteexport_tests"
    kind = subprocess.run(["file", "-b", str(tests)], capture_output=True, text=True, check=False).stdout
    assert not kind or MACHINES[arch] in kind, kind  # really an ARM binary (when `file` is there)
    output = _run(["ctest", "--output-on-failure"], cwd=directory)
    summary = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", output)
    assert summary is not None and summary[2] == "0" and int(summary[3]) >= 6, output[-2000:]


@pytest.mark.parametrize("arch", ["aarch64", "armv7"])
def test_outputs_match_x86_64_within_the_parity_tolerance(arch: str) -> None:
    """XNNPACK's kernels use each ABI's vector widths and FMA, so results are no longer the same bits
    on every ABI (issue 21): they agree within the tolerance of the parity with runtime_py."""
    cpp_builds.wait("native-vectors")
    host = outputs([str(build_dir(cpp_builds.wait("native-host")) / "liteexport_tests")])
    arm = outputs([*EMULATORS[arch], str(build_dir(cpp_builds.wait(f"native-{arch}")) / "liteexport_tests")])
    assert len(host) > 20
    differing = []
    for (case, a), (arm_case, b) in zip(host, arm, strict=True):
        assert case == arm_case
        if len(a) != len(b) or not np.allclose(b, a, rtol=1e-4, atol=1e-5, equal_nan=True):
            worst = float(np.max(np.abs(np.subtract(a, b)))) if len(a) == len(b) else float("nan")
            differing.append(f"{case}: {len(b)} values vs {len(a)}, max |difference| {worst:.3g}")
    assert not differing, f"{len(differing)} of {len(host)} cases differ on {arch}:\n" + "\n".join(differing[:20])
