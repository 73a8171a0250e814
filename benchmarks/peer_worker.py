"""One measurement of a peer runtime, in a process of its own, run with the peers' venv
(benchmarks/peers.py makes it: torch==2.13.0, executorch==1.5.1, onnxruntime, onnx):

    python -m benchmarks.peer_worker export-et CASE OUT.pte      torch.export -> XNNPACK-lowered .pte
    python -m benchmarks.peer_worker export-et-int8 CASE OUT.pte the same, int8 (PT2E XNNPACKQuantizer)
    python -m benchmarks.peer_worker export-onnx CASE OUT.onnx   torch.onnx.export
    python -m benchmarks.peer_worker infer-et PTE SHAPE THREADS
    python -m benchmarks.peer_worker infer-ort ONNX SHAPE THREADS

prints one JSON object: an inference's median latency (lowest of the round medians, as
benchmarks/worker.py measures every engine) and the load time (program + method, or session).
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.models import calibration_images
from benchmarks.worker import _case, _median_time


def _model_and_input(case_name: str) -> tuple[Any, Any]:
    import torch

    torch.manual_seed(0)  # the weights benchmarks/worker.py's exports get
    case = _case(case_name)
    x = torch.from_numpy(np.random.default_rng(0).standard_normal(case.input_shape).astype(np.float32))
    return case.make().eval(), x


def export_et(case_name: str, out: str) -> dict[str, float]:
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    model, x = _model_and_input(case_name)
    t0 = time.perf_counter()
    with torch.no_grad():
        program = torch.export.export(model, (x,))
    lowered = to_edge_transform_and_lower(program, partitioner=[XnnpackPartitioner()]).to_executorch()
    with open(out, "wb") as f:
        f.write(lowered.buffer)
    return {"seconds": time.perf_counter() - t0}


def export_et_int8(case_name: str, out: str) -> dict[str, float]:
    """ExecuTorch's int8 path: PT2E static quantization with XNNPACKQuantizer (weights symmetric int8
    per channel, activations asymmetric int8 per tensor, observed on benchmarks.models'
    calibration images), then the XNNPACK delegate, which runs it with its qs8/qc8 kernels."""
    import torch
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from executorch.exir import to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    model, x = _model_and_input(case_name)
    t0 = time.perf_counter()
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    with torch.no_grad():
        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
        for image in calibration_images(tuple(x.shape)):
            prepared(torch.from_numpy(image))
        program = torch.export.export(convert_pt2e(prepared), (x,))
    lowered = to_edge_transform_and_lower(program, partitioner=[XnnpackPartitioner()]).to_executorch()
    with open(out, "wb") as f:
        f.write(lowered.buffer)
    return {"seconds": time.perf_counter() - t0}


def export_onnx(case_name: str, out: str) -> dict[str, float]:
    import torch

    model, x = _model_and_input(case_name)
    t0 = time.perf_counter()
    with torch.no_grad():
        torch.onnx.export(model, (x,), out, input_names=["x"], dynamo=False)
    return {"seconds": time.perf_counter() - t0}


def _median_cpu_time(fn: Callable[[], Any], budget: float = 2.0, rounds: int = 5) -> float:
    """``_median_time`` in this thread's CPU time: with one thread, the run's work without the time
    the shared VM's other processes take from it (liteexport_native_run reports the same figure)."""
    fn()
    medians = []
    for _ in range(rounds):
        times: list[float] = []
        start = time.perf_counter()
        while len(times) < 5 or time.perf_counter() - start < budget / rounds:
            t0 = time.thread_time()
            fn()
            times.append(time.thread_time() - t0)
        medians.append(statistics.median(times))
    return min(medians)


def _timed(load: Callable[[], Any], rounds: int = 5) -> tuple[Any, float]:
    """The loaded object and the lowest of ``rounds`` load times (the VM's drift, as in _median_time)."""
    best, loaded = float("inf"), None
    for _ in range(rounds):
        t0 = time.perf_counter()
        loaded = load()
        best = min(best, time.perf_counter() - t0)
    return loaded, best


def infer_et(pte: str, shape: str, threads: str) -> dict[str, float]:
    import torch
    from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
    from executorch.runtime import Runtime

    _unsafe_reset_threadpool(int(threads))  # the XNNPACK delegate's pthreadpool
    torch.set_num_threads(int(threads))
    runtime = Runtime.get()
    method, load = _timed(lambda: runtime.load_program(pte).load_method("forward"))
    x = torch.from_numpy(np.random.default_rng(0).standard_normal(tuple(int(d) for d in shape.split("x")))
                         .astype(np.float32))
    return {"seconds": _median_time(lambda: method.execute([x])), "load_seconds": load,
            **_cpu(int(threads), lambda: method.execute([x]))}


def infer_ort(onnx_path: str, shape: str, threads: str) -> dict[str, float]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = int(threads)
    options.inter_op_num_threads = 1
    session, load = _timed(lambda: ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"]))
    x = np.random.default_rng(0).standard_normal(tuple(int(d) for d in shape.split("x"))).astype(np.float32)
    return {"seconds": _median_time(lambda: session.run(None, {"x": x})), "load_seconds": load,
            **_cpu(int(threads), lambda: session.run(None, {"x": x}))}


def _cpu(threads: int, fn: Callable[[], Any]) -> dict[str, float]:
    """With one thread, also the median in CPU time (all of the work is on this thread)."""
    return {"cpu_seconds": _median_cpu_time(fn)} if threads == 1 else {}


COMMANDS: dict[str, Callable[..., dict[str, float]]] = {
    "export-et": export_et, "export-et-int8": export_et_int8, "export-onnx": export_onnx, "infer-et": infer_et,
    "infer-ort": infer_ort,
}

if __name__ == "__main__":
    print(json.dumps(COMMANDS[sys.argv[1]](*sys.argv[2:])))
