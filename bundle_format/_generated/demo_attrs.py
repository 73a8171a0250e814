# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_ops.toml
# ruff: noqa
"""The demo attribute tables (schema/demo_ops.toml): frozen dataclasses, the field
descriptors program_codec loops over and the constraints attribute_rules checks."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from bundle_format.attr_rows import AttrField, AttrRule, AttrTable


class Activation(enum.IntEnum):
    """fbs enum Activation."""

    NONE = 0
    RELU = 1


@dataclass(frozen=True)
class BinaryAttrs:
    alpha: float = 1.0  # multiplies the second operand (add/sub)
    scalar: float | None = None  # the scalar operand when the instruction has one input
    reverse: bool = False  # operands swapped: scalar OP x, or b OP a


@dataclass(frozen=True)
class GeluAttrs:
    tanh_approximation: bool = False


@dataclass(frozen=True)
class AxisAttrs:
    axis: int  # may be negative


@dataclass(frozen=True)
class FusedAttrs:
    activation: Activation = Activation.NONE  # applied to the result in place


@dataclass(frozen=True)
class Conv2dAttrs:
    stride: tuple[int, int] = (1, 1)  # [h, w]
    padding: tuple[int, int] = (0, 0)  # [h, w]
    dilation: tuple[int, int] = (1, 1)  # [h, w]
    groups: int = 1
    activation: Activation = Activation.NONE


@dataclass(frozen=True)
class LayerNormAttrs:
    normalized_ndim: int  # the last normalized_ndim dimensions are normalized
    eps: float


@dataclass(frozen=True)
class Pool2dAttrs:
    kernel: tuple[int, int]  # [h, w]
    stride: tuple[int, int]  # [h, w]
    padding: tuple[int, int] = (0, 0)  # [h, w]
    dilation: tuple[int, int] = (1, 1)  # [h, w] (max pool only)
    ceil_mode: bool = False
    count_include_pad: bool = True  # avg pool only
    divisor_override: int | None = None  # avg pool only, 0 = none


@dataclass(frozen=True)
class ShapeAttrs:
    dims: tuple[int, ...]


@dataclass(frozen=True)
class PermuteAttrs:
    perm: tuple[int, ...]


@dataclass(frozen=True)
class FlattenAttrs:
    start_dim: int
    end_dim: int


@dataclass(frozen=True)
class ClampAttrs:
    min: float | None  # None: no lower bound
    max: float | None  # None: no upper bound


@dataclass(frozen=True)
class ReduceAttrs:
    axes: tuple[int, ...]  # distinct, may be negative; empty: every axis
    keepdim: bool = False


@dataclass(frozen=True)
class SliceAttrs:
    """``x[..., start:end:step, ...]`` on one axis: negative bounds count from the end and
bounds are clamped to the axis, as in Python; step > 0."""

    axis: int  # may be negative
    start: int = 0  # may be negative (counted from the end); clamped to the axis
    end: int = 9223372036854775807  # exclusive; as start
    step: int = 1  # > 0


@dataclass(frozen=True)
class CastAttrs:
    dtype: int  # the result's dtype, a DType value (c10::ScalarType numbering)


@dataclass(frozen=True)
class ArangeLikeAttrs:
    """The int64 values start, start + 1, ..., up to (excluding) the size of the reference operand's
axis plus end_offset: torch.arange(start, S + end_offset) for a size S known only at run time."""

    axis: int  # the reference's axis whose size is S; may be negative
    start: int = 0  # the first value
    end_offset: int = 0  # the end (exclusive) is S + end_offset; before start it is an error, as in torch.arange


@dataclass(frozen=True)
class ResizeAttrs:
    """2-D resizing of the last two dims to ``size``, as torch's upsample_nearest2d (floor of the
scaled index) and upsample_bilinear2d. ``scale_h``/``scale_w`` are the scale factors torch maps
coordinates with when the model gave scale_factor (the source index is dst / scale, not
dst * in / out); absent: in / out."""

    bilinear: bool  # false: nearest (torch's 'nearest', floor of the scaled index)
    size: tuple[int, int]  # [h, w] of the output
    align_corners: bool = False  # bilinear only: corner pixels' centres align
    scale_h: float | None = None  # the height's scale factor (> 0) torch maps with, if given
    scale_w: float | None = None  # as scale_h, for the width


@dataclass(frozen=True)
class DiagonalAttrs:
    """torch.triu / torch.tril over the last two dims: the diagonal that bounds the kept triangle
