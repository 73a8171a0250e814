"""2-D convolution: im2col through strided windows and one batched matmul over groups.

The one convolution of runtime_py: the demo backend's programs call it on float32, the
TorchScript operator table (runtime_py/operators/nn.py) on every float dtype and, through
unit and depth dims, for 1-D and 3-D convolutions too. Buffers take the input's dtype.

Depthwise convolutions (one input channel per group) take a different route (``_Depthwise``):
their im2col matrix is taps times the input, so it is built a few channels at a time, from
runs the input's layout makes contiguous.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import as_strided

from bundle_format.program import Activation, Conv2dAttrs
from bundle_format.shape_arithmetic import output_size
from runtime_py.backends.demo.arrays import Array, Kernel, empty
from runtime_py.backends.demo.elementwise import relu_inplace
from runtime_py.backends.demo.windows import (
    as_batched,
    check_output_size,
    check_window_attrs,
)


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
        key = (x4.shape, x4.dtype, weight.shape, bias is not None)
        ws = workspaces.get(key)
        if ws is None:
            ws = _workspace(x, x4, weight, bias, groups, stride, padding, dilation, pointwise, reuse_output)
            if len(workspaces) >= 4:
                workspaces.clear()
            workspaces[key] = ws
        if ws.own is not None:
            y = ws.own(x4, weight)
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
            y3 = ws.out if ws.out is not None else empty(ws.out_shape, x4.dtype)
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

    __slots__ = ("own", "out_hw", "im2col", "padded", "cols_shape", "out", "out_shape", "result_shape")

    own: _Depthwise | _Winograd | None  # a depthwise or 3x3 convolution: a kernel of its own
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
    dtype = x4.dtype
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
    ws.own = None
    ws.out_hw = out_hw
    ws.im2col = ws.padded = ws.out = None
    length = out_hw[0] * out_hw[1]
    k = group_c * kh * kw
    ws.result_shape = (n, out_c, out_hw[0], out_hw[1])
    ws.out_shape = (n, groups, out_c // groups, length)
    ws.cols_shape = (n, groups, group_c, length)
    if group_c == 1 and groups > 1:
        ws.own = _Depthwise(x4, weight, groups, stride, padding, dilation, out_hw)
        return ws
    # Winograd's transforms are float32 constants: other dtypes take im2col
    if ((kh, kw, stride, dilation, groups) == (3, 3, (1, 1), (1, 1), 1) and c * out_c >= _WINOGRAD_MIN_CHANNELS
            and dtype == np.float32):
        ws.own = _Winograd(x4, out_c, padding, out_hw)
        return ws
    if not (pointwise and kh == kw == 1):
        # (N, G, Cg*kh*kw [+1 row of ones for the bias], OH*OW)
        rows = k + (bias is not None)
        cols = np.empty((n, groups, rows, length), dtype=dtype)
        if bias is not None:
            cols[:, :, k, :] = 1.0
        cols_view = cols[:, :, :k, :].reshape(n, groups, group_c, kh, kw, out_hw[0], out_hw[1])
        ws.im2col = (cols, cols_view)
        if padding != (0, 0):
            padded = np.zeros((n, c, h + 2 * padding[0], w + 2 * padding[1]), dtype=dtype)
            interior = padded[:, :, padding[0] : padding[0] + h, padding[1] : padding[1] + w]
            windows = _windows(padded, weight.shape, stride, dilation, out_hw).reshape(cols_view.shape)
            ws.padded = (interior, windows)
    if reuse_output:
        ws.out = np.empty(ws.out_shape, dtype=dtype)
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




class _Depthwise:
    """A depthwise convolution (one input channel per group) for one input shape: im2col and a
    batched (multiplier x taps) @ (taps x L) matmul per channel, a few channels at a time.

    The zero-padded input is split into stride x stride phases (``phase[a][b] = x[a::sh, b::sw]``)
    and each phase flattened with a row pitch of ``pitch`` columns: a tap's input for every output
    is then one contiguous run of ``OH * pitch`` values (the extra columns per row are computed and
    cut off at the end), and the taps of one phase form a regular grid of such runs, a strided view
    copied into the im2col matrix in one call. Channels go in chunks whose im2col matrix stays in
    cache (one matrix for all channels is taps times the input: tens of MB for a MobileNet's first
    layers), and every buffer but the result is kept between calls."""

    def __init__(self, x: Array, weight: Array, groups: int, stride: tuple[int, int], padding: tuple[int, int],
                 dilation: tuple[int, int], out_hw: tuple[int, int]) -> None:
        n, c, h, w = x.shape
        out_c, _, kh, kw = weight.shape
        (sh, sw), (ph, pw), (oh, ow) = stride, padding, out_hw
        rows = -(-(h + 2 * ph) // sh) + 1  # per phase, plus a row the last tap's run may reach into
        pitch = -(-(w + 2 * pw) // sw)
        length = oh * pitch
        self.shape = (n, groups, out_c // groups, length)
        self.pitched_shape = (n, out_c, oh, pitch)
        self.result_shape = (n, out_c, oh, ow)
        # (sh, sw, N, C, rows * pitch); borders stay zero, each call copies the input into the
        # interiors: per phase, the input's rows and columns that fall into it
        self.dtype = x.dtype
        phases = np.zeros((sh, sw, n, c, rows * pitch), dtype=x.dtype)
        grid = phases.reshape(sh, sw, n, c, rows, pitch)
        self.fills: list[tuple[Array, tuple[slice, slice]]] = []
        for a in range(sh):
            first_r, x_rows = _phase_span(a, sh, ph, h)
            for b in range(sw):
                first_q, x_cols = _phase_span(b, sw, pw, w)
                if x_rows.stop > x_rows.start and x_cols.stop > x_cols.start:
                    count_r = len(range(x_rows.start, x_rows.stop, sh))
                    count_q = len(range(x_cols.start, x_cols.stop, sw))
                    into = grid[a, b, :, :, first_r : first_r + count_r, first_q : first_q + count_q]
                    self.fills.append((into, (x_rows, x_cols)))
        taps = kh * kw
        self.chunk = max(1, _DEPTHWISE_CHUNK_BYTES // (taps * length * x.dtype.itemsize))
        self.cols_shape = (self.chunk, taps, length)
        # per grid of taps (one phase's): (its first im2col row, its shape, the taps' runs for every channel)
        self.grids: list[tuple[int, tuple[int, ...], Array]] = []
        order: list[int] = []  # the tap (r * kw + q) of each im2col row
        row = 0
        for a, tap_rows in _phase_taps(kh, dilation[0], sh):
            for b, tap_cols in _phase_taps(kw, dilation[1], sw):
                source = phases[a, b]
                base = tap_rows[0][1] * pitch + tap_cols[0][1]
                step_r = (tap_rows[1][1] - tap_rows[0][1]) * pitch if len(tap_rows) > 1 else 0
                step_q = tap_cols[1][1] - tap_cols[0][1] if len(tap_cols) > 1 else 0
                last = base + (len(tap_rows) - 1) * step_r + (len(tap_cols) - 1) * step_q + length
                if last > source.shape[-1]:  # pragma: no cover  (rows has room for every tap's run)
                    raise AssertionError("depthwise tap runs past the padded input")
                sn, sc, item = source.strides
                runs = as_strided(source[..., base:], shape=(n, c, len(tap_rows), len(tap_cols), length),
                                  strides=(sn, sc, step_r * item, step_q * item, item), writeable=False)
                self.grids.append((row, (self.chunk, len(tap_rows), len(tap_cols), length), runs))
                order += [r * kw + q for r, _ in tap_rows for q, _ in tap_cols]
                row += len(tap_rows) * len(tap_cols)
        self.order = None if order == sorted(order) else np.array(order)
        self.taps = _PerWeight(self._taps)  # the weight's taps in im2col row order

    def __call__(self, x: Array, weight: Array) -> Array:
        n, groups, multiplier, length = self.shape
        taps = self.taps(weight)
        for into, (x_rows, x_cols) in self.fills:
            np.copyto(into, x[:, :, x_rows, x_cols])
        # scratch from the pool: one im2col buffer serves every depthwise layer, so it stays in cache
        chunk, count, length = self.cols_shape
        size = chunk * count * length
        cols = empty((max(size, _DEPTHWISE_CHUNK_BYTES // self.dtype.itemsize),), self.dtype)[:size]
        cols = cols.reshape(self.cols_shape)
        grids = [(cols[:, row : row + shape[1] * shape[2]].reshape(shape), runs) for row, shape, runs in self.grids]
        y = empty(self.shape, self.dtype)  # with the pitch's extra columns
        for i in range(n):
            for g in range(0, groups, chunk):
                m = min(chunk, groups - g)
                for into, runs in grids:
                    np.copyto(into[:m], runs[i, g : g + m])
                np.matmul(taps[g : g + m], cols[:m], out=y[i, g : g + m])
        result = empty(self.result_shape, self.dtype)
        np.copyto(result, y.reshape(self.pitched_shape)[..., : self.result_shape[3]])
        return result

    def _taps(self, weight: Array) -> Array:
        """The weight as (G, M, taps), taps in im2col row order."""
        _, groups, multiplier, _ = self.shape
        taps = weight.reshape(groups, multiplier, -1)
        return taps if self.order is None else taps[..., self.order]


def _phase_span(phase: int, stride: int, pad: int, size: int) -> tuple[int, slice]:
    """Along one axis, where the input lands in a phase of its zero-padded copy: the phase's first
    index holding input, and the input's indexes there (a slice with step ``stride``)."""
    first = max(0, -(-(pad - phase) // stride))  # padded index phase + stride * first >= pad
    start = phase + stride * first - pad
    return first, slice(start, size, stride)


def _phase_taps(k: int, dilation: int, stride: int) -> list[tuple[int, list[tuple[int, int]]]]:
    """The taps of one axis grouped by phase: [(phase, [(tap, row offset within the phase)...])].
    Within a phase the offsets step evenly (by dilation / gcd(dilation, stride))."""
    phases: dict[int, list[tuple[int, int]]] = {}
    for t in range(k):
        phase, offset = divmod(t * dilation, stride)[::-1]
        phases.setdefault(phase, []).append((t, offset))
    return sorted(phases.items())


_DEPTHWISE_CHUNK_BYTES = 512 * 1024  # im2col matrix per channel chunk: about half of a core's L2, measured


class _Winograd:
    """A 3x3 stride-1 convolution for one input shape, as Winograd's F(2x2, 3x3) (Lavin & Gray,
    "Fast Algorithms for Convolutional Neural Networks", 2015): each 2x2 block of outputs from a
    4x4 tile of input, with 16 products per (output, input) channel pair where im2col has 36.

    In matrices: the tiles of every channel are gathered (one strided copy) and transformed,
    ``V = (B^T (x) B^T) tiles``; then one (O x C) @ (C x tiles) matmul per each of the 16 tile
    positions with the transformed weight ``U = (G (x) G) w`` (made once per weight, in float64),
    and the products are transformed back, ``(A^T (x) A^T) M``, and scattered into the output.
    The matmuls do 2.25x fewer multiply-adds than im2col's, with no 9x copy of the input; the
    transforms' entries are 0, +-1 and +-1/2, so results stay within a few ulp of im2col's."""

    def __init__(self, x: Array, out_c: int, padding: tuple[int, int], out_hw: tuple[int, int]) -> None:
        n, c, h, w = x.shape
        (ph, pw), (oh, ow) = padding, out_hw
        th, tw = -(-oh // 2), -(-ow // 2)  # tiles; the last ones reach into zeros when oh or ow is odd
        padded = np.zeros((n, c, 2 * th + 2, 2 * tw + 2), dtype=np.float32)
        self.interior = padded[:, :, ph : ph + h, pw : pw + w]  # the padded input's zeros stay
        sn, sc, sr, item = padded.strides
        # (4, 4, C, N, TH, TW): tile element (k, l) of every tile, channel-major as the matmuls want them
        self.tiles = as_strided(padded, shape=(4, 4, c, n, th, tw),
                                strides=(sr, item, sc, sn, 2 * sr, 2 * item), writeable=False)
        self.sizes = (c, out_c, n * th * tw)
        self.full_shape = (n, out_c, 2 * th, 2 * tw)
        self.blocks = (2, 2, out_c, n, th, tw)
        self.out_hw = out_hw
        self.transformed = _PerWeight(_winograd_weight)

    def __call__(self, x: Array, weight: Array) -> Array:
        c, out_c, count = self.sizes
        u = self.transformed(weight)
        self.interior[...] = x
        tiles = empty((16 * c * count,))
        np.copyto(tiles.reshape(self.tiles.shape), self.tiles)
        v = empty((16 * c * count,))
        np.matmul(_WINOGRAD_B, tiles.reshape(16, -1), out=v.reshape(16, -1))
        del tiles
        m = empty((16 * out_c * count,))
        np.matmul(u, v.reshape(16, c, count), out=m.reshape(16, out_c, count))
        del v
        blocks = empty((4 * out_c * count,))
        np.matmul(_WINOGRAD_A, m.reshape(16, -1), out=blocks.reshape(4, -1))
        del m
        full = empty(self.full_shape)
        n, _, h2, w2 = self.full_shape
        # output (i, j) of tile (ti, tj) is full[2 ti + i, 2 tj + j]
        np.copyto(full.reshape(n, out_c, h2 // 2, 2, w2 // 2, 2).transpose(3, 5, 1, 0, 2, 4),
                  blocks.reshape(self.blocks))
        oh, ow = self.out_hw
        if (oh, ow) == (h2, w2):
            return full
        result = empty((n, out_c, oh, ow))
        np.copyto(result, full[:, :, :oh, :ow])
        return result


def _winograd_weight(weight: Array) -> Array:
    """U = (G (x) G) w as (16, O, C), computed in float64 and rounded once."""
    out_c, c = weight.shape[:2]
    u = (_WINOGRAD_G @ weight.reshape(out_c * c, 9).T.astype(np.float64)).astype(np.float32)
    return u.reshape(16, out_c, c)


class _PerWeight:
    """``derive(weight)``, kept while the same read-only weight comes back (a constant of the
    program: the usual call); a writable weight may change in place, so it is derived anew."""

    __slots__ = ("derive", "kept")

    def __init__(self, derive: Callable[[Array], Array]) -> None:
        self.derive = derive
        self.kept: tuple[Array, Array] | None = None

    def __call__(self, weight: Array) -> Array:
        kept = self.kept
        if kept is not None and kept[0] is weight:
            return kept[1]
        value = self.derive(weight)
        if not weight.flags.writeable:
            self.kept = (weight, value)
        return value


def _kron_square(m: list[list[float]]) -> Array:
    """M (x) M: the transform M X M^T of a square tile X, as a matrix acting on X row-major."""
    a = np.array(m, dtype=np.float64)
    return np.kron(a, a)


_WINOGRAD_B = _kron_square([[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]).astype(np.float32)
_WINOGRAD_G = _kron_square([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]])
_WINOGRAD_A = _kron_square([[1, 1, 1, 0], [0, 1, -1, -1]]).astype(np.float32)
_WINOGRAD_MIN_CHANNELS = 32 * 32  # input x output channels: below, im2col's one matmul costs less than 4 steps
