"""Normalization layers: batch, instance, layer and group norm.

Batch norm (and instance norm, a batch norm of one sample's channels) and layer norm have one
implementation each, the demo backend's kernels (runtime_py/backends/demo/normalization.py):
batch norm is its channel_affine with the statistics (running or the batch's) folded into a
scale and a shift, layer norm its layer_norm. The code here binds them to the arguments."""

from __future__ import annotations

from typing import Any

import numpy as np

from bundle_format.program import LayerNormAttrs
from runtime_py.backends.demo.arrays import Kernel
from runtime_py.backends.demo.normalization import channel_affine, make_layer_norm
from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op, register_schema
from runtime_py.operators.site_kernels import F32, SiteKernels, all_float32
from runtime_py.operators.tensors import as_dtype


def _channel(v: np.ndarray, ndim: int) -> np.ndarray:
    return v.reshape((1, -1) + (1,) * (ndim - 2)) if ndim >= 2 else v


def _folded_norm(weight: np.ndarray | None, bias: np.ndarray | None, mean: np.ndarray, var: np.ndarray,
                 eps: float, dtype: np.dtype = F32) -> tuple[np.ndarray, np.ndarray]:
    """Batch norm as x * scale + shift (as ATen's CPU kernel computes it), in float64 and then
    rounded once to ``dtype``."""
    scale = 1.0 / np.sqrt(var.astype(np.float64) + eps)
    if weight is not None:
        scale = scale * weight
    shift = -mean * scale
    if bias is not None:
        shift = shift + bias
    return scale.astype(dtype), shift.astype(dtype)


def _batch_norm_site() -> Any:
    """batch_norm at one call site: float32 inference runs the demo backend's channel_affine, its
    scale and shift folded once per set of (read-only) parameters; the rest ``batch_norm``."""
    # id(running_mean) -> (weight, bias, mean, var, eps, scale, shift); per set of parameters, as a
    # method's call site serves every instance of its class (see _conv_site)
    folded: dict[int, tuple[Any, ...]] = {}

    def batch_norm_site(x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None,
                        mean: np.ndarray | None, var: np.ndarray | None, training: bool, momentum: float,
                        eps: float, cudnn: bool) -> np.ndarray:
        hit = folded.get(id(mean))
        if (hit is not None and hit[0] is weight and hit[1] is bias and hit[2] is mean and hit[3] is var
                and hit[4] == eps and not training and type(x) is np.ndarray and x.dtype == F32 and x.ndim >= 2
                and x.shape[1] == hit[5].shape[0]):
            return channel_affine(x, hit[5], hit[6])  # the usual call: folded parameters, checked in fewer steps
        if (training or mean is None or var is None or x.ndim < 2 or not all_float32(x, weight, bias, mean, var)
                or any(p is not None and p.shape != (x.shape[1],) for p in (weight, bias, mean, var))):
            return batch_norm(x, weight, bias, mean, var, training, momentum, eps, cudnn)
        params = (weight, bias, mean, var, eps)
        scale, shift = _folded_norm(weight, bias, mean, var, eps)
        if all(p is None or not p.flags.writeable for p in (weight, bias, mean, var)):  # else they may change
            if len(folded) >= 256:
                folded.clear()
            folded[id(mean)] = (*params, scale, shift)
        return channel_affine(x, scale, shift)

    return batch_norm_site


register_schema("aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
                "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor",
                _batch_norm_site, per_site=True)


def batch_norm(x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None, mean: np.ndarray | None,
               var: np.ndarray | None, training: bool, momentum: float, eps: float, cudnn: bool) -> np.ndarray:
    """channel_affine with the running statistics, or in training mode (or without them) the
    batch's (running statistics are not updated), folded into a scale and a shift."""
    if x.ndim < 2:
        raise ExecutionError(f"batch_norm expects an input of at least 2 dims (N, C, ...), got shape {list(x.shape)}")
    if x.dtype.kind != "f":
        raise ExecutionError(f"batch_norm is not implemented for {x.dtype} tensors (floating-point only, as in torch)")
    if training or mean is None or var is None:
        axes = (0,) + tuple(range(2, x.ndim))
        x64 = x.astype(np.float64)
        mean, var = np.mean(x64, axis=axes), np.var(x64, axis=axes)
    scale, shift = _folded_norm(weight, bias, mean, var, eps, x.dtype)
    return channel_affine(x, scale, shift)


