"""Shared by the typed-ops and text-model tests: compile a traced module with typed input specs,
run it in runtime_py and through the torch backend (torch's lite interpreter), compare with eager."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch

import runtime_py
from liteexport.backend import DEMO_BACKEND
from liteexport.bundle import write_bundle
from liteexport.input_spec import TensorSpec
from liteexport.lowered import CompiledModule
from liteexport.parity import as_outputs, scaled_atol

RTOL = 1e-4
_NAMES = {torch.float32: "float32", torch.int64: "int64", torch.int32: "int32", torch.bool: "bool"}


def spec_of(t: torch.Tensor) -> TensorSpec:
    return TensorSpec(tuple(t.shape), _NAMES[t.dtype])


def compile_traced(module: torch.nn.Module, examples: Sequence[torch.Tensor]) -> tuple[torch.jit.ScriptModule,
                                                                                        CompiledModule]:
    traced = torch.jit.trace(module.eval(), tuple(examples), strict=False)
    compiled = DEMO_BACKEND.preprocess(traced, input_shapes={"forward": [spec_of(t) for t in examples]})
    return traced, compiled


def assert_same(got: object, expected: object) -> float:
    """Same structure, dtypes and shapes; floats within the parity tolerance (atol 1e-5 scaled by the
    output's magnitude, rtol 1e-4), integers and bools exactly. Returns the largest float error."""
    largest = 0.0
    got_outputs, expected_outputs = as_outputs(got), as_outputs(expected)
    assert len(got_outputs) == len(expected_outputs)
    for g, e in zip(got_outputs, expected_outputs, strict=True):
        g, e = np.asarray(g), np.asarray(e)
        assert (g.dtype, g.shape) == (e.dtype, e.shape)
        if e.dtype.kind == "f":
            np.testing.assert_allclose(g, e, atol=scaled_atol(e), rtol=RTOL)
            if e.size:
                largest = max(largest, float(np.nanmax(np.abs(g.astype(np.float64) - e))))
        else:
            np.testing.assert_array_equal(g, e)
    return largest


def run_engines(compiled: CompiledModule, path: Path, inputs: Sequence[torch.Tensor]) -> tuple[object, object]:
    """The method's results from runtime_py and from torch's lite interpreter with liteexport's backend."""
    write_bundle(compiled, path)
    ours = runtime_py.load(path).run_method("forward", *[t.numpy() for t in inputs])
    lite = torch.jit.mobile._load_for_lite_interpreter(str(path))
    return ours, lite.run_method("forward", *inputs)
