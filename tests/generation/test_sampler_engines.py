"""The token sampler gives the same token ids on runtime_py, the native core and Java (issue 34
item 3): for greedy, temperature, top-k, top-p and their combinations, on random logits of a
50- and a 32000-token vocabulary with ties, -inf, NaN and +inf entries, 200+ steps each. The
native core answers through its tool liteexport_native_sample, Java through SamplerTests' sample
mode on the host JVM (pure Java: no JNI library involved), and the aarch64 and armv7 builds of the
tool under qemu-user. Also: the exps give the same bits, bad configs give the same messages, and
the Java unit tests pass."""

from __future__ import annotations

import functools
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from runtime_py.sampling import SamplingConfig, sample, weight_exp
from tests import cpp_builds
from tests.android.test_android_sample import build_dir
from tests.android.test_arm_cross_builds import EMULATORS  # the ABIs the app ships, run under qemu-user

ROOT = Path(__file__).resolve().parents[2]
JAVA = ROOT / "android_sample" / "java" / "src"
MASK = (1 << 64) - 1

pytestmark = [pytest.mark.android, pytest.mark.slow]

_missing_cpp = [tool for tool in ("cmake", "g++") if shutil.which(tool) is None]
_missing_java = [tool for tool in ("javac", "java") if shutil.which(tool) is None]
needs_cpp = pytest.mark.skipif(bool(_missing_cpp), reason=f"needs {_missing_cpp} to build the native core")
needs_java = pytest.mark.skipif(bool(_missing_java), reason=f"needs {_missing_java} (a JDK)")


@dataclass(frozen=True)
class Case:
    name: str
    config: SamplingConfig
    first_step: int = 0


CASES = [
    Case("greedy", SamplingConfig()),
    Case("t0.7", SamplingConfig(temperature=0.7, seed=1)),
    Case("t1.0", SamplingConfig(temperature=1.0, seed=0)),
    Case("t1.3", SamplingConfig(temperature=1.3, seed=MASK)),
    Case("k1", SamplingConfig(temperature=1.0, top_k=1, seed=7)),
    Case("k5", SamplingConfig(temperature=1.0, top_k=5, seed=1 << 63)),
    Case("k40", SamplingConfig(temperature=1.0, top_k=40, seed=123456789)),
    Case("p0.5", SamplingConfig(temperature=1.0, top_p=0.5, seed=42)),
    Case("p0.9", SamplingConfig(temperature=1.0, top_p=0.9, seed=43)),
    Case("t0.7-k40-p0.9", SamplingConfig(temperature=0.7, top_k=40, top_p=0.9, seed=2024)),
    Case("t1.3-k5-p0.5", SamplingConfig(temperature=1.3, top_k=5, top_p=0.5, seed=99)),
    Case("t1.0-k40-p0.95-steps-wrap", SamplingConfig(temperature=1.0, top_k=40, top_p=0.95, seed=5), MASK - 99),
    Case("t0.05", SamplingConfig(temperature=0.05, seed=11)),
    Case("t4.0-p0.99", SamplingConfig(temperature=4.0, top_p=0.99, seed=12), 1000),
    # many candidates around the native core's and Java's shortcut (weights near 2^-53 are not
    # sorted), and a top_k beyond the candidates that count and beyond the vocabulary
    Case("t0.2-k1000", SamplingConfig(temperature=0.2, top_k=1000, seed=13)),
    Case("t0.1-k40-p0.99", SamplingConfig(temperature=0.1, top_k=40, top_p=0.99, seed=14)),
]


