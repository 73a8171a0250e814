"""The typed model the native core's tests share: tests/android/test_native_typed.py runs it through
the host tool, native/tests/make_vectors.py (ctest, on the host, under ASan+UBSan and
on ARM) and android_sample/scripts/make_host_test_vectors.py (the Java host tests, through JNI)
record runtime_py's outputs on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from liteexport.bundle import write_bundle
from liteexport.compiler import compile_module
from liteexport.input_spec import TensorSpec


class TypedIO(torch.nn.Module):
    """int64 ids and a bool mask in; float32, int64, int32 and bool out (a cumsum of the mask, a cast,
    a comparison and a where on the way)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.table = torch.nn.Embedding(10, 4)
        self.register_buffer("offsets", torch.arange(3, dtype=torch.int64))

    def forward(self, ids: torch.Tensor,
                mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        positions = torch.cumsum(mask, 0) + self.offsets
        hidden = torch.where(mask[:, None], self.table(ids), torch.zeros(()))
        return hidden, positions, positions.to(torch.int32) * 2, (ids > 4) & mask


# (ids, mask) pairs the tests run it on
INPUTS = [(np.array([1, 7, 9], np.int64), np.array([True, False, True])),
          (np.array([0, 5, 3], np.int64), np.array([False, False, True]))]


def write_typed_io(path: Path) -> Path:
    """TypedIO compiled with its typed input specs (3:int64, 3:bool), written to ``path``."""
    specs = [TensorSpec((3,), "int64"), TensorSpec((3,), "bool")]
    write_bundle(compile_module(torch.jit.script(TypedIO()), input_shapes={"forward": specs}), path)
    return path
