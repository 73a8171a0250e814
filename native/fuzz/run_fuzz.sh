#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) and fuzzes the native core for a fixed budget.
#
#   fuzz/run_fuzz.sh [SECONDS] [TARGET...]
#
# SECONDS: total budget (default 300), split evenly over the targets (default: both,
# fuzz_load_and_run and fuzz_program). Installs nothing: needs clang with libFuzzer
# (Debian/Ubuntu: apt-get install -y clang libclang-rt-14-dev, or any clang >= 11).
# Seeds come from tests/make_vectors.py's output (build/vectors, made by run_tests.sh; made
# here if missing, which needs the checkout's Python with torch). The working corpus is kept in
# build-fuzz/corpus/<target> so later runs continue from it; crashes go to build-fuzz/artifacts/.
# Env: CXX (default clang++), PYTHON, FLATBUFFERS_INCLUDE_DIR, JOBS, FUZZ_ARGS (extra libFuzzer flags).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
repo="$(cd "$here/.." && pwd)"
budget="${1:-300}"
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_load_and_run fuzz_program)

cxx="${CXX:-clang++}"
if ! command -v "$cxx" >/dev/null || ! "$cxx" --version | grep -q clang; then
  echo "run_fuzz.sh: needs clang with libFuzzer ($cxx not found or not clang)." >&2
  echo "  Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y clang libclang-rt-14-dev" >&2
  echo "  then rerun, or set CXX=/path/to/clang++" >&2
  exit 2
fi
python="${PYTHON:-$( [ -x "$repo/.venv/bin/python" ] && echo "$repo/.venv/bin/python" || command -v python3 )}"
fb_dir="$(PYTHON="$python" "$here/flatbuffers_include.sh")"
build="$here/build-fuzz"
vectors="$here/build/vectors"

echo "== $("$cxx" --version | head -1)"
cmake -S "$here" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLITEEXPORT_FUZZ=ON -DLITEEXPORT_BUILD_TESTS=OFF -DFLATBUFFERS_INCLUDE_DIR="$fb_dir" >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc 2>/dev/null || echo 2)}" --target "${targets[@]}" >/dev/null

if [ ! -f "$vectors/cases.txt" ]; then
  mkdir -p "$vectors"
  (cd "$repo" && "$python" "$here/tests/make_vectors.py" "$vectors")
fi
"$python" "$here/fuzz/seeds.py" "$vectors" "$build/seeds/fuzz_load_and_run" "$build/seeds/fuzz_program"
# the regression inputs are seeds too
cp "$here"/tests/regressions/*.ptl "$build/seeds/fuzz_load_and_run/" 2>/dev/null || true
cp "$here"/tests/regressions/*.lxdp "$build/seeds/fuzz_program/" 2>/dev/null || true

per=$(( budget / ${#targets[@]} ))
status=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"; artifacts="$build/artifacts/$t"; log="$build/$t.log"
  mkdir -p "$corpus" "$artifacts"
  before=$(ls "$corpus" | wc -l)
  echo "== $t: ${per}s (corpus $before files + seeds)"
  set +e
  # -detect_leaks=1: LeakSanitizer at exit of each input; timeouts/OOM/crashes stop the run
  "$build/$t" -max_total_time="$per" -timeout=5 -rss_limit_mb=2048 -detect_leaks=1 \
    -dict="$here/fuzz/bundle.dict" -artifact_prefix="$artifacts/" -print_final_stats=1 \
    ${FUZZ_ARGS:-} "$corpus" "$build/seeds/$t" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  eps=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  added=$(grep -o 'stat::new_units_added: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  rss=$(grep -o 'stat::peak_rss_mb: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -Eo 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  init=$(grep -Eo 'INITED cov: [0-9]+ ft: [0-9]+' "$log" | head -1 || true)
  echo "   executions: $execs   exec/s: $eps   new units: $added   peak RSS: ${rss} MB"
  echo "   coverage: ${init#INITED } at start -> ${cov:-?} at end; corpus now $(ls "$corpus" | wc -l) files"
  if [ $rc -ne 0 ]; then
    status=1
    echo "   FINDING (exit $rc): $(grep -E 'SUMMARY|ERROR: libFuzzer|==ERROR' "$log" | head -2 | tr '\n' ' ')"
  fi
  crashes=$(ls "$artifacts" 2>/dev/null | wc -l)
  echo "   crash files: $crashes in $artifacts"
  ls "$artifacts" 2>/dev/null | sed 's/^/     /'
  echo "   log: $log"
done
exit $status
