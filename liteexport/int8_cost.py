"""What ``--quantize int8`` costs against the float model, measured at export on the user's own
inputs: on the calibration sets the grids were observed on, on the held-out ones
(liteexport.held_out: the last quarter of the calibration sets, or sets drawn from a single set's
statistics) and on the ``--example-inputs``, each against torch's float outputs. Beyond
liteexport.static_int8.TOLERANCE times the output's range the export fails (exit 9) with advice
that fits what failed, unless ``--no-check`` (the cost is then stated and the bundle written).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from liteexport.held_out import Split
from liteexport.lowered import CompiledModule
from liteexport.static_int8 import TOLERANCE
from liteexport.test_vectors import TestVector, record_test_vectors
from liteexport.weight_precision import weight_cost

# the options each piece of advice names exist in the CLI (and, in parentheses, the API)
_NO_CHECK = "or --no-check (check=False) to write it with this cost"
_DYNAMIC = ("--quantize dynamic-int8 (int8 weights of linear layers only, float activations: no activation grids "
            "to miss)")
# off on the inputs the grids were observed on: int8 itself loses too much in this model
ON_CALIBRATION = (f"int8 activations lose too much in this model even on the inputs their grids were observed on: "
                  f"use {_DYNAMIC}, {_NO_CHECK}")
# off on other inputs: the grids clip or are too coarse for them
ON_OTHERS = ("the activation grids observed on the calibration inputs do not fit these inputs: give more "
             "calibration inputs, like those the model will see (--calibration-inputs FILE, repeatable; "
             f"calibration_inputs=[...] in the API), or use {_DYNAMIC}, {_NO_CHECK}")


def int8_cost(scripted: Any, compiled: CompiledModule, splits: Mapping[str, Split],
              examples: Mapping[str, Sequence[TestVector]], what: str, options: str, enforce: bool) -> list[str]:
    """The cost notes of the int8 program ``compiled`` (``what``: "int8 weights and activations",
    ``options``: the options that made it) per method: on each split's calibration and held-out
    sets (torch's outputs from ``scripted``, the float model) and on the stored ``examples``.
    VerificationError beyond TOLERANCE x the output's range when ``enforce``."""
    notes: list[str] = []
    for method, split in splits.items():
        for label, sets, advice in ((split.fit_label, split.fit, ON_CALIBRATION),
                                    (split.held_out_label, split.held_out, ON_OTHERS)):
            vectors = record_test_vectors(scripted, {method: sets})
            notes += weight_cost(compiled, vectors, TOLERANCE, what, options, "range", label, advice, enforce)
    for method, items in examples.items():
        label = f"{len(items)} example input set{'s' if len(items) > 1 else ''}"
        notes += weight_cost(compiled, {method: items}, TOLERANCE, what, options, "range", label, ON_OTHERS, enforce)
    return notes
