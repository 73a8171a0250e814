"""Static shape inference: run an instruction on meta tensors.

Dynamic dimensions (-1) are tried with two different stand-in sizes; an output dimension
that comes out equal both times does not depend on them and is static.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from liteexport.compiler.semantics import run_op
from liteexport.compiler.values import Sym, TensorConst
from runtime_py.format.program import OpCode

# Stand-ins for dynamic dims: large enough for kernels, divisible for reshapes.
_STAND_INS = (48, 96)


def infer_shape(op: OpCode, attrs: object,
                inputs: Sequence[Sym | TensorConst | None]) -> tuple[int, ...] | None:
    """The output shape of ``op`` (with -1 for dynamic dims), or None if unknown."""
    results = []
    for stand_in in _STAND_INS:
        metas: list[torch.Tensor | None] = []
        for value in inputs:
            if value is None:
                metas.append(None)
            elif isinstance(value, TensorConst):
                metas.append(torch.empty(value.tensor.shape, device="meta"))
            elif value.shape is None:
                return None
            else:
                dims = [stand_in if d < 0 else d for d in value.shape]
                metas.append(torch.empty(dims, device="meta"))
        try:
            results.append(tuple(run_op(op, attrs, metas).shape))
        except (RuntimeError, ValueError, IndexError, TypeError):
            return None
    first, second = results
    if len(first) != len(second):
        return None
    return tuple(a if a == b else -1 for a, b in zip(first, second, strict=True))
