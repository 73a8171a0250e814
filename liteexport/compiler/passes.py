"""Passes over a method's instructions-to-be: dead code removal, batch norm folding and
ReLU fusion. Each takes the node list (program order) and the method's outputs and returns
the new node list; outputs are updated in place when a value is replaced."""

from __future__ import annotations

import dataclasses

import torch

from bundle_format.program import Activation, Conv2dAttrs, FusedAttrs, OpCode
from liteexport.compiler.values import OpNode, Sym, TensorConst, TensorValue

_FOLD_TARGETS = (OpCode.CONV2D, OpCode.LINEAR)


def remove_dead(nodes: list[OpNode], outputs: list[TensorValue]) -> list[OpNode]:
    """Keep only the nodes whose results reach an output."""
    live: set[OpNode] = set()
    stack = [v.producer for v in outputs if isinstance(v, Sym) and v.producer is not None]
    while stack:
        node = stack.pop()
        if node in live:
            continue
        live.add(node)
        stack.extend(v.producer for v in node.inputs if isinstance(v, Sym) and v.producer is not None)
    return [n for n in nodes if n in live]


def _use_counts(nodes: list[OpNode], outputs: list[TensorValue]) -> dict[Sym, int]:
    counts: dict[Sym, int] = {}
    for value in [v for n in nodes for v in n.inputs] + list(outputs):
        if isinstance(value, Sym):
            counts[value] = counts.get(value, 0) + 1
    return counts


def _replace(nodes: list[OpNode], outputs: list[TensorValue], old: Sym, new: Sym) -> None:
    for node in nodes:
        node.inputs = [new if v is old else v for v in node.inputs]
    outputs[:] = [new if v is old else v for v in outputs]


def _sole_producer(value: TensorValue | None, counts: dict[Sym, int]) -> OpNode | None:
    """The CONV2D/LINEAR producing ``value``, when nothing else reads ``value`` and no
    activation is fused into it yet."""
    if not isinstance(value, Sym) or value.producer is None or counts.get(value, 0) != 1:
        return None
    producer = value.producer
    if producer.op not in _FOLD_TARGETS:
        return None
    attrs = producer.attrs
    if not isinstance(attrs, (Conv2dAttrs, FusedAttrs)) or attrs.activation != Activation.NONE:
        return None
    return producer


def fold_batch_norm(nodes: list[OpNode], outputs: list[TensorValue]) -> list[OpNode]:
    """CHANNEL_AFFINE (inference batch norm) after a CONV2D/LINEAR whose output only it
    reads becomes part of that producer's weight and bias."""
    counts = _use_counts(nodes, outputs)
    kept: list[OpNode] = []
    for node in nodes:
        producer = _sole_producer(node.inputs[0], counts) if node.op == OpCode.CHANNEL_AFFINE else None
        if producer is None or not _fold_into(producer, node):
            kept.append(node)
            continue
        _replace(nodes, outputs, node.output, producer.output)
        counts[producer.output] = counts.pop(node.output, 0)
    return kept


def _fold_into(producer: OpNode, affine: OpNode) -> bool:
    weight, bias = producer.inputs[1], producer.inputs[2] if len(producer.inputs) > 2 else None
    scale, shift = affine.inputs[1], affine.inputs[2]
    if not (isinstance(weight, TensorConst) and isinstance(scale, TensorConst)
            and isinstance(shift, TensorConst) and (bias is None or isinstance(bias, TensorConst))):
        return False
    if producer.op == OpCode.LINEAR:
        # Batch norm scales dim 1; that is LINEAR's feature dim only for 2-D outputs.
        shape = producer.output.shape
        if shape is None or len(shape) != 2:
            return False
    w = weight.tensor.double()
    s = scale.tensor.double()
    b = torch.zeros(w.shape[0], dtype=torch.float64) if bias is None else bias.tensor.double()
    new_weight = w * s.reshape([-1] + [1] * (w.dim() - 1))
    new_bias = b * s + shift.tensor.double()
    producer.inputs = [producer.inputs[0], TensorConst(new_weight.float().contiguous()),
                       TensorConst(new_bias.float().contiguous())]
    return True


def fuse_relu(nodes: list[OpNode], outputs: list[TensorValue]) -> list[OpNode]:
    """RELU after a CONV2D/LINEAR whose output only it reads becomes that producer's
    fused activation."""
    counts = _use_counts(nodes, outputs)
    kept: list[OpNode] = []
    for node in nodes:
        producer = _sole_producer(node.inputs[0], counts) if node.op == OpCode.RELU else None
        if producer is None:
            kept.append(node)
            continue
        producer.attrs = dataclasses.replace(producer.attrs, activation=Activation.RELU)  # type: ignore[type-var]
        _replace(nodes, outputs, node.output, producer.output)
        counts[producer.output] = counts.pop(node.output, 0)
    return kept


def optimize(nodes: list[OpNode], outputs: list[TensorValue]) -> list[OpNode]:
    """The pass pipeline, in the order that lets conv -> bn -> relu become one instruction."""
    nodes = remove_dead(nodes, outputs)
    nodes = fold_batch_norm(nodes, outputs)
    nodes = fuse_relu(nodes, outputs)
    return remove_dead(nodes, outputs)
