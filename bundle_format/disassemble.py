"""Human-readable listings of bytecode functions and values (for tests,
`liteexport inspect` and error messages)."""

from __future__ import annotations

from bundle_format import ptmf


def describe_ivalue(module: ptmf.Module, index: int, depth: int = 0) -> str:
    """A short rendering of ivalue ``index`` (containers shown two levels deep)."""
    v = module.ivalues[index]
    if isinstance(v, ptmf.NoneValue):
        return "None"
    if isinstance(v, (ptmf.IntValue, ptmf.BoolValue, ptmf.DoubleValue)):
        return repr(v.value)
    if isinstance(v, (ptmf.StringValue, ptmf.DeviceValue)):
        return repr(v.value)
    if isinstance(v, ptmf.TensorMetadata):
        return f"Tensor(scalar_type={v.scalar_type}, sizes={list(v.sizes)})"
    if isinstance(v, ptmf.Function):
        return f"Function({v.qn})"
    if depth >= 2:
        return f"<{type(v).__name__}>"
    if isinstance(v, ptmf.ListValue):
        return "[" + ", ".join(describe_ivalue(module, i, depth + 1) for i in v.items) + "]"
    if isinstance(v, ptmf.TupleValue):
        return "(" + ", ".join(describe_ivalue(module, i, depth + 1) for i in v.items) + ")"
    if isinstance(v, ptmf.DictValue):
        return "{" + ", ".join(f"{describe_ivalue(module, k, depth + 1)}: {describe_ivalue(module, x, depth + 1)}"
                               for k, x in zip(v.keys, v.values, strict=True)) + "}"
    return repr(v)


def disassemble_function(fn: ptmf.Function, module: ptmf.Module) -> str:
    """The function's listing: header, schema, one line per instruction, constants, types."""
    lines = [f"function {fn.qn} (registers: {fn.register_size})"]
    if fn.schema is not None:
        args = ", ".join(f"{a.name}: {a.type}" for a in fn.schema.arguments)
        rets = ", ".join(a.type for a in fn.schema.returns)
        lines.append(f"  schema: ({args}) -> {rets}")
    for pc, ins in enumerate(fn.instructions):
        name = ptmf.BytecodeOp(ins.op).name if ins.op in ptmf.BytecodeOp._value2member_map_ else f"<op {ins.op}>"
        lines.append(f"  {pc:4d}  {name:<16} {ins.x:>5} {ins.n:>3}")
    for i, op in enumerate(fn.operators):
        lines.append(f"  operator {i}: {op.name}.{op.overload_name} ({op.num_args_serialized} args)")
    for i, c in enumerate(fn.constants):
        lines.append(f"  constant {i}: {describe_ivalue(module, c)}")
    for i, t in enumerate(fn.type_annotations):
        lines.append(f"  type {i}: {t}")
    return "\n".join(lines)
