"""fbgemm's depthwise convolution, whose int16 sums saturate, compiled as torch computes it.

torch's x86 engine (fbgemm, and "x86" for a depthwise layer of more than 100 groups) runs a
depthwise convolution (3x3, 5x5 or 7x7, 'same' padding, stride 1 or 2, a multiple of 8 groups)
on fbgemm's AVX2 kernel (GenerateI8Depthwise.cc): it multiplies the raw uint8 input (zero point
included; the padding holds the zero point) by the int8 weight with vpmaddubsw, which adds the
products of two taps into an int16 *with saturation*. The taps are paired within each four, in
row-major order (0+1, 2+3, then 4+5, 6+7...; an odd last tap stays alone). Two inputs of 255 on
taps weighing 127 and 2 already exceed 32767, so torch's result is not the convolution's: on a
model whose activations reach the top of their grid, by tens of quanta (issue 31).

Whether the packed weight of a quantized::conv2d runs such a kernel depends on the engine that
packed it and on the CPU, not on the model; so the compiler asks torch (:func:`torch_kernel`):
it runs the op on an input of 255s whose zero point is 255 (real zeros), where the exact
convolution gives the bias alone and the saturating one is short by what the pairs lose.

The saturating sums compile to float ops (:func:`lower_pairs`): a depthwise CONV2D with one
output per channel and pair (only the pair's taps weighted, by the int8 weight, so its value is
``input_scale * (the pair's int16 sum)``), a CLAMP to ``input_scale * [-32768, 32767]``, and a
grouped 1x1 CONV2D that adds each channel's pairs times its weight scale, with the bias and the
input zero point's share. Every value is exact to far below a raw unit (float32 holds the sums
to 0.05 of a unit), so the result is torch's up to where its float requantization rounds a tie
otherwise (liteexport.quantized_parity).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from bundle_format.program import ClampAttrs, Conv2dAttrs, OpCode
from liteexport.compiler.ops import Emitter, tensor
from liteexport.compiler.values import QuantGrid, TensorConst, Unsupported

INT16 = (-32768, 32767)
EXACT, PAIRS = "exact", "int16 pairs"


def pair_taps(kh: int, kw: int) -> list[list[int]]:
    """fbgemm's parts of a kh x kw window (taps row-major): two taps added in an int16 each, an
    odd last tap of a four alone."""
    taps = list(range(kh * kw))
    return [four[i:i + 2] for start in range(0, len(taps), 4) for four in [taps[start:start + 4]]
            for i in range(0, len(four), 2)]


def _is_depthwise(weight: torch.Tensor, groups: int) -> bool:
    return weight.dim() == 4 and groups > 1 and weight.shape[1] == 1


def _raw_weight(weight: torch.Tensor) -> np.ndarray:
    raw: np.ndarray = weight.int_repr().numpy().astype(np.int64)
    return raw


def _deficits(weight: torch.Tensor) -> np.ndarray:
    """Per output channel, what saturation takes from the sum when every input is 255 (as the
    exact sum minus the saturated one): 0 for a channel whose pairs can never leave int16, since
    inputs are 0..255 (a pair saturates only through taps of one sign, most at 255)."""
    raw = _raw_weight(weight).reshape(weight.shape[0], -1)
    deficit = np.zeros(raw.shape[0], dtype=np.int64)
    for part in pair_taps(weight.shape[2], weight.shape[3]):
        sums = 255 * raw[:, part].sum(axis=1)
        deficit += sums - np.clip(sums, *INT16)
    return deficit


def _weight_scales(weight: torch.Tensor) -> np.ndarray:
    per_channel = weight.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric)
    scales: np.ndarray = (weight.q_per_channel_scales().numpy() if per_channel
                          else np.full(weight.shape[0], weight.q_scale())).astype(np.float32)
    return scales


def _zero_points(weight: torch.Tensor) -> np.ndarray:
    per_channel = weight.qscheme() in (torch.per_channel_affine, torch.per_channel_symmetric)
    zeros: np.ndarray = (weight.q_per_channel_zero_points().numpy() if per_channel
                         else np.full(weight.shape[0], weight.q_zero_point()))
    return zeros


def torch_kernel(packed: Any, weight: torch.Tensor, bias: torch.Tensor | None, groups: int,
                 window: tuple[tuple[int, int], tuple[int, int]], what: str) -> str:
    """How torch sums this quantized convolution (``window``: its stride and dilation): EXACT
    (int32) or PAIRS (fbgemm's depthwise int16 pairs), from torch itself on a probe; raises
    Unsupported for anything else (fbgemm's int16 pairs in a matrix product, on a CPU without
    AVX512-VNNI, whose pairing follows its packing: not compiled)."""
    depthwise = _is_depthwise(weight, groups)
    deficit = _deficits(weight) if depthwise else np.zeros(weight.shape[0], dtype=np.int64)
    if depthwise and not deficit.any():  # no pair can saturate: both kernels give the exact sums
        return EXACT
    scales = _weight_scales(weight).astype(np.float64)
    b = np.zeros(weight.shape[0]) if bias is None else bias.detach().numpy().astype(np.float64)
    out_scale = float(np.float32(max(float(np.abs(b).max(initial=0.0)), 1e-3) / 100))
    # the input's scale puts a saturating channel's deficit (at least 127 raw units: 255 times a
    # pair of weights of 129 or more, less 32767) 25+ quanta off the bias, the bias itself within
    # 100 quanta of the zero point 128
    saturating = deficit != 0 if depthwise else np.ones(weight.shape[0], dtype=bool)
    input_scale = float(np.float32(0.2 * out_scale / max(float(scales[saturating].min()), 1e-30)))
    (stride_h, stride_w), (dilation_h, dilation_w) = window
    size = (dilation_h * (weight.shape[2] - 1) + 1 + stride_h, dilation_w * (weight.shape[3] - 1) + 1 + stride_w)
    try:
        got = _probe(packed, (1, groups * int(weight.shape[1]), *size), input_scale, out_scale)
    except RuntimeError:  # a kernel that takes no quint8 input: no probe (the self-check still runs)
        return EXACT

    def expected(missing: np.ndarray) -> np.ndarray:
        real = -missing * input_scale * scales + b
        rounded: np.ndarray = np.clip(np.rint(real / out_scale) + 128, 0, 255).reshape(1, -1, 1, 1)
        return rounded

    for kind, missing in ((PAIRS, deficit), (EXACT, np.zeros_like(deficit)))[0 if depthwise else 1:]:
        if np.abs(got - expected(missing)).max() <= 1:
            if kind == PAIRS and np.any(_zero_points(weight) != 0):
                raise Unsupported(f"{what}: torch's kernel saturates its int16 sums (fbgemm's depthwise "
                                  "convolution) and the weight has nonzero zero points: not compiled")
            return kind
    summed = "neither the exact sums nor fbgemm's int16 pairs" if depthwise else "no exact int32 sums"
    raise Unsupported(f"{what}: torch's kernel for this convolution computes {summed} (checked on a probe "
                      "input; fbgemm without AVX512-VNNI saturates int16 pairs of products): not compiled, as the "
                      "result would differ")


def _probe(packed: Any, shape: tuple[int, ...], input_scale: float, out_scale: float) -> np.ndarray:
    """torch's quantized::conv2d of an input of 255s, zero point 255 (real zeros), as integers
    (output zero point 128)."""
    ones = torch._make_per_tensor_quantized_tensor(torch.full(shape, 255, dtype=torch.uint8), input_scale, 255)
    result: np.ndarray = torch.ops.quantized.conv2d(ones, packed, out_scale, 128).int_repr().numpy().astype(np.int64)
    return result


def lower_pairs(b: Emitter, x: Any, grid: QuantGrid, weight: torch.Tensor, bias: torch.Tensor | None,
                stride: tuple[int, int], padding: tuple[int, int], dilation: tuple[int, int], groups: int) -> Any:
    """The float result (before any ReLU and the output's rounding) of fbgemm's depthwise
    convolution with saturating int16 pairs, on ``x`` (a value on ``grid``)."""
    raw = _raw_weight(weight)  # [O, 1, kh, kw]
    out, _, kh, kw = raw.shape
    parts = pair_taps(kh, kw)
    flat = raw.reshape(out, -1)
    pairs = np.zeros((out, len(parts), kh * kw), dtype=np.int64)
    for p, part in enumerate(parts):
        pairs[:, p, part] = flat[:, part]
    scale, zero = np.float32(grid.scale), grid.zero_point
    # the raw input is x / scale + zero: the zero point's share of each part, on the input's scale
    part_bias = (scale * zero * pairs.sum(axis=2)).astype(np.float32).reshape(-1)
    pair_weight = torch.from_numpy(pairs.reshape(out * len(parts), 1, kh, kw).astype(np.float32))
    stored = torch.quantize_per_tensor(pair_weight, 1.0, 0, torch.qint8)  # integers in -128..127: 1 byte each
    sums = b.emit(OpCode.CONV2D, [tensor(x), TensorConst(pair_weight, stored=stored),
                                  TensorConst(torch.from_numpy(part_bias))],
                  Conv2dAttrs(stride=stride, padding=padding, dilation=dilation, groups=groups))
    low, high = (float(np.float32(scale) * np.float32(bound)) for bound in INT16)
    sums = b.emit(OpCode.CLAMP, [sums], ClampAttrs(min=low, max=high))
    scales = _weight_scales(weight)
    total = (scales.astype(np.float64) * float(scale) * zero * flat.sum(axis=1))
    add_bias = (np.zeros(out) if bias is None else bias.detach().numpy().astype(np.float64)) - total
    gather = torch.from_numpy(np.repeat(scales.reshape(out, 1), len(parts), axis=1).reshape(out, len(parts), 1, 1))
    return b.emit(OpCode.CONV2D, [sums, TensorConst(gather.contiguous()),
                                  TensorConst(torch.from_numpy(add_bias.astype(np.float32)))],
                  Conv2dAttrs(stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=out))
