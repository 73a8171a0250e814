"""What lowering hands to packing: plain data, no torch objects."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runtime_py.format.debug_table import DebugTable
from runtime_py.format.program import Program


@dataclass(frozen=True)
class MethodSignature:
    """A lowered method's TorchScript signature (``self`` excluded)."""

    name: str
    arg_names: tuple[str, ...]  # every argument is a Tensor
    returns_tuple: bool  # True: Tuple[Tensor, ...] of num_outputs; False: one Tensor
    num_outputs: int

    @property
    def return_type(self) -> str:
        if not self.returns_tuple:
            return "Tensor"
        return "Tuple[" + ", ".join(["Tensor"] * self.num_outputs) + "]"


@dataclass(frozen=True)
class CompiledModule:
    """The demo backend's output for one module: everything the bundle must carry."""

    qualname: str  # TorchScript qualified name of the original module, e.g. "__torch__.TinyCNN"
    methods: tuple[MethodSignature, ...]
    programs: tuple[Program, ...]  # one per method, same order
    weights: tuple[np.ndarray, ...]  # float32, C-contiguous; Constant.weight indexes this
    debug_table: DebugTable
