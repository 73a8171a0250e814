#!/usr/bin/env python3
"""The native core against the CPU runtimes apps ship, in one run, at 1 and 2 threads:

    python benchmarks/peers.py --setup     # once: makes the peers' venv (.venv-peers, ~1.5 GB)
    python benchmarks/peers.py             # 15-60 minutes on 2 cores (ExecuTorch's export takes
                                           # 20-400 s per model); --case NAME to pick models

Engines: the native core (liteexport_native_run, our bundle), ExecuTorch 1.5.1
with its XNNPACK delegate (torch.export -> to_edge_transform_and_lower(XnnpackPartitioner) ->
.pte), ONNX Runtime's CPU provider (torch.onnx.export), runtime_py (numpy, one thread) and torch's
lite interpreter (torch's own bundle of the model). Same weights (seed 0) and input everywhere.
Every figure comes from a fresh process (benchmarks/worker.py, benchmarks/peer_worker.py);
latencies are the lowest of five round medians, and each engine is measured --rounds times,
the engines interleaved, the lowest kept: this shared 2-core VM drifts between a fast and a
~2x slower state. At one thread the ratios use each engine's CPU time on its one thread (the
work, without what the VM's other processes take); at two threads, wall time. ExecuTorch and
ONNX Runtime live in their own venv (executorch pins its own torch stack; it runs on torch
2.13.0's CPU wheel). Writes benchmarks/results/peers.json.
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

from benchmarks.bench import worker  # noqa: E402
from benchmarks.models import PEER_CASES, Case  # noqa: E402

PEERS_VENV = ROOT / ".venv-peers"
THREADS = (1, 2)
# (engine, threads) measured per case; runtime_py has no threads
ENGINES = (("native", 1), ("native", 2), ("executorch", 1), ("executorch", 2), ("onnxruntime", 1),
           ("onnxruntime", 2), ("torch_lite", 1), ("torch_lite", 2), ("runtime_py", 1))


# transformers as in the project's venv: the LLM benchmark exports with its recipe on both sides
TRANSFORMERS = "transformers==5.25.0"
# why llama-cpp-python did not install (its build's last lines), for benchmarks/llm.py to report
LLAMA_CPP_ERROR = "llama-cpp-python.error.txt"


def setup(venv: Path) -> None:
    """The peers' venv: torch's CPU wheel first (executorch declares no torch dependency, and an
    unpinned torch would be a multi-GB CUDA build), then the runtimes, then benchmarks/llm.py's:
    transformers, gguf and llama-cpp-python compiled from its source package (llama.cpp, CPU only,
    one compile job: the machine's 2 cores are shared). A llama.cpp that does not build is recorded
    in LLAMA_CPP_ERROR, not fatal: the other peers still run."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "torch==2.13.0"], check=True)
    subprocess.run([*pip, "executorch==1.5.1", "onnxruntime", "onnx", "torchvision==0.28.0", "numpy"], check=True)
    subprocess.run([*pip, TRANSFORMERS, "gguf"], check=True)
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": "1", "MAKEFLAGS": "-j1",
           "CMAKE_ARGS": "-DGGML_NATIVE=ON -DGGML_BLAS=OFF -DGGML_CUDA=OFF -DGGML_VULKAN=OFF -DGGML_METAL=OFF "
                         "-DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF"}
    result = subprocess.run(["nice", "-n", "10", *pip, "--no-binary", "llama-cpp-python", "llama-cpp-python"],
                            env=env, capture_output=True, text=True, check=False)
    error = venv / LLAMA_CPP_ERROR
    if result.returncode != 0:
        error.write_text("\n".join((result.stdout + result.stderr).strip().splitlines()[-40:]))
        print(f"llama-cpp-python did not install: see {error}", file=sys.stderr)
    else:
        error.unlink(missing_ok=True)


def venv_arguments(parser: argparse.ArgumentParser) -> None:
    """--setup and --peers-venv, as every benchmark run in the peers' venv takes them."""
    parser.add_argument("--setup", action="store_true", help="make the peers' venv and exit")
    parser.add_argument("--peers-venv", type=Path, default=PEERS_VENV)


