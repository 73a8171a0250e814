"""Neural-network layers: convolution (and transposed), pooling, embedding,
dropout (eval: identity), padding and distances.

float32 2-D convolution and pooling run the demo backend's kernels (see site_kernels); the
code here covers the rest: other dtypes, 1-D and 3-D windows, transposed convolution. N-d
where torch is; im2col + matmul. Normalization layers are in normalization.py."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from bundle_format.program import Conv2dAttrs, Pool2dAttrs, ShapeAttrs
from runtime_py.backends.demo.conv import make_conv2d
from runtime_py.backends.demo.pooling import (
    adaptive_bounds,
    make_adaptive_avg_pool2d,
    make_avg_pool2d,
    make_max_pool2d,
)
from runtime_py.backends.demo.windows import output_size
from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op, register_schema
from runtime_py.operators.site_kernels import SiteKernels, all_float32, pair
from runtime_py.operators.tensors import INT64, as_dtype, dim, float_dtype, result_type


def _expand(values: list[int] | int, n: int, what: str) -> list[int]:
    values = [values] if isinstance(values, int) else list(values)
    if len(values) == 1:
        values = values * n
    if len(values) != n:
        raise ExecutionError(f"expected {what} to have {n} values, got {values}")
    return values


def _batched(x: np.ndarray, nd: int, name: str) -> tuple[np.ndarray, bool]:
    """(N, C, *spatial) view of x, and whether x had no batch dim."""
    if x.ndim == nd + 1:
        return x[None], True
    if x.ndim != nd + 2:
        raise ExecutionError(f"{name} expects a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, "
                             f"got shape {list(x.shape)}")
    return x, False


def _windows(x: np.ndarray, kernel: list[int], stride: list[int], dilation: list[int],
             out: list[int]) -> np.ndarray:
    """Stack of the strided windows of the last len(kernel) dims: shape (*lead, prod(kernel), *out)."""
    nd = len(kernel)
    lead = x.ndim - nd
    slices = []
    for offsets in itertools.product(*[range(k) for k in kernel]):
        index = [slice(None)] * lead + [slice(o * d, o * d + s * (n - 1) + 1, s)
                                        for o, d, s, n in zip(offsets, dilation, stride, out, strict=True)]
        slices.append(x[tuple(index)])
    return np.stack(slices, axis=lead)


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


def convolution(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None, stride: Any, padding: Any,
                dilation: Any, groups: int) -> np.ndarray:
    nd = weight.ndim - 2
    xb, unbatched = _batched(x, nd, f"conv{nd}d")
    kernel = list(weight.shape[2:])
    stride, dilation = _expand(stride, nd, "stride"), _expand(dilation, nd, "dilation")
    pads = _conv_padding(padding, kernel, dilation, nd)
    n, c = xb.shape[:2]
    o, cg = weight.shape[:2]
    if c != cg * groups or o % groups:
        raise ExecutionError(f"expected input with {cg * groups} channels (weight {list(weight.shape)}, groups "
                             f"{groups}), but got input of shape {list(x.shape)}")
    dtype = result_type(x, weight)
    xp = np.pad(as_dtype(xb, dtype), [(0, 0), (0, 0)] + pads)
    out = [(size - d * (k - 1) - 1) // s + 1 for size, k, s, d in zip(xp.shape[2:], kernel, stride, dilation,
                                                                       strict=True)]
    if min(out) <= 0:
        raise ExecutionError(f"kernel size {kernel} can't be greater than the padded input size "
                             f"{list(xp.shape[2:])}")
    cols = _windows(xp, kernel, stride, dilation, out)  # (N, C, K, *out)
    cols = cols.reshape(n, groups, cg * int(np.prod(kernel)), -1)
    w = as_dtype(weight, dtype).reshape(groups, o // groups, -1)
    y = np.matmul(w, cols).reshape(n, o, *out)
    if bias is not None:
        y = y + bias.reshape((-1,) + (1,) * nd).astype(dtype)
    return y[0] if unbatched else y


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


def _conv_site() -> Any:
    """A convolution call site: float32 2-D convolutions run the demo kernel (which keeps its
    weight matrix and buffers between calls), others ``convolution``. A demo kernel's
    failure is its own: no second implementation runs in its place (a bug shows)."""
    # one kernel per weight too: a method's call site serves every instance of its class (each
    # block of a ResNet), and a kernel's buffers and weight matrix are sized for one weight
    kernels = SiteKernels(max_kernels=256)

    def conv(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: Any, padding: Any, dilation: Any,
             groups: int) -> np.ndarray:
        if w.ndim == 4 and x.ndim in (3, 4) and all_float32(x, w, b) and type(groups) is int:
            attrs = (pair(stride), pair(padding), pair(dilation), groups)
            if None not in attrs:
                return kernels.get((attrs, id(w)), lambda: make_conv2d(Conv2dAttrs(*attrs), 3))(x, w, b)
        return convolution(x, w, b, stride, padding, dilation, groups)

    return conv


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

def _pool_setup(x: np.ndarray, nd: int, kernel: Any, stride: Any, padding: Any, dilation: Any,
                ceil_mode: bool, name: str) -> tuple[list[int], ...]:
    kernel = _expand(kernel, nd, "kernel_size")
    stride = _expand(stride, nd, "stride") if stride else list(kernel)
    padding, dilation = _expand(padding, nd, "padding"), _expand(dilation, nd, "dilation")
    if any(p > k // 2 for p, k in zip(padding, kernel, strict=True)):
        raise ExecutionError(f"pad should be at most half of effective kernel size, but got pad={padding} and "
                             f"kernel_size={kernel}")
    spatial = x.shape[-nd:]
    out = [output_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in zip(spatial, kernel, stride, padding, dilation,
                                                                         strict=True)]
    if min(out) <= 0:
        raise ExecutionError(f"{name}: output size is too small for input of shape {list(x.shape)}")
    extra = [max((o - 1) * s + d * (k - 1) + 1 - (n + 2 * p), 0)
             for o, s, d, k, n, p in zip(out, stride, dilation, kernel, spatial, padding, strict=True)]
    return kernel, stride, padding, dilation, out, extra


def _pad_spatial(x: np.ndarray, padding: list[int], extra: list[int], value: Any) -> np.ndarray:
    widths = [(0, 0)] * (x.ndim - len(padding)) + [(p, p + e) for p, e in zip(padding, extra, strict=True)]
    return np.pad(x, widths, constant_values=value)


def max_pool(x: np.ndarray, nd: int, kernel: Any, stride: Any, padding: Any, dilation: Any,
             ceil_mode: bool, with_indices: bool = False) -> Any:
    if x.ndim not in (nd + 1, nd + 2):
        raise ExecutionError(f"max_pool{nd}d expects a {nd + 1}-D or {nd + 2}-D input, got {list(x.shape)}")
    kernel, stride, padding, dilation, out, extra = _pool_setup(x, nd, kernel, stride, padding, dilation,
                                                                ceil_mode, f"max_pool{nd}d")
    low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    windows = _windows(_pad_spatial(x, padding, extra, low), kernel, stride, dilation, out)
    axis = x.ndim - nd
    values = np.max(windows, axis=axis)
    if not with_indices:
        return values
    which = np.argmax(windows, axis=axis)  # offset inside the window -> flat index into the input plane
    offsets = np.unravel_index(which, kernel)
    flat = np.zeros(which.shape, INT64)
    for i in range(nd):
        grid = np.arange(out[i]).reshape((-1,) + (1,) * (nd - 1 - i)) * stride[i] - padding[i]
        flat = flat * x.shape[axis + i] + grid + offsets[i] * dilation[i]
    return values, flat


register_schema("aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
                "int[1] dilation=[1], bool ceil_mode=False) -> Tensor", lambda x, *a: max_pool(x, 1, *a))


def _max_pool2d_site() -> Any:
    """max_pool2d at one call site: float32 runs the demo kernel (see _conv_site)."""
    kernels = SiteKernels()

    def max_pool2d(x: np.ndarray, kernel: Any, stride: Any, padding: Any, dilation: Any,
                   ceil_mode: bool) -> np.ndarray:
        if x.ndim in (3, 4) and x.dtype == np.float32:
            key = (pair(kernel), pair(stride) if stride else pair(kernel), pair(padding), pair(dilation),
                   bool(ceil_mode))
            if None not in key:
                return kernels.get(key, lambda: make_max_pool2d(Pool2dAttrs(*key), 1))(x)
        return max_pool(x, 2, kernel, stride, padding, dilation, ceil_mode)

    return max_pool2d


register_schema("aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
                "int[2] dilation=1, bool ceil_mode=False) -> Tensor", _max_pool2d_site, per_site=True)
register_schema("aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
                "int[3] dilation=1, bool ceil_mode=False) -> Tensor", lambda x, *a: max_pool(x, 3, *a))
register_schema("aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
                "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
                lambda x, *a: max_pool(x, 2, *a, with_indices=True))


def avg_pool(x: np.ndarray, nd: int, kernel: Any, stride: Any, padding: Any, ceil_mode: bool,
             count_include_pad: bool, divisor_override: int | None = None) -> np.ndarray:
    kernel, stride, padding, dilation, out, extra = _pool_setup(x, nd, kernel, stride, padding, 1, ceil_mode,
                                                                f"avg_pool{nd}d")
    dtype = float_dtype(x)
    axis = x.ndim - nd
    sums = np.sum(_windows(_pad_spatial(x.astype(np.float64), padding, extra, 0), kernel, stride, dilation, out),
                  axis=axis)
    if divisor_override:
        divisor: Any = divisor_override
    else:
        ones = np.ones(x.shape[-nd:])
        if count_include_pad:  # padding counts, the ceil_mode overhang does not
            mask = np.pad(np.pad(ones, [(p, p) for p in padding], constant_values=1), [(0, e) for e in extra])
        else:
            mask = _pad_spatial(ones, padding, extra, 0)
        divisor = np.sum(_windows(mask, kernel, stride, dilation, out), axis=0)
    return (sums / divisor).astype(dtype)


register_schema("aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], "
                "bool ceil_mode=False, bool count_include_pad=True) -> Tensor", lambda x, *a: avg_pool(x, 1, *a))
def _avg_pool2d_site() -> Any:
    """avg_pool2d at one call site: float32 runs the demo kernel (see _conv_site)."""
    kernels = SiteKernels()

    def avg_pool2d(x: np.ndarray, kernel: Any, stride: Any, padding: Any, ceil_mode: bool,
                   count_include_pad: bool, divisor_override: int | None) -> np.ndarray:
        if x.ndim in (3, 4) and x.dtype == np.float32:
            key = (pair(kernel), pair(stride) if stride else pair(kernel), pair(padding), (1, 1), bool(ceil_mode),
                   bool(count_include_pad), divisor_override)
            if None not in key[:4]:
                return kernels.get(key, lambda: make_avg_pool2d(Pool2dAttrs(*key), 1))(x)
        return avg_pool(x, 2, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override)

    return avg_pool2d


register_schema("aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
                "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
                _avg_pool2d_site, per_site=True)
register_schema("aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, "
                "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
                lambda x, *a: avg_pool(x, 3, *a))


def _adaptive_bounds(size: int, out: int) -> list[tuple[int, int]]:
    starts, ends = adaptive_bounds(size, out)
    return list(zip(starts.tolist(), ends.tolist(), strict=True))


def adaptive_avg_pool(x: np.ndarray, output_size: list[int], nd: int) -> np.ndarray:
    output_size = _expand(output_size, nd, "output_size")
    y = x.astype(np.float64)
    for i, out in enumerate(output_size):  # separable: average one axis at a time
        axis = x.ndim - nd + i
        out = x.shape[axis] if out is None else out
        matrix = np.zeros((out, x.shape[axis]))
        for j, (start, end) in enumerate(_adaptive_bounds(x.shape[axis], out)):
            matrix[j, start:end] = 1.0 / (end - start)
        y = np.moveaxis(np.tensordot(y, matrix, axes=([axis], [1])), -1, axis)
    return y.astype(float_dtype(x))


register_schema("aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor",
                lambda x, o: adaptive_avg_pool(x, o, 1))
def _adaptive_avg_pool2d(x: np.ndarray, size: Any) -> np.ndarray:
    """float32 runs the demo kernel (stateless: made per call, it costs a closure)."""
    dims = pair(size)
    if x.ndim in (3, 4) and x.dtype == np.float32 and dims is not None and min(dims) >= 1:
        return make_adaptive_avg_pool2d(ShapeAttrs(dims), 1)(x)
    return adaptive_avg_pool(x, size, 2)


register_schema("aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor", _adaptive_avg_pool2d)
register_schema("aten::adaptive_avg_pool3d(Tensor self, SymInt[3] output_size) -> Tensor",
                lambda x, o: adaptive_avg_pool(x, o, 3))


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
