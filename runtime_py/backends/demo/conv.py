"""2-D convolution: im2col through strided windows and one batched matmul over groups.

Depthwise convolutions (one input channel per group) take a different route: a loop over
the kernel taps, each a vectorized multiply-add, because a matmul per channel with an inner
dimension of kh*kw is dominated by per-matrix overhead.
"""

from __future__ import annotations

import numpy as np

from runtime_py.backends.demo.arrays import Array, Kernel
from runtime_py.backends.demo.elementwise import relu_inplace
from runtime_py.backends.demo.windows import (
    as_batched,
    check_output_size,
    check_window_attrs,
    output_size,
    padded_windows,
)
from runtime_py.format.program import Activation, Conv2dAttrs


def make_conv2d(attrs: Conv2dAttrs, n_inputs: int) -> Kernel:
    """conv2d(x, weight[, bias]) with stride, padding, dilation, groups and a fused ReLU."""
    stride, padding, dilation, groups = attrs.stride, attrs.padding, attrs.dilation, attrs.groups
    check_window_attrs(stride, padding, dilation)
    if groups < 1:
        raise ValueError(f"groups must be positive, got {groups}")
    fused_relu = attrs.activation == Activation.RELU
    pointwise = stride == (1, 1) and padding == (0, 0)

    def conv2d(x: Array, weight: Array, bias: Array | None = None) -> Array:
        x4, unbatched = as_batched(x, "conv2d")
        n, c, h, w = x4.shape
        if weight.ndim != 4:
            raise ValueError(f"conv2d expects a 4-D weight, got shape {weight.shape}")
        out_c, group_c, kh, kw = weight.shape
        if c != group_c * groups or out_c % groups:
            raise ValueError(
                f"input of shape {x.shape} does not fit weight of shape {weight.shape} with groups={groups}"
                f" (expected {group_c * groups} input channels and output channels divisible by groups)"
            )
        out_hw = (
            output_size(h, kh, stride[0], padding[0], dilation[0], False),
            output_size(w, kw, stride[1], padding[1], dilation[1], False),
        )
        check_output_size("conv2d", (h, w), out_hw)
        if group_c == 1 and groups > 1:
            y = _depthwise(x4, weight, groups, stride, padding, dilation, out_hw)
        else:
            y = _im2col_matmul(x4, weight, groups, stride, padding, dilation, out_hw, pointwise)
        if bias is not None:
            y += bias.reshape(out_c, 1, 1)
        if fused_relu:
            relu_inplace(y)
        return y[0] if unbatched else y

    return conv2d


def _im2col_matmul(
    x: Array,
    weight: Array,
    groups: int,
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    out_hw: tuple[int, int],
    pointwise: bool,
) -> Array:
    n, c, _, _ = x.shape
    out_c, group_c, kh, kw = weight.shape
    length = out_hw[0] * out_hw[1]
    if pointwise and kh == kw == 1:
        # a 1x1 convolution is a matmul over the input as it is: no im2col copy
        cols = x.reshape(n, groups, group_c, length)
    else:
        windows = padded_windows(x, (kh, kw), stride, padding, dilation, out_hw, 0.0)
        # (N, G, Cg, OH, OW, kh, kw) -> (N, G, Cg*kh*kw, OH*OW): the one copy, ordered like the weight
        cols = (
            windows.reshape(n, groups, group_c, out_hw[0], out_hw[1], kh, kw)
            .transpose(0, 1, 2, 5, 6, 3, 4)
            .reshape(n, groups, group_c * kh * kw, length)
        )
    # (G, Og, K) @ (N, G, K, L) -> (N, G, Og, L), already NCHW-contiguous
    y: Array = np.matmul(weight.reshape(groups, out_c // groups, group_c * kh * kw), cols)
    return y.reshape(n, out_c, out_hw[0], out_hw[1])


def _depthwise(
    x: Array,
    weight: Array,
    groups: int,
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    out_hw: tuple[int, int],
) -> Array:
    n = x.shape[0]
    out_c, _, kh, kw = weight.shape
    multiplier = out_c // groups
    windows = padded_windows(x, (kh, kw), stride, padding, dilation, out_hw, 0.0)
    taps = weight.reshape(groups, multiplier, kh, kw)
    y = np.zeros((n, groups, multiplier, out_hw[0], out_hw[1]), dtype=x.dtype)
    product = np.empty_like(y)
    for i in range(kh):
        for j in range(kw):
            # (N, G, 1, OH, OW) * (G, M, 1, 1): every output channel of a group sees the same input
            np.multiply(
                windows[:, :, np.newaxis, :, :, i, j], taps[:, :, i, j, np.newaxis, np.newaxis], out=product
            )
            y += product
    return y.reshape(n, out_c, out_hw[0], out_hw[1])
