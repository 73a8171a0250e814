"""Typed input specifications: what ``--input-shape forward:1xS:int64,1xS:int64 --dim S=1..128``
says, parsed into frozen dataclasses the compiler and the self-check take.

``1x3x224x224`` is a float32 tensor of that shape; ``1xS:int64`` an int64 tensor whose second
dim is the named dim S; ``S=1..128`` bounds a named dim (inclusive). Dtypes are the compiled
ones: float32, int64, int32, bool. Plain int tuples stay accepted everywhere as float32 shapes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from runtime_py.errors import InputError

DTYPES = ("float32", "int64", "int32", "bool")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class InputSpecError(ValueError):
    """A specification that does not parse; the message quotes the text and says what is wrong."""


@dataclass(frozen=True)
class TensorSpec:
    """One input: sizes (an int, -1 for "any", or a dim name) and a dtype name."""

    shape: tuple[int | str, ...]
    dtype: str = "float32"

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise InputSpecError(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        for size in self.shape:
            if isinstance(size, bool) or not (isinstance(size, str) and _NAME.fullmatch(size)
                                              or isinstance(size, int) and size >= -1):
                raise InputSpecError(f"size {size!r} of {self.shape} is neither a size >= 0 (or -1) nor a name")

    @property
    def static_shape(self) -> tuple[int, ...]:
        """The shape with every named dim as -1 (known at run time)."""
        return tuple(-1 if isinstance(size, str) else size for size in self.shape)

    @property
    def dim_names(self) -> tuple[str, ...]:
        return tuple(size for size in self.shape if isinstance(size, str))

    def __str__(self) -> str:
        return "x".join(str(size) for size in self.shape) + ("" if self.dtype == "float32" else f":{self.dtype}")


@dataclass(frozen=True)
class DimRange:
    """A named dim's inclusive bounds: ``S=1..128``."""

    name: str
    lo: int
    hi: int

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise InputSpecError(f"dim name {self.name!r} must be a name (letters, digits, _)")
        if not 0 <= self.lo <= self.hi:
            raise InputSpecError(f"dim {self.name}: bounds {self.lo}..{self.hi} must satisfy 0 <= lo <= hi")

    def __str__(self) -> str:
        return f"{self.name}={self.lo}..{self.hi}"


def parse_tensor_spec(text: str) -> TensorSpec:
    """``1xS:int64`` -> TensorSpec((1, "S"), "int64"); ``1x3x8x8`` -> float32; ``:bool`` alone is a
    0-d bool tensor."""
    body, colon, dtype = text.strip().partition(":")
    if colon and dtype not in DTYPES:
        raise InputSpecError(f"{text!r}: dtype {dtype!r} is not one of {', '.join(DTYPES)}")
    sizes: list[int | str] = []
    for part in body.split("x") if body else []:
        part = part.strip()
        if re.fullmatch(r"-?\d+", part):
            sizes.append(int(part))
        elif _NAME.fullmatch(part):
            sizes.append(part)
        else:
            raise InputSpecError(f"{text!r}: size {part!r} is neither a number nor a dim name "
                                 "(write sizes as 1x3x224x224, a named dim as 1xS)")
    try:
        return TensorSpec(tuple(sizes), dtype if colon else "float32")
    except InputSpecError as exc:
        raise InputSpecError(f"{text!r}: {exc}") from None


def parse_tensor_specs(text: str) -> tuple[TensorSpec, ...]:
    """A method's inputs, comma-separated: ``1xS:int64,1xS:int64``."""
    if not text.strip():
        raise InputSpecError("no input shapes given")
    return tuple(parse_tensor_spec(part) for part in text.split(","))


def parse_dim_range(text: str) -> DimRange:
    """``S=1..128`` -> DimRange("S", 1, 128)."""
    match = re.fullmatch(r"\s*([^=\s]+)\s*=\s*(\d+)\s*\.\.\s*(\d+)\s*", text)
    if match is None:
        raise InputSpecError(f"{text!r}: expected NAME=LO..HI, e.g. S=1..128")
    try:
        return DimRange(match.group(1), int(match.group(2)), int(match.group(3)))
    except InputSpecError as exc:
        raise InputSpecError(f"{text!r}: {exc}") from None


def as_tensor_spec(value: TensorSpec | Sequence[int]) -> TensorSpec:
    """A TensorSpec, or a plain shape (ints) as a float32 TensorSpec."""
    if isinstance(value, TensorSpec):
        return value
    return TensorSpec(tuple(int(size) for size in value))


def example_array(value: Any, where: str) -> np.ndarray:
    """An example (or calibration) input, a torch tensor or a numpy array, as the array the export
    runs: an InputError naming ``where`` (e.g. "example_inputs of forward, set 0, input 1") for a
    value that is none (a sparse, nested, quantized or non-CPU tensor) or of a dtype no compiled
    program takes (:func:`check_example_dtype`)."""
    if hasattr(value, "detach"):  # a torch tensor (duck-typed: this module does not import torch)
        layout = str(getattr(value, "layout", "torch.strided"))
        if layout != "torch.strided" or getattr(value, "is_nested", False):
            kind = "nested" if getattr(value, "is_nested", False) else layout.removeprefix("torch.")
            raise InputError(f"{where}: a {kind} tensor; inputs are dense tensors (convert it with .to_dense())")
        if getattr(value, "is_quantized", False):
            raise InputError(f"{where}: a quantized tensor ({value.dtype}); inputs are float or integer tensors "
                             "(convert it with .dequantize())")
        device = str(getattr(value, "device", "cpu"))
        if device != "cpu":
            raise InputError(f"{where}: a tensor on device {device}; inputs are CPU tensors (move it with .cpu())")
        dtype = str(value.dtype).removeprefix("torch.")
        if dtype not in EXAMPLE_DTYPES:
            raise InputError(_dtype_refusal(where, dtype))
        value = value.detach().numpy()
    elif not isinstance(value, np.ndarray):
        raise InputError(f"{where}: a {type(value).__name__}; inputs are tensors (arrays) only")
    array = np.asarray(value)
    check_example_dtype(array, where)
    return array


# float64 (numpy's default) is let through: the pipeline converts it to float32, with a note
EXAMPLE_DTYPES = (*DTYPES, "float64")


def check_example_dtype(array: np.ndarray, where: str) -> None:
    """InputError unless ``array`` is of a dtype the compiled programs take (DTYPES; or float64)."""
    if array.dtype.name not in EXAMPLE_DTYPES:
        raise InputError(_dtype_refusal(where, array.dtype.name))


def _dtype_refusal(where: str, dtype: str) -> str:
    return (f"{where}: {dtype} values; compiled programs take {', '.join(DTYPES)} inputs "
            "(convert it, e.g. x.float() for floating-point values)")