(0: the main one, positive: above it, negative: below it)."""

    diagonal: int = 0  # may be negative


@dataclass(frozen=True)
class ArgReduceAttrs:
    """The index of the largest (ARGMAX) or smallest (ARGMIN) element along one axis: the first one on
ties; a NaN counts as both, as in torch.argmax and torch.argmin (the first NaN is picked)."""

    axis: int  # may be negative
    keepdim: bool = False


@dataclass(frozen=True)
class TopKAttrs:
    """The indices of the k largest (or smallest) elements along one axis, sorted by value (torch.topk
with sorted=True; a NaN counts as the largest). Equal values come in index order (torch does not
promise an order for ties). torch.topk with sorted=False leaves the order unspecified: it compiles to
the same sorted order, one of the orders torch may return."""

    k: int
    axis: int  # may be negative
    largest: bool = True  # false: the k smallest, ascending


@dataclass(frozen=True)
class QuantizeAttrs:
    """Per-tensor affine quantization of float values, kept as the float values of the grid (a
quantize then dequantize, as torch.fake_quantize_per_tensor_affine): q = clamp(rint(x * inv) +
zero_point, quant_min, quant_max) with inv = float32(1 / float32(scale)) and rint half to even
(NaN to quant_max), then (q - zero_point) * float32(scale). Activations of quantized models travel
between instructions this way (liteexport/compiler/quantized_ops.py)."""

    scale: float  # the quantization step, > 0
    zero_point: int = 0  # the integer that stands for 0.0
    quant_min: int = 0  # the smallest integer (0 for quint8, -128 for qint8)
    quant_max: int = 255  # the largest integer (255 for quint8, 127 for qint8)


@dataclass(frozen=True)
class FillAttrs:
    """The sizes of a FULL instruction's result, one entry per dim in ``dims`` and ``axes``: where
