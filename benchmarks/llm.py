#!/usr/bin/env python3
"""Decoder-LM generation speed, every engine side by side in one run (issue 34 item 5):

    python benchmarks/llm.py --setup           # once: the peers' venv (benchmarks/peers.py's, with
                                               # transformers, gguf and llama-cpp-python built from source)
    python benchmarks/llm.py                   # both configs at 1 and 2 threads (~30-60 min on 2 cores)
    python benchmarks/llm.py --smoke           # a 2-layer model, one round: checks the harness works

Models: random-weight Llama-architecture models with SmolLM2-135M's and SmolLM2-360M's shapes,
float32, seed 0 (benchmarks/llm_models.py), exported through transformers' on-device recipe with a
256-position static cache. Engines (benchmarks/llm_worker.py's ENGINES): ExecuTorch 1.5.1 (the same
ExportedProgram lowered to XNNPACK, run by executorch.runtime), llama.cpp (llama-cpp-python, an f32
GGUF of the same weights) and liteexport's runtime_py and native core (rows that say "not implemented
yet" until their entries exist).

Figures: prefill tok/s (a 64-token prompt in one call), decode tok/s (128 greedy tokens, one call
each), load s, peak RSS of the worker process, file size. Every figure comes from a fresh process;
the engines run interleaved, --rounds times each, and the best round is kept (this shared 2-core VM
drifts). The bandwidth bound: a STREAM-like read pass measures the machine's read bandwidth at each
thread count; bytes per decoded token are the weights (every linear weight, the norms, the tied LM
head read whole, one embedding row) plus the keys and values of the filled cache at the average
decode position (benchmarks/llm_models.bytes_per_token); "of bound" = decode tok/s ÷ (bandwidth ÷
bytes per token). Writes benchmarks/results/llm.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.llm_models import SPECS, bandwidth_fraction, bytes_per_token  # noqa: E402
from benchmarks.llm_worker import COMPARED_TOKENS, ENGINES  # noqa: E402
from benchmarks.peers import LLAMA_CPP_ERROR, setup, venv_arguments  # noqa: E402

PROJECT_PYTHON = Path(sys.executable)
CONFIGS = ("smollm2-135m", "smollm2-360m")
NOT_IMPLEMENTED = "not implemented yet"
# figures where more is better; of the rest (load, RSS) the least is kept
# seconds a worker may take (ExecuTorch's export of smollm2-360m takes ~20 min on the loaded VM)
WORKER_TIMEOUT = 3600
HIGHER_IS_BETTER = ("prefill_tok_s", "decode_tok_s", "prefill_cpu_tok_s", "decode_cpu_tok_s")


def worker(python: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """benchmarks/llm_worker.py in a fresh process; a failure is recorded with its last line of stderr."""
    try:
        result = subprocess.run([str(python), "-m", "benchmarks.llm_worker", *args], capture_output=True, text=True,
                                cwd=ROOT, check=False, timeout=WORKER_TIMEOUT,
                                env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONWARNINGS": "ignore",
                                     "HF_HUB_OFFLINE": "1", **(env or {})})
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {WORKER_TIMEOUT} s"}
    if result.returncode != 0:
        lines = result.stderr.strip().splitlines() or result.stdout.strip().splitlines() or ["failed"]
        return {"error": lines[-1][:300]}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def _decode_speed(result: dict[str, Any]) -> float:
    return float(result.get("decode_tok_s", 0.0))


def best(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per figure, the best of the rounds: the highest tok/s, the lowest load time and RSS (an error only
    when every round failed). Non-numeric entries (tokens) come from the round with the best decode."""
    ok = [r for r in results if "error" not in r]
    if not ok:
        return results[-1] if results else {"error": "not run"}
    top: dict[str, Any] = max(ok, key=_decode_speed)
    kept = dict(top)
    for key, value in ok[0].items():
        if isinstance(value, (int, float)):
            values = [float(r[key]) for r in ok if key in r]
            kept[key] = max(values) if key in HIGHER_IS_BETTER else min(values)
    return kept


def _unavailable(engine_name: str, peers_python: Path) -> str | None:
    """Why an engine cannot run here, or None."""
    engine = ENGINES[engine_name]
    if (engine.load is None and engine.run_whole is None) or engine.export is None:
        return NOT_IMPLEMENTED
    if engine.venv == "peers" and not peers_python.exists():
        return f"{peers_python} not found: run benchmarks/llm.py --setup"
    if engine_name == "llama.cpp":
        error = peers_python.parent.parent / LLAMA_CPP_ERROR
        if error.exists():
            return "llama-cpp-python did not build: " + error.read_text().strip().splitlines()[-1][:200]
    return None


