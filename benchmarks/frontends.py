#!/usr/bin/env python3
"""The two front ends side by side (issue 33): the same model exported through TorchScript
(``--frontend torchscript``) and through torch.export (``--frontend export``), in one run:

    python benchmarks/frontends.py             # about 4 minutes on 2 cores; --case NAME for one

Rows, per model and front end: the export's wall time (``liteexport.export`` as a user calls it,
self-check included, in a fresh process so no cache of the other front end helps), the bundle's
size and instruction count, and runtime_py's latency of one forward on each bundle (rounds
interleaved in one process, CPU time of one thread, benchmarks/worker.py). The two bundles
compute the same program, so the last column is the largest difference between their outputs on
the same inputs. Models: torchvision's resnet18 and mobilenet_v2 at 1x3x224x224, DistilBERT base
(random weights from its config) at ids and mask 1x128. Writes benchmarks/results/frontends.json.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # as benchmarks/worker.py: latencies are one thread's CPU time

FRONTENDS = ("torchscript", "export")


def _resnet18() -> Any:
    from benchmarks.models import _torchvision

    return _torchvision("resnet18")()


def _mobilenet_v2() -> Any:
    from benchmarks.models import _torchvision

    return _torchvision("mobilenet_v2")()


def _distilbert() -> Any:
    from benchmarks.text import _model

    return _model()


# name -> (the model, its input shapes as liteexport takes them)
CASES: dict[str, tuple[Callable[[], Any], list[str]]] = {
    "resnet18": (_resnet18, ["1x3x224x224"]),
    "mobilenet_v2": (_mobilenet_v2, ["1x3x224x224"]),
    "distilbert_base_s128": (_distilbert, ["1x128:int64", "1x128:int64"]),
}


def _inputs(case: str) -> list[Any]:
    import numpy as np

    if case.startswith("distilbert"):
        from benchmarks.text import _inputs as ids_and_mask

        return list(ids_and_mask())
    return [np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)]


def export(case: str, frontend: str, out: str) -> dict[str, Any]:
    """One export as a user runs it, timed from the built model to the written bundle."""
    import torch

    import liteexport

    torch.set_num_threads(1)
    torch.manual_seed(0)
    make, shapes = CASES[case]
    model = make().eval()
    t0 = time.perf_counter()
    exported = liteexport.export(model, out, input_shapes=shapes, frontend=frontend)
    seconds = time.perf_counter() - t0
    instructions = int(exported.summary.split(" instructions")[0].rsplit(" ", 1)[-1])
    return {"seconds": seconds, "bytes": int(exported), "instructions": instructions}


def infer(case: str, *bundles: str) -> dict[str, Any]:
    """runtime_py's latency of each bundle, rounds interleaved, and how far apart their outputs are."""
    import numpy as np

    import runtime_py
    from benchmarks.worker import _paired_times

    inputs = _inputs(case)
    modules = {frontend: runtime_py.load(path) for frontend, path in zip(FRONTENDS, bundles, strict=True)}
    outputs = [np.asarray(m.forward(*inputs)) for m in modules.values()]
    calls: dict[str, Callable[[], Any]] = {frontend: _call(m, inputs) for frontend, m in modules.items()}
    times = _paired_times(calls, budget=10.0, rounds=5)
    return {**times, "max_abs_difference": float(np.max(np.abs(outputs[0] - outputs[1])))}


def _call(module: Any, inputs: list[Any]) -> Callable[[], Any]:
    return lambda: module.forward(*inputs)


def _fresh(*args: str) -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-m", "benchmarks.frontends", *args], capture_output=True, text=True,
                            cwd=ROOT, check=False, env={**os.environ, "PYTHONWARNINGS": "ignore",
                                                        "HF_HUB_OFFLINE": "1"})
    if result.returncode != 0:
        return {"error": ((result.stderr.strip().splitlines() or ["failed"])[-1])[:200]}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def main(names: list[str]) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for case in names:
            bundles = [os.path.join(folder, f"{case}.{frontend}.ptl") for frontend in FRONTENDS]
            row: dict[str, Any] = {"case": case, "export": {f: _fresh("export", case, f, path)
                                                            for f, path in zip(FRONTENDS, bundles, strict=True)}}
            failed = [e["error"] for e in row["export"].values() if "error" in e]
            row["infer"] = {"error": failed[0]} if failed else _fresh("infer", case, *bundles)
            rows.append(row)
            _print(row)
    (ROOT / "benchmarks" / "results" / "frontends.json").write_text(json.dumps(rows, indent=1) + "\n")


def _print(row: dict[str, Any]) -> None:
    e, i = row["export"], row["infer"]
    print(f"{row['case']}:")
    for frontend in FRONTENDS:
        if "error" in e[frontend]:
            print(f"  {frontend:12s} export failed: {e[frontend]['error']}")
            continue
        latency = f"runtime_py {i[frontend] * 1e3:8.1f} ms" if frontend in i else ""
        print(f"  {frontend:12s} export {e[frontend]['seconds']:6.1f} s  {e[frontend]['bytes']:>12,} bytes  "
              f"{e[frontend]['instructions']:4d} instructions  {latency}")
    if all("seconds" in e[f] for f in FRONTENDS):
        print(f"  export time, export / torchscript: {e['export']['seconds'] / e['torchscript']['seconds']:.2f}x")
    if "max_abs_difference" in i:
        print(f"  runtime_py, export / torchscript: {i['export'] / i['torchscript']:.2f}x; "
              f"max |difference| between the bundles' outputs {i['max_abs_difference']:.2g}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in ("export", "infer"):
        commands: dict[str, Callable[..., dict[str, Any]]] = {"export": export, "infer": infer}
        print(json.dumps(commands[sys.argv[1]](*sys.argv[2:])))
    elif len(sys.argv) > 2 and sys.argv[1] == "--case":
        main([sys.argv[2]])
    else:
        main(list(CASES))
