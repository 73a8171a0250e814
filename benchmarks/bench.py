#!/usr/bin/env python3
"""liteexport against torch, side by side in one run: export, size, load, inference, scaling.

    python benchmarks/bench.py                 # full run (about 5 minutes on 2 cores)
    python benchmarks/bench.py --quick         # smaller scaling sweep, shorter timings
    python benchmarks/bench.py --plain-only    # only the plain-bytecode rows (torch's own bundles)

Prints a table of ratios (ours / torch: below 1 is better for us), writes
benchmarks/results/bench.json and benchmarks/results/bench.png. Every figure is measured
in a fresh process with one thread (torch.set_num_threads(1), BLAS threads 1). Exports run
three times (ours and torch's alternating; the fastest of each is kept), latencies are the
lowest of five round medians: this shared VM drifts between a fast and a ~2x slower state.
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

from benchmarks.models import CASES, PLAIN_CASES, Case, scaling_case  # noqa: E402

SCALING_WIDTHS = (64, 512, 2048, 8192)  # 8 * w^2 bytes of weights: 32 KB .. 512 MB
QUICK_WIDTHS = (64, 512, 2048)
INFER_ENGINES = ("runtime_py_demo", "runtime_py_plain", "torch_ours", "torch_own", "native")


def worker(*args: str) -> dict[str, Any]:
    """Run one measurement in a fresh process; a failure is recorded, not fatal."""
    result = subprocess.run([sys.executable, "-m", "benchmarks.worker", *args], capture_output=True, text=True,
                            cwd=ROOT, check=False, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": last[:200]}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def exports(case: str, ours: Path, theirs: Path, repeats: int = 3) -> dict[str, dict[str, Any]]:
    """Each export ``repeats`` times, ours and torch's alternating, each in a fresh process; the
    fastest run of each is kept (the VM's speed drifts between runs; see worker._median_time)."""
    runs: dict[str, list[dict[str, Any]]] = {"export_ours": [], "export_torch": []}
    for _ in range(repeats):
        runs["export_ours"].append(worker("export-ours", case, str(ours)))
        runs["export_torch"].append(worker("export-torch", case, str(theirs)))
    return {key: min(results, key=lambda r: r.get("seconds", float("inf"))) for key, results in runs.items()}


def debug_table_bytes(bundle: Path) -> int:
    from bundle_format.bundle_file import read_bundle_file
    from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE

    content = read_bundle_file(bundle).extra_file(DEBUG_TABLE_EXTRA_FILE)
    return len(content) if content is not None else 0


def measure_case(case: Case, folder: Path, inference: bool) -> dict[str, Any]:
    ours, theirs = folder / f"{case.name}.lowered.ptl", folder / f"{case.name}.torch.ptl"
    row: dict[str, Any] = {"case": case.name, **exports(case.name, ours, theirs)}
    if not ours.exists() or not theirs.exists():
        return row
    debug = debug_table_bytes(ours)
    row["size"] = {"ours": ours.stat().st_size, "ours_without_debug": ours.stat().st_size - debug,
                   "debug_table": debug, "torch": theirs.stat().st_size}
    row["load_ours"] = worker("load-ours", str(ours))
    # the comparison: torch's lite interpreter loading the same bundle (through our
    # torch backend, whose compile decodes the programs as runtime_py's does) ...
    row["load_torch"] = worker("load-torch", str(ours), "ours")
    # ... and, for reference, torch loading its own bundle of the plain model
    row["load_torch_own"] = worker("load-torch", str(theirs))
    if inference:
        shape = "x".join(map(str, case.input_shape))
        row["infer"] = {
            "runtime_py_demo": worker("infer", "runtime_py", str(ours), shape),
            "runtime_py_plain": worker("infer", "runtime_py", str(theirs), shape),
            "torch_ours": worker("infer", "torch_ours", str(ours), shape),
            "torch_own": worker("infer", "torch_own", str(theirs), shape),
            "native": worker("infer", "native", str(ours), shape),
        }
    return row


def measure_plain(case: Case, folder: Path) -> dict[str, Any]:
    """The plain-bytecode path: torch's own bundle (flatbuffer and zip) run by runtime_py's
    interpreter and by torch's lite interpreter, each in a fresh process."""
    shape = "x".join(map(str, case.input_shape))
    row: dict[str, Any] = {"case": case.name}
    for container in ("flatbuffer", "zip"):
        bundle = folder / f"{case.name}.{container}.ptl"
        export = worker("export-torch", case.name, str(bundle), container)
        if "error" in export:
            row[container] = {"error": export["error"]}
            continue
        row[container] = worker("infer-plain", str(bundle), shape)
    return row


def plain_table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'case':<20} {'flatbuffer rt/torch':>19} {'zip rt/torch':>12}  latency ms: "
            "runtime_py torch (flatbuffer), runtime_py torch (zip); max |difference|")
    lines = [head, "-" * len(head)]
    for r in rows:
        fb, zp = r.get("flatbuffer", {}), r.get("zip", {})
        ms = [f"{d[k] * 1e3:.3f}" if k in d else "n/a" for d in (fb, zp) for k in ("runtime_py", "torch")]
        difference = max((d["max_abs_difference"] for d in (fb, zp) if "max_abs_difference" in d), default=None)
        lines.append(f"{r['case']:<20} {_ratio(fb, fb, 'runtime_py', 'torch'):>19} "
                     f"{_ratio(zp, zp, 'runtime_py', 'torch'):>12}  {ms[0]} {ms[1]}, {ms[2]} {ms[3]}; "
                     f"{'n/a' if difference is None else f'{difference:.1e}'}")
    lines.append("plain bytecode path: torch's own bundle of the model (torch.jit.script + "
                 "_save_for_lite_interpreter) run by runtime_py's interpreter vs torch's lite interpreter, "
                 "in one process with their rounds interleaved (ratio runtime_py / torch)")
    return "\n".join(lines)