@op("aten::instance_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool use_input_stats, float momentum, float eps, bool cudnn_enabled) -> Tensor")
def instance_norm(x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None, mean: np.ndarray | None,
                  var: np.ndarray | None, use_input_stats: bool, momentum: float, eps: float,
                  cudnn: bool) -> np.ndarray:
    if not use_input_stats and mean is not None and var is not None:
        return batch_norm(x, weight, bias, mean, var, False, momentum, eps, cudnn)
    if x.ndim < 2:
        raise ExecutionError(f"instance_norm expects an input of at least 2 dims (N, C, ...), got shape "
                             f"{list(x.shape)}")
    # as torch computes it: a batch norm with batch statistics of one sample whose channels are
    # every (sample, channel) pair
    n = x.shape[0]
    y = batch_norm(x.reshape(1, -1, *x.shape[2:]), None if weight is None else np.tile(weight, n),
                   None if bias is None else np.tile(bias, n), None, None, True, momentum, eps, cudnn)
    return y.reshape(x.shape)


def _layer_norm_site() -> Any:
    """layer_norm at one call site, on the demo kernel (see layer_norm)."""
    kernels = SiteKernels()
    # (x's shape, normalized_shape, eps, weight, bias, kernel) of the last float32 call, its checks
    # passed: the usual call (the same constants, the same shape) goes straight to the kernel
    checked: tuple[Any, ...] = ((), None, None, None, None, None)

    def layer_norm_site(x: np.ndarray, shape: list[int], weight: np.ndarray | None, bias: np.ndarray | None,
                        eps: float, cudnn: bool = True) -> np.ndarray:
        nonlocal checked
        last = checked
        if (type(x) is np.ndarray and last[0] == x.shape and last[1] == shape and last[2] == eps
                and last[3] is weight and last[4] is bias and x.dtype is F32):
            return last[5](x, weight, bias)
        y, kernel = _layer_norm(kernels, x, shape, weight, bias, eps)
        if all_float32(x, weight, bias):
            checked = (x.shape, list(shape), eps, weight, bias, kernel)
        return y

    return layer_norm_site


register_schema("aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
                "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor", _layer_norm_site,
                per_site=True)


def _check_normalized_shape(x: np.ndarray, shape: list[int]) -> None:
    n = len(shape)
    if not n:
        raise ExecutionError("layer_norm expects normalized_shape to name at least one dim, got []")
    if list(x.shape[x.ndim - n:]) != list(shape):
        raise ExecutionError(f"given normalized_shape={list(shape)}, expected input with shape [*, "
                             f"{', '.join(map(str, shape))}], but got input of size {list(x.shape)}")


def _layer_norm(kernels: SiteKernels, x: np.ndarray, shape: list[int], weight: np.ndarray | None,
                bias: np.ndarray | None, eps: float) -> tuple[np.ndarray, Kernel]:
    """The demo kernel of (len(shape), eps) from ``kernels`` and its result. float16 is normalized
    in float32 (torch's CPU kernel accumulates a half tensor in float too) and rounded back."""
    _check_normalized_shape(x, shape)
    if x.dtype.kind != "f":
        raise ExecutionError(f"layer_norm is not implemented for {x.dtype} tensors (floating-point only, as in torch)")
    key = (len(shape), eps)
    kernel = kernels.get(key, lambda: make_layer_norm(LayerNormAttrs(*key), 3))
    dtype = F32 if x.dtype == np.float16 else x.dtype
    if dtype == x.dtype and all(p is None or p.dtype == dtype for p in (weight, bias)):
        return kernel(x, weight, bias), kernel
    y = kernel(as_dtype(x, dtype), *(None if p is None else as_dtype(p, dtype) for p in (weight, bias)))
    return as_dtype(y, x.dtype), kernel


def layer_norm(x: np.ndarray, shape: list[int], weight: np.ndarray | None, bias: np.ndarray | None, eps: float,
               cudnn: bool = True) -> np.ndarray:
    """layer_norm outside a call site (a composite op's step): a kernel made for the call."""
    return _layer_norm(SiteKernels(), x, shape, weight, bias, eps)[0]


@op("aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor")
def group_norm(x: np.ndarray, groups: int, weight: np.ndarray | None, bias: np.ndarray | None, eps: float,
               cudnn: bool) -> np.ndarray:
    n, c = x.shape[:2]
    if c % groups:
        raise ExecutionError(f"expected number of channels in input to be divisible by num_groups, but got input "
                             f"of shape {list(x.shape)} and num_groups={groups}")
    g = x.astype(np.float64).reshape(n, groups, -1)
    y = ((g - g.mean(axis=2, keepdims=True)) / np.sqrt(g.var(axis=2, keepdims=True) + eps)).reshape(x.shape)
    if weight is not None:
        y = y * _channel(weight, x.ndim)
    if bias is not None:
        y = y + _channel(bias, x.ndim)
    return y.astype(x.dtype)