axes[i] is -1, dims[i] is a static size; else the size is the reference operand's size along axis
axes[i] (>= 0) plus dims[i] (torch.full((S, S + 1), v) for a size S known only at run time)."""

    dims: tuple[int, ...]  # per dim: the static size (axes[i] == -1), else the offset added to the reference's size
    axes: tuple[int, ...]  # per dim: -1 for a static size, else the reference's axis (>= 0) whose size it is


@dataclass(frozen=True)
class AttentionAttrs:
    scale: float  # multiplies q k^T (1 / sqrt(head dim) in torch's default)

F, R = AttrField, AttrRule

# in union tag order
TABLES: tuple[AttrTable, ...] = (
    AttrTable('Binary', 1, BinaryAttrs, 4, (
        F('alpha', 'f64', 0, 1.0, '', -1, None),
        F('scalar', 'opt_f64', 1, 0.0, 'has_scalar', 2, None),
        F('reverse', 'bool', 3, False, '', -1, None),
    ), (
        R('equals', ('alpha',), 1.0, None, frozenset(['MUL', 'DIV', 'POW', 'EQ', 'NE', 'LT', 'LE', 'GT', 'GE', 'FLOOR_DIV', 'TRUNC_DIV', 'REMAINDER']), 'alpha={got} is only allowed for ADD and SUB', None, None),
        R('rule', (), None, None, frozenset([]), 'a scalar operand is needed with exactly one input, and only then', None, 'scalar_iff_one_input'),
    )),
    AttrTable('Gelu', 2, GeluAttrs, 1, (
        F('tanh_approximation', 'bool', 0, False, '', -1, None),
    ), ()),
    AttrTable('Axis', 3, AxisAttrs, 1, (
        F('axis', 'i32', 0, 0, '', -1, None),
    ), ()),
    AttrTable('Fused', 4, FusedAttrs, 1, (
        F('activation', 'enum', 0, Activation.NONE, '', -1, Activation),
    ), ()),
    AttrTable('Conv2d', 5, Conv2dAttrs, 5, (
        F('stride', 'pair', 0, (1, 1), '', -1, None),
        F('padding', 'pair', 1, (0, 0), '', -1, None),
        F('dilation', 'pair', 2, (1, 1), '', -1, None),
        F('groups', 'i32', 3, 1, '', -1, None),
        F('activation', 'enum', 4, Activation.NONE, '', -1, Activation),
    ), (
        R('min', ('stride',), 1, None, frozenset([]), '{field} must be positive, got {got}', None, None),
        R('min', ('padding',), 0, None, frozenset([]), '{field} must be non-negative, got {got}', None, None),
        R('min', ('dilation',), 1, None, frozenset([]), '{field} must be positive, got {got}', None, None),
        R('min', ('groups',), 1, None, frozenset([]), '{field} must be positive, got {got}', None, None),
    )),
    AttrTable('LayerNorm', 6, LayerNormAttrs, 2, (
        F('normalized_ndim', 'i32', 0, 0, '', -1, None),
        F('eps', 'f64', 1, 0.0, '', -1, None),
    ), (
        R('min', ('normalized_ndim',), 1, None, frozenset([]), '{field} must be positive, got {got}', None, None),
    )),
    AttrTable('Pool2d', 7, Pool2dAttrs, 7, (
        F('kernel', 'pair', 0, (), '', -1, None),
        F('stride', 'pair', 1, (), '', -1, None),
        F('padding', 'pair', 2, (0, 0), '', -1, None),
        F('dilation', 'pair', 3, (1, 1), '', -1, None),
        F('ceil_mode', 'bool', 4, False, '', -1, None),
        F('count_include_pad', 'bool', 5, True, '', -1, None),
        F('divisor_override', 'opt_i32', 6, 0, '', -1, None),
    ), (
        R('min', ('kernel',), 1, None, frozenset([]), '{field} must be positive, got {got}', None, None),
        R('min', ('stride',), 1, None, frozenset([]), '{field} must be positive, got {got}', None, None),
        R('min', ('padding',), 0, None, frozenset([]), '{field} must be non-negative, got {got}', None, None),
        R('min', ('dilation',), 1, None, frozenset([]), '{field} must be positive, got {got}', None, None),
        R('rule', (), None, None, frozenset([]), 'padding {padding} should be at most half of the kernel size {kernel}', None, 'padding_at_most_half_kernel'),
        R('equals', ('dilation',), 1, None, frozenset(['AVG_POOL2D']), 'avg_pool2d has no dilation, got {got}', None, None),
        R('min', ('divisor_override',), 0, None, frozenset(['AVG_POOL2D']), '{field} must be positive, got {got}', None, None),
    )),
    AttrTable('Shape', 8, ShapeAttrs, 1, (
        F('dims', 'i64s', 0, (), '', -1, None),
    ), (
        R('length', ('dims',), 2, None, frozenset(['ADAPTIVE_AVG_POOL2D']), None, 'OUTPUT_SIZE_LENGTH', None),
        R('max_count', ('dims',), 1, -1, frozenset(['RESHAPE']), 'shape {got} may hold one -1 and otherwise sizes >= 0', None, None),
        R('min', ('dims',), -1, None, frozenset(['RESHAPE']), 'shape {got} may hold one -1 and otherwise sizes >= 0', None, None),
        R('min', ('dims',), -1, None, frozenset(['EXPAND']), 'shape {got} may hold -1 and otherwise sizes >= 0', None, None),
        R('length', ('dims',), 2, None, frozenset(['ADAPTIVE_AVG_POOL2D']), 'output size must be 2 positive sizes (or -1), got {got}', None, None),
        R('min', ('dims',), 1, -1, frozenset(['ADAPTIVE_AVG_POOL2D']), 'output size must be 2 positive sizes (or -1), got {got}', None, None),
    )),
    AttrTable('Permute', 9, PermuteAttrs, 1, (
        F('perm', 'i32s', 0, (), '', -1, None),
    ), (
        R('rule', (), None, None, frozenset([]), '{got} is not a permutation of the axes 0..{last}', None, 'permutation'),
    )),
    AttrTable('Flatten', 10, FlattenAttrs, 2, (
        F('start_dim', 'i32', 0, 0, '', -1, None),
        F('end_dim', 'i32', 1, 0, '', -1, None),
    ), ()),
    AttrTable('Clamp', 11, ClampAttrs, 4, (
        F('min', 'opt_f64', 0, 0.0, 'has_min', 2, None),
        F('max', 'opt_f64', 1, 0.0, 'has_max', 3, None),
    ), (
        R('any_present', ('min', 'max'), None, None, frozenset([]), 'clamp needs at least one of min and max', None, None),
    )),
    AttrTable('Reduce', 12, ReduceAttrs, 2, (
        F('axes', 'i32s', 0, (), '', -1, None),
        F('keepdim', 'bool', 1, False, '', -1, None),
    ), (
        R('distinct', ('axes',), None, None, frozenset([]), '{field} {got} repeat an axis', None, None),
    )),
    AttrTable('Slice', 13, SliceAttrs, 4, (
        F('axis', 'i32', 0, 0, '', -1, None),
        F('start', 'i64', 1, 0, '', -1, None),
        F('end', 'i64', 2, 9223372036854775807, '', -1, None),
        F('step', 'i64', 3, 1, '', -1, None),
    ), (
        R('min', ('step',), 1, None, frozenset([]), '{field} must be positive, got {got}', None, None),
    )),
    AttrTable('Cast', 14, CastAttrs, 1, (
        F('dtype', 'i32', 0, 0, '', -1, None),
    ), (
        R('rule', (), None, None, frozenset([]), '{got} is not a compiled dtype (float32=6, int64=4, int32=3, bool=11)', None, 'known_dtype'),
    )),
    AttrTable('ArangeLike', 15, ArangeLikeAttrs, 3, (
        F('axis', 'i32', 0, 0, '', -1, None),
        F('start', 'i64', 1, 0, '', -1, None),
        F('end_offset', 'i64', 2, 0, '', -1, None),
    ), ()),
    AttrTable('Resize', 16, ResizeAttrs, 7, (
        F('bilinear', 'bool', 0, False, '', -1, None),
        F('size', 'pair', 1, (), '', -1, None),
        F('align_corners', 'bool', 2, False, '', -1, None),
        F('scale_h', 'opt_f64', 3, 0.0, 'has_scale_h', 4, None),
        F('scale_w', 'opt_f64', 5, 0.0, 'has_scale_w', 6, None),
    ), (
        R('min', ('size',), 1, None, frozenset([]), 'output size must be positive, got {got}', None, None),
    )),
    AttrTable('Diagonal', 17, DiagonalAttrs, 1, (
        F('diagonal', 'i64', 0, 0, '', -1, None),
    ), ()),
    AttrTable('ArgReduce', 18, ArgReduceAttrs, 2, (
        F('axis', 'i32', 0, 0, '', -1, None),
        F('keepdim', 'bool', 1, False, '', -1, None),
    ), ()),
    AttrTable('TopK', 19, TopKAttrs, 3, (
        F('k', 'i64', 0, 0, '', -1, None),
        F('axis', 'i32', 1, 0, '', -1, None),
        F('largest', 'bool', 2, True, '', -1, None),
    ), (
        R('min', ('k',), 0, None, frozenset([]), '{field} must be non-negative, got {got}', None, None),
    )),
    AttrTable('Quantize', 20, QuantizeAttrs, 4, (
        F('scale', 'f64', 0, 0.0, '', -1, None),
        F('zero_point', 'i64', 1, 0, '', -1, None),
        F('quant_min', 'i64', 2, 0, '', -1, None),
        F('quant_max', 'i64', 3, 255, '', -1, None),
    ), (
        R('rule', (), None, None, frozenset([]), 'scale must be finite and > 0 and quant_min <= zero_point <= quant_max, got scale {scale}, zero point {zero_point}, range {quant_min}..{quant_max}', None, 'quantize_range'),
    )),
    AttrTable('Fill', 21, FillAttrs, 2, (
        F('dims', 'i64s', 0, (), '', -1, None),
        F('axes', 'i32s', 1, (), '', -1, None),
    ), (
        R('min', ('axes',), -1, None, frozenset([]), '{field} must be -1 (a static size) or a reference axis >= 0, got {got}', None, None),
        R('rule', (), None, None, frozenset([]), 'dims {dims} and axes {axes} need one entry per dim each, and a static size (axis -1) must be >= 0', None, 'fill_sizes'),
    )),
    AttrTable('Attention', 22, AttentionAttrs, 1, (
        F('scale', 'f64', 0, 0.0, '', -1, None),
    ), (
        R('min', ('scale',), 0.0, None, frozenset([]), '{field} must not be negative, got {got}', None, None),
    )),
)
