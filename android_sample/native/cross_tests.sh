#!/usr/bin/env bash
# The native core on ARM without a phone: cross-built for aarch64 (arm64-v8a) and armv7
# (armeabi-v7a) with Debian's g++-aarch64-linux-gnu / g++-arm-linux-gnueabihf, its ctest suite run
# under qemu-user, and its outputs on every test vector compared bit for bit with the host
# build's (the core is built with -ffp-contract=off and fixed summation orders, so an ABI does not
# change a result; see CMakeLists.txt).
#   android_sample/native/cross_tests.sh [aarch64] [armv7]        (default: both)
# Needs: apt-get install g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user (.ci/run does).
# Env: as run_tests.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
arches=("$@")
if [[ ${#arches[@]} -eq 0 ]]; then arches=(aarch64 armv7); fi

"$here/run_tests.sh" host "${arches[@]}"
host_dir="$("$here/build.sh" host | tail -n 1)"
vectors="${VECTORS_DIR:-${BUILD_ROOT:-$here/../build}/vectors}"
"$host_dir/liteexport_tests" digest "$vectors" | grep '^digest ' >"$host_dir/digests.txt"
status=0
for arch in "${arches[@]}"; do
  dir="$("$here/build.sh" "$arch" | tail -n 1)"
  emulator=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
  if [[ "$arch" == armv7 ]]; then emulator=(qemu-arm -L /usr/arm-linux-gnueabihf); fi
  "${emulator[@]}" "$dir/liteexport_tests" digest "$vectors" | grep '^digest ' >"$dir/digests.txt"
  if diff "$host_dir/digests.txt" "$dir/digests.txt" >"$dir/digests.diff"; then
    echo "== $arch: outputs bit-identical to x86-64 on $(wc -l <"$dir/digests.txt") cases"
  else
    echo "== $arch: outputs differ from x86-64:" >&2
    cat "$dir/digests.diff" >&2
    status=1
  fi
done
exit "$status"
