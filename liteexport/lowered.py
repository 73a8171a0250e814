"""What lowering hands to packing: plain data, no torch objects."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bundle_format.debug_table import DebugTable
from bundle_format.lowered_bytecode import MethodSignature
from bundle_format.program import Program
from runtime_py.quantized_tensor import QuantizedTensor

__all__ = ["CompiledModule", "MethodSignature"]


@dataclass(frozen=True)
class CompiledModule:
    """The demo backend's output for one module: everything the bundle must carry."""

    qualname: str  # TorchScript qualified name of the original module, e.g. "__torch__.TinyCNN"
    methods: tuple[MethodSignature, ...]
    programs: tuple[Program, ...]  # one per method, same order
    # float32/int64/int32/bool, C-contiguous; Constant.weight indexes this. After --weights fp16
    # some are float16, after --quantize dynamic-int8 some are per-channel qint8 (QuantizedTensor):
    # float32 values stored narrow, which every engine widens when loading
    weights: tuple[np.ndarray | QuantizedTensor, ...]
    debug_table: DebugTable
    notes: tuple[str, ...] = ()  # what the compiler chose not to do, for the user (skipped methods)
