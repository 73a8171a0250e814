"""Quantized TorchScript models (torch.ao eager or FX mode, as PyTorch Mobile users have them):
``quantize_per_tensor``, ``quantized::conv2d``/``linear``/``add``/``mul``/``cat``/``hardswish``,
the ATen ops torch runs on quantized tensors, ``dequantize``.

They compile to float programs whose activations stay on their quantization grid, the form
ExecuTorch's and ONNX's QDQ graphs have before a backend fuses them: every quantized result is
its float op followed by FAKE_QUANTIZE with the node's output scale and zero point (quantize, then
dequantize). The weights are stored as torch quantized them (int8, per tensor or per channel) and
widened once at load. So every engine runs them with its float kernels; an output differs from
torch's integer kernels by at most one quantum where the float and integer roundings part (the
float sum of int8 products, the requantization multiplier).

A quantized value is a Sym whose ``quant`` holds its grid; ATen ops read on one either keep the
grid (max pooling, relu, views: the result is tagged too), requantize to it (average pooling,
mean: torch rounds their results to the input's grid), or move to a fixed one (hardsigmoid).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from bundle_format._generated.demo_traits import QUANTIZED_FIXED_GRID, QUANTIZED_KEEPS_GRID, QUANTIZED_REQUANTIZES
from bundle_format.program import FlattenAttrs, FusedAttrs, OpCode, QuantizeAttrs
from liteexport.compiler import int16_pairs, ops
from liteexport.compiler.ops import Emitter, Lowering, rank_of, tensor
from liteexport.compiler.values import QuantGrid, Sym, TensorConst, Unsupported

# c10::ScalarType numbers TorchScript passes as a dtype -> the integer range
_RANGES = {12: (-128, 127), 13: (0, 255)}  # QInt8, QUInt8
_QUINT8 = (0, 255)


def quantize(b: Emitter, x: Any, scale: float, zero_point: int, bounds: tuple[int, int]) -> Sym:
    """``x`` rounded to the grid (scale, zero_point, bounds), tagged with it."""
    grid = QuantGrid(float(scale), int(zero_point), *bounds)
    attrs = QuantizeAttrs(scale=grid.scale, zero_point=grid.zero_point, quant_min=grid.quant_min,
                          quant_max=grid.quant_max)
    out = b.emit(OpCode.FAKE_QUANTIZE, [tensor(x)], attrs)
    if not isinstance(out, Sym):  # a folded constant: stays a constant (no run-time grid)
        raise Unsupported("a quantized tensor known at compile time is not compiled")
    out.quant = grid
    return out


def _number(value: Any) -> float:
    return float(value.tensor.item()) if isinstance(value, TensorConst) else float(value)


def _grid_of(value: Any) -> QuantGrid:
    grid = value.quant if isinstance(value, Sym) else None
    if grid is None:
        raise Unsupported("expected a quantized tensor (from quantize_per_tensor or a quantized op)")
    return grid


def _bounds_of(value: Any) -> tuple[int, int]:
    grid = _grid_of(value)
    return (grid.quant_min, grid.quant_max)


def _quantize_per_tensor(b: Emitter, args: list[Any]) -> Any:
    x, scale, zero_point, dtype = args[:4]
    if dtype not in _RANGES:
        raise Unsupported(f"quantize_per_tensor to scalar type {dtype}: quint8 and qint8 are compiled")
    return quantize(b, x, _number(scale), int(_number(zero_point)), _RANGES[dtype])


def _dequantize(b: Emitter, args: list[Any]) -> Any:
    x = tensor(args[0])
    if not isinstance(x, Sym) or x.quant is None:  # a float tensor: torch returns it as it is
        return x
    if rank_of(x) == 0:
        raise Unsupported("dequantize of a 0-d tensor is not compiled")
    # the value is already its float; a new value (flatten of one dim: a view) so that float ops
    # reading it are not taken for ops on the quantized tensor, which may be read on too
    return b.emit(OpCode.FLATTEN, [x], FlattenAttrs(start_dim=0, end_dim=0))


def _weight(packed: Any, unpack: Callable[[Any], Any]) -> tuple[TensorConst, TensorConst | None]:
    """A packed conv/linear's weight (its float values; the bundle stores the int8 tensor) and bias."""
    if not isinstance(packed, torch.ScriptObject):
        raise Unsupported("expected the packed weights of a quantized module")
    weight, bias = unpack(packed)
    if not weight.is_quantized:
        raise Unsupported("the packed weight is not quantized")
    return TensorConst(weight.dequantize(), stored=weight), None if bias is None else TensorConst(bias.detach())


def _conv2d(relu: bool) -> Lowering:
    def lower(b: Emitter, args: list[Any]) -> Any:
        x, packed, scale, zero_point = args[:4]
        q = torch.ops.quantized
        if q.conv2d_transpose(packed):
            raise Unsupported("quantized transposed convolution is not compiled")
        weight, bias = _weight(packed, q.conv2d_unpack)
        stride, padding, dilation = (q.conv2d_stride(packed), q.conv2d_padding(packed), q.conv2d_dilation(packed))
        groups = int(q.conv2d_groups(packed))
        what = "quantized::conv2d_relu" if relu else "quantized::conv2d"
        stored = weight.stored
        assert isinstance(stored, torch.Tensor)
        bias_tensor = None if bias is None else bias.tensor
        window = (_pair(stride), _pair(dilation))
        if int16_pairs.torch_kernel(packed, stored, bias_tensor, groups, window, what) == int16_pairs.PAIRS:
            out = int16_pairs.lower_pairs(b, tensor(x), _grid_of(x), stored, bias_tensor, _pair(stride),
                                          _pair(padding), _pair(dilation), groups)
        else:
            out = ops.LOWERINGS["aten::conv2d"](b, [x, weight, bias, stride, padding, dilation, groups])
        if relu:
            out = b.emit(OpCode.RELU, [out], None)
        return quantize(b, out, _number(scale), int(zero_point), _bounds_of(x))
    return lower


