"""The demo backend's kernels at operator call sites.

runtime_py has one set of numpy kernels: the demo backend's (runtime_py/backends/demo). The
operator table serves float32 calls of the ops those kernels cover (2-D conv and pooling,
linear, norms, GELU, softmax, sigmoid, ReLU) with them, and keeps its own code only for what
they do not cover (other dtypes, 1-D/3-D windows, training-mode statistics). A demo kernel is bound to
its attributes (stride, eps, axis...), which at an operator call site are arguments; they are
nearly always constants, so each call site keeps the kernels of the few argument sets it saw.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from runtime_py.backends.demo.arrays import Kernel

F32 = np.dtype(np.float32)


def all_float32(*values: Any) -> bool:
    """Whether every value is a float32 array (None counts: an absent optional tensor)."""
    for v in values:  # a loop, not all(): this runs on every call of a conv or linear
        if v is not None and (type(v) is not np.ndarray or v.dtype != F32):
            return False
    return True


class SiteKernels:
    """One call site's demo kernels, keyed by the arguments they bind.

    ``get(key, make)`` returns the kernel for ``key``, made by ``make()`` on first use."""

    __slots__ = ("_kernels", "_max_kernels")

    def __init__(self, max_kernels: int = 8) -> None:
        self._kernels: dict[Hashable, Kernel] = {}
        self._max_kernels = max_kernels  # more keys than this: they are not constants, start over

    def get(self, key: Hashable, make: Callable[[], Kernel]) -> Kernel:
        kernel = self._kernels.get(key)
        if kernel is None:
            if len(self._kernels) >= self._max_kernels:
                self._kernels.clear()
            kernel = self._kernels[key] = make()
        return kernel


def pair(values: Any) -> tuple[int, int] | None:
    """A 2-D window attribute (an int or a list of one or two ints) as a pair; None otherwise."""
    if type(values) is list:  # no generator: this runs three times on every call of a conv
        if len(values) == 2 and type(values[0]) is int and type(values[1]) is int:
            return (values[0], values[1])
        if len(values) == 1 and type(values[0]) is int:
            return (values[0], values[0])
        return None
    if isinstance(values, int):
        return (values, values)
    return None
