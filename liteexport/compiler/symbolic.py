"""Sizes known only at run time, as compile-time values: ``scale * S + offset`` over a named dim S
(``--input-shape forward:1xS:int64 --dim S=1..64``).

``aten::size`` of a dim that holds S gives a :class:`SymSize` instead of poisoning what uses it;
traced graphs then carry it through ``prim::NumToTensor``, 0-d arithmetic and ``aten::Int`` as any
number (the scalar folds apply Python's operators, which SymSize implements for what stays of that
form). A question whose answer depends on S (``S == 8``, ``S > 1``, ``S // 3``) raises TypeError,
which the walk reports as the node it could not evaluate, naming the size.

Tensors keep -1 in ``Sym.shape`` for a dim known only at run time (every shape rule and lowering
decides on that); ``Sym.symbols`` says, per such axis, which SymSize it is when the compiler knows
(see ``shapes.infer_symbols``). Where a SymSize must reach run time, ``symbolic_ops`` emits it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from liteexport.compiler.values import Sym, TensorConst, Unsupported
from liteexport.input_spec import DimRange


@dataclass(frozen=True, eq=False)
class SymSize:
    """``scale * dim + offset``, ``scale`` != 0. ``source`` is a method input holding exactly ``dim``
    along an axis, ``(input, axis)``: what the program reads the size from at run time."""

    dim: str
    scale: int = 1
    offset: int = 0
    source: tuple[Sym, int] | None = field(default=None, repr=False)
    bounds: tuple[int, int] | None = None  # the named dim's --dim LO..HI, when the compiler was told

    def at(self, value: int) -> int:
        """The size when the named dim is ``value``."""
        return self.scale * value + self.offset

    def least(self) -> int | None:
        """The smallest this size is for any value the dim's bounds allow (None: bounds not known)."""
        if self.bounds is None:
            return None
        return min(self.at(self.bounds[0]), self.at(self.bounds[1]))

    def __str__(self) -> str:
        term = self.dim if self.scale == 1 else f"-{self.dim}" if self.scale == -1 else f"{self.scale}*{self.dim}"
        return term if not self.offset else f"{term}{self.offset:+d}"

    def _affine(self, scale: int, offset: int) -> SymSize | int:
        return replace(self, scale=scale, offset=offset) if scale else offset

    def _terms(self, other: object, sign: int, what: str) -> SymSize | int:
        """self + sign * other."""
        if isinstance(other, SymSize) and other.dim == self.dim:
            return self._affine(self.scale + sign * other.scale, self.offset + sign * other.offset)
        if isinstance(other, int) and not isinstance(other, bool):
            return self._affine(self.scale, self.offset + sign * other)
        raise _unknown(f"{self} {what} {other}")

    def __add__(self, other: object) -> SymSize | int:
        return self._terms(other, 1, "+")

    __radd__ = __add__

    def __sub__(self, other: object) -> SymSize | int:
        return self._terms(other, -1, "-")

    def __neg__(self) -> SymSize:
        return replace(self, scale=-self.scale, offset=-self.offset)

    def __rsub__(self, other: object) -> SymSize | int:
        return (-self)._terms(other, 1, "+")

    def __mul__(self, other: object) -> SymSize | int:
        if isinstance(other, int) and not isinstance(other, bool):
            return self._affine(self.scale * other, self.offset * other)
        raise _unknown(f"{self} * {other}")

    __rmul__ = __mul__

    def __floordiv__(self, other: object) -> SymSize | int:
        # floor((a*S + b) / k) == (a/k)*S + floor(b/k) for every integer S when k divides a
        if isinstance(other, int) and not isinstance(other, bool) and other > 0 and self.scale % other == 0:
            return self._affine(self.scale // other, self.offset // other)
        raise _unknown(f"{self} // {other}")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SymSize):  # the same expression: equal for every S (or different for every S)
            return (self.dim, self.scale, self.offset) == (other.dim, other.scale, other.offset)
        raise _unknown(f"whether {self} == {other}")

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((self.dim, self.scale, self.offset))

    def __lt__(self, other: object) -> bool:
        raise _unknown(f"whether {self} < {other}")

    def __le__(self, other: object) -> bool:
        raise _unknown(f"whether {self} <= {other}")

    def __gt__(self, other: object) -> bool:
        raise _unknown(f"whether {self} > {other}")

    def __ge__(self, other: object) -> bool:
        raise _unknown(f"whether {self} >= {other}")

    def __bool__(self) -> bool:
        raise _unknown(f"whether {self} is nonzero")

    def __int__(self) -> int:
        raise _unknown(f"{self} as a number")

    __index__ = __int__


class SymbolicSizeError(Unsupported, TypeError):
    """A question about a SymSize with no answer at compile time: Unsupported where a lowering asks
    it, a TypeError (a node that cannot be evaluated) where a scalar fold does."""


def _unknown(what: str) -> SymbolicSizeError:
    return SymbolicSizeError(f"{what} depends on a size known only at run time")


def has_symbolic(value: Any) -> bool:
    """Whether ``value`` is a SymSize or a list or tuple holding one."""
    if isinstance(value, SymSize):
        return True
    if isinstance(value, (list, tuple)):
        return any(has_symbolic(item) for item in value)
    return False


def size_of(value: Sym | TensorConst, axis: int) -> int | SymSize | None:
    """The size of ``value`` along ``axis``: static, a SymSize, or None when unknown."""
    if isinstance(value, TensorConst):
        return int(value.tensor.shape[axis])
    if value.shape is None:
        return None
    size = value.shape[axis]
    return size if size >= 0 else value.symbols.get(axis)


def input_symbols(value: Sym, names: tuple[int | str, ...],
                  dims: Mapping[str, DimRange] | None = None) -> dict[int, SymSize]:
    """A method input's named dims (a TensorSpec's shape: ints and names) as SymSizes it is the
    source of, each with its bounds when ``dims`` has them."""
    known = {name: (d.lo, d.hi) for name, d in (dims or {}).items()}
    return {axis: SymSize(name, source=(value, axis), bounds=known.get(name))
            for axis, name in enumerate(names) if isinstance(name, str)}