def measure_bandwidth(python: Path, threads: tuple[int, ...], rounds: int) -> dict[int, float]:
    """Read bandwidth in bytes/s per thread count, best of rounds fresh processes, BLAS pinned to one
    thread per Python thread (set before numpy loads)."""
    pinned = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    out: dict[int, float] = {}
    for t in threads:
        runs = [worker(python, "bandwidth", str(t), env=pinned) for _ in range(rounds)]
        out[t] = max(float(r["bytes_per_s"]) for r in runs if "bytes_per_s" in r)
    return out


def measure_config(config: str, threads: tuple[int, ...], rounds: int, folder: Path,
                   peers_python: Path, engines: tuple[str, ...] = tuple(ENGINES)) -> list[dict[str, Any]]:
    spec = SPECS[config]
    pythons = {"project": PROJECT_PYTHON, "peers": peers_python}
    files: dict[str, Path] = {}
    exports: dict[str, dict[str, Any]] = {}
    for name, engine in ENGINES.items():
        if name not in engines:
            continue
        why = _unavailable(name, peers_python)
        if why is not None:
            exports[name] = {"error": why}
            continue
        path = folder / f"{config}.{name.replace(' ', '_')}{engine.suffix}"
        record = path.with_name(path.name + ".export.json")
        if path.exists() and record.exists():  # --files DIR of an earlier run: its export, not timed again
            exports[name] = {**json.loads(record.read_text()), "reused": True}
        else:
            exports[name] = worker(pythons[engine.venv], "export", name, config, str(path))
            if "error" not in exports[name]:
                record.write_text(json.dumps(exports[name]))
        if "error" not in exports[name]:
            files[name] = path
        print(f"  export {name} {config}: {exports[name]}", flush=True)
    reference = worker(peers_python if peers_python.exists() else PROJECT_PYTHON, "hf-tokens", config,
                       str(COMPARED_TOKENS))
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {(name, t): [] for name in files for t in threads}
    for _ in range(rounds):
        for name, path in files.items():
            for t in threads:
                # numpy's BLAS (runtime_py) reads its thread count when it loads: set before the worker starts
                threads_env = {"OMP_NUM_THREADS": str(t), "OPENBLAS_NUM_THREADS": str(t)}
                runs[(name, t)].append(worker(pythons[ENGINES[name].venv], "run", name, str(path), config, str(t),
                                              env=threads_env))
    rows = []
    for name, engine in ENGINES.items():
        if name not in exports:
            continue
        for t in threads:
            row: dict[str, Any] = {"engine": name, "config": config, "threads": t, "export": exports[name]}
            if name not in files:
                row["error"] = exports[name]["error"]
            else:
                result = best(runs[(name, t)])
                row.update(result)
                row["file_mb"] = exports[name]["file_mb"]
                row["bytes_per_token"] = bytes_per_token(spec, kv_bytes=engine.kv_bytes)
                if "tokens" in result and "tokens" in reference:
                    row["tokens_equal_hf"] = _leading_equal(result["tokens"], reference["tokens"])
                    row["logits_max_diff_hf"] = max_abs_diff(result["logits"], reference["logits"])
            rows.append(row)
    return rows


def add_bounds(rows: list[dict[str, Any]], bandwidth: dict[int, float]) -> None:
    """Each measured row's bandwidth at its thread count and its decode speed as a fraction of the bound."""
    for row in rows:
        if "decode_tok_s" in row:
            row["bandwidth_bytes_per_s"] = bandwidth[row["threads"]]
            row["of_bound"] = bandwidth_fraction(row["decode_tok_s"], bandwidth[row["threads"]], row["bytes_per_token"])
        if "decode_cpu_tok_s" in row:
            row["of_bound_cpu"] = bandwidth_fraction(row["decode_cpu_tok_s"], bandwidth[row["threads"]],
                                                     row["bytes_per_token"])


