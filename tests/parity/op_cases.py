"""One-instruction cases for the opcodes added for real models (activations, reductions,
slicing), shared by every executor's parity tests: runtime_py's kernels are checked against
torch eager with ``reference``, the torch extension and the Android core against runtime_py.

name -> (op, input shapes, weights (constants read after the inputs), attributes, torch reference)

Every op of the unary and math families (the op spec's `family`) has a default row, generated:
its oracle (the spec's `torch`) on a random input; a written row of the same name replaces it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from bundle_format._generated.demo_traits import FAMILY, ORACLE
from bundle_format.program import (
    SLICE_END,
    Activation,
    Attributes,
    BinaryAttrs,
    ClampAttrs,
    Conv2dAttrs,
    OpCode,
    ReduceAttrs,
    ResizeAttrs,
    ShapeAttrs,
    SliceAttrs,
)

X = (2, 4, 7, 6)  # NCHW
_rng = np.random.default_rng(11)


def _w(*shape: int) -> np.ndarray:
    return (_rng.standard_normal(shape) * 0.5).astype(np.float32)


def _positive(*shape: int) -> np.ndarray:
    return _rng.uniform(0.05, 4.0, shape).astype(np.float32)


def _torch() -> Any:
    import torch  # the cases are data; only the references need torch

    return torch


def _f() -> Any:
    return _torch().nn.functional


def _aten() -> Any:
    return _torch().ops.aten


OpCase = tuple[OpCode, list[tuple[int, ...]], list[np.ndarray], Attributes, Callable[..., Any]]

def _oracle(op: OpCode) -> Callable[..., Any]:
    """The op's oracle from the spec (``torch.log1p``), looked up when the reference runs."""
    return lambda *xs: functools.reduce(getattr, ORACLE[op].split(".")[1:], _torch())(*xs)


# the generated default rows: the spec's elementwise families on a random input
_DEFAULT_CASES: dict[str, OpCase] = {
    op.name.lower(): (op, [X], [], None, _oracle(op)) for op, family in FAMILY.items() if family in ("unary", "math")}

