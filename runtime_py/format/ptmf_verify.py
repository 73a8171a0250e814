"""Index-level checks of a decoded PTMF module: every index a runtime will follow is in range.

The flatbuffer layer (offsets, lengths, union tags) is checked while decoding; this
checks what the format leaves to convention: ivalue, storage, object-type, constant,
operator, register and jump indexes, tensor extents within their storage, and that
no value contains itself.
"""

from __future__ import annotations

from runtime_py.errors import FormatError
from runtime_py.format import ptmf
from runtime_py.format.ptmf import OpCode

_REGISTER_OPS = {OpCode.LOAD, OpCode.MOVE, OpCode.STORE, OpCode.DROPR}
# A tensor's elements, counting only its non-zero sizes: bounds what numpy is asked to shape
# (a zero-element tensor with gigantic other sizes, or sizes whose product overflows int64).
MAX_TENSOR_ELEMENTS = 2 ** 48
# torch writes register_size = the highest register an instruction uses; allow a little slack,
# not a gigantic register file allocated on every call.
REGISTER_SLACK = 16


def _index(value: int, limit: int, what: str, where: str) -> None:
    if not 0 <= value < limit:
        raise FormatError(f"{what} {value} out of range (0..{limit - 1})" if limit else
                          f"{what} {value} refers into an empty table", where=where)


def _children(value: ptmf.IValue) -> tuple[int, ...]:
    if isinstance(value, (ptmf.ListValue, ptmf.TupleValue)):
        return value.items
    if isinstance(value, ptmf.DictValue):
        return value.keys + value.values
    if isinstance(value, ptmf.ObjectValue):
        return (value.state,) + value.attrs
    if isinstance(value, ptmf.EnumValue):
        return (value.value,)
    return ()


def _check_tensor(t: ptmf.TensorMetadata, module: ptmf.Module, where: str) -> None:
    _index(t.storage_location_index, len(module.storage_data), "storage index", where)
    dtype = ptmf.NUMPY_DTYPES.get(t.scalar_type)
    if dtype is None:
        raise FormatError(f"unsupported tensor scalar type {t.scalar_type}", where=where)
    if len(t.sizes) != len(t.strides):
        raise FormatError(f"tensor has {len(t.sizes)} sizes but {len(t.strides)} strides", where=where)
    if t.storage_offset < 0 or any(s < 0 for s in t.sizes) or any(s < 0 for s in t.strides):
        raise FormatError("tensor has a negative size, stride or storage offset", where=where)
    numel = 1
    for i, size in enumerate(t.sizes):
        numel *= max(size, 1)
        if numel > MAX_TENSOR_ELEMENTS:
            raise FormatError(f"tensor sizes {tuple(t.sizes)[:8]} describe more than {MAX_TENSOR_ELEMENTS} "
                              f"elements (at dimension {i})", where=where)
    if any(s > MAX_TENSOR_ELEMENTS for s in t.strides) or t.storage_offset > MAX_TENSOR_ELEMENTS:
        raise FormatError(f"tensor stride or storage offset larger than {MAX_TENSOR_ELEMENTS}", where=where)
    storage_elems = module.storage_data[t.storage_location_index].nbytes // dtype.itemsize
    if 0 not in t.sizes:
        last = t.storage_offset + sum((size - 1) * stride for size, stride in zip(t.sizes, t.strides, strict=True))
        if last >= storage_elems:
            raise FormatError(f"tensor reaches element {last} of a storage of {storage_elems} elements",
                              where=where)


