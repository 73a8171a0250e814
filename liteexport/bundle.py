"""Pack a CompiledModule into a PTMF bundle laid out as torch's to_backend lowering lays it out.

ivalues: [0] None; per lowered method its constants and the wrapper Function; the
LoweredModule's ``__setstate__`` and ``__getstate__``; the state
``(method_compile_spec, processed_module, True)``; the LoweredModule object
(CLASS_WITH_SETSTATE); last the root LoweredWrapper object (CLASS_WITH_FIELD).
processed_module = {"programs": Dict[str, Tensor(uint8)], "weights": List[Tensor]}:
programs and weights live in the bundle's 16-byte-aligned storage, never in strings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from bundle_format import lowered_bytecode as wb
from bundle_format import ptmf
from bundle_format.debug_table import DEBUG_TABLE_EXTRA_FILE
from bundle_format.debug_table_codec import encode_debug_table
from bundle_format.program_codec import encode_program
from bundle_format.ptmf_writer import BundleTooLargeError, encode_module_chunks
from liteexport.atomic_write import write_atomic
from liteexport.errors import ModelError
from liteexport.lowered import CompiledModule
from runtime_py.quantized_tensor import QuantizedTensor

OPERATOR_VERSION = 1  # what torch 2.13 writes for a lowered module
PROCESSED_PROGRAMS, PROCESSED_WEIGHTS = "programs", "weights"


class _IValues:
    """The module's ivalue table; scalar and string constants are stored once."""

    def __init__(self) -> None:
        self.values: list[ptmf.IValue] = [ptmf.NoneValue()]
        self._interned: dict[ptmf.IValue, int] = {ptmf.NoneValue(): 0}

    def add(self, value: ptmf.IValue) -> int:
        self.values.append(value)
        return len(self.values) - 1

    def constant(self, value: ptmf.IValue) -> int:
        if value not in self._interned:
            self._interned[value] = self.add(value)
        return self._interned[value]

    def function(self, code: wb.FunctionCode) -> int:
        constants = tuple(self.constant(c) for c in code.constants)
        return self.add(ptmf.Function(
            qn=code.qn, instructions=code.instructions, operators=code.operators, constants=constants,
            type_annotations=code.type_annotations, register_size=code.register_size, schema=code.schema,
            # no DebugInfo: the wrapper has no user source behind it (every handle would be -1,
            # 8 bytes per instruction) and readers treat an absent table as no handles
            class_type=code.class_type))


