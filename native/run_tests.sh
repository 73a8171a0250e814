#!/usr/bin/env bash
# Build and test the native core on this machine: the host build and the ASan+UBSan build
# (build.sh host / sanitize), each running its ctest suite on test vectors that
# tests/make_vectors.py makes once (needs torch) and both share. With an argument, only those
# variants, e.g. `run_tests.sh aarch64 armv7` (see cross_tests.sh for what those check on top).
# Env: PYTHON (default: the checkout's .venv/bin/python, else python3), BUILD_ROOT, JOBS,
# VECTORS_DIR (given and holding cases.txt: reused as it is; otherwise BUILD_ROOT/vectors, made anew).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
python="${PYTHON:-$( [ -x "$repo/.venv/bin/python" ] && echo "$repo/.venv/bin/python" || command -v python3 )}"
reuse_vectors=0
if [[ -n "${VECTORS_DIR:-}" && -f "${VECTORS_DIR}/cases.txt" ]]; then reuse_vectors=1; fi
export VECTORS_DIR="${VECTORS_DIR:-${BUILD_ROOT:-$here/build}/vectors}"
variants=("$@")
if [[ ${#variants[@]} -eq 0 ]]; then variants=(host sanitize); fi

t0=$SECONDS
if [[ $reuse_vectors == 0 ]]; then
  rm -rf "$VECTORS_DIR" && mkdir -p "$VECTORS_DIR"
  (cd "$repo" && "$python" "$here/tests/make_vectors.py" "$VECTORS_DIR")
  echo "== vectors: $((SECONDS - t0)) s"
fi
for variant in "${variants[@]}"; do
  t=$SECONDS
  dir="$("$here/build.sh" "$variant" | tail -n 1)"
  echo "== $variant build: $((SECONDS - t)) s ($dir)"
  t=$SECONDS
  (cd "$dir" && ctest --output-on-failure)
  echo "== $variant tests: $((SECONDS - t)) s"
done
echo "== total: $((SECONDS - t0)) s"