OP_CASES: dict[str, OpCase] = {
    **_DEFAULT_CASES,
    "clamp_both": (OpCode.CLAMP, [X], [], ClampAttrs(-0.5, 0.75), lambda x: x.clamp(-0.5, 0.75)),
    "clamp_relu6": (OpCode.CLAMP, [X], [], ClampAttrs(0.0, 6.0), lambda x: _f().relu6(x)),
    "clamp_min_only": (OpCode.CLAMP, [X], [], ClampAttrs(min=0.25, max=None), lambda x: x.clamp(min=0.25)),
    "clamp_max_only": (OpCode.CLAMP, [(5,)], [], ClampAttrs(min=None, max=-0.1), lambda x: x.clamp(max=-0.1)),
    "clamp_min_above_max": (OpCode.CLAMP, [(3, 4)], [], ClampAttrs(1.0, -1.0), lambda x: x.clamp(1.0, -1.0)),
    "hardsigmoid": (OpCode.HARDSIGMOID, [X], [], None, lambda x: _f().hardsigmoid(x)),
    "hardswish": (OpCode.HARDSWISH, [X], [], None, lambda x: _f().hardswish(x)),
    "silu": (OpCode.SILU, [X], [], None, lambda x: _f().silu(x)),
    "mean_spatial_keepdim": (OpCode.MEAN, [X], [], ReduceAttrs((2, 3), True), lambda x: x.mean((2, 3), True)),
    "mean_negative_axis": (OpCode.MEAN, [X], [], ReduceAttrs((-1,)), lambda x: x.mean(-1)),
    "mean_all": (OpCode.MEAN, [X], [], ReduceAttrs(()), lambda x: x.mean()),
    "mean_weight": (OpCode.MEAN, [], [_w(3, 5)], ReduceAttrs((0,), True), lambda w: w.mean(0, True)),
    "sum_keepdim": (OpCode.SUM, [X], [], ReduceAttrs((1,), True), lambda x: x.sum(1, True)),
    "sum_two_axes": (OpCode.SUM, [X], [], ReduceAttrs((0, -2)), lambda x: x.sum((0, -2))),
    "sum_all": (OpCode.SUM, [(3, 5)], [], ReduceAttrs(()), lambda x: x.sum()),
    "slice_channels": (OpCode.SLICE, [X], [], SliceAttrs(1, 1, 3), lambda x: x[:, 1:3]),
    "slice_step": (OpCode.SLICE, [X], [], SliceAttrs(-1, 1, SLICE_END, 2), lambda x: x[..., 1::2]),
    "slice_negative_bounds": (OpCode.SLICE, [X], [], SliceAttrs(2, -5, -1), lambda x: x[:, :, -5:-1]),
    "slice_clamped": (OpCode.SLICE, [X], [], SliceAttrs(0, -100, 100), lambda x: x[-100:100]),
    "slice_empty": (OpCode.SLICE, [X], [], SliceAttrs(3, 4, 2), lambda x: x[..., 4:2]),
    "slice_weight": (OpCode.SLICE, [], [_w(6, 3)], SliceAttrs(0, 2, 4), lambda w: w[2:4]),
    "expand_batch": (OpCode.EXPAND, [(1, 4, 1, 6)], [], ShapeAttrs((3, -1, 7, -1)),
                     lambda x: x.expand(3, -1, 7, -1)),
    "expand_new_dims": (OpCode.EXPAND, [(4, 1)], [], ShapeAttrs((2, 3, 4, 5)), lambda x: x.expand(2, 3, 4, 5)),
    "expand_weight": (OpCode.EXPAND, [], [_w(1, 5)], ShapeAttrs((3, 5)), lambda w: w.expand(3, 5)),
    # log, sqrt and rsqrt of positive constants (random inputs would be negative too)
    "log": (OpCode.LOG, [], [_positive(3, 7)], None, lambda w: w.log()),
    "sqrt": (OpCode.SQRT, [], [_positive(3, 7)], None, lambda w: w.sqrt()),
    "rsqrt": (OpCode.RSQRT, [], [_positive(3, 7)], None, lambda w: w.rsqrt()),
    "abs": (OpCode.ABS, [X], [], None, lambda x: x.abs()),
    "exp": (OpCode.EXP, [X], [], None, lambda x: x.exp()),
    "pow_square": (OpCode.POW, [X], [], BinaryAttrs(scalar=2.0), lambda x: x.pow(2.0)),
    "pow_cube": (OpCode.POW, [(4, 5)], [], BinaryAttrs(scalar=3.0), lambda x: x ** 3),
    "pow_scalar_base": (OpCode.POW, [(4, 5)], [], BinaryAttrs(scalar=1.5, reverse=True), lambda x: 1.5 ** x),
    "pow_tensors": (OpCode.POW, [(2, 5)], [_positive(5)], BinaryAttrs(reverse=True), lambda x, w: w ** x),
    # the Android core's conv2d fast paths: direct depthwise taps (contiguous stride 1 and 2, a
    # run-time stride, a channel multiplier, taps in the padding) and 1x1 convolutions without im2col
    "conv2d_depthwise_stride2_relu": (OpCode.CONV2D, [(2, 6, 9, 8)], [_w(6, 1, 3, 3), _w(6)],
                                      Conv2dAttrs((2, 2), (1, 1), (1, 1), 6, Activation.RELU),
                                      lambda x, w, b: _f().relu(_f().conv2d(x, w, b, 2, 1, 1, 6))),
    "conv2d_depthwise_stride1": (OpCode.CONV2D, [X], [_w(4, 1, 3, 3)], Conv2dAttrs((1, 1), (1, 1), (1, 1), 4),
                                 lambda x, w: _f().conv2d(x, w, None, 1, 1, 1, 4)),
    "conv2d_depthwise_multiplier": (OpCode.CONV2D, [X], [_w(8, 1, 3, 2), _w(8)],
                                    Conv2dAttrs((1, 3), (3, 2), (2, 1), 4),
                                    lambda x, w, b: _f().conv2d(x, w, b, (1, 3), (3, 2), (2, 1), 4)),
    "conv2d_pointwise": (OpCode.CONV2D, [X], [_w(5, 4, 1, 1), _w(5)], Conv2dAttrs(activation=Activation.RELU),
                         lambda x, w, b: _f().relu(_f().conv2d(x, w, b))),
    "conv2d_pointwise_grouped": (OpCode.CONV2D, [X], [_w(6, 2, 1, 1)], Conv2dAttrs(groups=2),
                                 lambda x, w: _f().conv2d(x, w, None, groups=2)),
    # 3x3 stride-1 convolutions with >= 32x32 channels run as Winograd's F(2x2, 3x3) (runtime_py and
    # the Android core): padded and not, odd output sizes (a partial last tile), bias and ReLU. Weights
    # at a trained layer's scale (~1/sqrt(fan-in)): the transforms' rounding error grows with the
    # partial sums, and the native parity check's atol is absolute
    "conv2d_winograd_padded_relu": (OpCode.CONV2D, [(2, 32, 7, 9)], [_w(32, 32, 3, 3) * 0.1, _w(32)],
                                    Conv2dAttrs(padding=(1, 1), activation=Activation.RELU),
                                    lambda x, w, b: _f().relu(_f().conv2d(x, w, b, 1, 1))),
    "conv2d_winograd_unpadded": (OpCode.CONV2D, [(1, 40, 8, 7)], [_w(36, 40, 3, 3) * 0.1], Conv2dAttrs(),
                                 lambda x, w: _f().conv2d(x, w)),
    # RESIZE2D: ATen's upsample ops with the scales they map with (the model's scale factor, or in/out)
    "resize_nearest_up": (OpCode.RESIZE2D, [X], [], ResizeAttrs(False, (11, 13)),
                          lambda x: _aten().upsample_nearest2d(x, [11, 13], None, None)),
    "resize_nearest_down_scaled": (OpCode.RESIZE2D, [X], [], ResizeAttrs(False, (4, 3), scale_h=0.6, scale_w=0.55),
                                   lambda x: _aten().upsample_nearest2d(x, [4, 3], 0.6, 0.55)),
    "resize_nearest_doubled": (OpCode.RESIZE2D, [X], [], ResizeAttrs(False, (14, 12), scale_h=2.1),
                               lambda x: _aten().upsample_nearest2d(x, [14, 12], 2.1, None)),
    "resize_bilinear_up": (OpCode.RESIZE2D, [X], [], ResizeAttrs(True, (16, 9)),
                           lambda x: _aten().upsample_bilinear2d(x, [16, 9], False, None, None)),
    "resize_bilinear_down_scaled": (OpCode.RESIZE2D, [X], [], ResizeAttrs(True, (3, 4), scale_h=0.45, scale_w=0.7),
                                    lambda x: _aten().upsample_bilinear2d(x, [3, 4], False, 0.45, 0.7)),
    "resize_bilinear_corners": (OpCode.RESIZE2D, [X], [], ResizeAttrs(True, (12, 1), align_corners=True),
                                lambda x: _aten().upsample_bilinear2d(x, [12, 1], True, None, None)),
}
