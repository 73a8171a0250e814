"""The interpreter's instructions that ask a tensor about itself or make one from a number
(DEVICE, DTYPE, DIM, TO_LIST, NUM_TO_TENSOR, IS_CUDA): runtime_py.interpreter's table calls them
with its frame, whose stack they pop and push."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from bundle_format.ptmf import NUMPY_DTYPES
from runtime_py.blocks import Refused, kind
from runtime_py.errors import ExecutionError
from runtime_py.quantized_tensor import QuantizedTensor

if TYPE_CHECKING:
    from runtime_py.interpreter import Frame

# numpy element type -> c10::ScalarType number (DTYPE)
SCALAR_TYPES: dict[np.dtype, int] = {dtype: scalar for scalar, dtype in NUMPY_DTYPES.items()}


def device_instruction(f: Frame, x: int, n: int) -> None:  # pop a tensor, push its device
    f.stack.pop()
    f.stack.append("cpu")


def dtype_instruction(f: Frame, x: int, n: int) -> None:  # pop a tensor, push its c10::ScalarType number
    t = f.stack.pop()
    if isinstance(t, QuantizedTensor):  # its own type (QInt8...), not its integers' (Char...)
        f.stack.append(t.scalar_type)
        return
    if not isinstance(t, np.ndarray):
        raise Refused(f"DTYPE needs a Tensor, got {kind(t)}")
    code = SCALAR_TYPES.get(t.dtype)
    if code is None:
        raise Refused(f"DTYPE: runtime_py has no c10 ScalarType for {t.dtype} tensors")
    f.stack.append(code)


def dim_instruction(f: Frame, x: int, n: int) -> None:  # pop a tensor, push its number of dimensions
    f.stack.append(np.ndim(f.stack.pop()))


_TO_LIST_KINDS = {0: "i", 1: "f", 2: "b", 3: "c"}  # tolist's element type code -> numpy kind


def to_list_instruction(f: Frame, x: int, n: int) -> None:  # pop element type code, dim and tensor; push nested lists
    elem_type = f.stack.pop()
    dim = f.stack.pop()
    t = f.stack.pop()
    if not isinstance(t, np.ndarray) or type(elem_type) is not int:
        raise Refused(f"TO_LIST needs a Tensor and an int element type, got {kind(t)} and {kind(elem_type)}")
    element = _TO_LIST_KINDS.get(elem_type)
    if element is None:
        raise ExecutionError("Unsupported element type for tolist; only int, float, complex and bool are supported")
    if t.dtype.kind != element and not (element == "i" and t.dtype.kind == "u"):
        raise ExecutionError("Output annotation element type and runtime tensor element type must match for "
                             "tolist()")
    if t.ndim != dim:
        raise ExecutionError("Output annotation list dimension and runtime tensor dimension must match for "
                             "tolist()")
    f.stack.append(t.tolist())


_SCALAR_TENSOR_DTYPES = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}


def num_to_tensor_instruction(f: Frame, x: int, n: int) -> None:  # pop a number, push it as a 0-dim tensor
    value = f.stack.pop()
    dtype = _SCALAR_TENSOR_DTYPES.get(type(value))
    if dtype is None:
        raise Refused(f"NUM_TO_TENSOR needs a number, got {kind(value)}")
    f.stack.append(np.array(value, dtype=dtype))


def is_cuda_instruction(f: Frame, x: int, n: int) -> None:  # pop a tensor, push False (runtime_py is CPU only)
    f.stack.pop()
    f.stack.append(False)
