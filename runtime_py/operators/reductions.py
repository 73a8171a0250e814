"""Reductions: sum/mean/prod, max/min (+ indices), std/var, all/any, norms, cumulative ops,
sorting. Floating sums accumulate in float64 and return the input's dtype."""

from __future__ import annotations

from typing import Any

import numpy as np

from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op, register_schema
from runtime_py.operators.tensors import (
    BOOL,
    INT64,
    dim,
    dims,
    float_dtype,
    is_floating,
    numpy_dtype,
)


def _accumulate_dtype(x: np.ndarray, dtype: int | None) -> np.dtype:
    """sum/prod/cumsum: ints and bools accumulate as int64 unless a dtype is given."""
    if dtype is not None:
        return numpy_dtype(dtype)
    return x.dtype if is_floating(x.dtype) else INT64


def _reduce(fn: Any, x: np.ndarray, axis: tuple[int, ...] | None, keepdim: bool, out: np.dtype) -> np.ndarray:
    work = x.astype(np.float64) if is_floating(out) else x.astype(out, copy=False)
    return np.asarray(fn(work, axis=axis, keepdims=keepdim)).astype(out)


def _nonempty(x: np.ndarray, axis: tuple[int, ...] | int | None, what: str) -> None:
    sizes = x.shape if axis is None else [x.shape[a] for a in np.atleast_1d(axis)] if x.ndim else [1]
    if x.size == 0 and (axis is None or 0 in sizes):
        raise ExecutionError(f"{what}(): cannot reduce an empty tensor (no identity)")


@op("aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor")
def sum_all(x: np.ndarray, dtype: int | None) -> np.ndarray:
    return _reduce(np.sum, x, None, False, _accumulate_dtype(x, dtype))


