"""Neural-network layers: convolution (and transposed), pooling, embedding,
dropout (eval: identity), padding and distances.

Convolution and max, average and adaptive average pooling have one implementation each, the
demo backend's 2-D kernels (runtime_py/backends/demo/conv.py, pooling.py): the call sites here
bind them to the arguments, promote dtypes as torch does, and map a 1-D window onto them as a
window of unit height and a 3-D window as a loop over its depth taps. Transposed convolution and
adaptive max pooling have no demo kernel and are here. Normalization layers are in
normalization.py."""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from typing import Any

import numpy as np

from bundle_format.program import Conv2dAttrs, Pool2dAttrs, ShapeAttrs
from bundle_format.shape_arithmetic import output_size
from runtime_py.backends.demo.arrays import Kernel
from runtime_py.backends.demo.conv import make_conv2d
from runtime_py.backends.demo.pooling import (
    adaptive_bounds,
    lowest,
    make_adaptive_avg_pool2d,
    make_avg_pool2d,
    make_max_pool2d,
    max_pool2d_with_indices,
    window_counts,
)
from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op, register_schema
from runtime_py.operators.site_kernels import SiteKernels
from runtime_py.operators.tensors import INT64, as_dtype, dim, result_type


def _expand(values: list[int] | int, n: int, what: str) -> list[int]:
    values = [values] if isinstance(values, int) else list(values)
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        raise ExecutionError(f"expected {what} to have {n} values, got {values}")
    return values


def _check_rank(x: np.ndarray, nd: int, name: str) -> None:
    if x.ndim not in (nd + 1, nd + 2):
        raise ExecutionError(f"{name} expects a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, "
                             f"got shape {list(x.shape)}")


def _float_dtype(name: str, *arrays: np.ndarray | None) -> np.dtype:
    """The dtype the operands promote to, which must be a floating one (torch has no integer
    convolution or average pooling on the CPU)."""
    dtype = result_type(*[a for a in arrays if a is not None])
    if dtype.kind != "f":
        raise ExecutionError(f"{name} is not implemented for {dtype} tensors (floating-point only, as in torch)")
    return dtype


def _last2(values: list[int], unit: int) -> tuple[int, int]:
    """The (height, width) part of a 1-, 2- or 3-D window attribute: a 1-D one gets ``unit`` as height."""
    return (unit, values[0]) if len(values) == 1 else (values[-2], values[-1])


def _planar(nd: int, x: np.ndarray, kernel: Kernel) -> np.ndarray:
    """``kernel`` (a 2-D one) on a 1-D or 2-D input: a 1-D input runs with a unit height."""
    if nd == 1:
        y: np.ndarray = kernel(x[..., None, :])
        return y[..., 0, :]
    return np.asarray(kernel(x))


def _by_depth(x: np.ndarray, name: str, window: tuple[int, int, int, int], ceil_mode: bool, fill: Any,
              planar: Callable[[int, np.ndarray], np.ndarray]) -> tuple[list[np.ndarray], int, int]:
    """A 3-D window as 2-D ones: the input (N, C, D, H, W) padded in depth with ``fill``, and
    ``planar(tap, planes)`` for each depth tap, ``planes`` the (N, C, OD, H, W) input planes the
    tap reads for every output depth. Returns the taps' results, the output depth and the input's."""
    kernel, stride, padding, dilation = window
    if min(kernel, stride, dilation) < 1 or padding < 0:
        raise ExecutionError(f"{name}: depth kernel {kernel}, stride {stride} and dilation {dilation} must be "
                             f"positive and padding {padding} non-negative")
    depth = x.shape[2]
    out = output_size(depth, kernel, stride, padding, dilation, ceil_mode)
    if out < 1:
        raise ExecutionError(f"{name}: input of depth {depth} is too small: output depth would be {out}")
    extra = max((out - 1) * stride + dilation * (kernel - 1) + 1 - (depth + 2 * padding), 0)
    if padding or extra:
        x = np.pad(x, [(0, 0), (0, 0), (padding, padding + extra), (0, 0), (0, 0)], constant_values=fill)
    taps = [planar(t, x[:, :, t * dilation: t * dilation + stride * (out - 1) + 1: stride]) for t in range(kernel)]
    return taps, out, depth


