"""Comparing two engines' results output by output: tensors within a tolerance, constants
(the None of googlenet's eval-mode (logits, None, None)) exactly, in the same places."""

from __future__ import annotations

import numpy as np

from liteexport.parity import as_outputs, is_constant, structure_problem


def assert_same_outputs(got: object, expected: object, atol: float = 1e-5, rtol: float = 1e-4) -> None:
    """``got`` and ``expected``: a method's results (a tensor or a tuple; torch or numpy)."""
    got_outputs, expected_outputs = as_outputs(got), as_outputs(expected)
    assert not structure_problem(got_outputs, expected_outputs), structure_problem(got_outputs, expected_outputs)
    for g, e in zip(got_outputs, expected_outputs, strict=True):
        if not is_constant(e):
            assert g.dtype == np.float32 and g.shape == e.shape
            np.testing.assert_allclose(g, e, atol=atol, rtol=rtol)
