"""One measurement, in a process of its own (so memory figures are not mixed up):

    python -m benchmarks.worker export-ours CASE OUT      python -m benchmarks.worker load-ours BUNDLE
    python -m benchmarks.worker export-torch CASE OUT     python -m benchmarks.worker load-torch BUNDLE
    python -m benchmarks.worker export-ours-int8 CASE OUT python -m benchmarks.worker export-torchvision-int8 CASE OUT
    python -m benchmarks.worker infer ENGINE BUNDLE SHAPE
    python -m benchmarks.worker infer-plain BUNDLE SHAPE   (runtime_py and torch, rounds interleaved)

prints one JSON object. Threads are pinned to one (set before numpy/torch load).
"""

from __future__ import annotations

import gc
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import numpy as np  # noqa: E402


def _reset_peak_rss_mb() -> float:
    """Reset the kernel's high-water mark of resident memory to the current resident size
    (Linux >= 4.0: writing 5 to clear_refs) and return that size, the baseline for
    ``_peak_rss_mb``; without it ``ru_maxrss`` keeps the peak of the model's construction."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status_mb("VmHWM")


def _peak_rss_mb() -> float:
    return _status_mb("VmHWM")


def _status_mb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _median_time(fn: Callable[[], Any], budget: float = 2.0, min_runs: int = 5, max_runs: int = 100_000,
                 rounds: int = 5) -> float:
    """The median latency of ``fn``, taken in ``rounds`` rounds of ``budget / rounds`` seconds; the
    lowest round median is returned. This shared 2-core VM alternates between a fast and a ~2x
    slower state for seconds at a time (seen within one process, same code); the lowest round
    is the figure least disturbed by it, and every engine is measured the same way."""
    fn()  # warm up
    medians = []
    for _ in range(rounds):
        times: list[float] = []
        start = time.perf_counter()
        while len(times) < min_runs or (time.perf_counter() - start < budget / rounds and len(times) < max_runs):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        medians.append(statistics.median(times))
    return min(medians)


def _paired_times(fns: dict[str, Callable[[], Any]], budget: float = 4.0, rounds: int = 10) -> dict[str, float]:
    """``_median_time`` for several engines at once, their rounds interleaved, in the CPU time of
    this thread: each engine's figure is the lowest of its round medians. Both engines compute on
    this one thread (BLAS and torch pinned to one), so its CPU time is their work, and the time
    the shared VM's other processes take from it is left out (in wall time the same code came
    out 1.6x and 2.6x slower than torch in two runs, and 1.3x and 2.6x within one)."""
    batch: dict[str, int] = {}  # calls per sample, so a sample spans >= 1 ms (the clock costs ~1 us)
    for name, fn in fns.items():
        fn()  # warm up
        t0 = time.thread_time()
        fn()
        batch[name] = max(1, int(1e-3 / max(time.thread_time() - t0, 1e-7)))
    medians: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            times: list[float] = []
            start = time.perf_counter()
            while len(times) < 3 or (time.perf_counter() - start < budget / rounds / len(fns)):
                t0 = time.thread_time()
                for _ in range(batch[name]):
                    fn()
                times.append((time.thread_time() - t0) / batch[name])
            medians[name].append(statistics.median(times))
    return {name: min(values) for name, values in medians.items()}


def infer_plain(bundle: str, shape: str) -> dict[str, float]:
    """torch's own bundle in runtime_py and in torch's lite interpreter, in one process, rounds
    interleaved; also the largest difference between their outputs."""
    import torch
    import torch.jit.mobile

    import runtime_py

    torch.set_num_threads(1)
    x = np.random.default_rng(0).standard_normal(tuple(int(d) for d in shape.split("x"))).astype(np.float32)
    module = runtime_py.load(bundle)
    lite = torch.jit.mobile._load_for_lite_interpreter(bundle)
    tx = torch.from_numpy(x)
    with torch.no_grad():
        difference = float(np.max(np.abs(np.asarray(module.forward(x)) - lite(tx).numpy())))
        times = _paired_times({"runtime_py": lambda: module.forward(x), "torch": lambda: lite(tx)})
    return {**times, "max_abs_difference": difference}


def _case(name: str) -> Any:
    from benchmarks.models import CASES, PEER_CASES, PLAIN_CASES, QUANTIZED_CASES, scaling_case

    for case in (*CASES, *PLAIN_CASES, *PEER_CASES, *QUANTIZED_CASES):
        if case.name == name:
            return case
    return scaling_case(int(name.removeprefix("mlp_w")))


def export_ours(case_name: str, out: str) -> dict[str, float]:
    import torch

    from liteexport.bundle import write_bundle
    from liteexport.compiler import compile_module

    torch.set_num_threads(1)
    torch.manual_seed(0)  # the weights torch's own export and benchmarks/peer_worker.py's get too
    case = _case(case_name)
    model = case.make().eval()
    gc.collect()  # both exports start without a pending collection (see export_torch)
    base = _reset_peak_rss_mb()
    t0 = time.perf_counter()
    compiled = compile_module(torch.jit.script(model), input_shapes={"forward": [case.input_shape]})
    write_bundle(compiled, out)
    return {"seconds": time.perf_counter() - t0, "peak_mb": _peak_rss_mb() - base}


def export_ours_int8(case_name: str, out: str) -> dict[str, float]:
    """``liteexport export --quantize int8`` of the case's float model, calibrated on
    benchmarks.models' calibration images (the ones ExecuTorch's PT2E export observes)."""
    import torch

    import liteexport
    from benchmarks.models import calibration_images

    torch.set_num_threads(1)
    torch.manual_seed(0)
    case = _case(case_name)
    model = case.make().eval()
    t0 = time.perf_counter()
    liteexport.export(model, out, input_shapes=[case.input_shape], quantize="int8",
                      calibration_inputs=[(image,) for image in calibration_images(case.input_shape)])
    return {"seconds": time.perf_counter() - t0}


def export_torchvision_int8(case_name: str, out: str) -> dict[str, float]:
    """Our bundle of torchvision's quantized variant of the case (qnnpack, as ``quantize=True``
    makes it): the int8 model a PyTorch Mobile user already has, lowered from TorchScript."""
    import torch

    from benchmarks.models import torchvision_quantized
    from benchmarks.torchvision_shim import import_torchvision
    from liteexport.bundle import write_bundle
    from liteexport.compiler import compile_module

    torch.set_num_threads(1)
    case = _case(case_name)
    model = torchvision_quantized(import_torchvision(), case_name.removesuffix("_stats"), case.input_shape[-1])
    t0 = time.perf_counter()
    compiled = compile_module(torch.jit.script(model), input_shapes={"forward": [case.input_shape]})
    write_bundle(compiled, out)
    return {"seconds": time.perf_counter() - t0}


def export_torch(case_name: str, out: str, container: str = "flatbuffer") -> dict[str, float]:
    """torch's own bundle of the plain model; ``container`` "zip" for the pickle-in-zip format."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = _case(case_name).make().eval()
    gc.collect()
    base = _reset_peak_rss_mb()
    t0 = time.perf_counter()
    torch.jit.script(model)._save_for_lite_interpreter(out, _use_flatbuffer=container == "flatbuffer")
    return {"seconds": time.perf_counter() - t0, "peak_mb": _peak_rss_mb() - base}