def _check_function(f: ptmf.Function, module: ptmf.Module, where: str) -> None:
    for i, c in enumerate(f.constants):
        _index(c, len(module.ivalues), "constant ivalue index", f"{where}.constants[{i}]")
    if f.register_size < 0:
        raise FormatError(f"negative register_size {f.register_size}", where=where)
    if f.debug_handles is not None and len(f.debug_handles) != len(f.instructions):
        raise FormatError(f"{len(f.debug_handles)} debug handles for {len(f.instructions)} instructions",
                          where=where)
    highest_register = 0
    for pc, ins in enumerate(f.instructions):
        at = f"{where}.instructions[{pc}]"
        if ins.op in _REGISTER_OPS:
            highest_register = max(highest_register, ins.x)
        elif ins.op == OpCode.STOREN:
            highest_register = max(highest_register, ins.x + ins.n - 1)
        if ins.op in (OpCode.OP, OpCode.OPN):
            _index(ins.x, len(f.operators), "operator index", at)
        elif ins.op == OpCode.LOADC or ins.op == OpCode.INTERFACE_CALL:
            _index(ins.x, len(f.constants), "constant index", at)
        elif ins.op in _REGISTER_OPS:
            _index(ins.x, f.register_size + 1, "register", at)
        elif ins.op == OpCode.STOREN:
            _index(ins.x, f.register_size + 1, "register", at)
            _index(ins.x + ins.n - 1, f.register_size + 1, "register", at)
        elif ins.op in (OpCode.JF, OpCode.JMP):
            _index(pc + ins.x, len(f.instructions), "jump target", at)
        elif ins.op in (OpCode.CREATE_OBJECT, OpCode.LIST_CONSTRUCT, OpCode.DICT_CONSTRUCT):
            _index(ins.x, len(f.type_annotations), "type index", at)
        elif ins.op == OpCode.ISINSTANCE:
            _index(ins.x + max(ins.n, 1) - 1, len(f.type_annotations), "type index", at)
    if f.register_size > highest_register + REGISTER_SLACK:
        raise FormatError(f"register_size {f.register_size} is far above the highest register the instructions "
                          f"use ({highest_register})", where=f"{where}.register_size")


def _check_acyclic(module: ptmf.Module) -> None:
    """No container or object may (transitively) contain itself; iterative, so no recursion limit."""
    state = [0] * len(module.ivalues)  # 0 unvisited, 1 on the current path, 2 done
    for root in range(len(module.ivalues)):
        if state[root]:
            continue
        stack = [(root, iter(_children(module.ivalues[root])))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state[child] == 1:
                raise FormatError(f"ivalue {child} contains itself", where=f"Module.ivalues[{node}]")
            elif state[child] == 0:
                state[child] = 1
                stack.append((child, iter(_children(module.ivalues[child]))))


def verify_module(module: ptmf.Module) -> None:
    """Raise FormatError unless every index in ``module`` is in range."""
    if module.bytecode_version != ptmf.BYTECODE_VERSION:
        raise FormatError(
            f"unsupported bytecode version {module.bytecode_version}: flatbuffer bundles must be "
            f"version {ptmf.BYTECODE_VERSION}", where="Module.bytecode_version")
    n = len(module.ivalues)
    if n == 0:
        raise FormatError("the module has no ivalues", where="Module.ivalues")
    _index(module.state_obj, n, "state_obj ivalue index", "Module.state_obj")
    if not isinstance(module.ivalues[module.state_obj], ptmf.ObjectValue):
        raise FormatError("state_obj is not an Object", where="Module.state_obj")
    for i, m in enumerate(module.methods):
        _index(m, n, "method ivalue index", f"Module.methods[{i}]")
        if not isinstance(module.ivalues[m], ptmf.Function):
            raise FormatError(f"method {i} is not a Function", where=f"Module.methods[{i}]")
    for i, value in enumerate(module.ivalues):
        where = f"Module.ivalues[{i}]"
        for child in _children(value):
            _index(child, n, "ivalue index", where)
        if isinstance(value, ptmf.TensorMetadata):
            _check_tensor(value, module, where)
        elif isinstance(value, ptmf.Function):
            _check_function(value, module, where)
            _index(value.class_type, max(len(module.object_types), 1), "class type", where)
            for j, arg in enumerate((value.schema.arguments + value.schema.returns) if value.schema else ()):
                _index(arg.default_value, n, "default value ivalue index", f"{where}.schema.arguments[{j}]")
        elif isinstance(value, ptmf.ObjectValue):
            _index(value.type_index, len(module.object_types), "object type index", where)
            kind = module.object_types[value.type_index].type
            if kind == ptmf.TypeType.CLASS_WITH_SETSTATE:
                _index(value.setstate_func, n, "setstate function index", where)
                if not isinstance(module.ivalues[value.setstate_func], ptmf.Function):
                    raise FormatError("setstate_func is not a Function", where=where)
        elif isinstance(value, ptmf.DictValue) and len(value.keys) != len(value.values):
            raise FormatError(f"dict has {len(value.keys)} keys but {len(value.values)} values", where=where)
    _check_acyclic(module)
