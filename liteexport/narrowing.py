"""The pipeline's narrow stage: a whole lowering's weights stored as int8 or float16 (and, for
``--quantize int8``, its activations on int8 grids), with what that costs against the float model
(liteexport.pipeline)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from liteexport.held_out import Split, hold_out
from liteexport.test_vectors import StoredTolerance, TestVector

if TYPE_CHECKING:
    from liteexport.pipeline import Report, Request, Source, WholeLowering

__all__ = ["narrow"]


def _quiet(_: str) -> None:
    """A report nobody reads."""


def narrow(lowering: WholeLowering, request: Request, checked: Mapping[str, Sequence[TestVector]],
           progress: Report = _quiet, source: Source | None = None,
           sources: Mapping[str, Sequence[str]] | None = None) -> tuple[
               WholeLowering, tuple[str, ...], dict[str, StoredTolerance]]:
    """``--quantize dynamic-int8`` or ``int8`` then ``--weights fp16``: the lowering with its linear
    layers' weights stored as per-channel int8 (with ``int8``, its convolutions' too and int8
    activation grids observed on the calibration inputs less the held-out ones, liteexport.static_int8
    and liteexport.held_out) and the other float32 weights as float16, and notes on how many were and
    what it costs against the float model where there are inputs to measure it on: ``checked`` (the
    self-check's vectors, or with ``check`` False the stored ones), and with ``int8`` the calibration
    and held-out inputs, run by torch's float model in ``source`` (liteexport.int8_cost). Beyond the
    tolerance liteexport.weight_precision or liteexport.static_int8 states it fails (VerificationError)
    unless ``check`` is False. Also, per method with stored test vectors (from the example inputs),
    the tolerance those were checked against, for the bundle."""
    from liteexport import weight_precision as wp

    compiled, notes = lowering.compiled, []
    total = len(compiled.weights)
    if request.quantize == "dynamic-int8":
        progress("storing the linear layers' and embedding tables' weights as int8")
        compiled, count = wp.int8_linear_weights(compiled)
        notes.append(f"{count} of {total} weights (linear layers' and embedding tables') stored as int8, per "
                     "output channel")
    splits: dict[str, Split] = {}
    if request.quantize == "int8":
        from liteexport import static_int8

        # calibrated on all but the held-out sets, which the cost is measured on
        splits = {method: hold_out(sets, "calibration", (sources or {}).get(method, ()))
                  for method, sets in request.calibration.items()}
        progress(f"quantizing to int8: observing activation ranges on "
                 f"{', '.join(split.fit_label for split in splits.values())}")
        compiled, int8_notes = static_int8.quantize_int8(compiled, splits, sources)
        notes += int8_notes
    if request.weights == "fp16":
        progress("storing the weights as float16")
        compiled, count = wp.half_weights(compiled)
        kept = sum(isinstance(w, np.ndarray) and w.dtype == np.float32 for w in compiled.weights)
        notes.append(f"{count} of {total} weights stored as float16"
                     + (f" ({kept} kept float32: beyond float16's range)" if kept else ""))
    int8, fp16 = request.quantize != "none", request.weights == "fp16"
    int8_what = "int8 weights and activations" if request.quantize == "int8" else "int8 weights"
    what = " and ".join(w for w, on in ((int8_what, int8), ("float16 weights", fp16)) if on)
    options = " and ".join(o for o, on in ((f"--quantize {request.quantize}", int8), ("--weights fp16", fp16)) if on)
    examples: dict[str, Sequence[TestVector]] = {method: vectors for method, vectors in checked.items()
                                                 if method in request.examples}  # the stored test vectors
    if request.quantize == "int8" and source is not None:
        from liteexport.int8_cost import int8_cost
        from liteexport.static_int8 import TOLERANCE

        progress("int8 cost: the float model on the calibration inputs and the held-out ones")
        tolerance, relative_to = TOLERANCE, "range"
        notes += int8_cost(source.scripted, compiled, splits, examples, what, options, request.check)
    else:
        tolerance, relative_to = wp.INT8_TOLERANCE if int8 else wp.FP16_TOLERANCE, "magnitude"
        notes += wp.weight_cost(compiled, checked, tolerance, what, options, enforce=request.check)
    tolerances = wp.accepted_tolerances(examples, tolerance, relative_to,
                                        f"{tolerance:g} x the output's {relative_to} under {options}") \
        if request.check else {}
    return replace(lowering, compiled=compiled), tuple(notes), tolerances
