"""torch's packed weights of quantized convolution and linear layers (``torch.classes.quantized``).

torch keeps a quantized layer's weight "packed" for its engine in a C++ object, made by
``quantized::conv2d_prepack`` / ``linear_prepack`` (a layer's ``__setstate__`` calls them) or
rebuilt from the state its ``__getstate__`` gave when the object itself was saved (a
LinearPackedParamsBase is). runtime_py keeps the unpacked weight: qnnpack's packing is a memory
layout, not a change of values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bundle_format.ptmf import ScalarType
from runtime_py.errors import ExecutionError
from runtime_py.operators.registry import op
from runtime_py.quantized_tensor import QuantizedTensor

CONV2D_PARAMS = "__torch__.torch.classes.quantized.Conv2dPackedParamsBase"
LINEAR_PARAMS = "__torch__.torch.classes.quantized.LinearPackedParamsBase"


@dataclass(frozen=True, eq=False)
class ConvPackedParams:
    """A Conv2dPackedParamsBase: a qint8 (O, I/groups, kH, kW) weight, a float bias, the window."""

    weight: QuantizedTensor
    bias: np.ndarray | None
    stride: tuple[int, int]
    padding: tuple[int, int]
    dilation: tuple[int, int]
    groups: int


@dataclass(frozen=True, eq=False)
class LinearPackedParams:
    """A LinearPackedParamsBase: a qint8 (out, in) weight and a float bias."""

    weight: QuantizedTensor
    bias: np.ndarray | None


def _weight(w: Any, ndim: int, what: str) -> QuantizedTensor:
    if not isinstance(w, QuantizedTensor) or w.scalar_type != ScalarType.QINT8 or w.ndim != ndim:
        got = f"a {w.ndim}-d {w.type_name} tensor" if isinstance(w, QuantizedTensor) else type(w).__name__
        raise ExecutionError(f"{what}: the weight must be a {ndim}-d QInt8 tensor (qnnpack's), got {got}")
    if w.per_channel and w.axis != 0:
        raise ExecutionError(f"{what}: per-channel weights must be quantized along the output channels (axis 0), "
                             f"not axis {w.axis}")
    return w


def _bias(b: Any, out_channels: int, what: str) -> np.ndarray | None:
    if b is None:
        return None
    if not isinstance(b, np.ndarray) or b.dtype != np.float32 or b.shape != (out_channels,):
        shape = list(b.shape) if isinstance(b, np.ndarray) else type(b).__name__
        raise ExecutionError(f"{what}: the bias must be a float tensor of {out_channels} values, got {shape}")
    return b


def _pair(values: Any, what: str, name: str) -> tuple[int, int]:
    if not (isinstance(values, list | tuple) and len(values) in (1, 2) and all(type(v) is int for v in values)):
        raise ExecutionError(f"{what}: {name} must be 1 or 2 ints, got {values!r:.60}")
    return (values[0], values[-1])


@op("quantized::conv2d_prepack(Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, "
    "int groups) -> __torch__.torch.classes.quantized.Conv2dPackedParamsBase")
def conv2d_prepack(weight: Any, bias: Any, stride: list[int], padding: list[int], dilation: list[int],
                   groups: int) -> ConvPackedParams:
    what = "quantized::conv2d_prepack"
    w = _weight(weight, 4, what)
    if groups < 1 or w.shape[0] % groups:
        raise ExecutionError(f"{what}: {w.shape[0]} output channels do not split into {groups} groups")
    params = ConvPackedParams(w, _bias(bias, w.shape[0], what), _pair(stride, what, "stride"),
                              _pair(padding, what, "padding"), _pair(dilation, what, "dilation"), groups)
    if min(*params.stride, *params.dilation) < 1 or min(params.padding) < 0:
        raise ExecutionError(f"{what}: stride {params.stride} and dilation {params.dilation} must be positive, "
                             f"padding {params.padding} non-negative")
    return params


@op("quantized::conv2d_unpack(__torch__.torch.classes.quantized.Conv2dPackedParamsBase packed_weights) "
    "-> (Tensor unpacked_weights, Tensor? B_origin)")
def conv2d_unpack(params: ConvPackedParams) -> tuple[QuantizedTensor, np.ndarray | None]:
    return params.weight, params.bias


@op("quantized::linear_prepack(Tensor W, Tensor? B=None) "
    "-> __torch__.torch.classes.quantized.LinearPackedParamsBase W_prepack")
def linear_prepack(weight: Any, bias: Any) -> LinearPackedParams:
    w = _weight(weight, 2, "quantized::linear_prepack")
    return LinearPackedParams(w, _bias(bias, w.shape[0], "quantized::linear_prepack"))


@op("quantized::linear_unpack(__torch__.torch.classes.quantized.LinearPackedParamsBase W_prepack) "
    "-> (Tensor W_origin, Tensor? B_origin)")
def linear_unpack(params: LinearPackedParams) -> tuple[QuantizedTensor, np.ndarray | None]:
    return params.weight, params.bias


def linear_from_state(state: Any) -> LinearPackedParams:
    """LinearPackedParamsBase.__setstate__: the state is ``(weight, bias)``."""
    if not isinstance(state, tuple) or len(state) != 2:
        raise ExecutionError(f"expected the state (weight, bias), got {type(state).__name__}")
    return linear_prepack(*state)


def _conv_state(state: Any) -> tuple[list[int], Any, Any]:
    """The configuration ints, weight and bias of a Conv2dPackedParamsBase state in torch's version 2
    (what it writes: ``("2", [params (int16 tensor), weight], [bias])``) or version 3 (``(3, [params],
    [None, weight, bias])``); the params are the spatial dims (2), stride (2), padding (2), dilation (2),
    output padding (2, 0 unless transposed), groups and transposed (v2) or flags, bit 0 transposed (v3)
    (aten/src/ATen/native/quantized/cpu/conv_serialization.h)."""
    if isinstance(state, tuple) and len(state) == 3 and isinstance(state[1], list) and isinstance(state[2], list):
        version, first, second = state
        if (version == "2" and len(first) == 2 and len(second) == 1 and isinstance(first[0], np.ndarray)
                and first[0].dtype.kind in "iu" and first[0].shape == (11,)):
            return [int(v) for v in first[0]], first[1], second[0]
        if (version == 3 and len(first) == 11 and all(type(v) is int for v in first) and len(second) == 3
                and second[0] is None):
            return first, second[1], second[2]
    raise ExecutionError("expected a version 2 or 3 conv state: (\"2\", [params, weight], [bias]) or (3, [11 ints], "
                         f"[None, weight, bias]), got {state!r:.80}")


def conv2d_from_state(state: Any) -> ConvPackedParams:
    """Conv2dPackedParamsBase.__setstate__ (see _conv_state)."""
    config, weight, bias = _conv_state(state)
    if config[0] != 2:
        raise ExecutionError(f"a Conv2dPackedParamsBase state of {config[0]} spatial dimensions")
    if config[10] & 1:  # ConvTranspose2d's (its weight is laid out (in, out / groups, kH, kW))
        raise ExecutionError("quantized transposed convolution (ConvTranspose2d) is not supported by runtime_py")
    return conv2d_prepack(weight, bias, config[1:3], config[3:5], config[5:7], config[9])


# C++ class -> how runtime_py rebuilds one of its objects from its pickled state (loader)
CUSTOM_CLASSES = {CONV2D_PARAMS: conv2d_from_state, LINEAR_PARAMS: linear_from_state}
