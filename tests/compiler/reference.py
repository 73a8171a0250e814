"""A test-only evaluator of compiled Programs, written directly with torch ops and
independently of the compiler, to compare compiled methods against eager PyTorch."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from bundle_format._generated.demo_traits import FAMILY, ORACLE
from bundle_format.program import Activation, BinaryAttrs, Instruction, OpCode
from liteexport.lowered import CompiledModule


def _binary(ins: Instruction, xs: list[torch.Tensor]) -> torch.Tensor:
    attrs = ins.attributes
    assert isinstance(attrs, BinaryAttrs)
    a: object = xs[0]
    b: object = attrs.scalar if attrs.scalar is not None else xs[1]
    if attrs.reverse:
        a, b = b, a
    if ins.op == OpCode.ADD:
        return a + attrs.alpha * b  # type: ignore[operator,no-any-return]
    if ins.op == OpCode.SUB:
        return a - attrs.alpha * b  # type: ignore[operator,no-any-return]
    if ins.op == OpCode.MUL:
        return a * b  # type: ignore[operator,no-any-return]
    return a / b  # type: ignore[operator,no-any-return]


def _step(ins: Instruction, xs: list[torch.Tensor]) -> torch.Tensor:
    op, at = ins.op, ins.attributes
    if op in (OpCode.ADD, OpCode.SUB, OpCode.MUL, OpCode.DIV):
        return _binary(ins, xs)
    unary = {OpCode.NEG: torch.neg, OpCode.RELU: torch.relu, OpCode.SIGMOID: torch.sigmoid,
             OpCode.TANH: torch.tanh}
    if op in unary:
        return unary[op](xs[0])
    if op == OpCode.GELU:
        return F.gelu(xs[0], approximate="tanh" if at.tanh_approximation else "none")  # type: ignore[union-attr]
    if op == OpCode.SOFTMAX:
        return torch.softmax(xs[0], at.axis)  # type: ignore[union-attr]
    if op == OpCode.LOG_SOFTMAX:
        return torch.log_softmax(xs[0], at.axis)  # type: ignore[union-attr]
    if op == OpCode.MATMUL:
        return xs[0] @ xs[1]
    if op in (OpCode.LINEAR, OpCode.CONV2D):
        bias = xs[2] if len(xs) > 2 else None
        if op == OpCode.LINEAR:
            y = F.linear(xs[0], xs[1], bias)
        else:
            y = F.conv2d(xs[0], xs[1], bias, at.stride, at.padding, at.dilation, at.groups)  # type: ignore[union-attr]
        return torch.relu(y) if at.activation == Activation.RELU else y  # type: ignore[union-attr]
    if op == OpCode.CHANNEL_AFFINE:
        shape = [1, -1] + [1] * (xs[0].dim() - 2)
        return xs[0] * xs[1].reshape(shape) + xs[2].reshape(shape)
    if op == OpCode.LAYER_NORM:
        n = at.normalized_ndim  # type: ignore[union-attr]
        w = xs[1] if len(xs) > 1 else None
        b = xs[2] if len(xs) > 2 else None
        return F.layer_norm(xs[0], list(xs[0].shape[-n:]), w, b, at.eps)  # type: ignore[union-attr]
    if op == OpCode.MAX_POOL2D:
        return F.max_pool2d(xs[0], at.kernel, at.stride, at.padding, at.dilation,  # type: ignore[union-attr]
                            ceil_mode=at.ceil_mode)  # type: ignore[union-attr]
    if op == OpCode.AVG_POOL2D:
        return F.avg_pool2d(xs[0], at.kernel, at.stride, at.padding, at.ceil_mode,  # type: ignore[union-attr]
                            at.count_include_pad, at.divisor_override)  # type: ignore[union-attr]
    if op == OpCode.ADAPTIVE_AVG_POOL2D:
        return F.adaptive_avg_pool2d(xs[0], list(at.dims))  # type: ignore[union-attr]
    if op == OpCode.TRANSPOSE:
        return xs[0].permute(*at.perm)  # type: ignore[union-attr]
    if op == OpCode.RESHAPE:
        return xs[0].reshape(*at.dims)  # type: ignore[union-attr]
    if op == OpCode.FLATTEN:
        return xs[0].flatten(at.start_dim, at.end_dim)  # type: ignore[union-attr]
    if op == OpCode.CAT:
        return torch.cat(xs, at.axis)  # type: ignore[union-attr]
    return _step_added(op, at, xs)


def _step_added(op: OpCode, at: object, xs: list[torch.Tensor]) -> torch.Tensor:
    """The opcodes added for real models: activations, reductions, slicing."""
    x = xs[0]
    if op == OpCode.CLAMP:
        return torch.clamp(x, at.min, at.max)  # type: ignore[attr-defined]
    simple = {OpCode.HARDSIGMOID: F.hardsigmoid, OpCode.HARDSWISH: F.hardswish, OpCode.SILU: F.silu}
    if op in simple:
        return simple[op](x)
    if op in (OpCode.MEAN, OpCode.SUM):
        dims = list(at.axes) or list(range(x.dim()))  # type: ignore[attr-defined]
        fn = torch.mean if op == OpCode.MEAN else torch.sum
        return fn(x, dims, keepdim=at.keepdim)  # type: ignore[attr-defined,no-any-return]
    if op == OpCode.SLICE:
        index = [slice(None)] * x.dim()
        index[at.axis] = slice(at.start, at.end, at.step)  # type: ignore[attr-defined]
        return x[tuple(index)]
    if op == OpCode.EXPAND:
        return x.expand(*at.dims)  # type: ignore[attr-defined]
    if FAMILY[op] == "math":  # the op spec's oracle, torch.NAME(x)
        return functools.reduce(getattr, ORACLE[op].split(".")[1:], torch)(x)  # type: ignore[no-any-return]
    if op == OpCode.POW:
        a: object = x
        b: object = at.scalar if at.scalar is not None else xs[1]  # type: ignore[attr-defined]
        if at.reverse:  # type: ignore[attr-defined]
            a, b = b, a
        return torch.pow(a, b)  # type: ignore[call-overload,no-any-return]
    raise NotImplementedError(op)


def run_method(compiled: CompiledModule, method: str, *inputs: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Run ``method`` of ``compiled``; always returns a tuple of outputs."""
    index = [m.name for m in compiled.methods].index(method)
    program = compiled.programs[index]
    slots: list[torch.Tensor | None] = [None] * program.num_slots
    for i, x in enumerate(inputs):
        slots[i] = x
    for const in program.constants:
        slots[const.slot] = torch.from_numpy(np.array(compiled.weights[const.weight]))
    for ins in program.instructions:
        args: Sequence[torch.Tensor] = [slots[s] for s in ins.inputs]  # type: ignore[misc]
        slots[ins.outputs[0]] = _step(ins, list(args))
    return tuple(slots[s] for s in program.outputs)  # type: ignore[misc]
