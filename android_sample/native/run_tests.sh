#!/usr/bin/env bash
# Configure, build and test the native core twice: a normal build (build/) and an
# ASan+UBSan build (build-sanitize/). Test vectors are made once by tests/make_vectors.py
# (needs torch) and shared by both builds.
# Env: PYTHON (default: the checkout's .venv/bin/python, else python3), FLATBUFFERS_INCLUDE_DIR (optional).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"

python="${PYTHON:-$( [ -x "$repo/.venv/bin/python" ] && echo "$repo/.venv/bin/python" || command -v python3 )}"
fb_dir="${FLATBUFFERS_INCLUDE_DIR:-$("$python" -c 'import sys, os; print(os.path.join(sys.prefix, "include"))')}"
jobs="$(nproc 2>/dev/null || echo 4)"
vectors="$here/build/vectors"

t0=$SECONDS
mkdir -p "$vectors"
(cd "$repo" && "$python" "$here/tests/make_vectors.py" "$vectors")
echo "== vectors: $((SECONDS - t0)) s"

for variant in normal sanitize; do
  t=$SECONDS
  dir="$here/build"; sanitize=OFF
  if [ "$variant" = sanitize ]; then dir="$here/build-sanitize"; sanitize=ON; fi
  cmake -S "$here" -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLITEEXPORT_SANITIZE=$sanitize \
    -DFLATBUFFERS_INCLUDE_DIR="$fb_dir" -DPYTHON_EXECUTABLE="$python" \
    -DLITEEXPORT_MAKE_VECTORS=OFF -DLITEEXPORT_VECTORS_DIR="$vectors" >/dev/null
  cmake --build "$dir" -j "$jobs" >/dev/null
  echo "== $variant build: $((SECONDS - t)) s"
  t=$SECONDS
  (cd "$dir" && ctest --output-on-failure)
  echo "== $variant tests: $((SECONDS - t)) s"
done
echo "== total: $((SECONDS - t0)) s"
