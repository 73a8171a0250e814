"""Index-level checks of a decoded PTMF module: every index a runtime will follow is in range.

The flatbuffer layer (offsets, lengths, union tags) is checked while decoding; this
checks what the format leaves to convention: ivalue, storage, object-type, constant,
operator, register and jump indexes, tensor extents within their storage, and that
no value contains itself. The indexes inside a function's instructions (:func:`check_code`)
are checked when the instructions are decoded, which for a file is when they are first used
(``ptmf.LazyInstructions``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from operator import attrgetter
from typing import Any

import numpy as np

from bundle_format import ptmf
from bundle_format.errors import FormatError
from bundle_format.ptmf import BytecodeOp

_REGISTER_OPS = {BytecodeOp.LOAD, BytecodeOp.MOVE, BytecodeOp.STORE, BytecodeOp.DROPR}
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


# Dict keys hash in a few steps: a value that holds no other, or a short tuple of them (a pickle
# or a bundle can insert one key many times, so a long key would cost its length each time).
MAX_KEY_TUPLE = 16
_FLAT_KEYS = {ptmf.NoneValue, ptmf.IntValue, ptmf.DoubleValue, ptmf.BoolValue, ptmf.StringValue,
              ptmf.ComplexDoubleValue, ptmf.TensorMetadata, ptmf.DeviceValue}
# How many items a walk of the whole file may meet beyond the file's own items (_check_expansion).
EXPANSION_SLACK = 1 << 16

# kind of ivalue -> the ivalue indexes it holds (looked up by type: one dict lookup per ivalue)
_CHILDREN: dict[type, Callable[[Any], tuple[int, ...]]] = {
    ptmf.ListValue: attrgetter("items"), ptmf.TupleValue: attrgetter("items"),
    ptmf.DictValue: lambda v: v.keys + v.values, ptmf.ObjectValue: lambda v: (v.state,) + v.attrs,
    ptmf.EnumValue: lambda v: (v.value,),
}


# the kinds a walk of a value (hash, ==, printing) goes into: containers, not objects
_EXPANDING: dict[type, Callable[[Any], tuple[int, ...]]] = {
    kind: _CHILDREN[kind] for kind in (ptmf.ListValue, ptmf.TupleValue, ptmf.DictValue, ptmf.EnumValue)}


def ivalue_children(value: ptmf.IValue) -> tuple[int, ...]:
    """The ivalue indexes ``value`` holds (a container's items, an object's state and attributes...)."""
    children = _CHILDREN.get(type(value))
    return children(value) if children is not None else ()


def _check_tensor(t: ptmf.TensorMetadata, module: ptmf.Module, where: str) -> None:
    _index(t.storage_location_index, len(module.storage_data), "storage index", where)
    dtype = ptmf.storage_dtype(t.scalar_type)
    if dtype is None:
        raise FormatError(f"unsupported tensor scalar type {t.scalar_type}", where=where)
    _check_quantization(t, module, where)
    if len(t.sizes) != len(t.strides):
        raise FormatError(f"tensor has {len(t.sizes)} sizes but {len(t.strides)} strides", where=where)
    if t.storage_offset < 0 or min(t.sizes, default=0) < 0 or min(t.strides, default=0) < 0:
        raise FormatError("tensor has a negative size, stride or storage offset", where=where)
    numel = 1
    for i, size in enumerate(t.sizes):
        numel *= max(size, 1)
        if numel > MAX_TENSOR_ELEMENTS:
            raise FormatError(f"tensor sizes {tuple(t.sizes)[:8]} describe more than {MAX_TENSOR_ELEMENTS} "
                              f"elements (at dimension {i})", where=where)
    if max(t.strides, default=0) > MAX_TENSOR_ELEMENTS or t.storage_offset > MAX_TENSOR_ELEMENTS:
        raise FormatError(f"tensor stride or storage offset larger than {MAX_TENSOR_ELEMENTS}", where=where)
    storage_elems = module.storage_data[t.storage_location_index].nbytes // dtype.itemsize
    if 0 not in t.sizes:
        last = t.storage_offset + sum((size - 1) * stride for size, stride in zip(t.sizes, t.strides, strict=True))
        if last >= storage_elems:
            raise FormatError(f"tensor reaches element {last} of a storage of {storage_elems} elements",
                              where=where)


# the quantization schemes runtime_py reads (torch's lite models hold these two)
_QSCHEMES = {ptmf.QScheme.PER_TENSOR_AFFINE: "per-tensor affine", ptmf.QScheme.PER_CHANNEL_AFFINE: "per-channel affine"}


def _check_quantization(t: ptmf.TensorMetadata, module: ptmf.Module, where: str) -> None:
    """A quantized scalar type comes with a schema runtime_py can apply, and only it does: per
    tensor a positive finite scale and a zero point in the type's range, per channel one float
    scale and one integer zero point per index of a dimension the tensor has."""
    quantized = t.scalar_type in ptmf.QUANTIZED_DTYPES
    q = t.quantized_schema
    if q is None:
        if quantized:
            raise FormatError(f"quantized tensor (scalar type {t.scalar_type}) without a quantized schema", where=where)
        return
    if not quantized:
        raise FormatError(f"tensor of scalar type {t.scalar_type} has a quantized schema", where=where)
    if q.qscheme not in _QSCHEMES:
        raise FormatError(f"quantization scheme {q.qscheme} is not supported by runtime_py (it reads "
                          f"{' and '.join(_QSCHEMES.values())} tensors)", where=where)
    if q.qscheme == ptmf.QScheme.PER_TENSOR_AFFINE:
        info = np.iinfo(ptmf.QUANTIZED_DTYPES[t.scalar_type])
        if not (math.isfinite(q.scale) and q.scale > 0 and info.min <= q.zero_point <= info.max):
            raise FormatError(f"quantized tensor with scale {q.scale} and zero point {q.zero_point}", where=where)
        return
    if q.scales is None or q.zero_points is None:
        raise FormatError("per-channel quantized tensor without scales or zero points", where=where)
    if not 0 <= q.axis < len(t.sizes):
        raise FormatError(f"per-channel quantization axis {q.axis} of a {len(t.sizes)}-d tensor", where=where)
    for name, params, kinds in (("scales", q.scales, "f"), ("zero_points", q.zero_points, "iu")):
        _check_tensor(params, module, f"{where}.{name}")
        dtype = ptmf.NUMPY_DTYPES.get(params.scalar_type)
        if dtype is None or dtype.kind not in kinds or params.sizes != (t.sizes[q.axis],):
            raise FormatError(f"per-channel {name} of scalar type {params.scalar_type} and sizes "
                              f"{params.sizes[:4]}, for {t.sizes[q.axis]} channels", where=where)


# opcode -> what its X indexes (one dict lookup per instruction finds the check to make)
_X_INDEXES: dict[int, str] = {
    BytecodeOp.OP: "operator index", BytecodeOp.OPN: "operator index", BytecodeOp.LOADC: "constant index",
    BytecodeOp.INTERFACE_CALL: "constant index", BytecodeOp.LOAD: "register", BytecodeOp.MOVE: "register",
    BytecodeOp.STORE: "register", BytecodeOp.DROPR: "register", BytecodeOp.CREATE_OBJECT: "type index",
    BytecodeOp.LIST_CONSTRUCT: "type index", BytecodeOp.DICT_CONSTRUCT: "type index"}


def _check_function(f: ptmf.Function, module: ptmf.Module, where: str) -> None:
    n = len(module.ivalues)
    if f.constants and not (min(f.constants) >= 0 and max(f.constants) < n):
        for i, c in enumerate(f.constants):
            _index(c, n, "constant ivalue index", f"{where}.constants[{i}]")
    if f.register_size < 0:
        raise FormatError(f"negative register_size {f.register_size}", where=where)
    if f.debug_handles is not None and len(f.debug_handles) != len(f.instructions):
        raise FormatError(f"{len(f.debug_handles)} debug handles for {len(f.instructions)} instructions",
                          where=where)
    code, limits = f.instructions, ptmf.code_limits(f)
    # instructions read from a file are checked against the limits read with them when first
    # decoded; others (built in memory, or with tables replaced since) are checked now
    if not (isinstance(code, ptmf.LazyInstructions) and code.limits == limits):
        check_code(tuple(code), limits, where)


def check_code(instructions: tuple[ptmf.Instruction, ...], limits: ptmf.CodeLimits, where: str) -> None:
    """Raise FormatError unless every index the instructions hold is inside the function's own
    tables (operators, constants, registers, types) or, for jumps, its code."""
    bounds = {"operator index": limits.operators, "constant index": limits.constants,
              "register": limits.register_size + 1, "type index": limits.types}
    highest_register = 0
    for pc, (op, x, n_) in enumerate(instructions):
        what = _X_INDEXES.get(op)
        if what is not None:
            if not 0 <= x < bounds[what]:
                _index(x, bounds[what], what, f"{where}.instructions[{pc}]")
            if op in _REGISTER_OPS and x > highest_register:
                highest_register = x
        elif op == BytecodeOp.STOREN:
            at = f"{where}.instructions[{pc}]"
            _index(x, limits.register_size + 1, "register", at)
            _index(x + n_ - 1, limits.register_size + 1, "register", at)
            highest_register = max(highest_register, x + n_ - 1)
        elif op == BytecodeOp.JF or op == BytecodeOp.JMP:
            _index(pc + x, len(instructions), "jump target", f"{where}.instructions[{pc}]")
        elif op == BytecodeOp.ISINSTANCE:
            _index(x + max(n_, 1) - 1, limits.types, "type index", f"{where}.instructions[{pc}]")
    if limits.register_size > highest_register + REGISTER_SLACK:
        raise FormatError(f"register_size {limits.register_size} is far above the highest register the "
                          f"instructions use ({highest_register})", where=f"{where}.register_size")


def _check_acyclic(module: ptmf.Module) -> list[int]:
    """No container or object may (transitively) contain itself; iterative, so no recursion limit.
    Returns the ivalue indexes children first."""
    state = [0] * len(module.ivalues)  # 0 unvisited, 1 on the current path, 2 done
    order: list[int] = []
    for root in range(len(module.ivalues)):
        if state[root]:
            continue
        stack = [(root, iter(ivalue_children(module.ivalues[root])))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                order.append(node)
                stack.pop()
            elif state[child] == 1:
                raise FormatError(f"ivalue {child} contains itself", where=f"Module.ivalues[{node}]")
            elif state[child] == 0:
                state[child] = 1
                stack.append((child, iter(ivalue_children(module.ivalues[child]))))
    return order


def _check_expansion(module: ptmf.Module, order: range | list[int], edges: int) -> None:
    """Hashing, comparing or printing a container walks it as a tree: a value shared by several
    items is walked once per item. Sixty tuples each holding the next one twice take 2**60 steps,
    so every container's tree may hold at most as many items as the whole file has, plus a slack.
    Objects stop the walk (they hash and compare by identity). ``order``: children first."""
    limit = EXPANSION_SLACK + edges
    ivalues = module.ivalues
    sizes = [1] * len(ivalues)
    for i in order:
        children = _EXPANDING.get(type(ivalues[i]))
        if children is not None:
            size = 1 + sum([sizes[c] for c in children(ivalues[i])])
            if size > limit:
                raise FormatError(f"container expands to more than {limit} items when walked (it holds "
                                  "shared values many times over): hashing or comparing it would not end",
                                  where=f"Module.ivalues[{i}]")
            sizes[i] = size


def verify_module(module: ptmf.Module) -> None:
    """Raise FormatError unless every index in ``module`` is in range."""
    if module.bytecode_version != ptmf.BYTECODE_VERSION:
        raise FormatError(
            f"unsupported bytecode version {module.bytecode_version}: flatbuffer bundles must be "
            f"version {ptmf.BYTECODE_VERSION}", where="Module.bytecode_version")
    ivalues = module.ivalues
    n = len(ivalues)
    if n == 0:
        raise FormatError("the module has no ivalues", where="Module.ivalues")
    _index(module.state_obj, n, "state_obj ivalue index", "Module.state_obj")
    if not isinstance(ivalues[module.state_obj], ptmf.ObjectValue):
        raise FormatError("state_obj is not an Object", where="Module.state_obj")
    for i, m in enumerate(module.methods):
        _index(m, n, "method ivalue index", f"Module.methods[{i}]")
        if not isinstance(ivalues[m], ptmf.Function):
            raise FormatError(f"method {i} is not a Function", where=f"Module.methods[{i}]")
    # Both writers put a value's children before it; then no value can contain itself, and the
    # full cycle search is needed only for a file that does not.
    ordered = True
    edges = 0
    for i, value in enumerate(ivalues):
        kind = type(value)
        children = _CHILDREN.get(kind)
        if children is not None and (items := children(value)):
            low, high = min(items), max(items)
            if low < 0 or high >= n:
                for child in items:
                    _index(child, n, "ivalue index", f"Module.ivalues[{i}]")
            ordered = ordered and high < i
            edges += len(items)
        check = _VALUE_CHECKS.get(kind)
        if check is not None:
            check(value, module, f"Module.ivalues[{i}]")
    _check_expansion(module, range(n) if ordered else _check_acyclic(module), edges)


def _check_value_function(value: ptmf.Function, module: ptmf.Module, where: str) -> None:
    _check_function(value, module, where)
    _index(value.class_type, max(len(module.object_types), 1), "class type", where)
    n = len(module.ivalues)
    for j, arg in enumerate((value.schema.arguments + value.schema.returns) if value.schema else ()):
        if not 0 <= arg.default_value < n:
            _index(arg.default_value, n, "default value ivalue index", f"{where}.schema.arguments[{j}]")


def _check_object(value: ptmf.ObjectValue, module: ptmf.Module, where: str) -> None:
    _index(value.type_index, len(module.object_types), "object type index", where)
    kind = module.object_types[value.type_index].type
    if kind == ptmf.TypeType.CLASS_WITH_SETSTATE:
        _index(value.setstate_func, len(module.ivalues), "setstate function index", where)
        if not isinstance(module.ivalues[value.setstate_func], ptmf.Function):
            raise FormatError("setstate_func is not a Function", where=where)


def _check_dict(value: ptmf.DictValue, module: ptmf.Module, where: str) -> None:
    if len(value.keys) != len(value.values):
        raise FormatError(f"dict has {len(value.keys)} keys but {len(value.values)} values", where=where)
    ivalues, n = module.ivalues, len(module.ivalues)
    for j, key in enumerate(value.keys):
        # an index out of range is reported by verify_module's own loop
        if 0 <= key < n and not _is_flat_key(ivalues[key], ivalues):
            raise FormatError(f"dict key of kind {type(ivalues[key]).__name__}: keys must be numbers, strings, "
                              f"tensors or tuples of at most {MAX_KEY_TUPLE} of them (each insertion hashes the key)",
                              where=f"{where}.keys[{j}]")


def _is_flat_key(key: ptmf.IValue, ivalues: tuple[ptmf.IValue, ...]) -> bool:
    if type(key) in _FLAT_KEYS:
        return True
    return (isinstance(key, ptmf.TupleValue) and len(key.items) <= MAX_KEY_TUPLE
            and all(0 <= i < len(ivalues) and type(ivalues[i]) in _FLAT_KEYS for i in key.items))


# kind of ivalue -> what else to check of it
_VALUE_CHECKS: dict[type, Callable[[Any, ptmf.Module, str], None]] = {
    ptmf.TensorMetadata: _check_tensor, ptmf.Function: _check_value_function, ptmf.ObjectValue: _check_object,
    ptmf.DictValue: _check_dict,
}