def _pair(values: Any) -> tuple[int, int]:
    first, second = (int(v) for v in values)
    return first, second


def _linear(relu: bool) -> Lowering:
    def lower(b: Emitter, args: list[Any]) -> Any:
        x, packed, scale, zero_point = args[:4]
        weight, bias = _weight(packed, torch.ops.quantized.linear_unpack)
        out = b.emit(OpCode.LINEAR, [tensor(x), weight, bias], FusedAttrs())
        if relu:
            out = b.emit(OpCode.RELU, [out], None)
        return quantize(b, out, _number(scale), int(zero_point), _bounds_of(x))
    return lower


def _linear_dynamic(relu: bool) -> Lowering:
    """quantized::linear_dynamic (torch.ao's quantize_dynamic): int8 weights, float activations in
    and out. torch quantizes the input to 8 bits on every call, with a scale from that input's own
    min and max, and sums int8 products; this compiles to LINEAR on the float input with the int8
    weight widened at load, which leaves out that rounding of the input (no engine has a run-time
    quantization op). The result differs from torch's by the input's rounding error carried through
    the weights: the self-check allows liteexport.quantized_parity.DYNAMIC_TOLERANCE for it."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        weight, bias = _weight(args[1], torch.ops.quantized.linear_unpack)
        out = b.emit(OpCode.LINEAR, [tensor(args[0]), weight, bias], FusedAttrs())
        return b.emit(OpCode.RELU, [out], None) if relu else out
    return lower


def _binary(op: OpCode, relu: bool) -> Lowering:
    """quantized::add/mul(a, b, scale, zero_point) and their _relu forms; a scalar operand too."""
    kind = {OpCode.ADD: "aten::add", OpCode.MUL: "aten::mul"}[op]  # a KeyError for any other op

    def lower(b: Emitter, args: list[Any]) -> Any:
        a, other, scale, zero_point = args[:4]
        out = ops.LOWERINGS[kind](b, [tensor(a), other])
        if relu:
            out = b.emit(OpCode.RELU, [out], None)
        return quantize(b, out, _number(scale), int(zero_point), _bounds_of(a))
    return lower


def _cat(b: Emitter, args: list[Any]) -> Any:
    values, dim, scale, zero_point = args[:4]
    out = ops.LOWERINGS["aten::cat"](b, [values, dim])
    return quantize(b, out, _number(scale), int(zero_point), _bounds_of(values[0]))


def _hardswish(b: Emitter, args: list[Any]) -> Any:
    x, scale, zero_point = args[:3]
    out = b.emit(OpCode.HARDSWISH, [tensor(x)], None)
    return quantize(b, out, _number(scale), int(zero_point), _bounds_of(x))


LOWERINGS: dict[str, Lowering] = {
    "aten::quantize_per_tensor": _quantize_per_tensor,
    "aten::dequantize": _dequantize,
    "quantized::conv2d": _conv2d(relu=False),
    "quantized::conv2d_relu": _conv2d(relu=True),
    "quantized::linear": _linear(relu=False),
    "quantized::linear_relu": _linear(relu=True),
    "quantized::linear_dynamic": _linear_dynamic(relu=False),
    "quantized::linear_relu_dynamic": _linear_dynamic(relu=True),
    "quantized::add": _binary(OpCode.ADD, relu=False),
    "quantized::add_relu": _binary(OpCode.ADD, relu=True),
    "quantized::add_scalar": _binary(OpCode.ADD, relu=False),
    "quantized::mul": _binary(OpCode.MUL, relu=False),
    "quantized::mul_relu": _binary(OpCode.MUL, relu=True),
    "quantized::mul_scalar": _binary(OpCode.MUL, relu=False),
    "quantized::cat": _cat,
    "quantized::hardswish": _hardswish,
}

def on_quantized_inputs(kind: str, lowering: Lowering) -> Lowering:
    """``lowering`` of an ATen op, aware of quantized inputs: the result keeps the input's grid,
    is rounded back to it, or moves to torch's fixed grid; any other ATen op on a quantized
    tensor is not compiled (its result's quantization is not modeled). Which ATen op does what is
    the op spec's `quantized` (torch's fixed grids: aten/src/ATen/native/quantized/cpu's qsigmoid,
    qhardsigmoid, qtanh)."""
    def lower(b: Emitter, args: list[Any]) -> Any:
        first = next((a for a in _flat(args) if isinstance(a, Sym) and a.quant is not None), None)
        if first is None:
            return lowering(b, args)
        grid = first.quant
        assert grid is not None
        result = lowering(b, args)
        if kind in QUANTIZED_KEEPS_GRID:
            for value in _flat(result):
                if isinstance(value, Sym) and value is not first:
                    value.quant = grid
            return result
        if kind in QUANTIZED_REQUANTIZES:
            return quantize(b, result, grid.scale, grid.zero_point, (grid.quant_min, grid.quant_max))
        if kind in QUANTIZED_FIXED_GRID and (grid.quant_min, grid.quant_max) == _QUINT8:
            scale, zero_point = QUANTIZED_FIXED_GRID[kind]
            return quantize(b, result, scale, zero_point, _QUINT8)
        raise Unsupported(f"{kind} on a quantized tensor is not compiled (dequantize it first)")
    return lower


def _flat(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [item for v in value for item in _flat(v)]
    return [value]
