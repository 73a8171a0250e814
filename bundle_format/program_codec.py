"""Program <-> bytes (``schema/demo_program.fbs``): the one adapter to its generated code.

Encoding is deterministic (same Program, same bytes). Decoding treats the bytes as hostile
and reads them in one pass with :mod:`fb_reader` (every table, vector, string and offset
bounds-checked as it is read; it runs on every load, so it avoids the generated readers),
checking the values against the schema's rules (format version, known opcodes and enums,
the attribute type each opcode carries, 2-element int pairs...). Any violation is a
:class:`FormatError` whose ``where`` names the table, index and byte. Slot-range checks are
the executor's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bundle_format import fb_reader as fr
from bundle_format import fb_writer as fw
from bundle_format._generated import demo_program_generated as g
from bundle_format.attr_rows import AttrTable
from bundle_format.attribute_rules import coded_problem
from bundle_format.error_codes import format_error, render
from bundle_format.errors import InternalError
from bundle_format.fb_reader import Buffer, TableReader
from bundle_format.fb_writer import Builder
from bundle_format.program import (
    ATTRIBUTE_TABLES,
    OP_SPECS,
    PROGRAM_FILE_IDENTIFIER,
    READABLE_PROGRAM_VERSIONS,
    READABLE_VERSIONS_TEXT,
    Attributes,
    Constant,
    DType,
    Instruction,
    OpCode,
    Program,
    State,
    SymbolicDim,
    ValueInfo,
    attributes_class,
)

__all__ = ["encode_program", "decode_program"]

# --- the tables' layouts: flatc's reading of schema/demo_program.fbs (_generated/layouts.py) ---
_INSTRUCTION, _VALUE_INFO, _CONSTANT, _PROGRAM, _SYMBOLIC_DIM, _STATE = (
    fr.spec("demo_program", name)
    for name in ("Instruction", "ValueInfo", "Constant", "Program", "SymbolicDim", "State"))
# what the single-pass reader needs of each layout
_INSTRUCTION_L, _VALUE_INFO_L, _CONSTANT_L, _PROGRAM_L, _SYMBOLIC_DIM_L, _STATE_L = (
    fr.layout(spec) for spec in (_INSTRUCTION, _VALUE_INFO, _CONSTANT, _PROGRAM, _SYMBOLIC_DIM, _STATE))
# raw wire values -> members: a dict lookup is ~10x cheaper than calling the enum
_OPCODES = {int(op): op for op in OpCode}

# --- rules shared by encoder and decoder ---

# each opcode's attribute dataclass (schema/demo_ops.toml)
_OP_ATTRIBUTES: dict[OpCode, type | None] = {op: attributes_class(op) for op in OpCode}


# A problem: the code of schema/demo_errors.toml and its fields; None for no problem.
Problem = tuple[str, dict[str, object]] | None


def attribute_problem(op: OpCode, attrs: type | None) -> Problem:
    """Why ``op`` cannot carry attributes of type ``attrs``, or None when it can.

    Each opcode carries the attribute type of its spec entry; one whose attribute type has a
    default for every field (Binary, Gelu, Fused, Conv2d) may also carry none.
    """
    expected = _OP_ATTRIBUTES[op]
    if attrs is expected or (attrs is None and OP_SPECS[op].attrs_optional):
        return None
    wanted = "no attributes" if expected is None else f"{expected.__name__}"
    found = "none" if attrs is None else attrs.__name__
    return "ATTRIBUTE_TYPE", {"op": op.name, "expected": wanted, "found": found}


def _pair_problem(values: tuple[int, ...], name: str) -> Problem:
    return None if len(values) == 2 else ("PAIR_LENGTH", {"field": name, "found": len(values)})


def _outputs_problem(outputs: tuple[int, ...], handles: tuple[int, ...]) -> Problem:
    if len(outputs) == len(handles):
        return None
    return "OUTPUT_HANDLES", {"outputs": len(outputs), "handles": len(handles)}


def _bug(problem: Problem | str) -> None:
    if isinstance(problem, str):
        raise InternalError(f"cannot encode program: {problem}")
    if problem is not None:
        raise InternalError(f"cannot encode program: {render(*problem)}")


def _bad(problem: Problem, path: str, pos: int) -> None:
    if problem is not None:  # the location only then: building it for every check costs more than the check
        raise format_error(problem[0], where=fr.location(path, pos), **problem[1])


# --- encoding ---

# --- the attribute tables: one loop over each table's generated field descriptors ---

# wire kind -> the builder's slot writer, the reader's format
_SLOT_WRITERS = {"i32": "PrependInt32Slot", "i64": "PrependInt64Slot", "f64": "PrependFloat64Slot",
                 "bool": "PrependBoolSlot", "enum": "PrependInt8Slot", "opt_i32": "PrependInt32Slot"}
_SCALAR_FORMATS = {"i32": fr.I32, "i64": fr.I64, "f64": fr.F64, "bool": fr.BOOL, "enum": fr.I8, "opt_i32": fr.I32}
_CONVERT: dict[str, Callable[[Any], object]] = {"f64": float, "bool": bool}
# vector kind -> (element size, builder prepend, reader format)
_VECTORS = {"pair": (4, "PrependInt32", "i"), "i32s": (4, "PrependInt32", "i"), "i64s": (8, "PrependInt64", "q")}
_ENUM_MEMBERS: dict[type, dict[int, Any]] = {
    f.enum: {int(m): m for m in f.enum} for t in ATTRIBUTE_TABLES for f in t.fields if f.enum is not None}  # type: ignore[attr-defined]


def _write_attrs(b: Builder, table: AttrTable, attrs: Any) -> int:
    """The table of ``attrs``: vectors first, then every field in schema order (the bytes flatc's
    generated XStart/XAdd/XEnd calls give)."""
    vectors = {}
    for f in table.fields:
        if f.kind in _VECTORS:
            values = tuple(getattr(attrs, f.name))
            if f.kind == "pair":
                _bug(_pair_problem(values, f"{table.cls.__name__}.{f.name}"))
            size, prepend, _ = _VECTORS[f.kind]
            b.StartVector(size, len(values), size)
            for value in reversed(values):
                getattr(b, prepend)(value)
            vectors[f.slot] = int(b.EndVector())
    b.StartObject(table.num_slots)
    for f in table.fields:
        value = getattr(attrs, f.name)
        if f.slot in vectors:
            b.PrependUOffsetTRelativeSlot(f.slot, vectors[f.slot], 0)
        elif f.kind == "opt_f64":
            if value is not None:
                b.PrependFloat64Slot(f.slot, float(value), 0.0)
                b.PrependBoolSlot(f.flag_slot, True, False)
        elif f.kind == "opt_i32" and value == f.default:
            _bug(f"{table.cls.__name__}.{f.name} {value} cannot be written ({value} means none)")
        else:
            value = f.enum(value) if f.enum is not None else value
            write = getattr(b, _SLOT_WRITERS[f.kind])
            write(f.slot, _CONVERT.get(f.kind, int)(f.default if value is None else value), f.default)
    return int(b.EndObject())


def _read_attrs(r: TableReader, table: AttrTable, pos: int, path: str) -> Attributes:
    """The dataclass of the table at ``pos``, each field checked as it is read."""
    at = r.table(pos, _ATTR_LAYOUTS[table.name], path)
    values: dict[str, object] = {}
    for f in table.fields:
        field_pos, field_path = at[f.slot], f"{path}.{f.name}"
        if f.kind == "pair":
            pair = r.scalars("i", field_pos, field_path)
            _bad(_pair_problem(pair, f.name), field_path, field_pos or pos)
            values[f.name] = (pair[0], pair[1])
        elif f.kind in _VECTORS:
            values[f.name] = r.scalars(_VECTORS[f.kind][2], field_pos, field_path)
        elif f.kind == "opt_f64":
            has = r.scalar(fr.BOOL, at[f.flag_slot], False)
            if field_pos and not has:
                raise format_error("FIELD_WITHOUT_FLAG", where=fr.location(field_path, field_pos), field=f.name,
                                   flag=f.flag)
            values[f.name] = r.scalar(fr.F64, field_pos, 0.0) if has else None
        elif f.kind == "opt_i32":
            raw = r.scalar(fr.I32, field_pos, f.default)
            values[f.name] = None if raw == f.default else raw
        else:
            raw = r.scalar(_SCALAR_FORMATS[f.kind], field_pos, f.default)
            if f.enum is not None:
                member = _ENUM_MEMBERS[f.enum].get(raw)  # type: ignore[call-overload]
                if member is None:
                    raise format_error("UNKNOWN_ENUM", where=fr.location(field_path, field_pos or pos),
                                       enum=f.enum.__name__, value=raw)
                raw = member
            values[f.name] = raw
    attrs: Attributes = table.cls(**values)
    return attrs


# the Attributes union's members: layouts by table name (generated from the fbs), tables by class and tag
_ATTR_SPECS = {t.name: fr.spec("demo_program", t.name) for t in ATTRIBUTE_TABLES}
_ATTR_LAYOUTS = {name: fr.layout(s) for name, s in _ATTR_SPECS.items()}
_BY_CLASS = {t.cls: t for t in ATTRIBUTE_TABLES}
_BY_TAG = {t.tag: t for t in ATTRIBUTE_TABLES}


def _coded_problem(op: OpCode, attrs: Attributes) -> tuple[Problem, str]:
    """The decoder's own attribute rule (schema/demo_ops.toml, ``code``) ``attrs`` break, and its field."""
    found = coded_problem(op.name, attrs)
    return (None, "") if found is None else ((found[0], found[1]), found[2])


