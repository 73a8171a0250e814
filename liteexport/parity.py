"""When two engines' outputs count as the same: the project's one parity tolerance.

float32, ``atol`` 1e-5 and ``rtol`` 1e-4, with ``atol`` scaled to the output's magnitude
(times max(1, max |expected|)): a deep network's float32 rounding grows with the size of
its values, so logits of magnitude 100 may differ by 1e-3 near zero without anything being
wrong, while a value that is actually wrong is off by far more. The export self-check and
the parity tests use these functions; ``liteexport verify`` takes its tolerance from the
command line, else from the bundle (narrowed weights: the export's, liteexport.test_vectors),
else 1e-5 and 1e-4 unscaled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

ATOL = 1e-5
RTOL = 1e-4


def is_constant(value: Any) -> bool:
    """Whether an output is a constant (None, bool, int, float: googlenet's eval-mode auxiliary
    outputs are None), compared exactly, rather than a tensor, compared within the tolerance."""
    return value is None or type(value) in (bool, int, float)


def as_outputs(result: Any) -> tuple[Any, ...]:
    """A method's result (one value, a tuple of them, or a dict of them: its values in order) as
    its outputs: tensors (torch's or numpy's) as numpy arrays, constants as they are."""
    values = tuple(result.values()) if isinstance(result, dict) else \
        result if isinstance(result, (tuple, list)) else (result,)
    return tuple(v if is_constant(v) else np.asarray(v.detach().numpy() if hasattr(v, "detach") else v)
                 for v in values)


def describe(value: Any) -> str:
    return f"a {value.dtype}{list(value.shape)} tensor" if isinstance(value, np.ndarray) else repr(value)


def constant_problem(got: Any, expected: Any) -> str:
    """"" when neither is a constant, or both are the same constant (type included, NaN equal
    to NaN); else what differs."""
    if not (is_constant(got) or is_constant(expected)):
        return ""
    same = type(got) is type(expected) and (
        got == expected or (isinstance(got, float) and math.isnan(got) and math.isnan(expected)))
    return "" if same else f"got {describe(got)}, expected {describe(expected)}"


def structure_problem(got: Sequence[Any], expected: Sequence[Any]) -> str:
    """"" when ``got`` has ``expected``'s structure: as many outputs, the same constants in the
    same places, tensors elsewhere; else the first difference."""
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        problem = constant_problem(g, e)
        if problem:
            return f"output {i}: {problem}"
    return ""


def max_errors(got: np.ndarray, expected: np.ndarray) -> tuple[float, float]:
    """Max absolute and relative error of ``got`` against ``expected`` (same shape)."""
    diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
    if diff.size == 0:
        return 0.0, 0.0
    rel = diff / np.maximum(np.abs(expected.astype(np.float64)), np.finfo(np.float32).tiny)
    return float(diff.max()), float(rel.max())


def scaled_atol(expected: np.ndarray, atol: float = ATOL) -> float:
    """``atol`` times the output's magnitude (at least 1)."""
    finite = np.abs(expected[np.isfinite(expected)]) if expected.size else expected
    magnitude = float(finite.max()) if finite.size else 0.0
    return atol * max(1.0, magnitude)


def within_tolerance(got: np.ndarray, expected: np.ndarray) -> bool:
    """Same shape, and every element within the parity tolerance (NaN matches NaN)."""
    if got.shape != expected.shape:
        return False
    return bool(np.allclose(got, expected, atol=scaled_atol(expected), rtol=RTOL, equal_nan=True))


def explained_by_float32(got: np.ndarray, expected: np.ndarray, exact: np.ndarray) -> bool:
    """Whether ``got`` is no further from ``exact`` (the model in float64) than twice
    torch's float32 result ``expected`` is, plus the tolerance: a difference float32
    rounding explains, not a wrong program."""
    if got.shape != expected.shape or got.shape != exact.shape:
        return False
    exact64 = exact.astype(np.float64)
    ours = float(np.max(np.abs(got.astype(np.float64) - exact64), initial=0.0))
    torchs = float(np.max(np.abs(expected.astype(np.float64) - exact64), initial=0.0))
    return ours <= 2 * torchs + scaled_atol(expected)
