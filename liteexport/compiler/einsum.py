"""Lowering of two-operand ``torch.einsum`` (see ops.py for the conventions): the operands
are permuted to (batch, free, contracted) and (batch, contracted, free), reshaped to 3 groups
where a group has several labels, multiplied with one MATMUL and permuted to the output order.
Shapes must be static where labels are grouped."""

from __future__ import annotations

import math
from typing import Any

from bundle_format.program import OpCode
from liteexport.compiler.ops import Emitter, Lowering, _permute_to, tensor
from liteexport.compiler.shape_ops import reshape_to, static_shape
from liteexport.compiler.values import TensorValue, Unsupported


def _parse(equation: str, n_operands: int) -> tuple[list[str], str]:
    text = equation.replace(" ", "")
    if "..." in text or "->" not in text:
        raise Unsupported("einsum needs an explicit output ('->') and no '...'")
    inputs, output = text.split("->")
    terms = inputs.split(",")
    if len(terms) != n_operands or n_operands != 2:
        raise Unsupported("only einsum of two operands is compiled")
    for term in [*terms, output]:
        if len(set(term)) != len(term) or not term.isalpha():
            raise Unsupported(f"einsum term {term!r} repeats a label (diagonals are not compiled)")
    if not set(output) <= set(terms[0]) | set(terms[1]):
        raise Unsupported(f"einsum output {output!r} names a label no operand has")
    return terms, output


def _grouped(b: Emitter, x: TensorValue, labels: str, order: list[str], groups: list[list[str]],
             sizes: dict[str, int]) -> TensorValue:
    """``x`` (labels) permuted to ``order`` and reshaped so each group is one dim."""
    moved = _permute_to(b, x, [labels.index(label) for label in order])
    return reshape_to(b, moved, [math.prod(sizes[label] for label in group) for group in groups])


def _einsum(b: Emitter, args: list[Any]) -> Any:
    equation, operands = args[0], [tensor(v) for v in args[1]]
    (la, lb), out = _parse(str(equation), len(operands))
    a, c = operands
    sizes: dict[str, int] = {}
    for labels, value in ((la, a), (lb, c)):
        shape = static_shape(value)
        if len(shape) != len(labels):
            raise Unsupported(f"einsum term {labels!r} does not fit an operand of rank {len(shape)}")
        for label, size in zip(labels, shape, strict=True):
            if sizes.setdefault(label, size) != size and 1 not in (size, sizes[label]):
                raise Unsupported(f"einsum label {label!r} has sizes {sizes[label]} and {size}")
    if any(size < 0 for size in sizes.values()):
        raise Unsupported("einsum needs static shapes; give static input shapes (liteexport export --input-shape)")
    batch = [label for label in out if label in la and label in lb]
    contracted = [label for label in la if label in lb and label not in out]
    free_a = [label for label in la if label not in lb]
    free_b = [label for label in lb if label not in la]
    if not set(free_a + free_b) <= set(out):
        raise Unsupported("einsum sums over a label of one operand only (not compiled)")
    left = _grouped(b, a, la, batch + free_a + contracted, [[x] for x in batch] + [free_a, contracted], sizes)
    right = _grouped(b, c, lb, batch + contracted + free_b, [[x] for x in batch] + [contracted, free_b], sizes)
    product = b.emit(OpCode.MATMUL, [left, right], None)
    result_order = batch + free_a + free_b
    unfolded = reshape_to(b, product, [sizes[label] for label in result_order])
    return _permute_to(b, unfolded, [result_order.index(label) for label in out])


LOWERINGS: dict[str, Lowering] = {"aten::einsum": _einsum}
