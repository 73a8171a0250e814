"""The C++ artifacts the tests use, each built once per run and in the background.

Building is most of the suite's time on a 2-core machine (the native core in four variants, the
torch extension), and none of it needs the Python tests' CPU core. So when a session collects
tests that need a build, the builds start right after collection, in background lanes (one after
another within a lane), and those tests are moved to the end of the session: the rest of the
suite runs meanwhile. A test then waits for its artifact with :func:`wait` (a failed build fails
the test with the build's log). Nothing is built twice: every variant goes to one build directory
(``native/build.sh``), the torch extension to torch's extension cache.

Hooked into pytest by tests/conftest.py (``pytest_collection_modifyitems``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NATIVE = ROOT / "native"
BUILD_ROOT = Path(os.environ.get("BUILD_ROOT", NATIVE / "build"))
VECTORS = BUILD_ROOT / "vectors"

# Test files that need a build (they run last, so the builds overlap the rest of the suite).
# (tests/text_models/ compares the native core too: it waits for the host build)
LATE_TESTS = ("tests/android/", "tests/torch_backend/", "tests/to_backend/", "tests/liteexport/test_verify.py",
              "tests/text_models/", "tests/docs/")


@dataclass
class Step:
    """One command of a lane; :meth:`wait` blocks until it ran."""

    name: str
    argv: list[str]
    done: threading.Event = field(default_factory=threading.Event)
    returncode: int | None = None
    output: str = ""
    seconds: float = 0.0

    def run(self) -> None:
        start = time.monotonic()
        env = {**os.environ, "PYTHON": sys.executable, "BUILD_ROOT": str(BUILD_ROOT), "VECTORS_DIR": str(VECTORS)}
        try:
            result = subprocess.run(self.argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
            self.returncode, self.output = result.returncode, result.stdout + result.stderr
        except OSError as exc:
            self.returncode, self.output = -1, str(exc)
        self.seconds = time.monotonic() - start
        self.done.set()


def _build(variant: str) -> Step:
    return Step(f"native-{variant}", ["bash", str(NATIVE / "build.sh"), variant])


# Two lanes: the torch extension (one translation unit: one core) and the native variants, in the
# order tests/android needs them.
_LOAD_TORCH_BACKEND = "from liteexport.torch_backend import load_torch_backend; load_torch_backend()"
TORCH_LANE = [Step("torch-extension", [sys.executable, "-c", _LOAD_TORCH_BACKEND])]
NATIVE_LANE = [
    Step("native-vectors", ["bash", "-c", f'rm -rf "{VECTORS}" && mkdir -p "{VECTORS}" && '
                            f'"{sys.executable}" "{NATIVE / "tests" / "make_vectors.py"}" "{VECTORS}"']),
    _build("host"), _build("sanitize"), _build("aarch64"), _build("armv7"),
]
STEPS = {step.name: step for step in (*TORCH_LANE, *NATIVE_LANE)}
_started: set[str] = set()


def cross_tools_missing() -> list[str]:
    tools = ("aarch64-linux-gnu-g++", "arm-linux-gnueabihf-g++", "qemu-aarch64", "qemu-arm")
    return [tool for tool in tools if shutil.which(tool) is None]


def _start(name: str, lane: list[Step]) -> None:
    if name in _started:
        return
    _started.add(name)
    steps = lane
    if lane is NATIVE_LANE and cross_tools_missing():  # those tests skip, saying what to install
        steps = [s for s in lane if s.name not in ("native-aarch64", "native-armv7")]

    def run_lane() -> None:
        for step in steps:
            step.run()

    threading.Thread(target=run_lane, name=f"build-{name}", daemon=True).start()


def _relative(item: pytest.Item) -> str:
    path = Path(str(item.path)).resolve()
    return path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.as_posix()


def _is_late(item: pytest.Item) -> bool:
    return _relative(item).startswith(LATE_TESTS)


def reorder_and_start(items: list[pytest.Item]) -> None:
    """Moves the tests that need builds to the end and starts the builds they need."""
    late = [item for item in items if _is_late(item)]
    if not late:
        return
    items[:] = [item for item in items if not _is_late(item)] + late
    paths = {_relative(item) for item in late}
    if paths & {"tests/android/test_android_sample.py", "tests/android/test_arm_cross_builds.py"}:
        _start("native", NATIVE_LANE)
    # the docs' examples use the torch backend too (--lower, verify --engine all, load_torch_backend)
    if any(p.startswith(("tests/torch_backend/", "tests/to_backend/", "tests/docs/")) or p.endswith("test_verify.py")
           for p in paths):
        _start("torch", TORCH_LANE)


def wait(name: str, timeout: float = 3600) -> Step:
    """The finished build step ``name`` (started now if no hook did); fails the test if it failed."""
    step = STEPS[name]
    if name == "torch-extension":
        _start("torch", TORCH_LANE)
    else:
        _start("native", NATIVE_LANE)
    assert step.done.wait(timeout), f"{name} did not finish within {timeout} s"
    assert step.returncode == 0, f"{name} failed ({' '.join(step.argv)}):\n{step.output[-4000:]}"
    return step