def _ratio(a: dict[str, Any] | None, b: dict[str, Any] | None, key: str, b_key: str | None = None) -> str:
    b_key = b_key or key
    if not a or not b or key not in a or b_key not in b or not b[b_key]:
        return "n/a"
    return f"{a[key] / b[b_key]:.2f}x"


def _ms(d: dict[str, Any] | None) -> str:
    return "n/a" if not d or "seconds" not in d else f"{d['seconds'] * 1e3:.3f}"


def table(rows: list[dict[str, Any]]) -> str:
    head = (f"{'case':<10} {'export t':>9} {'export mem':>10} {'size*':>7} {'load t':>8} {'load rss':>8} "
            f"{'load t/own':>10} "
            f"{'rt demo/torch':>13} {'rt plain/demo':>13} {'native/torch':>12}  latency ms: "
            + " ".join(INFER_ENGINES))
    lines = [head, "-" * len(head)]
    for r in rows:
        size = r.get("size", {})
        size_ratio = f"{size['ours_without_debug'] / size['torch']:.2f}x" if size else "n/a"
        inf = r.get("infer", {})
        lines.append(
            f"{r['case']:<10} {_ratio(r['export_ours'], r['export_torch'], 'seconds'):>9} "
            f"{_ratio(r['export_ours'], r['export_torch'], 'peak_mb'):>10} {size_ratio:>7} "
            f"{_ratio(r.get('load_ours'), r.get('load_torch'), 'seconds'):>8} "
            f"{_ratio(r.get('load_ours'), r.get('load_torch'), 'rss_added_mb'):>8} "
            f"{_ratio(r.get('load_ours'), r.get('load_torch_own'), 'seconds'):>10} "
            f"{_ratio(inf.get('runtime_py_demo'), inf.get('torch_own'), 'seconds'):>13} "
            f"{_ratio(inf.get('runtime_py_plain'), inf.get('runtime_py_demo'), 'seconds'):>13} "
            f"{_ratio(inf.get('native'), inf.get('torch_own'), 'seconds'):>12}  "
            + " ".join(_ms(inf.get(k)) for k in INFER_ENGINES))
    lines.append("ratios are ours / torch (rt plain/demo: runtime_py plain bytecode / runtime_py demo backend); "
                 "size* excludes the debug table;\nload t: runtime_py vs torch's lite interpreter on the same bundle "
                 "(ours); load t/own: vs torch loading its own bundle of the plain model")
    return "\n".join(lines)