def _batched5(x: np.ndarray) -> tuple[np.ndarray, bool]:
    return (x[None], True) if x.ndim == 4 else (x, False)


# ---- convolution -------------------------------------------------------------------------------

def _conv_padding(padding: Any, kernel: list[int], dilation: list[int], nd: int) -> list[tuple[int, int]]:
    if padding == "valid":
        return [(0, 0)] * nd
    if padding == "same":
        totals = [d * (k - 1) for k, d in zip(kernel, dilation, strict=True)]
        return [(t // 2, t - t // 2) for t in totals]  # torch pads the extra one on the right
    if isinstance(padding, str):
        raise ExecutionError(f"invalid padding string '{padding}'")
    return [(p, p) for p in _expand(padding, nd, "padding")]


def _conv_site() -> Any:
    """A convolution call site, 1-, 2- or 3-D, on the demo backend's conv2d kernel (which keeps its
    weight matrix and buffers between calls)."""
    # one kernel per weight too: a method's call site serves every instance of its class (each
    # block of a ResNet), and a kernel's buffers and weight matrix are sized for one weight
    kernels = SiteKernels(max_kernels=256)

    def conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: Any, padding: Any, dilation: Any,
             groups: int) -> np.ndarray:
        nd = w.ndim - 2
        if nd not in (1, 2, 3):
            raise ExecutionError(f"convolution expects a weight of 3 to 5 dims, got shape {list(w.shape)}")
        name = f"conv{nd}d"
        _check_rank(x, nd, name)
        dtype = _float_dtype(name, x, w, b)
        weight_id = id(w)  # of the weight as given: the views made of it below are new on every call
        x, w = as_dtype(x, dtype), as_dtype(w, dtype)
        b = None if b is None else as_dtype(b, dtype)
        sizes = list(w.shape[2:])
        strides, dilations = _expand(stride, nd, "stride"), _expand(dilation, nd, "dilation")
        pads = _conv_padding(padding, sizes, dilations, nd)
        if any(lo != hi for lo, hi in pads):  # "same" with an odd total: the extra one goes on the right
            x = np.pad(x, [(0, 0)] * (x.ndim - nd) + [(0, hi - lo) for lo, hi in pads])
        lows = [lo for lo, _ in pads]
        attrs = Conv2dAttrs(_last2(strides, 1), _last2(lows, 0), _last2(dilations, 1), groups)
        kernel = kernels.get((attrs, weight_id), lambda: make_conv2d(attrs, 3))
        if nd == 1:
            y: np.ndarray = kernel(x[..., None, :], w[:, :, None, :], b)
            return y[..., 0, :]
        if nd == 2:
            return np.asarray(kernel(x, w, b))
        # 3-D: one 2-D convolution per depth tap, the output depths as its batch, summed
        x5, unbatched = _batched5(x)
        n, c = x5.shape[:2]

        def planar(tap: int, planes: np.ndarray) -> np.ndarray:
            rows = planes.transpose(0, 2, 1, 3, 4).reshape(-1, c, *planes.shape[3:])
            return np.asarray(kernel(rows, w[:, :, tap], b if tap == 0 else None))

        taps, out, _ = _by_depth(x5, name, (sizes[0], strides[0], lows[0], dilations[0]), False, 0, planar)
        y = functools.reduce(np.add, taps)
        y = np.ascontiguousarray(y.reshape(n, out, *y.shape[1:]).transpose(0, 2, 1, 3, 4))
        return y[0] if unbatched else y

    return conv


def _batched(x: np.ndarray, nd: int, name: str) -> tuple[np.ndarray, bool]:
    """(N, C, *spatial) view of x, and whether x had no batch dim."""
    _check_rank(x, nd, name)
    return (x[None], True) if x.ndim == nd + 1 else (x, False)


def conv_transpose(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, stride: Any, padding: Any,
                   output_padding: Any, groups: int, dilation: Any) -> np.ndarray:
    nd = weight.ndim - 2
    xb, unbatched = _batched(x, nd, f"conv_transpose{nd}d")
    kernel = list(weight.shape[2:])
    stride, dilation = _expand(stride, nd, "stride"), _expand(dilation, nd, "dilation")
    padding, output_padding = _expand(padding, nd, "padding"), _expand(output_padding, nd, "output_padding")
    n, c = xb.shape[:2]
    if weight.shape[0] != c or c % groups:
        raise ExecutionError(f"expected input with {weight.shape[0]} channels, got shape {list(x.shape)}")
    og = weight.shape[1]
    spatial = xb.shape[2:]
    dtype = result_type(x, weight)
    xg = as_dtype(xb, dtype).reshape(n, groups, c // groups, -1)  # (N, G, Cin/G, P)
    wg = as_dtype(weight, dtype).reshape(groups, c // groups, og * int(np.prod(kernel)))
    contrib = np.matmul(np.swapaxes(wg, 1, 2), xg)  # (N, G, Cout/G * K, P)
    contrib = contrib.reshape(n, groups * og, int(np.prod(kernel)), *spatial)
    final = [(s_in - 1) * s - 2 * p + d * (k - 1) + op_ + 1
             for s_in, s, p, d, k, op_ in zip(spatial, stride, padding, dilation, kernel, output_padding, strict=True)]
    full = [max((s_in - 1) * s + d * (k - 1) + 1, p + f)
            for s_in, s, d, k, p, f in zip(spatial, stride, dilation, kernel, padding, final, strict=True)]
    y = np.zeros((n, groups * og, *full), dtype)
    for i, offsets in enumerate(itertools.product(*[range(k) for k in kernel])):
        index = (slice(None), slice(None)) + tuple(slice(o * d, o * d + s * (s_in - 1) + 1, s) for o, d, s, s_in in
                                                   zip(offsets, dilation, stride, spatial, strict=True))
        y[index] += contrib[:, :, i]
    y = y[(slice(None), slice(None)) + tuple(slice(p, p + f) for p, f in zip(padding, final, strict=True))]
    if bias is not None:
        y = y + bias.reshape((-1,) + (1,) * nd).astype(dtype)
    return y[0] if unbatched else y



for _n, _ones, _zeros in ((1, "[1]", "[0]"), (2, "[1, 1]", "[0, 0]"), (3, "[1, 1, 1]", "[0, 0, 0]")):
    # conv{n}d with int padding, and with "same"/"valid"
    register_schema(f"aten::conv{_n}d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{_n}] stride={_ones}, "
                    f"SymInt[{_n}] padding={_zeros}, SymInt[{_n}] dilation={_ones}, SymInt groups=1) -> Tensor",
                    _conv_site, per_site=True)
    register_schema(f"aten::conv{_n}d.padding(Tensor input, Tensor weight, Tensor? bias=None, "
                    f"SymInt[{_n}] stride={_ones}, str padding=\"valid\", SymInt[{_n}] dilation={_ones}, "
                    "SymInt groups=1) -> Tensor", _conv_site, per_site=True)
    _name = f"conv_transpose{_n}d" + (".input" if _n > 1 else "")
    register_schema(f"aten::{_name}(Tensor input, Tensor weight, Tensor? bias=None, SymInt[{_n}] stride={_ones}, "
                    f"SymInt[{_n}] padding={_zeros}, SymInt[{_n}] output_padding={_zeros}, SymInt groups=1, "
                    f"SymInt[{_n}] dilation={_ones}) -> Tensor", conv_transpose)


def _convolution_site() -> Any:
    conv = _conv_site()

    def _convolution(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: list[int], padding: list[int],
                     dilation: list[int], transposed: bool, output_padding: list[int], groups: int,
                     *_flags: bool) -> np.ndarray:
        if transposed:
            return conv_transpose(x, w, b, stride, padding, output_padding, groups, dilation)
        return conv(x, w, b, stride, padding, dilation, groups)

    return _convolution


register_schema("aten::_convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
                "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups, bool benchmark, "
                "bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor", _convolution_site,
                per_site=True)


# ---- pooling -----------------------------------------------------------------------------------

def _window(nd: int, kernel: Any, stride: Any, padding: Any, dilation: Any) -> tuple[list[int], ...]:
    kernel = _expand(kernel, nd, "kernel_size")
    stride = _expand(stride, nd, "stride") if stride else list(kernel)
    return kernel, stride, _expand(padding, nd, "padding"), _expand(dilation, nd, "dilation")


def _max_pool_site(nd: int) -> Callable[[], Any]:
    """max_pool{nd}d at one call site, on the demo backend's max_pool2d kernel."""

    def site() -> Any:
        kernels = SiteKernels()

        def max_pool(x: np.ndarray, kernel: Any, stride: Any, padding: Any, dilation: Any,
                     ceil_mode: bool) -> np.ndarray:
            name = f"max_pool{nd}d"
            _check_rank(x, nd, name)
            k, s, p, d = _window(nd, kernel, stride, padding, dilation)
            attrs = Pool2dAttrs(_last2(k, 1), _last2(s, 1), _last2(p, 0), _last2(d, 1), bool(ceil_mode))
            pool = kernels.get(attrs, lambda: make_max_pool2d(attrs, 1))
            if nd < 3:
                return _planar(nd, x, pool)
            x5, unbatched = _batched5(x)
            n, c = x5.shape[:2]
            taps, out, _ = _by_depth(x5, name, (k[0], s[0], p[0], d[0]), bool(ceil_mode), lowest(x.dtype),
                                     lambda _, planes: pool(planes.reshape(n, -1, *planes.shape[3:])))
            y = functools.reduce(np.maximum, taps)  # NaN wins, as in torch
            y = y.reshape(n, c, out, *y.shape[2:])
            return y[0] if unbatched else y

        return max_pool

    return site


for _n in (1, 2, 3):
    _empty = "[0]" if _n == 1 else "0"
    register_schema(f"aten::max_pool{_n}d(Tensor self, int[{_n}] kernel_size, int[{_n}] stride=[], "
                    f"int[{_n}] padding={_empty}, int[{_n}] dilation={'[1]' if _n == 1 else '1'}, "
                    "bool ceil_mode=False) -> Tensor", _max_pool_site(_n), per_site=True)


def _max_pool2d_with_indices(x: np.ndarray, kernel: Any, stride: Any, padding: Any, dilation: Any,
                             ceil_mode: bool) -> tuple[np.ndarray, np.ndarray]:
    _check_rank(x, 2, "max_pool2d_with_indices")
    k, s, p, d = _window(2, kernel, stride, padding, dilation)
    attrs = Pool2dAttrs(_last2(k, 1), _last2(s, 1), _last2(p, 0), _last2(d, 1), bool(ceil_mode))
    return max_pool2d_with_indices(attrs, x)


register_schema("aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
                "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
                _max_pool2d_with_indices)


def _avg_pool_site(nd: int) -> Callable[[], Any]:
    """avg_pool{nd}d at one call site, on the demo backend's avg_pool2d kernel. A 3-D window's
    divisor is the product of its per-axis counts, so the mean of a 3-D window is the sum of the
    2-D means of its depth taps over the depth count (or, with divisor_override, their sum)."""

    def site() -> Any:
        kernels = SiteKernels()

        def avg_pool(x: np.ndarray, kernel: Any, stride: Any, padding: Any, ceil_mode: bool,
                     count_include_pad: bool, divisor_override: int | None = None) -> np.ndarray:
            name = f"avg_pool{nd}d"
            _check_rank(x, nd, name)
            x = as_dtype(x, _float_dtype(name, x))
            k, s, p, _ = _window(nd, kernel, stride, padding, 1)
            attrs = Pool2dAttrs(_last2(k, 1), _last2(s, 1), _last2(p, 0), (1, 1), bool(ceil_mode),
                                bool(count_include_pad), divisor_override or 0)
            pool = kernels.get(attrs, lambda: make_avg_pool2d(attrs, 1))
            if nd < 3:
                return _planar(nd, x, pool)
            if p[0] > k[0] // 2:
                raise ExecutionError(f"{name}: padding {p} should be at most half of the kernel size {k}")
            x5, unbatched = _batched5(x)
            n, c = x5.shape[:2]
            taps, out, depth = _by_depth(x5, name, (k[0], s[0], p[0], 1), bool(ceil_mode), 0,
                                         lambda _, planes: pool(planes.reshape(n, -1, *planes.shape[3:])))
            y = functools.reduce(np.add, taps)
            y = y.reshape(n, c, out, *y.shape[2:])
            if not divisor_override:
                counts = window_counts(depth, k[0], s[0], p[0], out, bool(count_include_pad))
                y = y / counts.reshape(-1, 1, 1).astype(y.dtype)
            return y[0] if unbatched else y

        return avg_pool

    return site


register_schema("aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
                "bool ceil_mode=False, bool count_include_pad=True) -> Tensor", _avg_pool_site(1), per_site=True)
for _n in (2, 3):
    register_schema(f"aten::avg_pool{_n}d(Tensor self, int[{_n}] kernel_size, int[{_n}] stride=[], "
                    f"int[{_n}] padding=0, bool ceil_mode=False, bool count_include_pad=True, "
                    "int? divisor_override=None) -> Tensor", _avg_pool_site(_n), per_site=True)


def _adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    starts, ends = adaptive_bounds(size, out)
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def adaptive_avg_pool(x: np.ndarray, output_size: list[int | None], nd: int) -> np.ndarray:
    """On the demo backend's adaptive_avg_pool2d kernel; a 3-D one as two 2-D ones: the (H, W)
    bins of every depth plane, then the depth bins of those (bins are boxes: the mean of a box is
    the mean over its depth of the planes' means)."""
    name = f"adaptive_avg_pool{nd}d"
    _check_rank(x, nd, name)
    x = as_dtype(x, _float_dtype(name, x))
    sizes = [-1 if size is None else size for size in _expand(output_size, nd, "output_size")]
    if nd < 3:
        return _planar(nd, x, make_adaptive_avg_pool2d(ShapeAttrs(_last2(sizes, 1)), 1))
    x5, unbatched = _batched5(x)
    n, c, depth, h, w = x5.shape
    planes = make_adaptive_avg_pool2d(ShapeAttrs((sizes[1], sizes[2])), 1)(x5.reshape(n, c * depth, h, w))
    oh, ow = planes.shape[2:]
    y = make_adaptive_avg_pool2d(ShapeAttrs((sizes[0], -1)), 1)(planes.reshape(n, c, depth, oh * ow))
    y = y.reshape(n, c, -1, oh, ow)
    return y[0] if unbatched else y


for _n in (1, 2, 3):
    register_schema(f"aten::adaptive_avg_pool{_n}d(Tensor self, {'int' if _n == 1 else 'SymInt'}[{_n}] "
                    "output_size) -> Tensor", functools.partial(lambda nd, x, o: adaptive_avg_pool(x, o, nd), _n))


@op("aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)")
def adaptive_max_pool2d(x: np.ndarray, output_size: list[int]) -> tuple[np.ndarray, np.ndarray]:
    oh, ow = _expand(output_size, 2, "output_size")
    h, w = x.shape[-2:]
    values = np.empty(x.shape[:-2] + (oh, ow), x.dtype)
    indices = np.empty(x.shape[:-2] + (oh, ow), INT64)
    for i, (h0, h1) in enumerate(_adaptive_bounds(h, oh)):
        for j, (w0, w1) in enumerate(_adaptive_bounds(w, ow)):
            window = x[..., h0:h1, w0:w1].reshape(x.shape[:-2] + (-1,))
            k = np.argmax(window, axis=-1)
            values[..., i, j] = np.take_along_axis(window, k[..., None], -1)[..., 0]
            indices[..., i, j] = (h0 + k // (w1 - w0)) * w + w0 + k % (w1 - w0)
    return values, indices


# ---- embedding and dropout ---------------------------------------------------------------------

@op("aten::embedding(Tensor weight, Tensor indices, SymInt padding_idx=-1, bool scale_grad_by_freq=False, "
    "bool sparse=False) -> Tensor")
def embedding(weight: np.ndarray, indices: np.ndarray, padding_idx: int, scale: bool, sparse: bool) -> np.ndarray:
    if indices.dtype.kind not in "iu":
        raise ExecutionError(f"expected indices of type Long or Int, got {indices.dtype}")
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise ExecutionError(f"index out of range in self (indices in [{indices.min()}, {indices.max()}], "
                             f"{weight.shape[0]} embeddings)")
    return weight[indices]


def dropout(x: np.ndarray, p: float, train: bool) -> np.ndarray:
    if train and p > 0:
        raise ExecutionError("dropout in training mode is random and not supported by runtime_py; "
                             "call model.eval() before scripting")
    return x


# identity in eval mode (train=False), as torch does
for _name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
    register_schema(f"aten::{_name}(Tensor input, float p, bool train) -> Tensor", dropout)
    register_schema(f"aten::{_name}_(Tensor(a!) self, float p, bool train) -> Tensor(a!)", dropout)


# ---- padding -----------------------------------------------------------------------------------

def _pad_widths(x: np.ndarray, pad: list[int]) -> list[tuple[int, int]]:
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ExecutionError(f"padding length must be even and at most twice the number of dims, got {pad}")
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):  # pad lists the last dim first
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return widths


@op("aten::constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor")
def constant_pad_nd(x: np.ndarray, pad: list[int], value: Any) -> np.ndarray:
    widths = _pad_widths(x, pad)
    y = np.pad(x, [(max(lo, 0), max(hi, 0)) for lo, hi in widths], constant_values=as_dtype(value, x.dtype))
    crop = tuple(slice(-min(lo, 0), y.shape[i] + min(hi, 0)) for i, (lo, hi) in enumerate(widths))
    return y[crop].copy()  # negative padding crops


_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@op('aten::pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None) -> Tensor')
def pad(x: np.ndarray, pads: list[int], mode: str, value: float | None) -> np.ndarray:
    if mode == "constant":
        return constant_pad_nd(x, pads, 0 if value is None else value)
    if mode not in _PAD_MODES:
        raise ExecutionError(f"unrecognised padding mode '{mode}'")
    return np.pad(x, _pad_widths(x, pads), mode=_PAD_MODES[mode])


# ---- distances ---------------------------------------------------------------------------------

@op("aten::cosine_similarity(Tensor x1, Tensor x2, int dim=1, float eps=1e-08) -> Tensor")
def cosine_similarity(a: np.ndarray, b: np.ndarray, d: int, eps: float) -> np.ndarray:
    a64, b64 = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
    axis = dim(d, a64.ndim)
    na = np.maximum(np.linalg.norm(a64, axis=axis), eps)
    nb = np.maximum(np.linalg.norm(b64, axis=axis), eps)
    return (np.sum(a64 * b64, axis=axis) / (na * nb)).astype(result_type(a, b))


@op("aten::pairwise_distance(Tensor x1, Tensor x2, float p=2., float eps=9.9999999999999995e-07, "
    "bool keepdim=False) -> Tensor")
def pairwise_distance(a: np.ndarray, b: np.ndarray, p: float, eps: float, keepdim: bool) -> np.ndarray:
    diff = np.abs(a.astype(np.float64) - b.astype(np.float64) + eps)
    y = np.sum(diff ** p, axis=-1, keepdims=keepdim) ** (1 / p)
    return y.astype(result_type(a, b))
