"""When two engines' outputs count as the same: the project's one parity tolerance.

float32, ``atol`` 1e-5 and ``rtol`` 1e-4, with ``atol`` scaled to the output's magnitude
(times max(1, max |expected|)): a deep network's float32 rounding grows with the size of
its values, so logits of magnitude 100 may differ by 1e-3 near zero without anything being
wrong, while a value that is actually wrong is off by far more. The export self-check and
the parity tests use these functions; ``liteexport verify`` takes its tolerance from the
command line.
"""

from __future__ import annotations

import numpy as np

ATOL = 1e-5
RTOL = 1e-4


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
