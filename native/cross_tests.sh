#!/usr/bin/env bash
# The native core on ARM without a phone: cross-built for aarch64 (arm64-v8a) and armv7
# (armeabi-v7a) with Debian's g++-aarch64-linux-gnu / g++-arm-linux-gnueabihf, its ctest suite run
# under qemu-user, and its outputs on every test vector compared with the host build's within the
# parity tolerance (rtol 1e-4, atol 1e-5): XNNPACK's kernels use each ABI's vector widths and FMA,
# so the bits may differ. XNNPACK is cross-built from its pinned sources (cmake/xnnpack.cmake).
#   native/cross_tests.sh [aarch64] [armv7]        (default: both)
# Needs: apt-get install g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user libgtest-dev (.ci/run does).
# Env: as run_tests.sh.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
arches=("$@")
if [[ ${#arches[@]} -eq 0 ]]; then arches=(aarch64 armv7); fi

"$here/run_tests.sh" host "${arches[@]}"
host_dir="$("$here/build.sh" host | tail -n 1)"
vectors="${VECTORS_DIR:-${BUILD_ROOT:-$here/build}/vectors}"
python="${PYTHON:-$( [ -x "$here/../.venv/bin/python" ] && echo "$here/../.venv/bin/python" || command -v python3 )}"
"$host_dir/liteexport_tests" outputs "$vectors" | grep '^outputs ' >"$host_dir/outputs.txt"
status=0
for arch in "${arches[@]}"; do
  dir="$("$here/build.sh" "$arch" | tail -n 1)"
  emulator=(qemu-aarch64 -L /usr/aarch64-linux-gnu)
  if [[ "$arch" == armv7 ]]; then emulator=(qemu-arm -L /usr/arm-linux-gnueabihf); fi
  "${emulator[@]}" "$dir/liteexport_tests" outputs "$vectors" | grep '^outputs ' >"$dir/outputs.txt"
  # |arm - x86| <= 1e-5 + 1e-4 |x86| per value, as the parity with runtime_py
  if "$python" - "$host_dir/outputs.txt" "$dir/outputs.txt" <<'PY'
import math, sys
host, arm = (open(p).read().splitlines() for p in sys.argv[1:3])
bad = [h.split()[1:4] for h, a in zip(host, arm)
       if h.split()[:4] != a.split()[:4] or len(h.split()) != len(a.split())
       or any(not (math.isnan(float(x)) and math.isnan(float(y))) and not abs(float(y) - float(x)) <= 1e-5 + 1e-4 * abs(float(x))
              for x, y in zip(h.split()[4:], a.split()[4:]))]
print("\n".join(" ".join(b) for b in bad[:20]), file=sys.stderr)
sys.exit(1 if bad or len(host) != len(arm) else 0)
PY
  then
    echo "== $arch: outputs within the parity tolerance of x86-64's on $(wc -l <"$dir/outputs.txt") cases"
  else
    echo "== $arch: outputs differ from x86-64's beyond the tolerance (cases above)" >&2
    status=1
  fi
done
exit "$status"