def _load(load: Callable[[], Any]) -> dict[str, float]:
    load()  # the first load also imports modules: memory that is not this bundle's
    gc.collect()
    before = _rss_mb()
    kept = load()
    added = _rss_mb() - before
    del kept
    return {"seconds": _median_time(load, budget=2.0, min_runs=3, max_runs=200), "rss_added_mb": added}


def load_ours(bundle: str) -> dict[str, float]:
    import runtime_py

    return _load(lambda: runtime_py.load(bundle))


def load_torch(bundle: str, ours: str = "") -> dict[str, float]:
    """torch's lite interpreter; ``ours`` = "ours" for a liteexport bundle (needs our backend)."""
    import torch
    import torch.jit.mobile

    if ours == "ours":
        from liteexport.torch_backend import load_torch_backend

        load_torch_backend()
    return _load(lambda: torch.jit.mobile._load_for_lite_interpreter(bundle))


def _infer_native(bundle: str, x: np.ndarray, threads: int = 1) -> dict[str, float]:
    """The Android sample's native core on the host, through its command-line tool; also its load
    time (map + verify, the lowest of the rounds)."""
    import re
    import struct
    import subprocess
    import tempfile

    from liteexport.native_tool import native_tool

    tool = str(native_tool())  # NativeToolMissing says how to build it
    with tempfile.NamedTemporaryFile(suffix=".bin") as f:
        f.write(b"LXT1" + struct.pack("<I", x.ndim) + struct.pack(f"<{x.ndim}q", *x.shape) + x.tobytes())
        f.flush()
        medians, cpus, loads = [], [], []
        repeat = 20  # the first round; then sized from its median
        for _ in range(5):  # rounds, as in _median_time
            out = subprocess.run([tool, "--threads", str(threads), "--repeat", str(repeat), bundle, f.name],
                                 capture_output=True, text=True, check=True).stdout
            match = re.search(r"median of \d+ runs: ([0-9.]+) ms, thread cpu ([0-9.]+) ms", out)
            load = re.search(r"load ([0-9.]+) ms", out)
            assert match is not None and load is not None, out
            medians.append(float(match[1]) / 1e3)
            cpus.append(float(match[2]) / 1e3)
            # about 0.4 s per round, as _median_time's budget (resnet18 took minutes with 200 runs)
            repeat = max(5, min(200, int(0.4 / max(medians[-1], 1e-6))))
            loads.append(float(load[1]) / 1e3)
    # with one thread, the thread's CPU time is the run's work (as benchmarks/peer_worker.py's)
    cpu = {"cpu_seconds": min(cpus)} if threads == 1 else {}
    return {"seconds": min(medians), "load_seconds": min(loads), **cpu}


def infer(engine: str, bundle: str, shape: str, threads: str = "1") -> dict[str, float]:
    dims = tuple(int(d) for d in shape.split("x"))
    x = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
    if engine == "native":
        return _infer_native(bundle, x, int(threads))
    if engine.startswith("runtime_py"):
        import runtime_py

        module = runtime_py.load(bundle)
        return {"seconds": _median_time(lambda: module.forward(x))}
    import torch
    import torch.jit.mobile

    torch.set_num_threads(int(threads))
    if engine == "torch_ours":
        from liteexport.torch_backend import load_torch_backend

        load_torch_backend()
    lite = torch.jit.mobile._load_for_lite_interpreter(bundle)
    tx = torch.from_numpy(x)
    with torch.no_grad():
        return {"seconds": _median_time(lambda: lite(tx))}


COMMANDS: dict[str, Callable[..., dict[str, float]]] = {
    "export-ours": export_ours, "export-ours-int8": export_ours_int8,
    "export-torchvision-int8": export_torchvision_int8, "export-torch": export_torch, "load-ours": load_ours,
    "load-torch": load_torch, "infer": infer, "infer-plain": infer_plain,
}

if __name__ == "__main__":
    print(json.dumps(COMMANDS[sys.argv[1]](*sys.argv[2:])))
