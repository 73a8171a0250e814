"""Quantized tensors (torch's quint8, qint8 and qint32) as runtime_py holds them.

A quantized tensor is its integers plus the affine map to reals: ``real = scale * (q - zero_point)``,
with one (scale, zero_point) for the whole tensor or one pair per index of ``axis``. It is not an
ndarray on purpose: an operator written for float tensors must never see the integers as if they
were the values (``np.asarray`` of one raises), so only the kernels that know quantization run it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bundle_format.ptmf import QUANTIZED_DTYPES, ScalarType

# scalar type -> the name torch prints for it (errors, reprs)
QUANTIZED_TYPE_NAMES: dict[int, str] = {
    ScalarType.QINT8: "QInt8", ScalarType.QUINT8: "QUInt8", ScalarType.QINT32: "QInt32"}


@dataclass(frozen=True, eq=False)
class QuantizedTensor:
    """``int_repr`` holds the integers (int8, uint8 or int32, per ``scalar_type``); per channel
    ``scales`` (float64) and ``zero_points`` (int64) have one entry per index of ``axis``."""

    int_repr: np.ndarray
    scalar_type: int  # ScalarType.QINT8, QUINT8 or QINT32
    scale: float = 1.0
    zero_point: int = 0
    scales: np.ndarray | None = None
    zero_points: np.ndarray | None = None
    axis: int = 0

    def __post_init__(self) -> None:
        expected = QUANTIZED_DTYPES.get(self.scalar_type)
        if expected is None or self.int_repr.dtype != expected:
            raise ValueError(f"quantized tensor of scalar type {self.scalar_type} holding {self.int_repr.dtype}")

    @property
    def per_channel(self) -> bool:
        return self.scales is not None

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.int_repr.shape)

    @property
    def ndim(self) -> int:  # np.ndim (the DIM instruction) reads this
        return int(self.int_repr.ndim)

    @property
    def nbytes(self) -> int:
        """The bytes it holds: its integers and, per channel, its scales and zero points."""
        params = 0 if self.scales is None or self.zero_points is None else self.scales.nbytes + self.zero_points.nbytes
        return int(self.int_repr.nbytes) + int(params)

    @property
    def type_name(self) -> str:
        return QUANTIZED_TYPE_NAMES[self.scalar_type]

    def with_values(self, int_repr: np.ndarray) -> QuantizedTensor:
        """Other integers (same dtype) with this tensor's per-tensor parameters: what a shape
        operator (view, transpose, max pooling...) returns."""
        if self.per_channel:
            raise ValueError("per-channel quantized tensors are only supported as weights of "
                             "quantized::conv2d and quantized::linear")
        return QuantizedTensor(int_repr, self.scalar_type, self.scale, self.zero_point)

    def channel_params(self) -> tuple[np.ndarray, np.ndarray]:
        """(scales, zero_points) broadcastable against ``int_repr`` (per tensor: 0-d arrays)."""
        if self.scales is None or self.zero_points is None:
            return np.array(self.scale, dtype=np.float64), np.array(self.zero_point, dtype=np.int64)
        shape = [1] * self.int_repr.ndim
        shape[self.axis] = -1
        return self.scales.reshape(shape), self.zero_points.reshape(shape)

    def dequantize(self) -> np.ndarray:
        """float32 ``scale * (q - zero_point)`` rounded as torch rounds it: per tensor the integer
        difference times the scale as float32s; per channel the product in double (its scales
        are a double tensor), then rounded to float32."""
        scales, zero_points = self.channel_params()
        diff = self.int_repr.astype(np.int64) - zero_points
        result: np.ndarray = ((diff * scales).astype(np.float32) if self.per_channel
                              else diff.astype(np.float32) * np.float32(self.scale))
        return result

    def __array__(self, *args: Any, **kwargs: Any) -> np.ndarray:
        raise TypeError(f"a quantized tensor ({self.type_name}) is not a float tensor: dequantize it first")

    def __repr__(self) -> str:
        params = (f"scales={self.scales!r}, zero_points={self.zero_points!r}, axis={self.axis}" if self.per_channel
                  else f"scale={self.scale}, zero_point={self.zero_point}")
        return f"QuantizedTensor({self.type_name}, shape={self.shape}, {params})"


# scalar type -> the integers its tensors hold (qmin, qmax)
_QRANGES = {scalar: (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)) for scalar, dtype in QUANTIZED_DTYPES.items()}


def qrange(scalar_type: int) -> tuple[int, int]:
    """The integers a quantized type holds (qmin, qmax)."""
    return _QRANGES[scalar_type]