def _tensor(storages: list[np.ndarray], array: np.ndarray, scalar_type: ptmf.ScalarType) -> ptmf.TensorMetadata:
    array = np.ascontiguousarray(array).reshape(array.shape)  # ascontiguousarray makes 0-d arrays 1-d
    strides = tuple(s // array.itemsize for s in array.strides) if array.ndim else ()
    storages.append(array.reshape(-1).view(np.uint8))
    return ptmf.TensorMetadata(storage_location_index=len(storages) - 1, scalar_type=int(scalar_type),
                               storage_offset=0, sizes=tuple(array.shape), strides=strides)


# the weights' dtypes (the compiled ones: schema/demo_ops.toml [dtypes]) -> their c10::ScalarType
# (float16: float32 weights stored narrow, --weights fp16; the engines widen them when loading)
_SCALAR_TYPES = {np.dtype(np.float32): ptmf.ScalarType.FLOAT, np.dtype(np.int64): ptmf.ScalarType.LONG,
                 np.dtype(np.int32): ptmf.ScalarType.INT, np.dtype(np.bool_): ptmf.ScalarType.BOOL,
                 np.dtype(np.float16): ptmf.ScalarType.HALF}


def _weight(storages: list[np.ndarray], weight: np.ndarray | QuantizedTensor, zeros: list[int]) -> ptmf.TensorMetadata:
    """A weight's tensor: plain, or quantized (--quantize dynamic-int8 or int8; a quantized model's
    weights): per tensor with its scale and zero point, or per channel with scales (float64) and
    zero points (int64) as tensors of their own, as torch stores them (zero points that are all 0
    in the one storage of zeros ``zeros`` names, see _zeros)."""
    if not isinstance(weight, QuantizedTensor):
        return _tensor(storages, weight, _SCALAR_TYPES[weight.dtype])
    if weight.scales is None or weight.zero_points is None:
        schema = ptmf.QuantizedSchema(qscheme=ptmf.QScheme.PER_TENSOR_AFFINE, scale=weight.scale,
                                      zero_point=weight.zero_point)
        return dataclasses.replace(_tensor(storages, weight.int_repr, ptmf.ScalarType(weight.scalar_type)),
                                   quantized_schema=schema)
    zero_points = _tensor(storages, weight.zero_points.astype(np.int64), ptmf.ScalarType.LONG) \
        if np.any(weight.zero_points) else _zeros(storages, zeros, len(weight.zero_points))
    schema = ptmf.QuantizedSchema(
        qscheme=ptmf.QScheme.PER_CHANNEL_AFFINE, axis=weight.axis,
        scales=_tensor(storages, weight.scales.astype(np.float64), ptmf.ScalarType.DOUBLE), zero_points=zero_points)
    return dataclasses.replace(_tensor(storages, weight.int_repr, ptmf.ScalarType(weight.scalar_type)),
                               quantized_schema=schema)


def _zeros(storages: list[np.ndarray], zeros: list[int], count: int) -> ptmf.TensorMetadata:
    """``count`` int64 zeros: a view of one storage of zeros, as long as the longest such view,
    shared by every per-channel tensor with all-zero zero points (symmetric int8 weights): 8 bytes a
    channel once rather than per tensor (mobilenet_v2 has 17,000 channels: 136 kB, 3% of its int8
    bundle). ``zeros`` holds that storage's index once there is one. Every reader takes a view
    within a larger storage (torch, runtime_py and the native core check it fits)."""
    if not zeros:
        storages.append(np.zeros(0, np.uint8))
        zeros.append(len(storages) - 1)
    if storages[zeros[0]].size < count * 8:
        storages[zeros[0]] = np.zeros(count * 8, np.uint8)
    return ptmf.TensorMetadata(storage_location_index=zeros[0], scalar_type=int(ptmf.ScalarType.LONG),
                               storage_offset=0, sizes=(count,), strides=(1,))


def pack(compiled: CompiledModule, extra_files: Mapping[str, bytes] | None = None, debug: bool = True) -> ptmf.Module:
    """The PTMF module (plain dataclasses) for ``compiled``; ``extra_files`` are stored
    beside the debug table (sorted by name, so the bytes do not depend on dict order), which
    ``debug=False`` leaves out (errors then name instructions only)."""
    ivalues, storages = _IValues(), list[np.ndarray]()
    methods = [ivalues.function(wb.method_function(compiled.qualname, sig, class_type=0))
               for sig in compiled.methods]
    setstate = ivalues.function(wb.setstate_function(compiled.qualname, class_type=1))
    methods += [setstate, ivalues.function(wb.getstate_function(compiled.qualname, class_type=1))]

    empty_spec = ivalues.add(ptmf.DictValue((ivalues.constant(ptmf.StringValue("")),),
                                            (ivalues.constant(ptmf.StringValue("")),), "Dict[str, str]"))
    names = tuple(ivalues.constant(ptmf.StringValue(sig.name)) for sig in compiled.methods)
    spec = ivalues.add(ptmf.DictValue(names, (empty_spec,) * len(names), "Dict[str, Any]"))
    programs = tuple(ivalues.add(_tensor(storages, np.frombuffer(encode_program(p), np.uint8),
                                         ptmf.ScalarType.BYTE)) for p in compiled.programs)
    zeros: list[int] = []
    weights = tuple(ivalues.add(_weight(storages, w, zeros)) for w in compiled.weights)
    processed = ivalues.add(ptmf.DictValue(
        (ivalues.constant(ptmf.StringValue(PROCESSED_PROGRAMS)), ivalues.constant(ptmf.StringValue(PROCESSED_WEIGHTS))),
        (ivalues.add(ptmf.DictValue(names, programs, "Dict[str, Tensor]")),
         ivalues.add(ptmf.ListValue(weights, "List[Tensor]"))),
        "Dict[str, Any]"))
    state = ivalues.add(ptmf.TupleValue((spec, processed, ivalues.constant(ptmf.BoolValue(True)))))
    lowered = ivalues.add(ptmf.ObjectValue(type_index=1, state=state, setstate_func=setstate))
    root = ivalues.add(ptmf.ObjectValue(type_index=0, attrs=(lowered,)))
    object_types = (
        ptmf.ObjectType(wb.wrapper_type(compiled.qualname), ptmf.TypeType.CLASS_WITH_FIELD, ("__loweredModule__",)),
        ptmf.ObjectType(wb.lowered_type(compiled.qualname), ptmf.TypeType.CLASS_WITH_SETSTATE),
    )
    debug_file = (ptmf.ExtraFile(DEBUG_TABLE_EXTRA_FILE, encode_debug_table(compiled.debug_table)),) if debug else ()
    user_files = tuple(ptmf.ExtraFile(name, data) for name, data in sorted((extra_files or {}).items()))
    return ptmf.Module(
        bytecode_version=ptmf.BYTECODE_VERSION,
        extra_files=debug_file + user_files,
        methods=tuple(methods), state_obj=root, ivalues=tuple(ivalues.values), storage_data=tuple(storages),
        object_types=object_types, operator_version=OPERATOR_VERSION, mobile_ivalue_size=len(ivalues.values))


def pack_chunks(compiled: CompiledModule, extra_files: Mapping[str, bytes] | None = None,
                debug: bool = True) -> list[memoryview]:
    """The bundle's bytes for ``compiled`` in chunks, the weights in their own memory (not copied);
    a bundle over the format's size limit is the model's problem (ModelError, exit 3)."""
    try:
        return encode_module_chunks(pack(compiled, extra_files, debug))
    except BundleTooLargeError as exc:
        raise ModelError(str(exc)) from exc


def write_bundle(compiled: CompiledModule, path: str | Path, extra_files: Mapping[str, bytes] | None = None) -> int:
    """Write the bundle for ``compiled`` to ``path`` atomically; returns its size in bytes."""
    chunks = pack_chunks(compiled, extra_files)
    write_atomic(path, chunks)
    return sum(chunk.nbytes for chunk in chunks)
