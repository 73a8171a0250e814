"""The native core on the ARM ABIs the app ships (arm64-v8a, armeabi-v7a), without a phone:
cross-built with Debian's g++-aarch64-linux-gnu / g++-arm-linux-gnueabihf (.ci/run installs
them), its ctest suite run under qemu-user, and its outputs on every test vector compared bit for
bit with the x86-64 build's (-ffp-contract=off and the kernels' fixed summation orders make an
ABI change no result; see android_sample/native/CMakeLists.txt)."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests import cpp_builds
from tests.android.test_android_sample import _run, build_dir, digests

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
def test_outputs_bit_identical_to_x86_64(arch: str) -> None:
    cpp_builds.wait("native-vectors")
    host = digests([str(build_dir(cpp_builds.wait("native-host")) / "liteexport_tests")])
    arm = digests([*EMULATORS[arch], str(build_dir(cpp_builds.wait(f"native-{arch}")) / "liteexport_tests")])
    assert len(host) > 20
    differing = [f"{h}  vs  {a.split()[-1]}" for h, a in zip(host, arm, strict=True) if h != a]
    assert not differing, f"{len(differing)} of {len(host)} cases differ on {arch}:\n" + "\n".join(differing[:20])
