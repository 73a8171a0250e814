"""The demo kernels' pool of large result arrays: an array is handed out again only when
nothing else references it."""

from __future__ import annotations

import numpy as np

from bundle_format.program import Conv2dAttrs
from runtime_py.backends.demo.arrays import _BufferPool
from runtime_py.backends.demo.conv import make_conv2d

SHAPE = (1, 64, 64, 64)  # 1 MB: pooled


def test_a_referenced_array_is_not_handed_out_again() -> None:
    # a pool of its own: the process-wide one may be full of earlier tests' shapes (it keeps at
    # most MAX_BYTES and never lets go of what it keeps)
    empty = _BufferPool().empty
    first = empty(SHAPE)
    view = first[0]
    del first
    second = empty(SHAPE)
    assert not np.shares_memory(second, view)


def test_a_released_array_is_reused() -> None:
    empty = _BufferPool().empty  # as above
    first = empty(SHAPE)
    address = first.ctypes.data
    del first
    assert empty(SHAPE).ctypes.data == address


def test_a_kept_result_survives_later_calls() -> None:
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((64, 1, 3, 3)).astype(np.float32)
    conv = make_conv2d(Conv2dAttrs((1, 1), (1, 1), (1, 1), 64), 2)
    x1, x2 = (rng.standard_normal(SHAPE).astype(np.float32) for _ in range(2))
    kept = conv(x1, weight)
    expected = kept.copy()
    for _ in range(3):
        conv(x2, weight)  # each result dropped at once: its buffer may serve the next call
    np.testing.assert_array_equal(kept, expected)