# --- Program ---

def encode_program(program: Program) -> bytes:
    """The flatbuffer of ``program`` (identifier ``LXDP``); the same Program gives the same bytes.

    A Program the schema cannot express (wrong attribute type for an opcode, a pair that is not
    2 long, a negative slot...) is a bug of its producer: :class:`InternalError`.
    """
    with fw.encoding("program"):
        b = Builder(1024)
        method = b.CreateString(program.method)
        inputs = [_write_value_info(b, v) for v in program.inputs]
        symbolic = [_write_symbolic_dim(b, d) for d in program.symbolic_dims]
        constants = [_write_constant(b, c) for c in program.constants]
        states = [_write_state(b, s) for s in program.states]
        instructions = [_write_instruction(b, i) for i in program.instructions]
        _bug(_outputs_problem(tuple(program.outputs), tuple(program.output_debug_handles)))
        outputs = fw.write_scalars(b, g.ProgramStartOutputsVector, b.PrependUint32, program.outputs)
        handles = fw.write_scalars(b, g.ProgramStartOutputDebugHandlesVector, b.PrependInt64,
                                   program.output_debug_handles)
        input_vec = fw.write_offsets(b, g.ProgramStartInputsVector, inputs)
        constant_vec = fw.write_offsets(b, g.ProgramStartConstantsVector, constants)
        instruction_vec = fw.write_offsets(b, g.ProgramStartInstructionsVector, instructions)
        symbolic_vec = fw.write_offsets(b, g.ProgramStartSymbolicDimsVector, symbolic) if symbolic else None
        state_vec = fw.write_offsets(b, g.ProgramStartStatesVector, states) if states else None
        slot_dtypes = None
        if program.slot_dtypes:
            _bug(None if len(program.slot_dtypes) == program.num_slots else
                 f"{len(program.slot_dtypes)} slot dtypes for {program.num_slots} slots")
            slot_dtypes = fw.write_scalars(b, g.ProgramStartSlotDtypesVector, b.PrependInt8,
                                           [int(DType(d)) for d in program.slot_dtypes])
        g.ProgramStart(b)
        g.ProgramAddFormatVersion(b, program.format_version)
        g.ProgramAddMethod(b, method)
        g.ProgramAddNumSlots(b, program.num_slots)
        g.ProgramAddInputs(b, input_vec)
        g.ProgramAddConstants(b, constant_vec)
        g.ProgramAddInstructions(b, instruction_vec)
        g.ProgramAddOutputs(b, outputs)
        g.ProgramAddOutputDebugHandles(b, handles)
        if slot_dtypes is not None:
            g.ProgramAddSlotDtypes(b, slot_dtypes)
        if symbolic_vec is not None:
            g.ProgramAddSymbolicDims(b, symbolic_vec)
        if program.working_memory:
            g.ProgramAddWorkingMemory(b, program.working_memory)
        if state_vec is not None:
            g.ProgramAddStates(b, state_vec)
        return fw.finish(b, int(g.ProgramEnd(b)), PROGRAM_FILE_IDENTIFIER)


