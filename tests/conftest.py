"""Shared fixtures: small compiled modules built by hand (no torch needed)."""

from __future__ import annotations

import numpy as np
import pytest

from bundle_format.debug_table import DebugEntry, DebugTable, SourceFrame
from bundle_format.program import (
    Activation,
    Constant,
    FusedAttrs,
    Instruction,
    OpCode,
    Program,
    ValueInfo,
)
from liteexport.lowered import CompiledModule, MethodSignature
from tests.cpp_builds import reorder_and_start

LINEAR_SNIPPET = '  File "m.py", line 7\n    return self.l(x)\n           ~~~~~~~~~ <--- HERE'


@pytest.fixture
def linear_relu_module() -> CompiledModule:
    """forward(x) -> (relu(x @ W.T + b), x): one LINEAR with fused ReLU, W 3x4."""
    program = Program(
        method="forward", num_slots=4, inputs=(ValueInfo((-1, 4)),), constants=(Constant(1, 0), Constant(2, 1)),
        instructions=(Instruction(OpCode.LINEAR, (0, 1, 2), (3,), FusedAttrs(Activation.RELU), 7),),
        outputs=(3, 0), output_debug_handles=(7, -1))
    weight = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 10
    bias = np.array([0.5, -0.25, 0.0], dtype=np.float32)
    table = DebugTable((DebugEntry(7, "forward", "aten::linear", "top(M).l(Linear)",
                                   (SourceFrame("forward", "m.py", 7, LINEAR_SNIPPET),)),))
    return CompiledModule("__torch__.m.M", (MethodSignature("forward", ("x",), True, 2),), (program,),
                          (weight, bias), table)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """C++ builds the selected tests need start now, in the background; those tests run last."""
    if not config.getoption("collectonly"):
        reorder_and_start(items)
