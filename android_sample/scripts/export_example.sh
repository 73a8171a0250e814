#!/usr/bin/env bash
# Exports the example model (examples/tiny_cnn.py:TinyCNN) into the app's assets, where
# MainActivity finds it: android_sample/app/app/src/main/assets/tiny_cnn.ptl.
#
#   android_sample/scripts/export_example.sh            # uses $PYTHON, else .venv/bin/python, else python3
#   android_sample/scripts/export_example.sh OUT.ptl    # writes OUT.ptl instead (tests compare it with the asset)
#
# The bundle (~15 KB) is committed so that the app builds without torch; rerun this after
# changing the model or the exporter. The export is deterministic (seeded weights): an
# unchanged model gives a byte-identical file, and tests/android/test_example_asset.py fails
# when the committed asset is not what this script writes.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$repo"  # the debug table stores the source path as given: keep it repository-relative

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
  if [[ -x .venv/bin/python ]]; then python=.venv/bin/python; else python=python3; fi
fi

asset="${1:-android_sample/app/app/src/main/assets/tiny_cnn.ptl}"
mkdir -p "$(dirname "$asset")"
# A static input shape lets the compiler check and fold shapes; the app feeds exactly 1x3x32x32.
"$python" -m liteexport export examples/tiny_cnn.py:TinyCNN --input-shape forward:1x3x32x32 -o "$asset"
