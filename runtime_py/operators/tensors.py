"""Tensor helpers shared by the kernels: dtypes, torch's type promotion, dims, in-place writes."""

from __future__ import annotations

from typing import Any

import numpy as np

from bundle_format.ptmf import NUMPY_DTYPES
from runtime_py.errors import ExecutionError

FLOAT32 = np.dtype(np.float32)
INT64 = np.dtype(np.int64)
BOOL = np.dtype(np.bool_)
DEFAULT_FLOAT = FLOAT32  # torch.get_default_dtype()
_SCALAR_TYPES = {dtype: code for code, dtype in NUMPY_DTYPES.items()}


def numpy_dtype(scalar_type: int | None, default: np.dtype | None = None) -> np.dtype:
    """The numpy dtype of a c10 ScalarType code (``default`` when None)."""
    if scalar_type is None:
        return default if default is not None else DEFAULT_FLOAT
    if scalar_type not in NUMPY_DTYPES:
        raise ExecutionError(f"dtype {scalar_type} (c10 ScalarType) is not supported by runtime_py")
    return NUMPY_DTYPES[scalar_type]


def scalar_type(dtype: np.dtype) -> int:
    """The c10 ScalarType code of a numpy dtype (a complex tensor, which only arithmetic on complex
    numbers makes, has none in runtime_py: the bundle format has no complex dtype)."""
    code = _SCALAR_TYPES.get(np.dtype(dtype).newbyteorder("<") if dtype.itemsize > 1 else np.dtype(dtype))
    if code is None:
        raise ExecutionError(f"runtime_py has no c10 ScalarType for {dtype} tensors")
    return int(code)


def category(dtype: np.dtype) -> int:
    """0 bool, 1 integral, 2 floating."""
    return 0 if dtype == BOOL else 2 if dtype.kind == "f" else 1


def is_floating(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """torch.promote_types: the higher category wins; within a category numpy's lattice."""
    ca, cb = category(a), category(b)
    if ca != cb:
        return a if ca > cb else b
    return np.promote_types(a, b)


def _scalar_dtype(value: Any) -> np.dtype:
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT64
    if isinstance(value, float):
        return np.dtype(np.float64)
    raise ExecutionError(f"expected a tensor or a number, got {type(value).__name__}")


def _combine(higher: np.dtype | None, lower: np.dtype | None) -> np.dtype | None:
    # c10's combine_categories: a higher-priority group keeps its dtype unless the lower one
    # brings a higher category
    if higher is None:
        return lower
    if lower is None or is_floating(higher):
        return higher
    if higher == BOOL or is_floating(lower):
        return promote_types(higher, lower)
    return higher


def result_type(*operands: Any) -> np.dtype:
    """torch.result_type over tensors (dim > 0 first, then 0-dim) and Python numbers."""
    dims: np.dtype | None = None
    zeros: np.dtype | None = None
    wrapped: np.dtype | None = None
    for value in operands:
        if isinstance(value, np.ndarray):
            if value.ndim:
                dims = value.dtype if dims is None else promote_types(dims, value.dtype)
            else:
                zeros = value.dtype if zeros is None else promote_types(zeros, value.dtype)
        elif value is not None:
            dtype = _scalar_dtype(value)
            if is_floating(dtype):
                dtype = DEFAULT_FLOAT
            wrapped = dtype if wrapped is None else promote_types(wrapped, dtype)
    result = _combine(dims, _combine(zeros, wrapped))
    if result is None:
        raise ExecutionError("no operand to infer a result dtype from")
    return result


def as_dtype(value: Any, dtype: np.dtype) -> np.ndarray:
    """``value`` (a tensor or a number) as an array of ``dtype``; no copy when it already is one."""
    if isinstance(value, np.ndarray):
        return value if value.dtype == dtype else value.astype(dtype)
    return np.asarray(value, dtype=dtype)


def float_dtype(x: np.ndarray) -> np.dtype:
    """The dtype a floating op (exp, mean, div...) computes in: ints and bool become the default float."""
    return x.dtype if is_floating(x.dtype) else DEFAULT_FLOAT


def dim(d: int, ndim: int) -> int:
    """Wrap a possibly negative dim; 0-dim tensors accept 0 and -1."""
    size = max(ndim, 1)
    if not -size <= d < size:
        raise ExecutionError(f"dimension out of range (expected to be in range of [{-size}, {size - 1}], "
                             f"but got {d})")
    return d % size


def shape_dim(x: np.ndarray, d: int) -> int:
    """``dim(d, x.ndim)`` for an op that reads ``x.shape`` there: a 0-dim tensor has no size to read."""
    if x.ndim == 0:
        raise ExecutionError(f"dimension specified as {d} but the tensor has no dimensions")
    return dim(d, x.ndim)


def dims(ds: list[int] | None, ndim: int) -> tuple[int, ...] | None:
    """Wrap a dim list; None or [] means every dim (as torch's reductions do)."""
    if not ds:
        return None
    return tuple(dim(d, ndim) for d in ds)


def can_cast(src: np.dtype, dst: np.dtype) -> bool:
    """torch's canCast: no float -> integral, no non-bool -> bool."""
    return category(src) <= category(dst)


def write(self: np.ndarray, result: Any) -> np.ndarray:
    """Store ``result`` into ``self`` (an in-place op's output) and return ``self``."""
    result = np.asarray(result)
    if not can_cast(result.dtype, self.dtype):
        raise ExecutionError(f"result type {result.dtype} can't be cast to the desired output type "
                             f"{self.dtype}")
    np.copyto(self, result, casting="unsafe")
    return self


def scalar_value(x: np.ndarray) -> Any:
    """A one-element tensor's value as a Python number."""
    if x.size != 1:
        raise ExecutionError(f"a Tensor with {x.size} elements cannot be converted to Scalar")
    return x.reshape(()).item()