def _logits(vocab: int, rows: int, seed: int) -> np.ndarray:
    """Random rows with ties (values rounded), some -inf and NaN entries, a few +inf rows and a
    row with a single finite value."""
    rng = np.random.default_rng(seed)
    scale = 3.0 if vocab < 1000 else 4.0
    logits = rng.standard_normal((rows, vocab)) * scale
    logits[::3] = np.round(logits[::3] * 2) / 2  # every third row: many equal values
    logits[rng.random((rows, vocab)) < 0.03] = -np.inf
    logits[rng.random((rows, vocab)) < 0.03] = np.nan
    logits[5, [3, 17]] = np.inf
    logits[6, :] = -np.inf
    logits[6, vocab // 2] = 1.0
    logits[7, :] = logits[7, 0]  # all equal
    return logits.astype(np.float32)


VOCABS = {50: _logits(50, 240, 50), 32000: _logits(32000, 200, 32000)}


@pytest.fixture(scope="module")
def native_tool() -> Path:
    return build_dir(cpp_builds.wait("native-host")) / "liteexport_native_sample"


@pytest.fixture(scope="module")
def java_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """org.liteexport (as the app compiles it: Java 8) and the sampler's tests, compiled with javac."""
    classes = tmp_path_factory.mktemp("java_classes")
    sources = sorted(str(p) for p in (JAVA / "main" / "java").rglob("*.java"))
    test_dir = JAVA / "test" / "java" / "org" / "liteexport"
    tests = [str(test_dir / name) for name in ("TestRunner.java", "SamplerTests.java")]
    for release, files in (("8", sources), ("11", tests)):
        result = subprocess.run(["javac", "-Xlint:all", "-Werror", "--release", release, "-cp", str(classes),
                                 "-d", str(classes), *files], capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stdout + result.stderr
    return classes


@functools.cache
def _python(vocab: int, case: Case) -> list[int]:
    """runtime_py's tokens for VOCABS[vocab] (computed once: the ARM tests compare them too)."""
    return [sample(row, case.config, (case.first_step + r) & MASK) for r, row in enumerate(VOCABS[vocab])]


def _args(temperature: float, top_k: int, top_p: float, seed: int) -> list[str]:
    """A config as the engines' command lines take it (repr: the exact double)."""
    return [repr(temperature), str(top_k), repr(top_p), str(seed)]


def _case_args(case: Case) -> list[str]:
    return _args(case.config.temperature, case.config.top_k, case.config.top_p, case.config.seed)


def _native(tool: Path, logits: np.ndarray, args: list[str], first_step: int,
            tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "logits.npy"
    np.save(path, logits)
    temperature, top_k, top_p, seed = args
    return subprocess.run([str(tool), "--temperature", temperature, "--top-k", top_k, "--top-p", top_p, "--seed", seed,
                           "--first-step", str(first_step), str(path)],
                          capture_output=True, text=True, check=False, timeout=300)


def _java(classes: Path, logits: np.ndarray, args: list[str], first_step: int,
          tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "logits.f32"
    logits.astype("<f4").tofile(path)
    rows, vocab = logits.shape
    return subprocess.run(["java", "-cp", str(classes), "org.liteexport.SamplerTests", "sample", str(path), str(rows),
                           str(vocab), *args, str(first_step)],
                          capture_output=True, text=True, check=False, timeout=300)


def _ids(result: subprocess.CompletedProcess[str]) -> list[int]:
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return [int(line) for line in result.stdout.split()]


@needs_cpp
@needs_java
@pytest.mark.parametrize("vocab", sorted(VOCABS))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_same_tokens_on_every_engine(case: Case, vocab: int, native_tool: Path, java_classes: Path,
                                     tmp_path: Path) -> None:
    logits = VOCABS[vocab]
    expected = _python(vocab, case)
    assert len(expected) >= 200
    native = _ids(_native(native_tool, logits, _case_args(case), case.first_step, tmp_path))
    java = _ids(_java(java_classes, logits, _case_args(case), case.first_step, tmp_path))
    for engine, ids in (("native", native), ("java", java)):
        assert len(ids) == len(expected), engine
        differ = [r for r in range(len(expected)) if ids[r] != expected[r]]
        assert not differ, f"{engine}: {len(differ)} of {len(expected)} rows differ, first row {differ[0]}: " \
                           f"{ids[differ[0]]} vs runtime_py {expected[differ[0]]}"
    # the cases exercise what they name: a sampling config does not always pick the greedy token
    greedy = _python(vocab, CASES[0])
    if case.config.greedy or case.config.top_k == 1:
        assert expected == greedy
    else:
        not_greedy = sum(e != g for e, g in zip(expected, greedy, strict=True))
        assert not_greedy > (len(expected) // 20 if case.config.temperature >= 0.5 else 0), not_greedy


@needs_cpp
@needs_java
def test_same_exp_bits_on_every_engine(native_tool: Path, java_classes: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.random(20000) * 720.0, -rng.random(5000) * 2.0, np.linspace(-708.01, -707.99, 101),
                        [0.0, -0.0, -np.inf, np.nan, -1e-300, -5e-324, -0.34657359027997264, -0.5]])
    expected = weight_exp(x).view(np.int64).tolist()
    path = tmp_path / "x.npy"
    np.save(path, x.view(np.int64))
    native = subprocess.run([str(native_tool), "--exp", str(path)], capture_output=True, text=True, check=False)
    x.view(np.int64).astype("<i8").tofile(tmp_path / "x.i64")
    java = subprocess.run(["java", "-cp", str(java_classes), "org.liteexport.SamplerTests", "exp",
                           str(tmp_path / "x.i64")], capture_output=True, text=True, check=False)
    assert _ids(native) == expected
    assert _ids(java) == expected


@needs_cpp
@needs_java
@pytest.mark.parametrize(("fields", "message"), [
    ({"temperature": -0.5}, "temperature must be a finite number >= 0 (0: greedy), got -0.5"),
    ({"temperature": 1.0, "top_k": -3}, "top_k must be >= 0 (0: off), got -3"),
    ({"temperature": 1.0, "top_p": 1.5}, "top_p must be in (0, 1] (1: off), got 1.5"),
    ({"temperature": 1.0, "top_p": 0.0}, "top_p must be in (0, 1] (1: off), got 0.0"),
    ({"logits": [np.nan, -np.inf, np.nan]}, "logits have no value above -inf: all 3 are NaN or -inf"),
])
def test_same_errors_on_every_engine(fields: dict[str, object], message: str, native_tool: Path, java_classes: Path,
                                     tmp_path: Path) -> None:
    logits = np.array([fields.pop("logits", [0.5, 1.5])], dtype=np.float32)
    config: dict[str, float] = {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "seed": 0, **fields}  # type: ignore[dict-item]
    # runtime_py refuses the config when it is made (or the logits when sampled)
    with pytest.raises(ValueError) as info:
        sample(logits[0], SamplingConfig(**config), 0)  # type: ignore[arg-type]
    assert str(info.value) == message
    args = _args(config["temperature"], int(config["top_k"]), config["top_p"], int(config["seed"]))
    for engine, result in (("native", _native(native_tool, logits, args, 0, tmp_path)),
                           ("java", _java(java_classes, logits, args, 0, tmp_path))):
        assert result.returncode == 6, (engine, result.stdout, result.stderr)
        assert f"Error: {message}" in result.stdout + result.stderr, engine


@pytest.mark.skipif(bool(cpp_builds.cross_tools_missing()),
                    reason=f"needs {cpp_builds.cross_tools_missing()}: apt-get install g++-aarch64-linux-gnu "
                           "g++-arm-linux-gnueabihf qemu-user (as .ci/run does)")
@pytest.mark.parametrize("arch", sorted(EMULATORS))
def test_same_tokens_and_exp_bits_on_arm(arch: str, tmp_path: Path) -> None:
    """The ARM builds' sampler gives runtime_py's tokens and exp bits too (no libm exp, no FMA)."""
    tool = build_dir(cpp_builds.wait(f"native-{arch}")) / "liteexport_native_sample"
    wrapper = tmp_path / "emulated_tool"
    wrapper.write_text("#!/bin/sh\nexec " + " ".join([*EMULATORS[arch], str(tool)]) + ' "$@"\n')
    wrapper.chmod(0o755)
    for vocab, logits in VOCABS.items():
        for case in CASES:
            assert _ids(_native(wrapper, logits, _case_args(case), case.first_step, tmp_path)) == \
                _python(vocab, case), (arch, vocab, case.name)
    x = np.concatenate([-np.random.default_rng(1).random(20000) * 720.0, [0.0, -0.0, -np.inf, np.nan, -1e-300]])
    np.save(tmp_path / "x.npy", x.view(np.int64))
    assert _ids(subprocess.run([str(wrapper), "--exp", str(tmp_path / "x.npy")], capture_output=True, text=True,
                               check=False)) == weight_exp(x).view(np.int64).tolist()


@needs_java
def test_java_sampler_unit_tests(java_classes: Path) -> None:
    result = subprocess.run(["java", "-cp", str(java_classes), "org.liteexport.SamplerTests"], capture_output=True,
                            text=True, check=False, timeout=300)
    assert result.returncode == 0 and result.stdout.strip().endswith(" passed, 0 failed"), result.stdout + result.stderr
    assert int(result.stdout.split()[-4]) >= 9
