"""FAKE_QUANTIZE: float values rounded to a per-tensor int8/uint8 grid and back, the activations
of quantized models (schema/demo_ops.toml's Quantize attributes give the exact rounding)."""

from __future__ import annotations

import numpy as np

from bundle_format.program import QuantizeAttrs
from runtime_py.backends.demo.arrays import Array, Kernel

F32 = np.float32


def make_fake_quantize(attrs: QuantizeAttrs, n_inputs: int) -> Kernel:
    scale = F32(attrs.scale)
    inverse = F32(1) / scale  # as torch's kernels: the float32 inverse of the float32 scale
    low, high, zero = float(attrs.quant_min), float(attrs.quant_max), float(attrs.zero_point)

    def fake_quantize(x: Array) -> Array:
        with np.errstate(invalid="ignore", over="ignore"):
            q = np.rint(x * inverse).astype(np.float64) + zero  # exact: |rint| < 2^24 where it matters
        q = np.clip(np.nan_to_num(q, nan=high, posinf=high, neginf=low), low, high)
        return ((q - zero).astype(F32) * scale).astype(F32)

    return fake_quantize
