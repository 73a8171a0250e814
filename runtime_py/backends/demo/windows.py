"""Sliding 2-D windows over NCHW arrays, shared by convolution and pooling.

Windows are strided views (no copy): ``windows[n, c, oh, ow, i, j]`` is the padded input at
row ``oh*stride + i*dilation`` and column ``ow*stride + j*dilation``.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from runtime_py.backends.demo.arrays import Array, empty

Pair = tuple[int, int]


def check_window_attrs(stride: Pair, padding: Pair, dilation: Pair, kernel: Pair | None = None) -> None:
    """Rejects window attributes no torch op accepts (raises ValueError)."""
    pairs = {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation}
    for name, pair in pairs.items():
        if pair is None:
            continue
        if len(pair) != 2:
            raise ValueError(f"{name} must hold 2 values [h, w], got {pair}")
        if name == "padding" and min(pair) < 0:
            raise ValueError(f"padding must be non-negative, got {pair}")
        if name != "padding" and min(pair) < 1:
            raise ValueError(f"{name} must be positive, got {pair}")


def as_batched(x: Array, op: str) -> tuple[Array, bool]:
    """``x`` as NCHW, and whether it was unbatched CHW (torch accepts both)."""
    if x.ndim == 4:
        return x, False
    if x.ndim == 3:
        return x[np.newaxis], True
    raise ValueError(f"{op} expects a 3-D (CHW) or 4-D (NCHW) input, got shape {x.shape}")


def padded_windows(
    x: Array, kernel: Pair, stride: Pair, padding: Pair, dilation: Pair, out_hw: Pair, fill: float
) -> Array:
    """The windows of ``x`` (NCHW) padded with ``fill``.

    The bottom/right padding is extended when ceil mode's last window reaches past it, and
    only as far as the windows read.
    """
    n, c, h, w = x.shape
    needed_h = (out_hw[0] - 1) * stride[0] + dilation[0] * (kernel[0] - 1) + 1
    needed_w = (out_hw[1] - 1) * stride[1] + dilation[1] * (kernel[1] - 1) + 1
    bottom = max(needed_h - h - padding[0], 0)
    right = max(needed_w - w - padding[1], 0)
    if padding[0] or padding[1] or bottom or right:
        padded = empty((n, c, padding[0] + h + bottom, padding[1] + w + right), x.dtype)
        padded.fill(fill)
        padded[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w] = x
        x = padded
    sn, sc, sh, sw = x.strides
    return as_strided(
        x,
        shape=(n, c, out_hw[0], out_hw[1], kernel[0], kernel[1]),
        strides=(sn, sc, sh * stride[0], sw * stride[1], sh * dilation[0], sw * dilation[1]),
        writeable=False,
    )


def check_output_size(op: str, in_hw: Pair, out_hw: Pair) -> None:
    """Raises ValueError when the window does not fit the input at all."""
    if out_hw[0] < 1 or out_hw[1] < 1:
        raise ValueError(
            f"{op} input of spatial size {in_hw} is too small: output size would be {out_hw}"
        )
