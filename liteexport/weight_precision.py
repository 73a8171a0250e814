"""Narrow weight storage: the compiled program's float32 weights stored smaller, widened back to
float32 once, when the bundle is loaded, by every engine, which then computes in float32: the
download shrinks, the arithmetic does not change.

- ``--weights fp16``: every float32 weight as float16 (as TFLite's float16 post-training
  quantization does on CPUs): about half the bundle.
- ``--quantize dynamic-int8``: the weights of linear layers (LINEAR, and MATMUL by a constant,
  which is what LSTM and GRU cells and HF's Conv1D lower to) as int8, symmetric per output
  channel, torch's per-channel qint8 tensors in the bundle: "int8 weights, float activations",
  the weights torch's quantize_dynamic makes, dequantized rather than run as int8 kernels.
  Embedding tables too, per row (torch quantizes them with its own per-row 8-bit scheme): in a
  text model they are the largest weights.

What the narrower weights cost is measured at export, on the self-check's inputs, against the
float model's outputs (torch's), and stated in the notes; beyond the stated tolerance the export
fails (VerificationError, exit 9), as a wrong program would, unless --no-check (then it is stated
only, on the stored example inputs).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from bundle_format.program import OpCode
from bundle_format.ptmf import ScalarType
from liteexport.errors import VerificationError
from liteexport.lowered import CompiledModule
from liteexport.parity import is_constant
from liteexport.test_vectors import StoredTolerance, TestVector
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.backend import widened
from runtime_py.backends.demo.plan import build_plan
from runtime_py.quantized_tensor import QuantizedTensor

WEIGHT_PRECISIONS = ("fp32", "fp16")
QUANTIZATIONS = ("none", "dynamic-int8", "int8")
# the largest error allowed, relative to the output's magnitude (at least 1): float16 keeps 11
# significant bits (a relative rounding of 2**-11 = 4.9e-4 per weight); sums of many products
# average much of it out, so 1e-2 leaves room for deep models and still catches an overflow
FP16_TOLERANCE = 1e-2
# per-channel symmetric int8 rounds each weight to within half a step of max|w| / 127 of its
# channel: about 0.4% of the channel's largest weight, more than float16's 0.05%
INT8_TOLERANCE = 5e-2
_HALF_MAX = float(np.finfo(np.float16).max)


def half_weights(compiled: CompiledModule) -> tuple[CompiledModule, int]:
    """``compiled`` with each float32 weight stored as float16, and how many were. A weight with a
    value float16 cannot hold (beyond +-65504, or not finite: the -3.4e38 of an attention mask)
    stays float32, as integer and bool weights do."""
    weights: list[np.ndarray | QuantizedTensor] = []
    narrowed = 0
    for weight in compiled.weights:
        if isinstance(weight, np.ndarray) and weight.dtype == np.float32 and weight.size and \
                bool(np.all(np.abs(weight) <= _HALF_MAX)):
            weights.append(weight.astype(np.float16))
            narrowed += 1
        else:
            weights.append(weight)
    return dataclasses.replace(compiled, weights=tuple(weights)), narrowed


def weight_cost(compiled: CompiledModule, vectors: Mapping[str, Sequence[TestVector]],
                tolerance: float = FP16_TOLERANCE, what: str = "float16 weights",
                option: str = "--weights fp16", relative_to: str = "magnitude", label: str = "",
                advice: str = "", enforce: bool = True) -> list[str]:
    """A note per checked method: the largest and mean absolute error of ``compiled`` (narrowed
    weights) against the float model's outputs on ``vectors`` (``label`` names them with their
    count, "3 of 4 calibration sets"; default "N input sets"), and where the outputs are class
    scores (rows of more than one) how often the top-1 class agrees. An output off by more than
    ``tolerance`` times its ``relative_to`` ("magnitude": max |output|, at least 1; "range": max -
    min of the output, over the input set) is a VerificationError whose message ends in ``advice``
    (default: export without ``option``); with ``enforce`` False (--no-check) the note says so instead."""
    notes = []
    for program in compiled.programs:
        items = vectors.get(program.method, ())
        if not items:
            continue
        plan = build_plan(program, widened(compiled.weights))
        errors: list[np.ndarray] = []
        agree = rows = 0
        worst = 0.0  # the largest error as a fraction of its output's magnitude or range
        on = label or f"{len(items)} input set{'s' if len(items) > 1 else ''}"
        for vector in items:
            got = [np.asarray(o) for o in executor.run(plan, list(vector.inputs))]
            expected = [np.asarray(e) for e in vector.expected if not is_constant(e)]
            for g, e in zip(got, expected, strict=True):
                if e.dtype.kind != "f":
                    continue
                error = np.abs(g.astype(np.float64) - e)
                scale = _scale(e, relative_to)
                limit = tolerance * scale  # (accepted_tolerances stores the largest of these)
                if enforce and not np.all(error <= limit):
                    largest = float(error.max())
                    raise VerificationError(
                        f"self-check failed: with {what}, {program.method} is off the float model by {largest:.3g} "
                        f"on {on}: {largest / scale:.2g} x the output's {relative_to}, more than the {tolerance:g} x "
                        f"allowed ({limit:.3g}). Nothing was written; {advice or f'export without {option}'}")
                errors.append(error.ravel())
                worst = max(worst, float(error.max(initial=0.0)) / scale)
                if e.ndim >= 2 and e.shape[-1] > 1:
                    classes = e.shape[-1]
                    agree += int(np.sum(g.reshape(-1, classes).argmax(-1) == e.reshape(-1, classes).argmax(-1)))
                    rows += e.size // e.shape[-1]
        if not errors:
            continue
        flat = np.concatenate(errors)
        top1 = f", top-1 agreement {agree}/{rows}" if rows else ""
        beyond = ", beyond it: written anyway (--no-check)" if worst > tolerance else ""
        notes.append(f"{what} cost {program.method}: max abs error {flat.max():.3g}, mean {flat.mean():.3g} "
                     f"against the float model on {on}{top1} ({worst:.2g} x the output's {relative_to}; "
                     f"allowed: {tolerance:g} x{beyond})")
    return notes


def accepted_tolerances(vectors: Mapping[str, Sequence[TestVector]], tolerance: float, relative_to: str,
                        rule: str) -> dict[str, StoredTolerance]:
    """Per method of ``vectors``, the absolute error ``weight_cost`` accepted on them with the same
    ``tolerance`` and ``relative_to``: the largest of its limits over the method's float outputs
    (no rtol: ``weight_cost`` has none). What the export stores beside the test vectors, for
    ``liteexport verify`` (liteexport.test_vectors); a method without float outputs has none."""
    tolerances = {}
    for method, items in vectors.items():
        limits = [tolerance * _scale(e, relative_to) for vector in items
                  for e in (np.asarray(v) for v in vector.expected if not is_constant(v)) if e.dtype.kind == "f"]
        if limits:
            tolerances[method] = StoredTolerance(max(limits), 0.0, rule)
    return tolerances


def _scale(expected: np.ndarray, relative_to: str) -> float:
    """What an output's error is measured against: its magnitude (at least 1) or its range (max -
    min; its magnitude when it holds one value)."""
    magnitude = max(1.0, float(np.abs(expected).max(initial=0.0)))
    finite = expected[np.isfinite(expected)]
    spread = float(finite.max() - finite.min()) if relative_to == "range" and finite.size else 0.0
    return spread if spread > 0 else magnitude


def int8_linear_weights(compiled: CompiledModule) -> tuple[CompiledModule, int]:
    """``compiled`` with the weights of its linear layers and its embedding tables as per-channel
    symmetric qint8 tensors, and how many were: a float32 constant read as the weight of LINEAR
    ([out, in]: a scale per row), as the right operand of MATMUL (2-d [in, out]: a scale per
    column) or as the table of EMBEDDING (a scale per row), and by nothing else (a table tied to
    an output layer keeps its float values)."""
    def axis(op: OpCode, position: int, ndim: int) -> int | None:
        if position == 1 and op == OpCode.LINEAR or position == 0 and op == OpCode.EMBEDDING:
            return 0  # a scale per output row; an embedding table's: per row (torch's per-row 8-bit)
        return 1 if position == 1 and op == OpCode.MATMUL and ndim == 2 else None

    return int8_weights(compiled, weight_axes(compiled, axis, ndims=(2,)))


def weight_axes(compiled: CompiledModule, axis_of: Callable[[OpCode, int, int], int | None],
                ndims: tuple[int, ...]) -> dict[int, int]:
    """Weight index -> its output-channel axis, for each finite float32 constant of ``ndims``
    dimensions every reader of which ``axis_of(op, operand position, ndim)`` gives the same axis
    (None: a reader that keeps it float)."""
    axes: dict[int, int] = {}
    other: set[int] = set()
    for program in compiled.programs:
        weight_of = {c.slot: c.weight for c in program.constants}
        for ins in program.instructions:
            for position, slot in enumerate(ins.inputs):
                weight = weight_of.get(slot)
                if weight is None:
                    continue
                axis = axis_of(ins.op, position, int(np.ndim(compiled.weights[weight])))
                if axis is None or axes.setdefault(weight, axis) != axis:
                    other.add(weight)
    return {index: axis for index, axis in axes.items() if index not in other and _quantizable(compiled.weights[index],
                                                                                               ndims)}


def _quantizable(array: np.ndarray | QuantizedTensor, ndims: tuple[int, ...]) -> bool:
    return isinstance(array, np.ndarray) and array.dtype == np.float32 and array.ndim in ndims and \
        bool(np.all(np.isfinite(array)))


def int8_weights(compiled: CompiledModule, axes: Mapping[int, int]) -> tuple[CompiledModule, int]:
    """``compiled`` with the weights ``axes`` names (index -> output-channel axis) as per-channel
    symmetric qint8 tensors, and how many."""
    weights = list(compiled.weights)
    for index, axis in axes.items():
        array = weights[index]
        assert isinstance(array, np.ndarray)
        weights[index] = _per_channel_int8(array, axis)
    return dataclasses.replace(compiled, weights=tuple(weights)), len(axes)


def _per_channel_int8(weight: np.ndarray, axis: int) -> QuantizedTensor:
    """Symmetric int8 per channel along ``axis``: scale = max|w| / 127 (zero point 0, the range
    -127..127, as XNNPACK's qs8 weights), each integer computed as torch's quantize_per_channel
    computes it: nearbyint(w * (1.0f / float(scale))) in float32, half to even."""
    reduce = tuple(d for d in range(weight.ndim) if d != axis)
    largest = np.abs(weight).max(axis=reduce).astype(np.float64)
    scales = np.where(largest > 0, largest / 127.0, 1.0)
    shape = [1] * weight.ndim
    shape[axis] = -1
    inverse = (np.float32(1.0) / scales.astype(np.float32)).reshape(shape)
    q = np.clip(np.rint(weight * inverse), -127, 127).astype(np.int8)
    return QuantizedTensor(np.ascontiguousarray(q), ScalarType.QINT8, scales=scales,
                           zero_points=np.zeros(len(scales), np.int64), axis=axis)
