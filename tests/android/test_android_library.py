"""The Android library module (:liteexport, an AAR) and the sample app that depends on it,
checked as far as a machine without the Android SDK, the Android Gradle plugin or network access
allows: Gradle itself cannot run here, so the Gradle files are checked statically (the structure
AGP 8.7 needs, every path they name exists, the Kotlin script syntax when kotlinc is installed),
the host-compilable API is compiled with javac, and the Android-only sources are checked to use
only the SDK classes listed below and API members that exist. Nothing Android-only is compiled:
no SDK jar (a stub would prove nothing about the real SDK)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "android_sample"
APP = SAMPLE / "app"
LIBRARY = APP / "liteexport"
JAVA_MAIN = SAMPLE / "java" / "src" / "main" / "java"
JAVA_ANDROID = SAMPLE / "java" / "src" / "android" / "java"
JNI_SOURCES = sorted((SAMPLE / "jni").glob("*.cpp"))  # liteexport_jni.cpp and tensors.cpp

pytestmark = pytest.mark.android

# The Android SDK classes the Android-only sources may use, each present since an API level
# <= minSdk 24 (developer.android.com reference: "Added in API level"). A new import fails
# test_android_sources_use_only_listed_sdk_classes until someone checks it and adds it here.
SDK_CLASSES = {
    "android.content.Context": 1,
    "android.content.res.AssetFileDescriptor": 3,
    "android.content.res.AssetManager": 1,
    "android.graphics.Bitmap": 1,
}
MIN_SDK = 24


def _kts(path: Path) -> str:
    """The script without comments, so a commented-out line never satisfies a check."""
    text = path.read_text()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.DOTALL)
    return "\n".join(re.sub(r"//.*$", "", line) for line in text.splitlines())


def _block(text: str, opener: str) -> str:
    """The body of the first `opener {` ... `}` block (braces balanced), or "" if absent."""
    start = text.find(opener + " {")
    if start < 0:
        start = text.find(opener + "{")
    if start < 0:
        return ""
    depth = 0
    for i in range(text.index("{", start), len(text)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[text.index("{", start) + 1 : i]
    raise AssertionError(f"unbalanced block {opener}")


def test_settings_include_the_library_and_the_app() -> None:
    settings = _kts(APP / "settings.gradle.kts")
    assert re.search(r'include\(":liteexport"\)', settings)
    assert re.search(r'include\(":app"\)', settings)


def test_top_level_build_declares_both_plugins_at_one_version() -> None:
    build = _kts(APP / "build.gradle.kts")
    versions = dict(re.findall(r'id\("(com\.android\.(?:application|library))"\) version "([^"]+)" apply false', build))
    assert versions == {"com.android.application": "8.7.3", "com.android.library": "8.7.3"}


def test_library_is_an_android_library_published_as_an_aar() -> None:
    build = _kts(LIBRARY / "build.gradle.kts")
    plugins = _block(build, "plugins")
    assert 'id("com.android.library")' in plugins and 'id("maven-publish")' in plugins
    android = _block(build, "android")
    assert re.search(r'namespace = "org\.liteexport"', android)
    assert re.search(r"compileSdk = 35\b", android)
    assert re.search(r"minSdk = 24\b", _block(android, "defaultConfig"))
    assert re.search(r'ndkVersion = "27\.', android)
    # AGP's publishing of the release variant (with sources), and the publication made from it
    assert re.search(r'singleVariant\("release"\)\s*\{\s*withSourcesJar\(\)', _block(android, "publishing"))
    publications = _block(_block(_block(build, "afterEvaluate"), "publishing"), "publications")
    assert re.search(r'create<MavenPublication>\("release"\)', publications)
    assert 'from(components["release"])' in publications
    assert re.search(r'artifactId = "liteexport-android"', publications)


def test_every_path_the_library_build_names_exists() -> None:
    build = _kts(LIBRARY / "build.gradle.kts")
    cmake = re.search(r'cmake \{\s*path = file\("([^"]+)"\)', build)
    assert cmake is not None
    assert (LIBRARY / cmake[1]).resolve() == (SAMPLE / "jni" / "CMakeLists.txt").resolve()
    source_dirs = re.search(r"java\.srcDirs\(([^)]*)\)", build)
    assert source_dirs is not None
    dirs = {(LIBRARY / d).resolve() for d in re.findall(r'"([^"]+)"', source_dirs[1])}
    assert dirs == {JAVA_MAIN.resolve(), JAVA_ANDROID.resolve()}
    rules = re.search(r'consumerProguardFiles\("([^"]+)"\)', build)
    assert rules is not None and (LIBRARY / rules[1]).is_file()
    assert (LIBRARY / "src" / "main" / "AndroidManifest.xml").is_file()
    abis = re.search(r"abiFilters \+= listOf\(([^)]*)\)", build)
    assert abis is not None
    assert set(re.findall(r'"([^"]+)"', abis[1])) == {"arm64-v8a", "armeabi-v7a", "x86_64"}


def test_the_app_depends_on_the_library_and_builds_nothing_of_it() -> None:
    build = _kts(APP / "app" / "build.gradle.kts")
    assert re.search(r'implementation\(project\(":liteexport"\)\)', _block(build, "dependencies"))
    assert "externalNativeBuild" not in build and "CMakeLists" not in build
    assert "srcDir" not in build and "../java" not in build
    # uncompressed in the APK, so that AndroidModules.load maps the asset in place
    assert re.search(r'noCompress \+= "ptl"', _block(_block(build, "android"), "androidResources"))


def test_main_activity_loads_from_assets_without_copying() -> None:
    sample_sources = APP / "app" / "src" / "main" / "java" / "org" / "liteexport" / "sample"
    activity = (sample_sources / "MainActivity.java").read_text()
    assert "AndroidModules.load(this, BUNDLE_ASSET)" in activity
    assert 'BUNDLE_ASSET = "tiny_cnn.ptl"' in activity
    for copying in ("getFilesDir", "FileOutputStream", "getAssets().open", "renameTo"):
        assert copying not in activity, copying
    assert 'extraFile(LABELS_FILE)' in activity and "TensorImageUtils.bitmapToFloat32Tensor" in activity
    assert (APP / "app" / "src" / "main" / "assets" / "tiny_cnn.ptl").is_file()


@pytest.mark.skipif(shutil.which("kotlinc") is None, reason="kotlinc not installed (apt-get install kotlin)")
def test_gradle_scripts_parse_as_kotlin(tmp_path: Path) -> None:
    """kotlinc compiles each script without Gradle's API on the classpath: every name Gradle and
    AGP provide (plugins, android, implementation...) is an unresolved reference, and those are
    the only errors allowed. A syntax error (a brace, quote or parenthesis out of place) is
    reported as another kind of error and fails the test."""
    scripts = [APP / "settings.gradle.kts", APP / "build.gradle.kts", APP / "app" / "build.gradle.kts",
               LIBRARY / "build.gradle.kts"]
    for script in scripts:
        result = subprocess.run(["kotlinc", str(script), "-d", str(tmp_path / script.parent.name)],
                                capture_output=True, text=True, check=False, timeout=300)
        errors = [line for line in result.stderr.splitlines() if ": error: " in line]
        assert errors, f"kotlinc reported nothing on {script}: it did not compile it as a script\n{result.stderr}"
        others = [e for e in errors if not re.search(r": error: unresolved reference: ", e)]
        assert not others, f"{script}:\n" + "\n".join(others)


def test_consumer_rules_keep_every_name_the_jni_bridge_looks_up() -> None:
    rules = (LIBRARY / "consumer-rules.pro").read_text()
    kept = {m[1]: m[2] for m in re.finditer(r"^-keep (?:class|enum) (org\.liteexport\.\w+) \{(.*?)\}", rules,
                                             re.MULTILINE | re.DOTALL)}
    jni = "\n".join(source.read_text() for source in JNI_SOURCES)
    classes = set(re.findall(r'"org/liteexport/(\w+)"', jni))
    assert {"Module", "Tensor", "DType", "FormatException", "InputException", "ExecutionException"} <= classes
    for name in classes:
        assert f"org.liteexport.{name}" in kept, f"{name} is looked up by the bridge but not kept"
    assert "native <methods>;" in kept["org.liteexport.Module"]
    # fields and methods looked up by name: GetFieldID(cls, "name", ...) / GetMethodID(cls, "name", ...)
    members = set(re.findall(r'Get(?:Static)?(?:Field|Method)ID\([^,]+, "(\w+)"', jni)) - {"<init>"}
    assert {"data", "shape", "dtype", "buffer", "values", "ofValues", "code", "setStructured"} <= members
    text = "\n".join(kept.values())
    for member in members:
        assert re.search(rf"\b{member}\b", text), f"member {member} is looked up by the bridge but not kept"


def test_every_native_method_of_module_is_registered() -> None:
    module = (JAVA_MAIN / "org" / "liteexport" / "Module.java").read_text()
    declared = set(re.findall(r"private static native \S+ (\w+)\(", module))
    bridge = (SAMPLE / "jni" / "liteexport_jni.cpp").read_text()  # JNI_OnLoad registers them
    registered = set(re.findall(r'\{const_cast<char\*>\("(\w+)"\)', bridge))
    assert {"nativeLoadFd", "nativeLoadBuffer", "nativeExtraFileNames", "nativeExtraFile"} <= declared
    assert declared == registered


def test_every_native_method_of_llm_module_is_registered() -> None:
    llm = (JAVA_MAIN / "org" / "liteexport" / "LlmModule.java").read_text()
    declared = set(re.findall(r"private static native \S+ (\w+)\(", llm))
    bridge = (SAMPLE / "jni" / "generation_jni.cpp").read_text()  # register_generation_natives
    registered = set(re.findall(r'\{const_cast<char\*>\("(\w+)"\)', bridge))
    assert {"nativeCreate", "nativeGenerate", "nativeStop", "nativeDestroy"} <= declared
    assert declared == registered


def test_host_api_has_no_android_dependency_and_compiles_with_javac(tmp_path: Path) -> None:
    if shutil.which("javac") is None:
        pytest.skip("javac not installed")
    sources = sorted(JAVA_MAIN.rglob("*.java"))
    for source in sources:
        assert not re.search(r"^import android\.", source.read_text(), re.MULTILINE), source
    result = subprocess.run(["javac", "-Xlint:all", "-Werror", "--release", "8", "-d", str(tmp_path),
                             *map(str, sources)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "org" / "liteexport" / "DType.class").is_file()


def _android_sources() -> list[Path]:
    sources = sorted(JAVA_ANDROID.rglob("*.java"))
    assert {p.name for p in sources} == {"AndroidModules.java", "TensorImageUtils.java"}
    return sources


def test_android_sources_use_only_listed_sdk_classes() -> None:
    for source in _android_sources():
        imports = re.findall(r"^import ([\w.]+);", source.read_text(), re.MULTILINE)
        for name in imports:
            if name.startswith("android."):
                assert name in SDK_CLASSES, f"{source.name} imports {name}: check its API level, then list it"
                assert SDK_CLASSES[name] <= MIN_SDK
            else:
                assert name.startswith(("java.", "org.liteexport.")), f"{source.name} imports {name}"


def test_android_sources_call_only_api_members_that_exist(tmp_path: Path) -> None:
    """Every Module/Tensor/ImageNormalization/LoadOptions/exception member the Android-only code
    calls is a public member of the compiled host API (javap), with the argument count used."""
    if shutil.which("javac") is None or shutil.which("javap") is None:
        pytest.skip("javac/javap not installed")
    subprocess.run(["javac", "--release", "8", "-d", str(tmp_path), *map(str, JAVA_MAIN.rglob("*.java"))], check=True)
    api_classes = ["Module", "Tensor", "ImageNormalization", "LoadOptions", "FormatException", "DType"]
    listing = subprocess.run(["javap", "-public", "-cp", str(tmp_path),
                              *[f"org.liteexport.{c}" for c in api_classes]],
                             capture_output=True, text=True, check=True).stdout
    public: dict[str, set[int]] = {}
    current = ""
    for line in listing.splitlines():
        head = re.match(r".*\b(?:class|enum) org\.liteexport\.(\w+)", line)
        if head:
            current = head[1]
            continue
        member = re.search(r"[\w.<>\[\]]+ (\w+)\(([^)]*)\)", line)
        if member and current:
            arity = 0 if not member[2].strip() else member[2].count(",") + 1
            name = member[1].split(".")[-1]
            public.setdefault(f"{current}.{name}", set()).add(arity)
    calls = set()
    for source in _android_sources():
        text = re.sub(r"/\*.*?\*/|//[^\n]*", "", source.read_text(), flags=re.DOTALL)
        for cls, name, args in re.findall(r"\b(Module|Tensor|ImageNormalization)\.(\w+)\(([^;]*?)\)\s*[;)]", text):
            depth, arity = 0, (1 if args.strip() else 0)
            for ch in args:
                depth += {"(": 1, ")": -1}.get(ch, 0)
                arity += ch == "," and depth == 0
            assert arity in public.get(f"{cls}.{name}", set()), f"{source.name}: {cls}.{name} with {arity} argument(s)"
            calls.add(f"{cls}.{name}/{arity}")
        for cls in re.findall(r"new (\w+)\(", text):
            assert cls in {"LoadOptions", "FormatException", "NullPointerException", "IllegalArgumentException"}, (
                f"{source.name}: new {cls}")
    # the calls the scan must find (so that a regex gone blind fails here rather than passing)
    assert calls == {"Module.load/4", "Module.load/2", "ImageNormalization.toTensor/5"}, calls
