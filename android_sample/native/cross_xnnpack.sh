#!/usr/bin/env bash
# Debian's XNNPACK for a cross build (aarch64 | armv7), unpacked into a directory of its own:
#   android_sample/native/cross_xnnpack.sh ARCH DIR     prints DIR (holding usr/include, usr/lib/<triplet>)
# The same snapshot as the host's libxnnpack-dev (0.0~git20220216.ae108ef), with pthreadpool and
# cpuinfo. Unpacked rather than installed: Debian's -dev packages of two architectures cannot be
# installed together (they are not Multi-Arch: same), and installing the arm64 ones would remove
# the host's. Needs `dpkg --add-architecture arm64 armhf` and `apt-get update` (.ci/run does both);
# downloads through apt, nothing else. A second call with the packages present does nothing.
set -euo pipefail
arch="${1:?usage: cross_xnnpack.sh aarch64|armv7 DIR}"
dir="${2:?usage: cross_xnnpack.sh aarch64|armv7 DIR}"
case "$arch" in
  aarch64) deb_arch=arm64 ;;
  armv7) deb_arch=armhf ;;
  *) echo "unknown arch $arch (aarch64|armv7)" >&2; exit 2 ;;
esac
packages=(libxnnpack0 libxnnpack-dev libpthreadpool0 libpthreadpool-dev libcpuinfo0)
stamp="$dir/.packages"
if [[ -f "$stamp" && "$(cat "$stamp")" == "${packages[*]}:$deb_arch" ]]; then echo "$dir"; exit 0; fi
rm -rf "$dir" && mkdir -p "$dir/debs"
# apt's output goes to a log, shown on failure only: callers take this script's (and build.sh's) last
# line as the directory. As root, apt's sandbox user could not write into the build tree: download as
# the caller instead.
(cd "$dir/debs" && apt-get download -qq -o APT::Sandbox::User="$(id -un)" "${packages[@]/%/:$deb_arch}") \
  >"$dir/download.log" 2>&1 || {
  cat "$dir/download.log" >&2
  echo "apt-get download of ${packages[*]} for $deb_arch failed: run 'dpkg --add-architecture $deb_arch && apt-get update' (.ci/run does)" >&2
  exit 1
}
for deb in "$dir"/debs/*.deb; do dpkg-deb -x "$deb" "$dir"; done
printf '%s' "${packages[*]}:$deb_arch" >"$stamp"
echo "$dir"
