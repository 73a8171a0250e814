"""Tensor factories (zeros/ones/full/arange/..., ``*_like``, ``new_*``, ``torch.tensor``),
dtype/device conversions (``to``, ``type_as``) and tensor metadata (dtype, device...)."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op, register_schema
from runtime_py.operators.tensors import (
    BOOL,
    DEFAULT_FLOAT,
    INT64,
    is_floating,
    numpy_dtype,
    scalar_type,
)

_OPTIONS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"
_LIKE_OPTIONS = _OPTIONS + ", MemoryFormat? memory_format=None"


def check_device(device: Any) -> None:
    if device is not None and not str(device).startswith("cpu"):
        raise ExecutionError(f"device '{device}' is not available: runtime_py runs on the CPU only")


def _number_dtype(*values: Any) -> np.dtype:
    """The dtype torch infers from Python numbers: any float -> default float, else int64 (bool if all bool)."""
    if any(isinstance(v, float) for v in values):
        return DEFAULT_FLOAT
    if values and all(isinstance(v, bool) for v in values):
        return BOOL
    return INT64


def _shape(size: list[int]) -> tuple[int, ...]:
    if any(s < 0 for s in size):
        raise ExecutionError(f"trying to create tensor with negative dimension: {list(size)}")
    return tuple(size)


def _filled(value: Any) -> Any:
    def impl(size: list[int], dtype: int | None, layout: Any, device: Any, pin: Any, *_: Any) -> np.ndarray:
        check_device(device)
        return np.full(_shape(size), value, numpy_dtype(dtype))

    return impl


# new tensors of a given size
register_schema(f"aten::zeros(SymInt[] size, *, {_OPTIONS}) -> Tensor", _filled(0))
register_schema(f"aten::ones(SymInt[] size, *, {_OPTIONS}) -> Tensor", _filled(1))
register_schema(f"aten::empty.memory_format(SymInt[] size, *, {_LIKE_OPTIONS}) -> Tensor", _filled(0))


@op(f"aten::full(SymInt[] size, Scalar fill_value, *, {_OPTIONS}) -> Tensor")
def full(size: list[int], value: Any, dtype: int | None, layout: Any, device: Any, pin: Any) -> np.ndarray:
    check_device(device)
    return np.full(_shape(size), value, numpy_dtype(dtype, _number_dtype(value)))


def _like(value: Any) -> Any:
    def impl(x: np.ndarray, dtype: int | None, layout: Any, device: Any, pin: Any, mf: Any) -> np.ndarray:
        check_device(device)
        return np.full(x.shape, value, numpy_dtype(dtype, x.dtype))

    return impl


# tensors shaped like another one
register_schema(f"aten::zeros_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", _like(0))
register_schema(f"aten::ones_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", _like(1))
register_schema(f"aten::empty_like(Tensor self, *, {_LIKE_OPTIONS}) -> Tensor", _like(0))
register_schema(f"aten::full_like(Tensor self, Scalar fill_value, *, {_LIKE_OPTIONS}) -> Tensor",
                lambda x, v, *options: _like(v)(x, *options))


def _new(value: Any) -> Any:
    def impl(x: np.ndarray, size: list[int], dtype: int | None, layout: Any, device: Any, pin: Any) -> np.ndarray:
        check_device(device)
        return np.full(_shape(size), value, numpy_dtype(dtype, x.dtype))

    return impl


# x.new_zeros(size) & co: x's dtype by default
register_schema(f"aten::new_zeros(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor", _new(0))
register_schema(f"aten::new_ones(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor", _new(1))
register_schema(f"aten::new_empty(Tensor self, SymInt[] size, *, {_OPTIONS}) -> Tensor", _new(0))
register_schema(f"aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, {_OPTIONS}) -> Tensor",
                lambda x, size, v, *options: _new(v)(x, size, *options))


def arange(start: Any, end: Any, step: Any, dtype: int | None, layout: Any, device: Any, pin: Any) -> np.ndarray:
    check_device(device)
    out = numpy_dtype(dtype, _number_dtype(start, end, step))
    if step == 0:
        raise ExecutionError("step must be nonzero")
    if (end - start) * step < 0:
        raise ExecutionError("upper bound and larger bound inconsistent with step sign")
    count = int(np.ceil((end - start) / step))
    return (start + np.arange(count, dtype=np.float64 if is_floating(out) else INT64) * step).astype(out)


register_schema(f"aten::arange(Scalar end, *, {_OPTIONS}) -> Tensor", lambda end, *o: arange(0, end, 1, *o))
register_schema(f"aten::arange.start(Scalar start, Scalar end, *, {_OPTIONS}) -> Tensor",
                lambda start, end, *o: arange(start, end, 1, *o))
register_schema(f"aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, {_OPTIONS}) -> Tensor", arange)


@op(f"aten::linspace(Scalar start, Scalar end, int steps, *, {_OPTIONS}) -> Tensor")
def linspace(start: Any, end: Any, steps: int, dtype: int | None, layout: Any, device: Any, pin: Any) -> np.ndarray:
    check_device(device)
    if steps < 0:
        raise ExecutionError("number of steps must be non-negative")
    if steps == 1:
        return np.full((1,), start, numpy_dtype(dtype))
    step = (end - start) / (steps - 1)
    i = np.arange(steps, dtype=np.float64)
    half = steps // 2
    values = np.where(i < half, start + step * i, end - step * (steps - 1 - i))  # torch fills from both ends
    return values.astype(numpy_dtype(dtype))


@op(f"aten::eye(SymInt n, *, {_OPTIONS}) -> Tensor")
def eye(n: int, dtype: int | None, layout: Any, device: Any, pin: Any) -> np.ndarray:
    check_device(device)
    return np.eye(n, dtype=numpy_dtype(dtype))


@op(f"aten::scalar_tensor(Scalar s, *, {_OPTIONS}) -> Tensor")
def scalar_tensor(s: Any, dtype: int | None, layout: Any, device: Any, pin: Any) -> np.ndarray:
    check_device(device)
    return np.asarray(s, numpy_dtype(dtype))


def tensor(data: Any, dtype: int | None, device: Any, requires_grad: bool) -> np.ndarray:
    """torch.tensor(data): floats become the default float, ints int64, bools bool."""
    check_device(device)
    flat = np.asarray(data)
    if flat.dtype == object:
        raise ExecutionError("torch.tensor(): nested lists must be rectangular and hold numbers")
    inferred = DEFAULT_FLOAT if flat.dtype.kind == "f" else BOOL if flat.dtype == BOOL else INT64
    return np.array(data, dtype=numpy_dtype(dtype, inferred))


_TENSOR_OPTIONS = "*, ScalarType? dtype=None, Device? device=None, bool requires_grad=False"
register_schema(f"aten::tensor.float(float t, {_TENSOR_OPTIONS}) -> Tensor", tensor)
register_schema(f"aten::tensor.int(int t, {_TENSOR_OPTIONS}) -> Tensor", tensor)
register_schema(f"aten::tensor.bool(bool t, {_TENSOR_OPTIONS}) -> Tensor", tensor)
register_schema(f"aten::tensor(t[] data, {_TENSOR_OPTIONS}) -> Tensor", tensor)
register_schema("aten::as_tensor.list(t[] data, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
                lambda data, dtype, device: tensor(data, dtype, device, False))


@op("prim::NumToTensor.Scalar(Scalar a) -> Tensor")  # a number as a 0-dim tensor (float -> float64)
def num_to_tensor(a: Any) -> np.ndarray:
    return np.asarray(a, dtype=BOOL if isinstance(a, bool) else INT64 if isinstance(a, int) else np.float64)


# ---- conversions -------------------------------------------------------------------------------

def convert(x: np.ndarray, dtype: np.dtype | None, copy: bool) -> np.ndarray:
    """x.to(dtype): x itself when nothing changes and no copy is asked for."""
    target = x.dtype if dtype is None else dtype
    if target == x.dtype and not copy:
        return x
    return x.astype(target)


register_schema("aten::to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, "
                "MemoryFormat? memory_format=None) -> Tensor(a)",
                lambda x, dtype, nb, copy, mf: convert(x, numpy_dtype(dtype), copy))


@op("aten::to.device(Tensor(a) self, Device device, ScalarType dtype, bool non_blocking=False, bool copy=False, "
    "MemoryFormat? memory_format=None) -> Tensor(a)")
def to_device(x: np.ndarray, device: Any, dtype: int, nb: bool, copy: bool, mf: Any) -> np.ndarray:
    check_device(device)
    return convert(x, numpy_dtype(dtype), copy)


@op("aten::to.dtype_layout(Tensor(a) self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
    "bool? pin_memory=None, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> "
    "Tensor(a)")
def to_options(x: np.ndarray, dtype: int | None, layout: Any, device: Any, pin: Any, nb: bool, copy: bool,
               mf: Any) -> np.ndarray:
    check_device(device)
    return convert(x, None if dtype is None else numpy_dtype(dtype), copy)


register_schema("aten::to.other(Tensor(a) self, Tensor other, bool non_blocking=False, bool copy=False, "
                "MemoryFormat? memory_format=None) -> Tensor(a)",
                lambda x, other, nb, copy, mf: convert(x, other.dtype, copy))


@op("aten::to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, "
    "bool copy=False) -> Tensor(b|a)")
def to_prim_device(x: np.ndarray, device: Any, dtype: int | None, nb: bool, copy: bool) -> np.ndarray:
    check_device(device)
    return convert(x, None if dtype is None else numpy_dtype(dtype), copy)


register_schema("aten::to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) -> "
                "Tensor(b|a)",
                lambda x, dtype, nb, copy: convert(x, None if dtype is None else numpy_dtype(dtype), copy))
register_schema("aten::type_as(Tensor self, Tensor other) -> Tensor", lambda x, o: convert(x, o.dtype, False))
register_schema("aten::cpu(Tensor(a) self) -> Tensor(b|a)", lambda x: x)
register_schema("aten::requires_grad_(Tensor(a!) self, bool requires_grad=True) -> Tensor(a!)", lambda x, r: x)

# tensor metadata
register_schema("aten::is_floating_point(Tensor self) -> bool", lambda x: is_floating(x.dtype))
register_schema("prim::dtype(Tensor a) -> int", lambda x: scalar_type(x.dtype))
register_schema("prim::device(Tensor a) -> Device", lambda x: "cpu")
register_schema("prim::layout(Tensor a) -> Layout", lambda x: 0)  # torch.strided
register_schema("prim::is_cuda(Tensor a) -> bool", lambda x: False)
register_schema("prim::is_nested(Tensor a) -> bool", lambda x: False)
register_schema("prim::requires_grad(Tensor a) -> bool", lambda x: False)  # runtime_py never tracks gradients
register_schema("prim::type(Device self) -> str", lambda device: str(device).split(":")[0])
