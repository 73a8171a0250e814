#!/usr/bin/env python3
"""int8 against float, in one run: the native core and ExecuTorch-XNNPACK (issue 22):

    python benchmarks/peers.py --setup     # once: the peers' venv (ExecuTorch), shared with peers.py
    python benchmarks/quantized.py         # 10-30 minutes on 2 cores; --case NAME to pick models

Per model (random weights, seed 0; the same input everywhere, as benchmarks/peers.py):
- float: our bundle and ExecuTorch's XNNPACK .pte of the float model;
- int8, three ways:
  - ``torchvision``: torchvision's quantized variant (qnnpack, as ``quantize=True`` makes it),
    scripted and lowered by liteexport: the int8 model a PyTorch Mobile user already has;
  - ``liteexport``: ``--quantize int8`` of the float model, calibrated on benchmarks.models'
    calibration images (only when this checkout's liteexport has static quantization);
  - ``executorch``: PT2E with XNNPACKQuantizer (per-channel weights) on the same images, lowered
    to the XNNPACK delegate.

Latencies as peers.py measures them (1 thread: the thread's CPU time; 2 threads: wall), the
lowest of --rounds interleaved rounds; sizes in bytes. Writes benchmarks/results/quantized.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench import worker  # noqa: E402
from benchmarks.models import QUANTIZED_CASES, Case  # noqa: E402
from benchmarks.peers import PEERS_VENV, ROOT, _best, _ms, _ratio, peer  # noqa: E402

# (name, exporter): our bundles through benchmarks/worker.py, ExecuTorch's through peer_worker.py
VARIANTS = (("float", "export-ours"), ("torchvision", "export-torchvision-int8"), ("liteexport", "export-ours-int8"))
ET_VARIANTS = (("et_float", "export-et"), ("et_int8", "export-et-int8"))


def measure(case: Case, folder: Path, python: Path, rounds: int) -> dict[str, Any]:
    files: dict[str, Path] = {}
    row: dict[str, Any] = {"case": case.name, "export": {}, "bytes": {}, "infer": {}}
    for name, command in (*VARIANTS, *ET_VARIANTS):
        path = folder / f"{case.name}.{name}.{'pte' if name.startswith('et_') else 'ptl'}"
        if path.exists():  # --work DIR: an earlier run's export (exports need no quiet machine)
            result = {"reused": str(path)}
        else:
            result = (peer(python, command, case.name, str(path)) if name.startswith("et_")
                      else worker(command, case.name, str(path)))
        row["export"][name] = result
        if "error" not in result:
            files[name] = path
            row["bytes"][name] = path.stat().st_size
    shape = "x".join(map(str, case.input_shape))
    runs: dict[str, list[dict[str, Any]]] = {}
    for _ in range(rounds):
        for name, path in files.items():
            for threads in ("1", "2"):
                result = (peer(python, "infer-et", str(path), shape, threads) if name.startswith("et_")
                          else worker("infer", "native", str(path), shape, threads))
                runs.setdefault(f"{name}@{threads}", []).append(result)
    row["infer"] = {key: _best(results) for key, results in runs.items()}
    return row


def _time(row: dict[str, Any], name: str, threads: int) -> float | None:
    """1 thread: CPU time of the one thread; 2 threads: wall (as peers.py)."""
    figures = row["infer"].get(f"{name}@{threads}", {})
    value = figures.get("cpu_seconds" if threads == 1 else "seconds", figures.get("seconds"))
    return float(value) if value is not None else None


def table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'case':<13} {'int8 from':<12} {'size/float':>10} {'int8/float 1t':>13} {'int8/float 2t':>13} "
            f"{'int8/ET-int8 1t':>15}  ms 1t: float int8 ET-float ET-int8 | 2t: float int8 ET-int8")
    lines = [head, "-" * len(head)]
    for r in rows:
        size = r["bytes"]
        for name in ("torchvision", "liteexport"):
            if name not in size:
                continue
            f1, q1, f2, q2 = _time(r, "float", 1), _time(r, name, 1), _time(r, "float", 2), _time(r, name, 2)
            e1, ef1, e2 = _time(r, "et_int8", 1), _time(r, "et_float", 1), _time(r, "et_int8", 2)
            lines.append(
                f"{r['case']:<13} {name:<12} {_ratio(size[name], size.get('float')):>10} {_ratio(q1, f1):>13} "
                f"{_ratio(q2, f2):>13} {_ratio(q1, e1):>15}  {_ms(f1)} {_ms(q1)} {_ms(ef1)} {_ms(e1)} | "
                f"{_ms(f2)} {_ms(q2)} {_ms(e2)}")
    lines.append("size/float: the int8 bundle's bytes / the float bundle's; int8/float: the native core's int8 "
                 "latency / its float latency; int8/ET-int8: / ExecuTorch-XNNPACK's int8 (1t: CPU time of the "
                 "one thread, 2t: wall)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--peers-venv", type=Path, default=PEERS_VENV)
    parser.add_argument("--case", action="append", choices=[c.name for c in QUANTIZED_CASES])
    parser.add_argument("--rounds", type=int, default=2, help="measurements per engine, interleaved (lowest kept)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--work", type=Path, help="keep the exported models here and reuse those present "
                        "(export on a busy machine, measure on a quiet one); default: a temporary folder")
    parser.add_argument("--export-only", action="store_true", help="export into --work and stop")
    args = parser.parse_args()
    python = args.peers_venv / "bin" / "python"
    if not python.exists():
        raise SystemExit(f"{python} not found: run benchmarks/peers.py --setup first")
    chosen = [case for case in QUANTIZED_CASES if not args.case or case.name in args.case]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.work or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for case in chosen:
            rows.append(measure(case, folder, python, 0 if args.export_only else args.rounds))
            print(table(rows[-1:]), flush=True)
            if not args.case:  # after each model: an interrupted run keeps what it measured
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / "quantized.json").write_text(
                    json.dumps({"cases": rows, "complete": len(rows) == len(chosen)}, indent=2))
    print(table(rows))


if __name__ == "__main__":
    main()
