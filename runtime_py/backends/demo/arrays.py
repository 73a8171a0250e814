"""Type aliases shared by the demo backend's kernels."""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from bundle_format.program import DType

# Every value the demo backend handles is a float32 ndarray; numpy's stubs type most
# float32 arithmetic as floating[Any], so the alias stays loose on the scalar type.
Array = npt.NDArray[Any]

# A kernel with its attributes already bound: input arrays in, one fresh array out.
Kernel = Callable[..., Array]

# DType -> numpy's dtype (c10::ScalarType numbering -> numpy)
NUMPY_DTYPES: dict[DType, np.dtype[Any]] = {
    DType.FLOAT32: np.dtype(np.float32), DType.INT64: np.dtype(np.int64), DType.INT32: np.dtype(np.int32),
    DType.BOOL: np.dtype(np.bool_)}

F32 = np.float32
ZERO = np.float32(0.0)
ONE = np.float32(1.0)

try:  # numpy >= 2: np.errstate is a context variable; setting it directly costs ~0.1 us, not ~1-2.5 us
    # private numpy API, absent from numpy's stubs
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj  # type: ignore[attr-defined]

    _IGNORE_FP_ERRORS = _make_extobj(all="ignore")
except (ImportError, TypeError):  # pragma: no cover - older numpy: the public context manager
    _extobj_contextvar = None


def ignore_fp_errors() -> Any:
    """Switch numpy's floating-point warnings off (inf/NaN follow IEEE silently, as in torch)
    until ``restore_fp_errors(token)``; the token is None when they were off already (a nested call)."""
    if _extobj_contextvar is None:  # pragma: no cover
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    if _extobj_contextvar.get() is _IGNORE_FP_ERRORS:
        return None
    return _extobj_contextvar.set(_IGNORE_FP_ERRORS)


def restore_fp_errors(token: Any) -> None:
    """Undo ``ignore_fp_errors``."""
    if token is None:
        return
    if _extobj_contextvar is None:  # pragma: no cover
        token.__exit__(None, None, None)
    else:
        _extobj_contextvar.reset(token)


class _BufferPool:
    """Large result arrays, reused once nothing references them any more.

    A fresh multi-MB array from malloc is memory-mapped anew and page-faults on first touch:
    in a MobileNet or ResNet forward that was a thousand or more faults, a sixth of the run
    time. The pool keeps a few arrays per shape and hands one out again when its reference
    count shows that the pool alone holds it (a view, a register, a caller keeping a result:
    each holds a reference), so no one can observe the reuse. Small arrays come from malloc's
    heap without faults and are not pooled; the pool stops keeping arrays beyond a byte cap."""

    MIN_BYTES = 256 * 1024
    MAX_BYTES = 256 * 1024 * 1024
    PER_SHAPE = 4

    def __init__(self) -> None:
        self._arrays: dict[tuple[tuple[int, ...], np.dtype[Any]], list[Array]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def empty(self, shape: tuple[int, ...], dtype: Any = np.float32) -> Array:
        """An uninitialized array, like ``np.empty``."""
        dtype = np.dtype(dtype)
        size = math.prod(shape) * dtype.itemsize
        if size < self.MIN_BYTES:
            return np.empty(shape, dtype)
        key = (shape, dtype)
        with self._lock:
            arrays = self._arrays.setdefault(key, [])
            for array in arrays:
                if sys.getrefcount(array) == _FREE:
                    return array
            array = np.empty(shape, dtype)
            if len(arrays) < self.PER_SHAPE and self._bytes + size <= self.MAX_BYTES:
                arrays.append(array)
                self._bytes += size
            return array


def _free_references() -> int:
    """What ``sys.getrefcount`` says of an array held by a pool list alone, checked as ``empty``
    checks it (the list, the loop variable, the call's argument: 3 on CPython 3.10-3.13)."""
    for array in [np.empty(0)]:
        return sys.getrefcount(array)
    raise AssertionError("unreachable")


_FREE = _free_references()
empty = _BufferPool().empty
