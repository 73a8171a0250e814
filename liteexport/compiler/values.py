"""The compiler's abstract values and its small intermediate form.

Walking a TorchScript graph evaluates every node abstractly: Python-level values (ints,
floats, bools, strings, None, lists, tuples) are computed at compile time, module
attributes become :class:`TensorConst`, and tensors only known at run time are
:class:`Sym` values produced by :class:`OpNode` s — the instructions-to-be. A value that
depends on a node we cannot compile is :class:`Poison`; it is reported only if it reaches
a method output, which is how dead unsupported nodes stay silent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from bundle_format.debug_table import SourceFrame
from bundle_format.program import Attributes, DType, OpCode

if TYPE_CHECKING:
    from liteexport.compiler.symbolic import SymSize


@dataclass(frozen=True)
class NodeSite:
    """Where a TorchScript node sits: what the debug table says about its instructions."""

    method: str
    kind: str  # e.g. "aten::conv2d"
    hierarchy: str  # e.g. "top(TinyCNN).features(Sequential).0(Conv2d)"
    frames: tuple[SourceFrame, ...]  # outermost first; the last is the node itself


@dataclass(frozen=True)
class QuantGrid:
    """The per-tensor quantization of a quantized model's activation (quantized_ops.py)."""

    scale: float
    zero_point: int
    quant_min: int
    quant_max: int


@dataclass(eq=False)
class Sym:
    """A tensor computed at run time; ``shape`` uses -1 for dynamic dims, None when even the
    rank is unknown; ``dtype`` is its element type (the op spec's dtype rule gives a result's)."""

    shape: tuple[int, ...] | None
    producer: OpNode | None = None  # None: a method input (or a blocked value)
    input_index: int = -1
    dtype: DType = DType.FLOAT32
    # Reports of the uncompilable nodes this value comes from. Such a value still has its
    # shape (from torch's meta kernels), so the walk goes on and reports what comes after it
    # too; it is never compiled: a method output holding it raises its reports.
    blocked: frozenset[int] = frozenset()
    # The dynamic dims (-1 in ``shape``) known as expressions of a named dim, by axis (symbolic.py).
    symbols: dict[int, SymSize] = field(default_factory=dict)
    # A quantized model's activation: the grid its float values sit on (quantized_ops.py).
    quant: QuantGrid | None = None
    # The program state (a buffer kept across calls) this value is the current contents of, by
    # name: a method's state input, or the result of a write into it (compiler/state_ops.py).
    state: str | None = None


@dataclass(eq=False)
class TensorConst:
    """A tensor known at compile time (a parameter, a buffer or a folded result)."""

    tensor: torch.Tensor
    state: bool = False  # a module attribute (parameter, buffer): never updated in place
    # how the bundle stores it when not as ``tensor``: the int8 tensor a quantized model's weight
    # is (``tensor`` holds its float values, which every engine widens it to at load)
    stored: torch.Tensor | None = None


@dataclass(frozen=True)
class ModuleRef:
    """A (sub)module reached from ``self``; ``path`` is its place in the hierarchy."""

    module: Any  # torch._C.ScriptModule
    path: tuple[tuple[str, str], ...]  # (instance name, type name), "top" first

    @property
    def hierarchy(self) -> str:
        return ".".join(f"{name}({type_name})" for name, type_name in self.path)


@dataclass(frozen=True)
class Poison:
    """A value that depends on unsupported nodes (indexes into the walk's report list)."""

    reports: frozenset[int]


TensorValue = Sym | TensorConst


@dataclass(eq=False)
class OpNode:
    """One instruction-to-be: ``op`` over tensor inputs, producing ``output``."""

    op: OpCode
    inputs: list[TensorValue | None]  # None: an absent optional input (e.g. no bias)
    attrs: Attributes
    site: NodeSite
    output: Sym = field(init=False)


class Unsupported(Exception):
    """A signal inside the walk (it never escapes it): raised by a lowering when the node
    cannot be compiled; ``reason`` is appended to the report's first line."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(reason)
        self.reason = reason


def find_blocked(value: object) -> frozenset[int]:
    """Report indexes of every blocked Sym inside ``value`` (looking into lists and tuples)."""
    if isinstance(value, Sym):
        return value.blocked
    if isinstance(value, (list, tuple)):
        found: frozenset[int] = frozenset()
        for item in value:
            found |= find_blocked(item)
        return found
    return frozenset()


def find_poison(value: object) -> frozenset[int]:
    """Report indexes of every Poison inside ``value`` (looking into lists and tuples)."""
    if isinstance(value, Poison):
        return value.reports
    if isinstance(value, (list, tuple)):
        found: frozenset[int] = frozenset()
        for item in value:
            if isinstance(item, (Poison, list, tuple)):  # most items are not: no call for them
                found |= find_poison(item)
        return found
    return frozenset()
