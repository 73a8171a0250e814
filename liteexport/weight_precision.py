"""``--weights fp16``: the compiled program's float32 weights stored as float16, halving a float
model's bundle. Every engine widens them to float32 once, when the bundle is loaded, and computes
in float32, as TFLite's float16 post-training quantization does on CPUs: the download shrinks,
the arithmetic does not change.

What the narrower weights cost is measured at export, on the self-check's inputs, against the
float model's outputs (torch's), and stated in the notes; beyond ``FP16_TOLERANCE`` the export
fails (VerificationError, exit 9), as a wrong program would.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import numpy as np

from liteexport.errors import VerificationError
from liteexport.lowered import CompiledModule
from liteexport.parity import is_constant
from liteexport.test_vectors import TestVector
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.backend import widened
from runtime_py.backends.demo.plan import build_plan

WEIGHT_PRECISIONS = ("fp32", "fp16")
# the largest error allowed, relative to the output's magnitude (at least 1): float16 keeps 11
# significant bits (a relative rounding of 2**-11 = 4.9e-4 per weight); sums of many products
# average much of it out, so 1e-2 leaves room for deep models and still catches an overflow
FP16_TOLERANCE = 1e-2
_HALF_MAX = float(np.finfo(np.float16).max)


def half_weights(compiled: CompiledModule) -> tuple[CompiledModule, int]:
    """``compiled`` with each float32 weight stored as float16, and how many were. A weight with a
    value float16 cannot hold (beyond +-65504, or not finite: the -3.4e38 of an attention mask)
    stays float32, as integer and bool weights do."""
    weights, narrowed = [], 0
    for weight in compiled.weights:
        if weight.dtype == np.float32 and weight.size and bool(np.all(np.abs(weight) <= _HALF_MAX)):
            weights.append(weight.astype(np.float16))
            narrowed += 1
        else:
            weights.append(weight)
    return dataclasses.replace(compiled, weights=tuple(weights)), narrowed


def weight_cost(compiled: CompiledModule, vectors: Mapping[str, Sequence[TestVector]],
                tolerance: float = FP16_TOLERANCE) -> list[str]:
    """A note per checked method: the largest and mean absolute error of ``compiled`` (narrowed
    weights) against the float model's outputs on ``vectors``, and where the outputs are class
    scores (rows of more than one) how often the top-1 class agrees. VerificationError when an
    output is off by more than ``tolerance`` times its magnitude."""
    notes = []
    for program in compiled.programs:
        items = vectors.get(program.method, ())
        if not items:
            continue
        plan = build_plan(program, widened(compiled.weights))
        errors: list[np.ndarray] = []
        agree = rows = 0
        for vector in items:
            got = [np.asarray(o) for o in executor.run(plan, list(vector.inputs))]
            expected = [np.asarray(e) for e in vector.expected if not is_constant(e)]
            for g, e in zip(got, expected, strict=True):
                if e.dtype.kind != "f":
                    continue
                error = np.abs(g.astype(np.float64) - e)
                limit = tolerance * max(1.0, float(np.abs(e).max(initial=0.0)))
                if not np.all(error <= limit):
                    raise VerificationError(
                        f"self-check failed: with float16 weights, {program.method} is off the float model by "
                        f"{float(error.max()):.3g}, more than the {tolerance:g} x magnitude allowed ({limit:.3g}). "
                        "Nothing was written; export without --weights fp16")
                errors.append(error.ravel())
                if e.ndim >= 2 and e.shape[-1] > 1:
                    classes = e.shape[-1]
                    agree += int(np.sum(g.reshape(-1, classes).argmax(-1) == e.reshape(-1, classes).argmax(-1)))
                    rows += e.size // e.shape[-1]
        if not errors:
            continue
        flat = np.concatenate(errors)
        top1 = f", top-1 agreement {agree}/{rows}" if rows else ""
        notes.append(f"float16 weights cost {program.method}: max abs error {flat.max():.3g}, mean {flat.mean():.3g} "
                     f"against the float model on {len(items)} input set{'s' if len(items) > 1 else ''}{top1} "
                     f"(allowed: {tolerance:g} x the output's magnitude)")
    return notes
