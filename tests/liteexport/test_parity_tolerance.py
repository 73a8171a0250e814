"""The one parity tolerance (liteexport/parity.py)."""

from __future__ import annotations

import numpy as np

from liteexport.parity import ATOL, RTOL, explained_by_float32, scaled_atol, within_tolerance


def test_atol_scales_with_the_output_magnitude() -> None:
    small = np.array([0.5, -0.25], np.float32)
    big = np.array([100.0, 0.0], np.float32)
    assert scaled_atol(small) == ATOL
    assert scaled_atol(big) == ATOL * 100
    assert within_tolerance(big + np.float32(5e-4), big)  # 5e-4 near 0 is noise at magnitude 100
    assert not within_tolerance(small + np.float32(5e-4), small)
    assert within_tolerance(small * (1 + RTOL / 2), small)


def test_shapes_and_nans() -> None:
    assert not within_tolerance(np.zeros(3, np.float32), np.zeros(4, np.float32))
    assert within_tolerance(np.array([np.nan], np.float32), np.array([np.nan], np.float32))


def test_float32_rounding_explains_only_what_torch_itself_is_off_by() -> None:
    exact = np.array([4.0, -1.0, 0.0])
    torch32 = (exact + [2e-3, 0.0, -1e-3]).astype(np.float32)  # torch's float32 result: 2e-3 off
    ours_as_good = (exact + [-1e-3, 1.5e-3, 0.0]).astype(np.float32)
    ours_wrong = (exact + [0.0, 0.05, 0.0]).astype(np.float32)
    assert not within_tolerance(ours_as_good, torch32)
    assert explained_by_float32(ours_as_good, torch32, exact)
    assert not explained_by_float32(ours_wrong, torch32, exact)