def peer(python: Path, *args: str) -> dict[str, Any]:
    """benchmarks/peer_worker.py in the peers' venv, in a fresh process; a failure is recorded."""
    result = subprocess.run([str(python), "-m", "benchmarks.peer_worker", *args], capture_output=True, text=True,
                            cwd=ROOT, check=False, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": last[:200]}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def measure(case: Case, folder: Path, python: Path, rounds: int) -> dict[str, Any]:
    ours, theirs = folder / f"{case.name}.ptl", folder / f"{case.name}.torch.ptl"
    pte, onnx = folder / f"{case.name}.pte", folder / f"{case.name}.onnx"
    row: dict[str, Any] = {"case": case.name, "export": {
        "ours": worker("export-ours", case.name, str(ours)), "torch": worker("export-torch", case.name, str(theirs)),
        "executorch": peer(python, "export-et", case.name, str(pte)),
        "onnxruntime": peer(python, "export-onnx", case.name, str(onnx))}}
    shape = "x".join(map(str, case.input_shape))
    runs: dict[str, list[dict[str, Any]]] = {f"{engine}@{threads}": [] for engine, threads in ENGINES}
    for _ in range(rounds):
        for engine, threads in ENGINES:
            t = str(threads)
            if engine == "native":
                result = worker("infer", "native", str(ours), shape, t)
            elif engine == "executorch":
                result = peer(python, "infer-et", str(pte), shape, t)
            elif engine == "onnxruntime":
                result = peer(python, "infer-ort", str(onnx), shape, t)
            elif engine == "torch_lite":
                result = worker("infer", "torch_own", str(theirs), shape, t)
            else:
                result = worker("infer", "runtime_py", str(ours), shape)
            runs[f"{engine}@{threads}"].append(result)
    row["infer"] = {key: _best(results) for key, results in runs.items()}
    return row


def _best(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per figure, the lowest of the rounds (an error only when every round failed)."""
    ok = [r for r in results if "seconds" in r]
    if not ok:
        return results[-1]
    return {key: min(r[key] for r in ok if key in r) for key in ok[0]}


def _get(row: dict[str, Any], engine: str, threads: int, key: str = "seconds") -> float | None:
    value = row.get("infer", {}).get(f"{engine}@{threads}", {}).get(key)
    return float(value) if value is not None else None


def _one_thread(row: dict[str, Any], engine: str) -> float | None:
    """The one-thread figure the ratios use: CPU time where the engine reports it (see the docstring)."""
    return _get(row, engine, 1, "cpu_seconds") or _get(row, engine, 1)


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None or b == 0 else f"{a / b:.2f}x"


def _ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 1e3:.2f}"


def table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'case':<19} {'nat/ET 1t':>9} {'nat/ET 2t':>9} {'nat/ORT 1t':>10} {'nat 1t/2t':>9} "
            f"{'load nat':>8} {'load ET':>8} {'load ORT':>8}  ms 1t (cpu): native ET ORT torch rt_py | "
            "ms 2t (wall): native ET ORT torch")
    lines = [head, "-" * len(head)]
    for r in rows:
        n1, e1, o1 = _one_thread(r, "native"), _one_thread(r, "executorch"), _one_thread(r, "onnxruntime")
        n2, e2, o2 = _get(r, "native", 2), _get(r, "executorch", 2), _get(r, "onnxruntime", 2)
        lines.append(
            f"{r['case']:<19} {_ratio(n1, e1):>9} {_ratio(n2, e2):>9} {_ratio(n1, o1):>10} "
            f"{_ratio(_get(r, 'native', 1), n2):>9} "
            f"{_ms(_get(r, 'native', 1, 'load_seconds')):>8} {_ms(_get(r, 'executorch', 1, 'load_seconds')):>8} "
            f"{_ms(_get(r, 'onnxruntime', 1, 'load_seconds')):>8}  "
            f"{_ms(n1)} {_ms(e1)} {_ms(o1)} {_ms(_one_thread(r, 'torch_lite'))} {_ms(_one_thread(r, 'runtime_py'))} | "
            f"{_ms(n2)} {_ms(e2)} {_ms(o2)} {_ms(_get(r, 'torch_lite', 2))}")
    lines.append("nat/ET, nat/ORT: native / peer (1t: CPU time of the one thread, 2t: wall); nat 1t/2t: the native "
                 "core's wall time at 1 thread / at 2 (its speed-up); load: ms to load (native: map + verify; ET: "
                 "program + method; ORT: session)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    venv_arguments(parser)
    parser.add_argument("--case", action="append", choices=[c.name for c in PEER_CASES])
    parser.add_argument("--rounds", type=int, default=2, help="measurements per engine, interleaved (lowest kept)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args()
    if args.setup:
        setup(args.peers_venv)
        return
    python = args.peers_venv / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"{python} not found: run benchmarks/peers.py --setup first")
    chosen = [case for case in PEER_CASES if not args.case or case.name in args.case]
    with tempfile.TemporaryDirectory() as tmp:
        rows = []
        for case in chosen:
            rows.append(measure(case, Path(tmp), python, args.rounds))
            print(table(rows[-1:]).splitlines()[-2], flush=True)
            if not args.case:  # after each model: an interrupted run keeps what it measured
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / "peers.json").write_text(
                    json.dumps({"cases": rows, "complete": len(rows) == len(chosen)}, indent=2))
    print(table(rows))
    if not args.case:
        print(f"\nwrote {args.out / 'peers.json'}")


if __name__ == "__main__":
    main()
