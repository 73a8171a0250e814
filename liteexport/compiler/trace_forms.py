"""Node forms that ``torch.jit.trace`` records where scripting records another, rewritten
to the scripted form before lowering, so one lowering serves both.

Tracing records what ATen ran, below the Python API: ``F.conv2d`` becomes
``aten::_convolution`` with every backend flag spelled out.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from liteexport.compiler.values import Sym, TensorConst


def _rank(value: Any) -> int | None:
    if isinstance(value, TensorConst):
        return int(value.tensor.dim())
    if isinstance(value, Sym) and value.shape is not None:
        return len(value.shape)
    return None


def _convolution(args: list[Any]) -> tuple[str, list[Any]] | None:
    """aten::_convolution(input, weight, bias, stride, padding, dilation, transposed,
    output_padding, groups, benchmark, deterministic, cudnn_enabled, allow_tf32)."""
    x, weight, bias, stride, padding, dilation, transposed, _output_padding, groups = args[:9]
    if transposed is not False or _rank(weight) != 4:
        return None  # a transposed or non-2-D convolution: reported under its own name
    return "aten::conv2d", [x, weight, bias, stride, padding, dilation, groups]


_FORMS: dict[str, Callable[[list[Any]], tuple[str, list[Any]] | None]] = {
    "aten::_convolution": _convolution,
}


def normalize(kind: str, args: list[Any]) -> tuple[str, list[Any]]:
    """The scripted form of a traced node (kind and arguments), or the node as it is."""
    form = _FORMS.get(kind)
    if form is None:
        return kind, args
    return form(args) or (kind, args)
