"""2-D convolution: im2col through strided windows and one batched matmul over groups.

Depthwise convolutions (one input channel per group) take a different route: a loop over
the kernel taps, each a vectorized multiply-add, because a matmul per channel with an inner
dimension of kh*kw is dominated by per-matrix overhead.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from runtime_py.backends.demo.arrays import Array, Kernel
from runtime_py.backends.demo.elementwise import relu_inplace
from runtime_py.backends.demo.windows import (
    as_batched,
    check_output_size,
    check_window_attrs,
    output_size,
)
from runtime_py.format.program import Activation, Conv2dAttrs


def make_conv2d(attrs: Conv2dAttrs, n_inputs: int, reuse_output: bool = False) -> Kernel:
    """conv2d(x, weight[, bias]) with stride, padding, dilation, groups and a fused ReLU.

    The kernel keeps a workspace per input shape (at most a few): the zero-padded input, the
    im2col matrix (with a row of ones, so the bias rides in the one matmul) and, when
    ``reuse_output`` (the plan knows the result never leaves the call), the output. Buffers
    are written in place on every call: no allocation, no page faults. A kernel instance is
    used by one call at a time (the executor pools whole step lists).
    """
    stride, padding, dilation, groups = attrs.stride, attrs.padding, attrs.dilation, attrs.groups
    check_window_attrs(stride, padding, dilation)
    if groups < 1:
        raise ValueError(f"groups must be positive, got {groups}")
    fused_relu = attrs.activation == Activation.RELU
    pointwise = stride == (1, 1) and padding == (0, 0)
    workspaces: dict[tuple[object, ...], _Workspace] = {}
    augmented: dict[tuple[int, int], tuple[Array, Array | None, Array]] = {}  # id(weight), id(bias) -> matrix

    def conv2d(x: Array, weight: Array, bias: Array | None = None) -> Array:
        x4, unbatched = as_batched(x, "conv2d")
        key = (x4.shape, weight.shape, bias is not None)
        ws = workspaces.get(key)
        if ws is None:
            ws = _workspace(x, x4, weight, bias, groups, stride, padding, dilation, pointwise, reuse_output)
            if len(workspaces) >= 4:
                workspaces.clear()
            workspaces[key] = ws
        if ws.depthwise:
            y = _depthwise(x4, weight, groups, stride, padding, dilation, ws.out_hw)
            if bias is not None:
                y += bias.reshape(-1, 1, 1)
        else:
            matrix = _matrix(augmented, weight, bias, groups)
            if ws.im2col is None:  # a 1x1 convolution is a matmul over the input as it is
                cols = x4.reshape(ws.cols_shape)
                if bias is not None:
                    matrix = matrix[..., :-1]
            else:
                cols, cols_view = ws.im2col
                if ws.padded is not None:
                    interior, windows = ws.padded
                    interior[...] = x4
                    np.copyto(cols_view, windows)
                else:
                    windows = _windows(x4, weight.shape, stride, dilation, ws.out_hw)
                    np.copyto(cols_view, windows.reshape(cols_view.shape))
            y3 = ws.out if ws.out is not None else np.empty(ws.out_shape, dtype=np.float32)
            np.matmul(matrix, cols, out=y3)
            if bias is not None and ws.im2col is None:
                y3 += bias.reshape(groups, -1, 1)
            y = y3.reshape(ws.result_shape)
        if fused_relu:
            relu_inplace(y)
        return y[0] if unbatched else y

    return conv2d


class _Workspace:
    """Shapes and buffers of one conv2d for one input shape."""

    __slots__ = ("depthwise", "out_hw", "im2col", "padded", "cols_shape", "out", "out_shape", "result_shape")

    depthwise: bool  # one input channel per group: the tap loop, no buffers
    out_hw: tuple[int, int]
    # (cols, cols_view): the im2col matrix and the part of it the windows are copied into;
    # None for a 1x1 convolution (and a depthwise one), which needs no im2col copy
    im2col: tuple[Array, Array] | None
    # (interior, windows) of the zero-padded input, None without padding: the input is
    # copied into the interior, then the windows (a strided view of it) into cols_view
    padded: tuple[Array, Array] | None
    cols_shape: tuple[int, int, int, int]
    out: Array | None  # the result buffer, kept when ``reuse_output``
    out_shape: tuple[int, int, int, int]
    result_shape: tuple[int, int, int, int]


def _workspace(x: Array, x4: Array, weight: Array, bias: Array | None, groups: int, stride: tuple[int, int],
               padding: tuple[int, int], dilation: tuple[int, int], pointwise: bool,
               reuse_output: bool) -> _Workspace:
    n, c, h, w = x4.shape
    if weight.ndim != 4:
        raise ValueError(f"conv2d expects a 4-D weight, got shape {weight.shape}")
    out_c, group_c, kh, kw = weight.shape
    if c != group_c * groups or out_c % groups:
        raise ValueError(
            f"input of shape {x.shape} does not fit weight of shape {weight.shape} with groups={groups}"
            f" (expected {group_c * groups} input channels and output channels divisible by groups)"
        )
    if bias is not None and bias.shape != (out_c,):
        raise ValueError(f"bias of shape {bias.shape} does not fit {out_c} output channels")
    out_hw = (
        output_size(h, kh, stride[0], padding[0], dilation[0], False),
        output_size(w, kw, stride[1], padding[1], dilation[1], False),
    )
    check_output_size("conv2d", (h, w), out_hw)
    ws = _Workspace()
    ws.depthwise = group_c == 1 and groups > 1
    ws.out_hw = out_hw
    ws.im2col = ws.padded = ws.out = None
    length = out_hw[0] * out_hw[1]
    k = group_c * kh * kw
    ws.result_shape = (n, out_c, out_hw[0], out_hw[1])
    ws.out_shape = (n, groups, out_c // groups, length)
    ws.cols_shape = (n, groups, group_c, length)
    if ws.depthwise:
        return ws
    if not (pointwise and kh == kw == 1):
        # (N, G, Cg*kh*kw [+1 row of ones for the bias], OH*OW)
        rows = k + (bias is not None)
        cols = np.empty((n, groups, rows, length), dtype=np.float32)
        if bias is not None:
            cols[:, :, k, :] = 1.0
        cols_view = cols[:, :, :k, :].reshape(n, groups, group_c, kh, kw, out_hw[0], out_hw[1])
        ws.im2col = (cols, cols_view)
        if padding != (0, 0):
            padded = np.zeros((n, c, h + 2 * padding[0], w + 2 * padding[1]), dtype=np.float32)
            interior = padded[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w]
            windows = _windows(padded, weight.shape, stride, dilation, out_hw).reshape(cols_view.shape)
            ws.padded = (interior, windows)
    if reuse_output:
        ws.out = np.empty(ws.out_shape, dtype=np.float32)
    return ws


def _windows(x: Array, kernel: tuple[int, ...], stride: tuple[int, int], dilation: tuple[int, int],
             out_hw: tuple[int, int]) -> Array:
    """(N, C, kh, kw, OH, OW) strided view of an (already padded) NCHW array."""
    n, c = x.shape[:2]
    sn, sc, sh, sw = x.strides
    return as_strided(
        x,
        shape=(n, c, kernel[2], kernel[3], out_hw[0], out_hw[1]),
        strides=(sn, sc, sh * dilation[0], sw * dilation[1], sh * stride[0], sw * stride[1]),
        writeable=False,
    )


def _matrix(cache: dict[tuple[int, int], tuple[Array, Array | None, Array]], weight: Array,
            bias: Array | None, groups: int) -> Array:
    """The weight as (G, Og, Cg*kh*kw [+1]) with the bias as its last column; cached per
    weight object (weights are the same constant arrays on every call)."""
    if weight.flags.writeable or (bias is not None and bias.flags.writeable):
        # not a (read-only) constant: its contents may change between calls
        matrix = weight.reshape(groups, weight.shape[0] // groups, -1)
        return matrix if bias is None else np.concatenate([matrix, bias.reshape(groups, -1, 1)], axis=2)
    key = (id(weight), id(bias))
    hit = cache.get(key)
    if hit is not None and hit[0] is weight and hit[1] is bias:
        return hit[2]
    out_c = weight.shape[0]
    matrix = weight.reshape(groups, out_c // groups, -1)
    if bias is not None:
        matrix = np.concatenate([matrix, bias.reshape(groups, -1, 1)], axis=2)
    if len(cache) >= 4:
        cache.clear()
    cache[key] = (weight, bias, matrix)
    return matrix




def _depthwise(
    x: Array,
    weight: Array,
    groups: int,
    stride: tuple[int, int],
    padding: tuple[int, int],
    dilation: tuple[int, int],
    out_hw: tuple[int, int],
) -> Array:
    """One vectorized multiply-add per kernel tap, over long contiguous runs.

    The padded input is split into stride x stride phases (``phase[a][b] = x[a::sh, b::sw]``),
    so every tap reads one phase at a fixed offset with stride 1. A phase is flattened with a
    row pitch of ``pitch`` columns: the tap's input for all outputs is then one contiguous
    slice of length ``OH * pitch``; the extra columns per row are computed and cut off at the
    end (cheaper than short rows: numpy's per-row overhead dominated 14x14 planes)."""
    n, c, h, w = x.shape
    out_c, _, kh, kw = weight.shape
    multiplier = out_c // groups
    (sh, sw), (ph, pw), (dh, dw), (oh, ow) = stride, padding, dilation, out_hw
    rows = -(-(h + 2 * ph) // sh) + 1  # per phase, plus a row the last tap's slice may run into
    pitch = -(-(w + 2 * pw) // sw)
    padded = np.zeros((n, c, rows * sh, pitch * sw), dtype=x.dtype)
    padded[:, :, ph : ph + h, pw : pw + w] = x
    if sh == sw == 1:
        phases = padded.reshape(1, 1, n, c, rows * pitch)
    else:  # (sh, sw, N, C, rows, pitch), one copy
        phases = np.ascontiguousarray(
            padded.reshape(n, c, rows, sh, pitch, sw).transpose(3, 5, 0, 1, 2, 4)
        ).reshape(sh, sw, n, c, rows * pitch)
    length = oh * pitch
    sources = [  # per tap: its input for every output, (N, G, L)
        phases[r % sh, q % sw, :, :, (r // sh) * pitch + q // sw :][..., :length]
        for r in range(0, kh * dh, dh) for q in range(0, kw * dw, dw)
    ]
    if length <= _DEPTHWISE_MATMUL_MAX_LENGTH:
        # small planes: per-channel loops are short, so one im2col copy and a batched
        # (1 x taps) @ (taps x L) matmul per channel beat a multiply-add per tap
        cols = np.stack(sources, axis=2)  # (N, G, taps, L)
        y: Array = np.matmul(weight.reshape(groups, multiplier, kh * kw), cols)
    else:
        # a few channels at a time, so the running sum and the product stay in cache across the taps;
        # (G, M, L) blocks, every output channel of a group seeing the same input channel (with one
        # output channel per group, the common case, the multiplier axis is left out: numpy loops
        # faster over fewer broadcast axes)
        taps = weight.reshape(groups, multiplier, kh * kw)
        y = np.zeros((n, groups, multiplier, length), dtype=x.dtype)
        if multiplier == 1:
            taps, y = taps[:, 0], y[:, :, 0]
        else:
            sources = [source[:, :, np.newaxis] for source in sources]
        chunk = max(1, _DEPTHWISE_CHUNK_BYTES // (n * multiplier * length * x.itemsize))
        for g in range(0, groups, chunk):
            y_part = y[:, g : g + chunk]
            product = np.empty_like(y_part)
            for t, source in enumerate(sources):
                np.multiply(source[:, g : g + chunk], taps[g : g + chunk, ..., t, np.newaxis], out=product)
                y_part += product
    return np.ascontiguousarray(y.reshape(n, out_c, oh, pitch)[..., :ow])


_DEPTHWISE_MATMUL_MAX_LENGTH = 1024  # output plane size (with the pitch's extra columns), measured
_DEPTHWISE_CHUNK_BYTES = 512 * 1024  # running sum per channel chunk: about half of a core's L2
