"""Questions TorchScript code asks about where it runs, answered at compile time for the
compiled program: a CPU, no autograd recording and no nested tensors.

torch's transformer layers and multi-head attention pick between a fused "fast path"
kernel and plain ops by asking these questions (``torch.is_grad_enabled()``,
``x.requires_grad``, ``x.is_nested``, ``query is key``...). The compiled program has no
autograd, so either answer about gradients is truthful; the answers here make the plain
path the one taken (both compute the same function; the plain path is made of ops the
compiler lowers, the fused kernels are not), which is how the eval fast path is decided at
compile time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from liteexport.compiler.values import Sym, TensorConst


def _same_tensor(a: Any, b: Any) -> bool:
    """``a is b`` for abstract values: a Sym is its own identity; two constants are the
    same tensor when they view the same memory the same way."""
    if isinstance(a, TensorConst) and isinstance(b, TensorConst):
        x, y = a.tensor, b.tensor
        return bool(x.data_ptr() == y.data_ptr() and x.shape == y.shape and x.stride() == y.stride()
                    and x.dtype == y.dtype)
    return a is b


def _is_tensor(value: Any) -> bool:
    return isinstance(value, (Sym, TensorConst))


ENVIRONMENT: dict[str, Callable[..., Any]] = {
    "aten::is_grad_enabled": lambda: True,  # constants that require grad then keep the fused path away
    "prim::requires_grad": lambda x: isinstance(x, TensorConst),
    "aten::is_autocast_enabled": lambda *args: False,
    "aten::is_autocast_cpu_enabled": lambda: False,
    "prim::is_nested": lambda x: False,
    "prim::is_sparse": lambda x: False,
    "prim::is_quantized": lambda x: False,
    "prim::is_mkldnn": lambda x: False,
    "prim::is_meta": lambda x: False,
    "prim::type": lambda device: device.type,
    "aten::__is__": _same_tensor,
    "aten::__isnot__": lambda a, b: not _same_tensor(a, b),
}


def answers(kind: str, args: list[Any]) -> bool:
    """Whether ``ENVIRONMENT`` answers this node (``__is__`` only between tensors; over other
    values it is a plain fold)."""
    if kind not in ENVIRONMENT:
        return False
    if kind in ("aten::__is__", "aten::__isnot__"):
        return any(_is_tensor(a) for a in args)
    return True
