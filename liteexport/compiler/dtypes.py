"""The compiled dtypes (schema/demo_ops.toml [dtypes]) on the torch side: torch.dtype <-> DType,
and what a value's dtype is while the compiler walks a graph."""

from __future__ import annotations

import torch

from bundle_format.program import DTYPE_NAMES, DType
from liteexport.compiler.values import Sym, TensorConst, Unsupported

COMPILED_DTYPES: dict[torch.dtype, DType] = {
    torch.float32: DType.FLOAT32, torch.int64: DType.INT64, torch.int32: DType.INT32, torch.bool: DType.BOOL}
TORCH_DTYPES: dict[DType, torch.dtype] = {d: t for t, d in COMPILED_DTYPES.items()}

COMPILED_NAMES = ", ".join(DTYPE_NAMES[d] for d in (DType.FLOAT32, DType.INT64, DType.INT32, DType.BOOL))


def dtype_of(value: Sym | TensorConst) -> DType:
    """The DType of a compiled value, or Unsupported for a constant of another dtype (float64...)."""
    if isinstance(value, Sym):
        return value.dtype
    found = COMPILED_DTYPES.get(value.tensor.dtype)
    if found is None:
        raise Unsupported(f"a {value.tensor.dtype} tensor: compiled programs hold {COMPILED_NAMES} values")
    return found


def torch_dtype_of(value: Sym | TensorConst) -> torch.dtype:
    return value.tensor.dtype if isinstance(value, TensorConst) else TORCH_DTYPES[value.dtype]


def scalar_type(dtype: torch.dtype) -> DType:
    """A torch dtype a node asks for (aten::to's dtype) as a DType, or Unsupported."""
    found = COMPILED_DTYPES.get(dtype)
    if found is None:
        raise Unsupported(f"dtype {dtype} is not compiled (compiled: {COMPILED_NAMES})")
    return found