def load_scaling(scaling: list[dict[str, Any]]) -> str:
    """The load targets that are not ratios to torch: time independent of the weights' size,
    resident memory added a small fraction of the weights."""
    rows = [r for r in scaling if "seconds" in r.get("load_ours", {})]
    if len(rows) < 2:
        return "load scaling: n/a"
    small, big = rows[0], rows[-1]
    weights_mb = big["size"]["torch"] / 2**20
    return (f"runtime_py load: {big['case']} ({weights_mb:.0f} MB) takes "
            f"{big['load_ours']['seconds'] / small['load_ours']['seconds']:.2f}x the time of {small['case']}; "
            f"resident memory added {big['load_ours']['rss_added_mb']:.1f} MB = "
            f"{100 * big['load_ours']['rss_added_mb'] / weights_mb:.1f}% of the weights")


def plot(rows: list[dict[str, Any]], scaling: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5))
    engines = INFER_ENGINES
    names = [r["case"] for r in rows]
    for i, engine in enumerate(engines):
        values = [r.get("infer", {}).get(engine, {}).get("seconds", float("nan")) * 1e3 for r in rows]
        left.bar([x + i * 0.16 for x in range(len(rows))], values, width=0.16, label=engine)
    left.set_xticks([x + 0.32 for x in range(len(rows))], names)
    left.set_yscale("log")
    left.set_ylabel("median latency (ms, 1 thread)")
    left.legend()
    weights = [r["size"]["torch"] / 2**20 for r in scaling if "size" in r]
    for key, label in (("load_ours", "runtime_py load+verify"), ("load_torch", "torch load, same bundle"),
                       ("load_torch_own", "torch load, its own bundle")):
        right.plot(weights, [r[key].get("seconds", float("nan")) * 1e3 for r in scaling if "size" in r], "o-",
                   label=label)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("bundle size (MB)")
    right.set_ylabel("load time (ms)")
    right.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller scaling sweep")
    parser.add_argument("--plain-only", action="store_true", help="only the plain-bytecode rows")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--case", action="append", choices=[c.name for c in CASES],
                        help="measure only this case (repeatable); prints its rows, no scaling sweep, writes nothing")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        if not args.case:
            plain = [measure_plain(case, Path(tmp)) for case in PLAIN_CASES]
            print(plain_table(plain), flush=True)
            if args.plain_only:
                (args.out / "bench_plain.json").write_text(json.dumps({"plain": plain}, indent=2))
                print(f"\nwrote {args.out / 'bench_plain.json'}")
                return
        chosen = [case for case in CASES if not args.case or case.name in args.case]
        rows = [measure_case(case, Path(tmp), inference=True) for case in chosen]
        print(table(rows), flush=True)
        if args.case:
            return
        widths = QUICK_WIDTHS if args.quick else SCALING_WIDTHS
        scaling = []
        for width in widths:
            scaling.append(measure_case(scaling_case(width), Path(tmp), inference=False))
            for f in Path(tmp).glob(f"mlp_w{width}.*"):
                f.unlink()  # the big bundles do not need to stay on disk
        print("\nscaling (weights from KB to ~512 MB):")
        print(table(scaling))
        print(load_scaling(scaling))
    (args.out / "bench.json").write_text(json.dumps({"cases": rows, "scaling": scaling, "plain": plain}, indent=2))
    try:
        plot(rows, scaling, args.out / "bench.png")
    except ImportError:
        print("matplotlib not installed: no plot (pip install -e '.[bench]')")
    print(f"\nwrote {args.out / 'bench.json'}")


if __name__ == "__main__":
    main()
