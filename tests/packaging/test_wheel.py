"""The shared C++ (top-level native_format/) reaches the torch extension however liteexport is
installed: a wheel carries it as liteexport/_native_format (mapped at build time, setup.py), an
editable install reads it from the checkout. Both are built for real from a copy of the sources."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / "native_format"
# what a build of the package reads: the packages, the shared C++ and the build configuration
SOURCES = ("liteexport", "runtime_py", "bundle_format", "native_format", "setup.py", "pyproject.toml", "README.md")

# Prints where the torch backend looks for the shared C++, and whether every header it builds from is there.
LOOKUP = ("import liteexport.torch_backend as t; "
          "print(t.native_format_dir()); "
          "print(all(p.is_file() for p in (*t.SOURCE_HEADERS, *(t.GENERATED_DIR / n for n in t._GENERATED_HEADERS))))")


@pytest.fixture(scope="module")
def source_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the sources, so that building writes nothing into the checkout."""
    copy = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(ROOT / name, copy / name)
    return copy


def _pip(*args: str | Path, python: str | Path = sys.executable) -> None:
    result = subprocess.run([str(python), "-m", "pip", "--disable-pip-version-check", "-q", *map(str, args)],
                            capture_output=True, text=True, check=False, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr


def _lookup(python: str | Path, cwd: Path, pythonpath: Path | None = None) -> tuple[Path, bool]:
    env = {"PATH": "/usr/bin:/bin"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    result = subprocess.run([str(python), "-c", LOOKUP], cwd=cwd, env=env, capture_output=True, text=True,
                            check=False, timeout=60)
    assert result.returncode == 0, result.stderr
    folder, complete = result.stdout.split()
    return Path(folder), complete == "True"


def test_wheel_ships_the_shared_cpp_and_the_installed_backend_finds_it(source_copy: Path, tmp_path: Path) -> None:
    _pip("wheel", "--no-deps", "--no-build-isolation", "-w", tmp_path / "dist", source_copy)
    (wheel,) = (tmp_path / "dist").glob("liteexport-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shared = {f"liteexport/_native_format/{p.relative_to(SHARED).as_posix()}" for p in SHARED.rglob("*.h")}
    assert {"liteexport/_native_format/decoder/demo_program.h",
            "liteexport/_native_format/generated/demo_program_generated.h"} <= shared
    assert shared <= names
    assert not any(name.startswith("native_format/") for name in names)  # mapped, not a package of its own

    site = tmp_path / "site"
    _pip("install", "--no-deps", "--no-index", "--target", site, wheel)
    folder, complete = _lookup(sys.executable, cwd=tmp_path, pythonpath=site)
    assert folder == site / "liteexport" / "_native_format"
    assert complete


def test_editable_install_reads_the_checkouts_folder(source_copy: Path, tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = venv / "bin" / "python"
    # the test environment's packages (pip, setuptools, numpy, flatbuffers) serve the new one, as a
    # path: the .pth files there (an editable liteexport of another checkout among them) stay unread
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "test_environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    _pip("install", "--no-deps", "--no-build-isolation", "--no-index", "-e", source_copy, python=python)
    folder, complete = _lookup(python, cwd=tmp_path)
    assert folder == source_copy / "native_format"
    assert complete