def _leading_equal(a: list[int], b: list[int]) -> int:
    """How many leading greedy tokens two engines agree on."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def max_abs_diff(a: list[float], b: list[float]) -> float:
    return max(abs(x - y) for x, y in zip(a, b, strict=True))


def _f(value: Any, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def render_table(rows: list[dict[str, Any]]) -> str:
    """The report's table: one line per engine, config and thread count; an engine that did not run
    says why in place of its figures."""
    head = (f"{'engine':<22} {'config':<13} {'thr':>3} {'prefill tok/s':>13} {'decode tok/s':>12} "
            f"{'of bound':>8} {'cpu: prefill':>12} {'decode':>6} {'bound':>5} {'load s':>7} {'peak RSS MB':>11} "
            f"{'base MB':>7} {'file MB':>8} {'=HF':>5} {'dlogit HF':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        start = f"{r['engine']:<22} {r['config']:<13} {r['threads']:>3} "
        if "error" in r:
            lines.append(start + str(r["error"]))
            continue
        equal = r.get("tokens_equal_hf")
        lines.append(start + f"{_f(r.get('prefill_tok_s'), '.1f'):>13} {_f(r.get('decode_tok_s'), '.1f'):>12} "
                     f"{_f(r.get('of_bound'), '.2f'):>8} {_f(r.get('prefill_cpu_tok_s'), '.1f'):>12} "
                     f"{_f(r.get('decode_cpu_tok_s'), '.1f'):>6} {_f(r.get('of_bound_cpu'), '.2f'):>5} "
                     f"{_f(r.get('load_s'), '.3f'):>7} "
                     f"{_f(r.get('peak_rss_mb'), '.0f'):>11} {_f(r.get('rss_before_load_mb'), '.0f'):>7} "
                     f"{_f(r.get('file_mb'), '.0f'):>8} "
                     f"{'-' if equal is None else f'{equal}/{COMPARED_TOKENS}':>5} "
                     f"{_f(r.get('logits_max_diff_hf'), '.1e'):>9}")
    lines.append("of bound: decode tok/s / (read bandwidth at that thread count / bytes read per token); cpu: the "
                 "same at 1 thread over the process's CPU time instead of wall time (the VM's other load left out); "
                 "base: "
                 "the worker's RSS before the load (interpreter and the engine's libraries, in the peak); "
                 f"=HF: leading greedy tokens equal to transformers' generate (of {COMPARED_TOKENS}); "
                 f"dlogit HF: max |difference| from transformers' logits, first {COMPARED_TOKENS} of the prompt's "
                 "last position")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    venv_arguments(parser)
    parser.add_argument("--config", choices=[*CONFIGS, "all"], default="all")
    parser.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    parser.add_argument("--rounds", type=int, default=2, help="measurements per engine, interleaved (best kept)")
    parser.add_argument("--smoke", action="store_true", help="a 2-layer model, one round (checks the harness)")
    parser.add_argument("--files", type=Path, help="keep the exported files here and reuse those present "
                        "(default: a temporary folder)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "llm.json")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help=f"comma-separated engines to measure (default all: {', '.join(ENGINES)})")
    args = parser.parse_args()
    if args.setup:
        setup(args.peers_venv)
        return
    peers_python = args.peers_venv / "bin" / "python"
    configs = ["tiny"] if args.smoke else list(CONFIGS) if args.config == "all" else [args.config]
    rounds = 1 if args.smoke else args.rounds
    threads = tuple(int(t) for t in args.threads.split(","))
    # measured before and after the engines, the best kept: the VM's load drifts over a run
    passes = 1 if args.smoke else 3
    before = measure_bandwidth(PROJECT_PYTHON, threads, passes)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.files or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for config in configs:
            rows += measure_config(config, threads, rounds, folder, peers_python,
                                   tuple(e.strip() for e in args.engines.split(",")))
            print(render_table([r for r in rows if r["config"] == config]), flush=True)
            if not args.smoke:  # after each config: an interrupted run keeps what it measured
                write_results(args.out, rows, before, rounds, complete=False)
    after = measure_bandwidth(PROJECT_PYTHON, threads, passes)
    bandwidth = {t: max(before[t], after[t]) for t in threads}
    add_bounds(rows, bandwidth)
    print("read bandwidth GB/s: " + ", ".join(f"{t} thread(s) {b / 1e9:.1f}" for t, b in bandwidth.items()))
    if not args.smoke:
        write_results(args.out, rows, bandwidth, rounds, complete=True)
        rows = json.loads(args.out.read_text())["rows"]
        print(f"\nwrote {args.out} (bounds at the best bandwidth of this run and the file's rows)")
    print(render_table(rows))


def write_results(out: Path, rows: list[dict[str, Any]], bandwidth: dict[int, float], rounds: int,
                  complete: bool) -> None:
    """The results file; rows of configs this run did not measure are kept from the file's earlier run. Every
    row is then bounded by the best bandwidth measured at its thread count in either run: a lower reading
    is the VM's other load, not the machine."""
    out.parent.mkdir(parents=True, exist_ok=True)
    measured = {r["config"] for r in rows}
    kept = [r for r in json.loads(out.read_text()).get("rows", []) if r["config"] not in measured] \
        if out.exists() else []
    best_bandwidth = dict(bandwidth)
    for r in kept:
        if "bandwidth_bytes_per_s" in r:
            best_bandwidth[r["threads"]] = max(best_bandwidth.get(r["threads"], 0.0), r["bandwidth_bytes_per_s"])
    add_bounds(kept + rows, best_bandwidth)
    out.write_text(json.dumps({"bandwidth_bytes_per_s": {str(t): b for t, b in best_bandwidth.items()},
                               "rounds": rounds, "complete": complete, "rows": kept + rows}, indent=2))


if __name__ == "__main__":
    main()