@op("aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
def sum_dim(x: np.ndarray, d: list[int] | None, keepdim: bool, dtype: int | None) -> np.ndarray:
    return _reduce(np.sum, x, dims(d, x.ndim), keepdim, _accumulate_dtype(x, dtype))


def _mean_dtype(x: np.ndarray, dtype: int | None) -> np.dtype:
    if dtype is None and not is_floating(x.dtype):
        raise ExecutionError(f"mean(): could not infer output dtype. Input dtype must be either a floating "
                             f"point or complex dtype. Got: {x.dtype}")
    return numpy_dtype(dtype, x.dtype)


@op("aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor")
def mean_all(x: np.ndarray, dtype: int | None) -> np.ndarray:
    return _reduce(np.mean, x, None, False, _mean_dtype(x, dtype))


@op("aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
def mean_dim(x: np.ndarray, d: list[int] | None, keepdim: bool, dtype: int | None) -> np.ndarray:
    return _reduce(np.mean, x, dims(d, x.ndim), keepdim, _mean_dtype(x, dtype))


@op("aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor")
def prod_all(x: np.ndarray, dtype: int | None) -> np.ndarray:
    return _reduce(np.prod, x, None, False, _accumulate_dtype(x, dtype))


@op("aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor")
def prod_dim(x: np.ndarray, d: int, keepdim: bool, dtype: int | None) -> np.ndarray:
    return _reduce(np.prod, x, (dim(d, x.ndim),), keepdim, _accumulate_dtype(x, dtype))


def _extreme(fn: Any, name: str) -> Any:
    def impl(x: np.ndarray) -> np.ndarray:
        _nonempty(x, None, name)
        return np.asarray(fn(x))

    return impl


register_schema("aten::max(Tensor self) -> Tensor", _extreme(np.max, "max"))  # over all elements
register_schema("aten::min(Tensor self) -> Tensor", _extreme(np.min, "min"))


def _extreme_dim(fn: Any, arg: Any, name: str) -> Any:
    def impl(x: np.ndarray, d: int, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
        axis = dim(d, x.ndim)
        if x.ndim == 0:
            return x.copy(), np.zeros((), INT64)
        _nonempty(x, axis, name)
        values = np.asarray(fn(x, axis=axis, keepdims=keepdim))
        indices = np.asarray(arg(x, axis=axis, keepdims=keepdim)).astype(INT64)
        return values, indices

    return impl


# (values, indices) along one dim
register_schema("aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                _extreme_dim(np.max, np.argmax, "max"))
register_schema("aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
                _extreme_dim(np.min, np.argmin, "min"))


def _amax(fn: Any, name: str) -> Any:
    def impl(x: np.ndarray, d: list[int], keepdim: bool) -> np.ndarray:
        axis = dims(d, x.ndim) if x.ndim else None
        _nonempty(x, axis, name)
        return np.asarray(fn(x, axis=axis, keepdims=keepdim))

    return impl


register_schema("aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", _amax(np.max, "amax"))
register_schema("aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", _amax(np.min, "amin"))


def _arg(fn: Any, name: str) -> Any:
    def impl(x: np.ndarray, d: int | None, keepdim: bool) -> np.ndarray:
        if d is None:
            _nonempty(x, None, name)
            index = np.asarray(fn(x.reshape(-1)))
            return index.reshape((1,) * x.ndim) if keepdim else index
        if x.ndim == 0:
            return np.zeros((), INT64)
        axis = dim(d, x.ndim)
        _nonempty(x, axis, name)
        return np.asarray(fn(x, axis=axis, keepdims=keepdim)).astype(INT64)

    return impl


register_schema("aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", _arg(np.argmax, "argmax"))
register_schema("aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", _arg(np.argmin, "argmin"))


def _moments(x: np.ndarray, d: list[int] | None, correction: Any, keepdim: bool) -> tuple[np.ndarray, np.ndarray]:
    """(var, mean) with ``correction`` (1 = unbiased) in float64, cast back to x's float dtype."""
    out = float_dtype(x)
    axis = dims(d, x.ndim) if x.ndim else None
    x64 = x.astype(np.float64)
    ddof = 1 if correction is None else correction
    n = x64.size if axis is None else int(np.prod([x.shape[a] for a in axis]))
    mean = np.mean(x64, axis=axis, keepdims=True)
    var = np.sum((x64 - mean) ** 2, axis=axis, keepdims=keepdim) / max(n - ddof, 0)
    if not keepdim:
        mean = mean.reshape(var.shape)
    return np.asarray(var).astype(out), np.asarray(mean).astype(out)


# std/var in every overload torch scripts: unbiased flag or explicit correction
register_schema("aten::var(Tensor self, bool unbiased=True) -> Tensor",
                lambda x, u: _moments(x, None, int(u), False)[0])
register_schema("aten::std(Tensor self, bool unbiased=True) -> Tensor",
                lambda x, u: np.sqrt(_moments(x, None, int(u), False)[0]))
register_schema("aten::var.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
                lambda x, d, u, k: _moments(x, d, int(u), k)[0])
register_schema("aten::std.dim(Tensor self, int[1]? dim, bool unbiased=True, bool keepdim=False) -> Tensor",
                lambda x, d, u, k: np.sqrt(_moments(x, d, int(u), k)[0]))
register_schema("aten::var.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                "bool keepdim=False) -> Tensor", lambda x, d, c, k: _moments(x, d, c, k)[0])
register_schema("aten::std.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                "bool keepdim=False) -> Tensor", lambda x, d, c, k: np.sqrt(_moments(x, d, c, k)[0]))
register_schema("aten::var_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                "bool keepdim=False) -> (Tensor, Tensor)", lambda x, d, c, k: _moments(x, d, c, k))
register_schema("aten::std_mean.correction(Tensor self, int[1]? dim=None, *, Scalar? correction=None, "
                "bool keepdim=False) -> (Tensor, Tensor)",
                lambda x, d, c, k: (np.sqrt(_moments(x, d, c, k)[0]), _moments(x, d, c, k)[1]))

# all/any: bool results
register_schema("aten::all(Tensor self) -> Tensor", lambda x: np.asarray(np.all(x)))
register_schema("aten::any(Tensor self) -> Tensor", lambda x: np.asarray(np.any(x)))
register_schema("aten::all.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
                lambda x, d, k: np.asarray(np.all(x, axis=dim(d, x.ndim) if x.ndim else None, keepdims=k)))
register_schema("aten::any.dim(Tensor self, int dim, bool keepdim=False) -> Tensor",
                lambda x, d, k: np.asarray(np.any(x, axis=dim(d, x.ndim) if x.ndim else None, keepdims=k)))


@op("aten::logsumexp(Tensor self, int[1] dim, bool keepdim=False) -> Tensor")
def logsumexp(x: np.ndarray, d: list[int], keepdim: bool) -> np.ndarray:
    axis = dims(d, x.ndim) if x.ndim else None
    x64 = x.astype(np.float64)
    m = np.max(x64, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    y = np.log(np.sum(np.exp(x64 - m), axis=axis, keepdims=True)) + m
    if not keepdim:
        y = np.squeeze(y, axis=axis)
    return np.asarray(y).astype(float_dtype(x))


def _norm(x: np.ndarray, p: Any, d: list[int] | None, keepdim: bool, dtype: int | None = None) -> np.ndarray:
    out = numpy_dtype(dtype, float_dtype(x))
    axis = dims(d, x.ndim) if x.ndim else None
    a = np.abs(x.astype(np.float64))
    p = 2.0 if p is None else float(p)
    if p == float("inf"):
        y = np.max(a, axis=axis, keepdims=keepdim)
    elif p == float("-inf"):
        y = np.min(a, axis=axis, keepdims=keepdim)
    elif p == 0:
        y = np.sum(a != 0, axis=axis, keepdims=keepdim)
    else:
        y = np.sum(a ** p, axis=axis, keepdims=keepdim) ** (1 / p)
    return np.asarray(y).astype(out)


# p-norms
register_schema("aten::norm.Scalar(Tensor self, Scalar p=2) -> Tensor", lambda x, p: _norm(x, p, None, False))
register_schema("aten::norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor",
                _norm)
register_schema("aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, "
                "ScalarType? dtype=None) -> Tensor", _norm)


def _cumulative(fn: Any) -> Any:
    def impl(x: np.ndarray, d: int, dtype: int | None) -> np.ndarray:
        out = _accumulate_dtype(x, dtype)
        return np.asarray(fn(x.astype(out), axis=dim(d, x.ndim))).reshape(x.shape)

    return impl


register_schema("aten::cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", _cumulative(np.cumsum))
register_schema("aten::cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor", _cumulative(np.cumprod))


@op("aten::diff(Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None) -> Tensor")
def diff(x: np.ndarray, n: int, d: int, prepend: np.ndarray | None, append: np.ndarray | None) -> np.ndarray:
    """torch.diff (GPT-2's and Llama's position ids from the attention mask, in transformers):
    numpy's diff, which is also a not-equal on bools as torch's logical_xor is."""
    ends = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return np.asarray(np.diff(x, n=n, axis=dim(d, x.ndim), **ends))


def _sort_indices(x: np.ndarray, axis: int, descending: bool) -> np.ndarray:
    if descending:
        key = -x.astype(np.float64) if x.dtype != BOOL else ~x
        return np.argsort(key, axis=axis, kind="stable")
    return np.argsort(x, axis=axis, kind="stable")


@op("aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)")
def sort(x: np.ndarray, d: int, descending: bool) -> tuple[np.ndarray, np.ndarray]:
    if x.ndim == 0:
        return x.copy(), np.zeros((), INT64)
    axis = dim(d, x.ndim)
    idx = _sort_indices(x, axis, descending)
    return np.take_along_axis(x, idx, axis), idx.astype(INT64)


register_schema("aten::argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor",
                lambda x, d, desc: sort(x, d, desc)[1])


@op("aten::topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
    "(Tensor values, Tensor indices)")
def topk(x: np.ndarray, k: int, d: int, largest: bool, _sorted: bool) -> tuple[np.ndarray, np.ndarray]:
    axis = dim(d, x.ndim)
    if not 0 <= k <= (x.shape[axis] if x.ndim else 1):
        raise ExecutionError(f"selected index k={k} out of range")
    values, indices = sort(x, axis, largest)
    take = [slice(None)] * x.ndim
    take[axis] = slice(0, k)
    return values[tuple(take)].copy(), indices[tuple(take)].copy()


@op("aten::count_nonzero(Tensor self, int? dim=None) -> Tensor")
def count_nonzero(x: np.ndarray, d: int | None) -> np.ndarray:
    return np.asarray(np.count_nonzero(x, axis=None if d is None else dim(d, x.ndim))).astype(INT64)


@op("aten::nonzero(Tensor self) -> Tensor")  # (n, ndim) int64 indices
def nonzero(x: np.ndarray) -> np.ndarray:
    return np.stack(np.nonzero(x), axis=1).astype(INT64) if x.ndim else np.zeros((int(bool(x)), 0), INT64)
