"""The op spec's dtype rules (schema/demo_ops.toml: ``dtypes``, ``operand_dtypes``, ``result``),
checked by one function: the compiler infers every slot's dtype with it and the runtimes check
programs against it (native_format/decoder/demo_program.h implements the same from the generated
C++ table).
"""

from __future__ import annotations

from collections.abc import Sequence

from bundle_format.program import DTYPE_NAMES, DTYPES_BY_NAME, OP_SPECS, CastAttrs, DType, OpCode

_WIDENED = {DType.BOOL: DType.INT64, DType.INT32: DType.INT64}


class DTypeProblem(Exception):
    """An instruction's operands do not fit its op's dtype rule: ``code`` is the demo_errors code
    (OPERAND_DTYPE) and ``fields`` its fields."""

    def __init__(self, code: str, **fields: object) -> None:
        super().__init__(code)
        self.code = code
        self.fields = fields


def operand_name(op: OpCode, index: int) -> str:
    names = OP_SPECS[op].operands
    return names[min(index, len(names) - 1)] if names else f"input {index}"


def allowed_dtypes(op: OpCode, index: int) -> tuple[DType, ...]:
    """The dtypes operand ``index`` of ``op`` may have."""
    spec = OP_SPECS[op]
    names = spec.operand_dtypes.get(operand_name(op, index), spec.dtypes)
    return tuple(DTYPES_BY_NAME[n] for n in names)


def result_dtype(op: OpCode, operands: Sequence[DType], attrs: object) -> DType:
    """The dtype of ``op``'s result from its operands' dtypes (absent optional operands left out),
    or DTypeProblem naming the first operand that does not fit."""
    spec = OP_SPECS[op]
    shared: DType | None = None
    for index, dtype in enumerate(operands):
        name = operand_name(op, index)
        allowed = allowed_dtypes(op, index)
        own = name in spec.operand_dtypes
        # the shared operands have one dtype (T): the first one fixes it for the others
        if dtype not in allowed or (not own and shared is not None and dtype != shared):
            wanted = allowed if own or shared is None else (shared,)
            raise DTypeProblem("OPERAND_DTYPE", index=index, name=name, got=DTYPE_NAMES[DType(dtype)],
                               op=op.name, allowed=" or ".join(DTYPE_NAMES[d] for d in wanted))
        if not own and shared is None:
            shared = DType(dtype)
    rule = spec.result
    if rule in DTYPES_BY_NAME:
        return DTYPES_BY_NAME[rule]
    if rule == "attr":
        assert isinstance(attrs, CastAttrs)  # the spec ties "attr" to the Cast table
        return DType(attrs.dtype)
    # no shared operand at all would be a spec error (every op with "same" has one)
    assert shared is not None, f"{op.name}: no operand carries the op's dtype"
    return _WIDENED.get(shared, shared) if rule == "widen_int" else shared
