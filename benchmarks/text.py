#!/usr/bin/env python3
"""DistilBERT (the base architecture: 6 layers, dim 768, vocab 30522; random weights built in
code, no hub access) at sequence length 128, side by side in one run:

    python benchmarks/text.py              # about 3 minutes on 2 cores

Rows: export time and bundle size (liteexport's compiled bundle against torch's own lite bundle
of the same traced model), and the latency of one forward (ids and attention mask, int64 1x128)
in runtime_py (our bundle), torch's lite interpreter running our bundle (liteexport's torch
backend) and running torch's own bundle, and the Android sample's native core on the host when
its tool is built (native/build.sh host) and runs typed programs. Each measurement
runs in a fresh process with one thread; latencies are CPU time on that thread, the lowest of
round medians (benchmarks/worker.py: the shared VM drifts). Writes benchmarks/results/text.json.
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
# one BLAS thread in every measuring process (set before numpy loads, as benchmarks/worker.py):
# the latencies are the computing thread's CPU time, which BLAS threads would escape
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

LENGTH = 128
PADDING = 16  # the mask's last 16 positions are padding


def _model() -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch

    from benchmarks.torchvision_shim import import_torchvision

    import_torchvision()  # transformers imports torchvision, whose CUDA wheel's C++ ops do not load here
    import transformers

    class IdsAndMask(torch.nn.Module):  # type: ignore[misc]  # (torch is imported here, not typed)
        def __init__(self, model: torch.nn.Module) -> None:
            super().__init__()
            self.model = model

        def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            return self.model(input_ids=ids, attention_mask=mask, return_dict=False)[0]

    torch.manual_seed(0)
    return IdsAndMask(transformers.DistilBertModel(transformers.DistilBertConfig())).eval()


def _inputs() -> tuple[Any, Any]:
    import numpy as np

    ids = np.random.default_rng(0).integers(0, 30522, size=(1, LENGTH)).astype(np.int64)
    mask = np.ones((1, LENGTH), np.int64)
    mask[0, LENGTH - PADDING:] = 0
    return ids, mask


def export(kind: str, out: str) -> dict[str, float]:
    """``kind`` "ours" (traced, compiled with typed static shapes) or "torch" (torch's own lite bundle)."""
    import torch

    torch.set_num_threads(1)
    model = _model()
    example = tuple(torch.from_numpy(a) for a in _inputs())
    t0 = time.perf_counter()
    traced = torch.jit.trace(model, example, strict=False)
    if kind == "ours":
        from liteexport.bundle import write_bundle
        from liteexport.compiler import compile_module
        from liteexport.input_spec import TensorSpec

        spec = TensorSpec((1, LENGTH), "int64")
        write_bundle(compile_module(traced, input_shapes={"forward": [spec, spec]}), out)
    else:
        traced._save_for_lite_interpreter(out, _use_flatbuffer=True)
    return {"seconds": time.perf_counter() - t0, "bytes": os.path.getsize(out)}


def infer(ours: str, theirs: str) -> dict[str, float]:
    """runtime_py and torch's lite interpreter (our bundle and torch's), rounds interleaved in one
    process, in this thread's CPU time; plus the largest difference from torch's own bundle."""
    import numpy as np
    import torch
    import torch.jit.mobile

    import runtime_py
    from benchmarks.worker import _paired_times
    from liteexport.torch_backend import load_torch_backend

    torch.set_num_threads(1)
    load_torch_backend()
    ids, mask = _inputs()
    module = runtime_py.load(ours)
    lite_ours = torch.jit.mobile._load_for_lite_interpreter(ours)
    lite_own = torch.jit.mobile._load_for_lite_interpreter(theirs)
    tids, tmask = torch.from_numpy(ids), torch.from_numpy(mask)
    with torch.no_grad():
        reference = lite_own(tids, tmask).numpy()
        difference = float(np.max(np.abs(np.asarray(module.forward(ids, mask)) - reference)))
        times = _paired_times({"runtime_py": lambda: module.forward(ids, mask),
                               "torch_lite_ours": lambda: lite_ours(tids, tmask),
                               "torch_lite_own": lambda: lite_own(tids, tmask)}, budget=20.0, rounds=5)
    return {**times, "max_abs_difference": difference}


def native(ours: str) -> dict[str, Any]:
    """The native core's tool on .npy inputs, when it is built and runs typed programs."""
    import re

    import numpy as np

    from liteexport.native_tool import NativeToolMissing, native_tool

    try:
        tool = str(native_tool())
    except NativeToolMissing as missing:
        return {"error": str(missing)}
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for name, array in zip(("ids", "mask"), _inputs(), strict=True):
            paths.append(os.path.join(folder, f"{name}.npy"))
            np.save(paths[-1], array)
        run = subprocess.run([tool, "--threads", "1", "--repeat", "10", ours, *paths],
                             capture_output=True, text=True, check=False)
    match = re.search(r"median of \d+ runs: ([0-9.]+) ms, thread cpu ([0-9.]+) ms", run.stdout)
    if run.returncode != 0 or match is None:
        return {"error": (run.stderr.strip().splitlines() or ["failed"])[-1][:200]}
    return {"seconds": float(match[1]) / 1e3, "cpu_seconds": float(match[2]) / 1e3}


def _fresh(*args: str) -> dict[str, Any]:
    result = subprocess.run([sys.executable, "-m", "benchmarks.text", *args], capture_output=True, text=True,
                            cwd=ROOT, check=False, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    if result.returncode != 0:
        return {"error": ((result.stderr.strip().splitlines() or ["failed"])[-1])[:200]}
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        ours, theirs = os.path.join(folder, "distilbert.ptl"), os.path.join(folder, "distilbert.torch.ptl")
        row: dict[str, Any] = {"case": f"distilbert_base_s{LENGTH}",
                               "export": {"ours": _fresh("export", "ours", ours),
                                          "torch": _fresh("export", "torch", theirs)}}
        row["infer"] = _fresh("infer", ours, theirs)
        row["infer"]["native"] = _fresh("native", ours)
    (ROOT / "benchmarks" / "results" / "text.json").write_text(json.dumps(row, indent=1) + "\n")
    e, i = row["export"], row["infer"]
    print(f"{row['case']}: export {e['ours'].get('seconds', 0):.1f} s ({e['ours'].get('bytes', 0):,} bytes), "
          f"torch's {e['torch'].get('seconds', 0):.1f} s ({e['torch'].get('bytes', 0):,} bytes)")
    if "error" in i:
        print(f"  inference: {i['error']}")
        return
    own = i["torch_lite_own"]
    for engine in ("runtime_py", "torch_lite_ours", "torch_lite_own"):
        print(f"  {engine:16s} {i[engine] * 1e3:8.1f} ms  {i[engine] / own:5.2f}x torch lite (own bundle)")
    nat = i["native"]
    print(f"  {'native':16s} " + (f"{nat['cpu_seconds'] * 1e3:8.1f} ms  {nat['cpu_seconds'] / own:5.2f}x torch lite"
                                  if "cpu_seconds" in nat else nat["error"]))
    print(f"  max |runtime_py - torch lite| = {i['max_abs_difference']:.2g}")


if __name__ == "__main__":
    if len(sys.argv) > 1:
        commands: dict[str, Callable[..., dict[str, Any]]] = {"export": export, "infer": infer, "native": native}
        command = commands[sys.argv[1]]
        print(json.dumps(command(*sys.argv[2:])))
    else:
        main()
