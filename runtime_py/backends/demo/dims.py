"""Named dims with bounds (``--dim S=1..128``): the program's SymbolicDims, checked once when the
plan is built (format errors) and on every call (input errors, exit 6): each input dim that names
a symbol is within its bounds, and every dim naming the same symbol has the same size."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bundle_format.error_codes import format_error, input_error
from bundle_format.program import Program, SymbolicDim


@dataclass(frozen=True)
class DimCheck:
    """Input ``index``'s dim ``axis`` is symbol ``symbol`` of the program."""

    index: int
    axis: int
    symbol: int


def dim_checks(program: Program, where: str) -> tuple[DimCheck, ...]:
    """The program's named input dims, in input order; FormatError for a malformed reference."""
    for dim in program.symbolic_dims:
        if not 0 <= dim.lo or not (dim.hi == -1 or dim.lo <= dim.hi):
            raise format_error("DIM_BOUNDS", where=where, name=dim.name, lo=dim.lo, hi=dim.hi)
    checks = []
    for index, info in enumerate(program.inputs):
        if not info.dim_symbols:
            continue
        rank = -1 if info.shape is None else len(info.shape)
        if len(info.dim_symbols) != rank:
            raise format_error("DIM_SYMBOLS_LENGTH", where=where, index=index, found=len(info.dim_symbols),
                               rank="unknown" if info.shape is None else rank)
        assert info.shape is not None
        for axis, symbol in enumerate(info.dim_symbols):
            if symbol == -1:
                continue
            if not 0 <= symbol < len(program.symbolic_dims):
                raise format_error("DIM_SYMBOL_RANGE", where=where, index=index, axis=axis, symbol=symbol,
                                   count=len(program.symbolic_dims))
            if info.shape[axis] != -1:
                raise format_error("DIM_SYMBOL_STATIC", where=where, index=index, axis=axis,
                                   name=program.symbolic_dims[symbol].name, size=info.shape[axis])
            checks.append(DimCheck(index, axis, symbol))
    return tuple(checks)


def check_dims(checks: Sequence[DimCheck], dims: Sequence[SymbolicDim], shapes: Sequence[tuple[int, ...]],
               blame: Callable[[int], tuple[str, int]]) -> None:
    """InputError for the first named dim out of its bounds or unlike an earlier one of its name.
    ``shapes``: the inputs' shapes (already checked for rank); ``blame(index)``: the label and
    debug handle of the instruction reading input ``index``."""
    seen: dict[int, tuple[int, int]] = {}  # symbol -> (size, first input giving it)
    for check in checks:
        size = shapes[check.index][check.axis]
        dim = dims[check.symbol]
        if size < dim.lo or (dim.hi >= 0 and size > dim.hi):
            label, handle = blame(check.index)
            raise input_error("INPUT_DIM_RANGE", debug_handle=handle, instruction=label, index=check.index,
                              axis=check.axis, name=dim.name, got=size, bounds=str(dim))
        first = seen.setdefault(check.symbol, (size, check.index))
        if first[0] != size:
            label, handle = blame(check.index)
            raise input_error("INPUT_DIM_AGREE", debug_handle=handle, instruction=label, index=check.index,
                              axis=check.axis, name=dim.name, got=size, first=first[1], expected=first[0])

