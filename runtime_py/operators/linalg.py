"""Matrix products: matmul/mm/bmm/addmm/baddbmm/linear/bilinear/einsum and friends."""

from __future__ import annotations

from typing import Any

import numpy as np

from bundle_format.program import FusedAttrs
from runtime_py.backends.demo.arrays import Kernel
from runtime_py.backends.demo.linalg import make_linear
from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op, register_schema
from runtime_py.operators.site_kernels import F32, all_float32
from runtime_py.operators.tensors import as_dtype, result_type


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.ndim == 0 or b.ndim == 0:
        raise ExecutionError("both arguments to matmul need to be at least 1D, but they are "
                             f"{a.ndim}D and {b.ndim}D")
    dtype = result_type(a, b)
    try:
        return np.asarray(np.matmul(as_dtype(a, dtype), as_dtype(b, dtype)))
    except ValueError as exc:
        raise ExecutionError(f"shapes {a.shape} and {b.shape} cannot be multiplied") from exc


def _checked(ndim: int, what: str) -> Any:
    def impl(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.ndim != ndim or b.ndim != ndim:
            raise ExecutionError(f"{what} expects {ndim}-D tensors, got {a.ndim}-D and {b.ndim}-D")
        return matmul(a, b)

    return impl


register_schema("aten::matmul(Tensor self, Tensor other) -> Tensor", matmul)  # numpy's broadcasting matmul
register_schema("aten::mm(Tensor self, Tensor mat2) -> Tensor", _checked(2, "mm"))
register_schema("aten::bmm(Tensor self, Tensor mat2) -> Tensor", _checked(3, "bmm"))
register_schema("aten::mv(Tensor self, Tensor vec) -> Tensor", matmul)
register_schema("aten::dot(Tensor self, Tensor tensor) -> Tensor", _checked(1, "dot"))
register_schema("aten::outer(Tensor self, Tensor vec2) -> Tensor",
                lambda a, b: np.outer(a, b).astype(result_type(a, b)))


def _beta_alpha(x: np.ndarray, product: np.ndarray, beta: Any, alpha: Any) -> np.ndarray:
    """beta * x + alpha * product (beta == 0 ignores x, even nan)."""
    out = product if alpha == 1 else product * alpha
    if beta != 0:
        out = out + (x if beta == 1 else x * beta)
    return np.asarray(out).astype(result_type(x, product), copy=False)


# beta * self + alpha * (a @ b)
register_schema("aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                lambda x, a, b, beta, alpha: _beta_alpha(x, _checked(2, "addmm")(a, b), beta, alpha))
register_schema("aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> "
                "Tensor", lambda x, a, b, beta, alpha: _beta_alpha(x, _checked(3, "baddbmm")(a, b), beta, alpha))
register_schema("aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
                lambda x, a, b, beta, alpha: _beta_alpha(x, matmul(a, b), beta, alpha))


def _linear_site() -> Any:
    """linear at one call site, on the demo backend's linear kernel (which keeps the transposed
    weight); a shape that does not fit is refused first, in torch's words, and operands of other
    dtypes are promoted as torch does before the kernel runs."""
    kernel = make_linear(FusedAttrs(), 3)
    # (weight, bias) of the last call, once found float32 with a 2-D weight: the usual call (the
    # same constants every time) then checks only x in fewer steps (dtypes and ndim never change)
    checked: tuple[Any, Any] = (None, None)

    def linear_site(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
        nonlocal checked
        last = checked
        if last[0] is not weight or last[1] is not bias:
            if not (weight.ndim == 2 and all_float32(weight, bias)):
                return _promoted_linear(kernel, x, weight, bias)
            checked = (weight, bias)
        if type(x) is np.ndarray and (x.dtype is F32 or x.dtype == F32) and x.ndim:
            if x.shape[-1] != weight.shape[1]:
                _check_linear_shapes(x, weight)
            return kernel(x, weight, bias)
        return _promoted_linear(kernel, x, weight, bias)

    return linear_site


register_schema("aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", _linear_site,
                per_site=True)  # x @ W^T + b


def _check_linear_shapes(x: np.ndarray, weight: np.ndarray) -> None:
    """torch's words for an input that does not fit the weight (before the kernel runs)."""
    if weight.ndim not in (1, 2):
        raise ExecutionError(f"linear expects a weight of 1 or 2 dims, got shape {list(weight.shape)}")
    if x.shape[-1:] != weight.shape[-1:]:
        raise ExecutionError(f"mat1 and mat2 shapes cannot be multiplied ({int(np.prod(x.shape[:-1]))}x"
                             f"{x.shape[-1] if x.ndim else 1} and {weight.shape[-1]}x{weight.shape[0]})")


def _promoted_linear(kernel: Kernel, x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """The kernel on operands of torch's promoted dtype (a 1-D weight, torch's vector product,
    as a single row)."""
    _check_linear_shapes(x, weight)
    dtype = result_type(x, weight) if bias is None else result_type(x, weight, bias)
    row = weight.ndim == 1
    y: np.ndarray = kernel(as_dtype(x, dtype), as_dtype(weight, dtype)[None] if row else as_dtype(weight, dtype),
                           None if bias is None else as_dtype(bias, dtype))
    return y[..., 0] if row else y


@op("aten::bilinear(Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None) -> Tensor")  # x1^T W_k x2 + b_k
def bilinear(x1: np.ndarray, x2: np.ndarray, weight: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    y = np.einsum("...i,kij,...j->...k", x1.astype(np.float64), weight.astype(np.float64), x2.astype(np.float64))
    if bias is not None:
        y = y + bias
    return y.astype(result_type(x1, x2, weight))


@op("aten::einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor")
def einsum(equation: str, tensors: list[np.ndarray], path: list[int] | None) -> np.ndarray:
    dtype = result_type(*tensors)
    return np.asarray(np.einsum(equation.replace(" ", ""), *[as_dtype(t, dtype) for t in tensors]))


@op("aten::cross(Tensor self, Tensor other, int? dim=None) -> Tensor")
def cross(a: np.ndarray, b: np.ndarray, d: int | None) -> np.ndarray:
    axis = next(i for i, s in enumerate(a.shape) if s == 3) if d is None else d
    return np.cross(a, b, axis=axis).astype(result_type(a, b))
