#!/bin/sh
# Fixed-time atheris run over runtime_py's loaders: fuzz/run.sh [seconds] (default 180).
# Seeds fuzz/corpus from tests/fuzz/seeds (prefixed with the entry-point byte fuzz_loader.py
# expects), then fuzzes; crashers land in fuzz/crashers/. Copy each one into tests/fuzz/crashers/
# as <name>.<kind>.bin (minus the first byte) once fixed.
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/work/venv/bin/python}
SECONDS_TO_RUN=${1:-180}
mkdir -p fuzz/corpus fuzz/crashers
"$PY" - <<'PYEOF'
from pathlib import Path
kinds = {"ptmf": 0, "zip": 0, "program": 1, "debug": 2}
for seed in sorted(Path("tests/fuzz/seeds").glob("*.bin")):
    kind = seed.name.removesuffix(".bin").rsplit(".", 1)[-1]
    Path("fuzz/corpus", "seed_" + seed.name).write_bytes(bytes([kinds[kind]]) + seed.read_bytes())
PYEOF
exec "$PY" fuzz/fuzz_loader.py fuzz/corpus -max_total_time="$SECONDS_TO_RUN" -timeout=5 \
    -rss_limit_mb=3072 -max_len=65536 -artifact_prefix=fuzz/crashers/ -print_final_stats=1