def _write_value_info(b: Builder, info: ValueInfo) -> int:
    shape = None
    if info.shape is not None:
        shape = fw.write_scalars(b, g.ValueInfoStartShapeVector, b.PrependInt64, info.shape)
    symbols = fw.write_scalars(b, g.ValueInfoStartDimSymbolsVector, b.PrependInt32,
                               info.dim_symbols) if info.dim_symbols else None
    g.ValueInfoStart(b)
    g.ValueInfoAddDtype(b, int(DType(info.dtype)))
    if shape is not None:
        g.ValueInfoAddShape(b, shape)
        g.ValueInfoAddHasShape(b, True)
    if symbols is not None:
        g.ValueInfoAddDimSymbols(b, symbols)
    return int(g.ValueInfoEnd(b))


def _write_symbolic_dim(b: Builder, dim: SymbolicDim) -> int:
    name = b.CreateString(dim.name)
    g.SymbolicDimStart(b)
    g.SymbolicDimAddName(b, name)
    g.SymbolicDimAddMin(b, dim.lo)
    g.SymbolicDimAddMax(b, dim.hi)
    return int(g.SymbolicDimEnd(b))


def _write_state(b: Builder, state: State) -> int:
    name = b.CreateString(state.name)
    shape = fw.write_scalars(b, g.StateStartShapeVector, b.PrependInt64, state.shape)
    g.StateStart(b)
    g.StateAddName(b, name)
    g.StateAddSlot(b, state.slot)
    g.StateAddDtype(b, int(DType(state.dtype)))
    g.StateAddShape(b, shape)
    g.StateAddInitial(b, state.initial)
    return int(g.StateEnd(b))


