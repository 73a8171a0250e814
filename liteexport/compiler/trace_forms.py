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
    x, weight, bias, stride, padding, dilation, transposed, output_padding, groups = args[:9]
    if _rank(weight) not in (3, 4):
        return None  # a 3-D convolution: reported under its own name
    if transposed is not False:
        return "aten::conv_transpose1d" if _rank(weight) == 3 else "aten::conv_transpose2d", \
            [x, weight, bias, stride, padding, output_padding, groups, dilation]
    return "aten::conv1d" if _rank(weight) == 3 else "aten::conv2d", [x, weight, bias, stride, padding, dilation,
                                                                      groups]


def _convolution_mode(args: list[Any]) -> tuple[str, list[Any]] | None:
    """aten::_convolution_mode(input, weight, bias, stride, padding: str, dilation, groups): what a
    traced convolution with padding='same' or 'valid' records."""
    rank = _rank(args[1])
    if rank not in (3, 4):
        return None
    return "aten::conv1d" if rank == 3 else "aten::conv2d", list(args[:7])


_FORMS: dict[str, Callable[[list[Any]], tuple[str, list[Any]] | None]] = {
    "aten::_convolution": _convolution,
    "aten::_convolution_mode": _convolution_mode,
}


def normalize(kind: str, args: list[Any]) -> tuple[str, list[Any]]:
    """The scripted form of a traced node (kind and arguments), or the node as it is."""
    form = _FORMS.get(kind)
    if form is None:
        return kind, args
    return form(args) or (kind, args)
