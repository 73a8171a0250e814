"""Matrix products: torch.matmul and the linear layer."""

from __future__ import annotations

import numpy as np

from runtime_py.backends.demo.arrays import Array, Kernel
from runtime_py.backends.demo.elementwise import relu_inplace
from runtime_py.format.program import Activation, FusedAttrs


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
    # (weight, weight.T) of the last call: the weight is a constant, so its transposed view is
    # made once (~0.35 us a call, a fifth of a small layer's matmul); one tuple, so a concurrent
    # call always sees a matching pair
    transposed: tuple[Array, Array] | None = None

    def linear(x: Array, weight: Array, bias: Array | None = None) -> Array:
        nonlocal transposed
        if x.ndim == 0 or weight.ndim != 2 or x.shape[-1] != weight.shape[1]:
            raise ValueError(
                f"input of shape {x.shape} and weight of shape {weight.shape} do not match "
                "(expected weight [out_features, in_features] with in_features == input.shape[-1])"
            )
        pair = transposed
        if pair is None or pair[0] is not weight:
            pair = transposed = (weight, weight.T)
        # BLAS reads the transposed view directly; no copy of the weight
        y: Array = np.matmul(x, pair[1])
        if bias is not None:
            np.add(y, bias, out=y)
        if fused_relu:
            relu_inplace(y)
        return y

    return linear