def _write_constant(b: Builder, constant: Constant) -> int:
    g.ConstantStart(b)
    g.ConstantAddSlot(b, constant.slot)
    g.ConstantAddWeight(b, constant.weight)
    return int(g.ConstantEnd(b))


def _write_instruction(b: Builder, inst: Instruction) -> int:
    op = OpCode(inst.op)
    attrs_cls = None if inst.attributes is None else type(inst.attributes)
    _bug(attribute_problem(op, attrs_cls))
    _bug(_coded_problem(op, inst.attributes)[0])
    codec = None if attrs_cls is None else _BY_CLASS[attrs_cls]
    attrs = None if codec is None else _write_attrs(b, codec, inst.attributes)
    inputs = fw.write_scalars(b, g.InstructionStartInputsVector, b.PrependUint32, inst.inputs)
    outputs = fw.write_scalars(b, g.InstructionStartOutputsVector, b.PrependUint32, inst.outputs)
    g.InstructionStart(b)
    g.InstructionAddOp(b, int(op))
    g.InstructionAddInputs(b, inputs)
    g.InstructionAddOutputs(b, outputs)
    if codec is not None and attrs is not None:
        g.InstructionAddAttributesType(b, codec.tag)
        g.InstructionAddAttributes(b, attrs)
    g.InstructionAddDebugHandle(b, inst.debug_handle)
    return int(g.InstructionEnd(b))


def decode_program(buf: Buffer) -> Program:
    """The Program in ``buf`` (bytes, or a uint8 array viewing a mapped bundle; not copied).

    Raises :class:`FormatError` for anything malformed, and nothing else.
    """
    with fr.hostile_input("program"):
        return _read_program(TableReader(buf))


def _read_program(r: TableReader) -> Program:
    pos = r.root(PROGRAM_FILE_IDENTIFIER, "Program")
    (version, method, num_slots, inputs, constants, instructions, outputs, handles, slot_dtypes,
     symbolic_dims, working_memory, states) = r.table(pos, _PROGRAM_L, "Program")
    found = r.scalar(fr.U32, version, 0)
    if found not in READABLE_PROGRAM_VERSIONS:
        raise format_error("UNSUPPORTED_VERSION", where=fr.location("Program.format_version", version or pos),
                           found=found, supported=READABLE_VERSIONS_TEXT)
    output_slots = r.scalars("I", outputs, "Program.outputs")
    output_handles = r.scalars("q", handles, "Program.output_debug_handles")
    _bad(_outputs_problem(output_slots, output_handles), "Program.output_debug_handles", handles or pos)
    slots: int = r.scalar(fr.U32, num_slots, 0)  # type: ignore[assignment]
    dtypes = tuple(_dtype(raw, fr.location("Program.slot_dtypes", slot_dtypes))
                   for raw in r.scalars("b", slot_dtypes, "Program.slot_dtypes"))
    if dtypes and len(dtypes) != slots:
        raise format_error("SLOT_DTYPES_LENGTH", where=fr.location("Program.slot_dtypes", slot_dtypes),
                           found=len(dtypes), num_slots=slots)
    return Program(
        method=r.required_string(method, "Program.method", pos),
        num_slots=slots,
        slot_dtypes=dtypes,
        inputs=r.each(inputs, "Program.inputs", _read_value_info),
        constants=r.each(constants, "Program.constants", _read_constant),
        instructions=r.each(instructions, "Program.instructions", _read_instruction),
        outputs=output_slots,
        output_debug_handles=output_handles,
        format_version=found,
        symbolic_dims=r.each(symbolic_dims, "Program.symbolic_dims", _read_symbolic_dim),
        working_memory=r.scalar(fr.U64, working_memory, 0),  # type: ignore[arg-type] # an int
        states=r.each(states, "Program.states", _read_state),
    )


