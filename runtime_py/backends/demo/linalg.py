"""Matrix products: torch.matmul and the linear layer."""

from __future__ import annotations

import numpy as np

from bundle_format.program import Activation, FusedAttrs
from runtime_py.backends.demo.arrays import Array, Kernel
from runtime_py.backends.demo.elementwise import relu_inplace


def matmul(a: Array, b: Array) -> Array:
    """torch.matmul: np.matmul has the same 1-D promotion and batch broadcasting rules."""
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul needs arguments of at least 1-D, got shapes {a.shape} and {b.shape}")
    try:
        y: Array = np.matmul(a, b)
    except ValueError:
        # numpy's gufunc message names core dimensions, not the shapes the user knows
        raise ValueError(f"shapes {a.shape} and {b.shape} cannot be multiplied") from None
    return y


def make_linear(attrs: FusedAttrs, n_inputs: int) -> Kernel:
    """linear(x, weight[out, in][, bias]) = x @ weight.T + bias, with a fused ReLU."""
    fused_relu = attrs.activation == Activation.RELU
    # (weight, weight.T, (in_features,)) of the last call: the weight is a constant, so its
    # transposed view is made (~0.35 us a call, a fifth of a small layer's matmul) and its shape
    # checked once; one tuple, so a concurrent call always sees a matching set
    known: tuple[Array, Array, tuple[int, ...]] | None = None

    def linear(x: Array, weight: Array, bias: Array | None = None) -> Array:
        nonlocal known
        last = known
        if last is None or last[0] is not weight:
            if weight.ndim != 2:
                raise _mismatch(x, weight)
            last = known = (weight, weight.T, weight.shape[1:])
        if x.shape[-1:] != last[2]:  # also a 0-d x: () is not (in_features,)
            raise _mismatch(x, weight)
        # BLAS reads the transposed view directly; no copy of the weight
        y: Array = np.matmul(x, last[1])
        if bias is not None:
            np.add(y, bias, out=y)
        if fused_relu:
            relu_inplace(y)
        return y

    return linear


def _mismatch(x: Array, weight: Array) -> ValueError:
    return ValueError(f"input of shape {x.shape} and weight of shape {weight.shape} do not match "
                      "(expected weight [out_features, in_features] with in_features == input.shape[-1])")