def _read_value_info(r: TableReader, pos: int, path: str) -> ValueInfo:
    dtype, shape, has_shape, symbols = r.table(pos, _VALUE_INFO_L, path)
    known = r.scalar(fr.BOOL, has_shape, False)
    if shape and not known:
        raise format_error("FIELD_WITHOUT_FLAG", where=fr.location(f"{path}.shape", shape), field="shape",
                           flag="has_shape")
    raw: int = r.scalar(fr.I8, dtype, int(DType.FLOAT32))  # type: ignore[assignment]
    return ValueInfo(shape=r.scalars("q", shape, f"{path}.shape") if known else None,
                     dtype=_dtype(raw, fr.location(f"{path}.dtype", dtype or pos)),
                     dim_symbols=r.scalars("i", symbols, f"{path}.dim_symbols"))


def _read_symbolic_dim(r: TableReader, pos: int, path: str) -> SymbolicDim:
    name, lo, hi = r.table(pos, _SYMBOLIC_DIM_L, path)
    return SymbolicDim(name=r.required_string(name, f"{path}.name", pos),
                       lo=r.scalar(fr.I64, lo, 0), hi=r.scalar(fr.I64, hi, -1))  # type: ignore[arg-type]


def _dtype(raw: int, where: str) -> DType:
    try:
        return DType(raw)
    except ValueError:
        raise format_error("UNKNOWN_ENUM", where=where, enum="DType", value=raw) from None


def _read_state(r: TableReader, pos: int, path: str) -> State:
    name, slot, dtype, shape, initial = r.table(pos, _STATE_L, path)
    raw: int = r.scalar(fr.I8, dtype, int(DType.FLOAT32))  # type: ignore[assignment]
    return State(name=r.required_string(name, f"{path}.name", pos), slot=r.scalar(fr.U32, slot, 0),  # type: ignore[arg-type]
                 dtype=_dtype(raw, fr.location(f"{path}.dtype", dtype or pos)),
                 shape=r.scalars("q", shape, f"{path}.shape"), initial=r.scalar(fr.I32, initial, -1))  # type: ignore[arg-type]


def _read_constant(r: TableReader, pos: int, path: str) -> Constant:
    slot, weight = r.table(pos, _CONSTANT_L, path)
    return Constant(slot=r.scalar(fr.U32, slot, 0), weight=r.scalar(fr.U32, weight, 0))  # type: ignore[arg-type]


def _read_instruction(r: TableReader, pos: int, path: str) -> Instruction:
    op_at, inputs, outputs, tag_at, attributes, handle = r.table(pos, _INSTRUCTION_L, path)
    raw = r.scalar(fr.U16, op_at, 0)
    op: OpCode | None = _OPCODES.get(raw)  # type: ignore[call-overload]
    if op is None:
        raise format_error("UNKNOWN_ENUM", where=fr.location(f"{path}.op", op_at or pos), enum="OpCode", value=raw)
    tag = r.scalar(fr.U8, tag_at, 0)
    codec = _BY_TAG.get(tag)  # type: ignore[call-overload]
    attrs: Attributes = None
    if tag == g.Attributes.NONE:
        if attributes:
            raise format_error("ATTRIBUTES_WITHOUT_TYPE", where=fr.location(f"{path}.attributes", attributes))
        _bad(attribute_problem(op, None), path + ".attributes_type", tag_at or pos)
    else:
        if codec is None or _OP_ATTRIBUTES[op] is not codec.cls:
            problem = ("UNKNOWN_ATTRIBUTE_TYPE", {"tag": tag}) if codec is None else attribute_problem(op, codec.cls)
            _bad(problem, f"{path}.attributes_type", tag_at or pos)
        if not attributes:
            raise format_error("ATTRIBUTES_MISSING", where=fr.location(f"{path}.attributes", pos),
                               table=codec.name)
        attrs_path = path + ".attributes"
        child = r.target(attributes, attrs_path)
        attrs = _read_attrs(r, codec, child, attrs_path)
        problem, field = _coded_problem(op, attrs)
        _bad(problem, f"{attrs_path}.{field}", child)
    return Instruction(
        op=op,
        inputs=r.scalars("I", inputs, path + ".inputs"),
        outputs=r.scalars("I", outputs, path + ".outputs"),
        attributes=attrs,
        debug_handle=r.scalar(fr.I64, handle, 0),  # type: ignore[arg-type]
    )
