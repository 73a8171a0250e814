"""The arrays ``liteexport run`` feeds a method, and what it does with the results.

Inputs come from ``.npy``/``.npz`` files (read without pickle: an input file must never
run code) and from ``--random SHAPE[:DTYPE]`` specs; outputs are printed or saved to an
``.npz``. numpy only: ``run`` works on a machine without torch.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from liteexport.atomic_write import write_atomic
from runtime_py.errors import InputError

DEFAULT_RANDOM_DTYPE = "float32"
_RANDOM_DTYPES = ("float32", "float64", "float16", "int64", "int32", "int8", "uint8", "bool")


def parse_shape(text: str) -> tuple[int, ...]:
    """``1x3x32x32`` or ``1,3,32,32`` -> (1, 3, 32, 32); ValueError when malformed."""
    parts = text.strip().lower().replace(",", "x").split("x")
    if not text.strip() or not all(p.strip().isdigit() for p in parts):
        raise ValueError(f"'{text}' is not a shape: give sizes like 1x3x32x32")
    return tuple(int(p) for p in parts)


@dataclass(frozen=True)
class RandomSpec:
    """One ``--random`` input: its shape and element type."""

    shape: tuple[int, ...]
    dtype: str = DEFAULT_RANDOM_DTYPE

    @classmethod
    def parse(cls, text: str) -> RandomSpec:
        """``1x3x32x32`` or ``1x3x32x32:float32``; ValueError when malformed."""
        shape_text, sep, dtype = text.partition(":")
        if sep and dtype not in _RANDOM_DTYPES:
            raise ValueError(f"unknown dtype '{dtype}' (one of {', '.join(_RANDOM_DTYPES)})")
        return cls(parse_shape(shape_text), dtype if sep else DEFAULT_RANDOM_DTYPE)

    def make(self, rng: np.random.Generator) -> np.ndarray:
        """Standard normal floats, small integers, or fair booleans."""
        kind = np.dtype(self.dtype).kind
        if kind == "f":
            return rng.standard_normal(self.shape).astype(self.dtype)
        if kind == "b":
            return rng.random(self.shape) < 0.5
        return rng.integers(0, 10, size=self.shape).astype(self.dtype)


def read_input_file(path: str | Path, arg_names: Sequence[str]) -> list[np.ndarray]:
    """The arrays in one input file: a ``.npy`` holds one; a ``.npz`` holds several, taken
    in the order of ``arg_names`` when its keys are exactly those names, else in file order."""
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            return [np.asarray(loaded)]
        with loaded:
            keys = list(loaded.files)
            if sorted(keys) == sorted(arg_names):
                keys = list(arg_names)
            return [loaded[k] for k in keys]
    except OSError as exc:
        raise InputError(f"cannot read input file {path}: {exc.strerror or exc}") from exc
    except (ValueError, EOFError, zipfile.BadZipFile) as exc:  # not npy/npz, truncated, or pickled objects
        summary = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"input file {path} is not a .npy/.npz array file numpy reads without pickle: "
                         f"{summary}") from exc


def collect_inputs(files: Sequence[str], randoms: Sequence[RandomSpec], seed: int,
                   arg_names: Sequence[str]) -> list[np.ndarray]:
    """Every input in call order: the files' arrays first, then the random ones."""
    arrays = [a for f in files for a in read_input_file(f, arg_names)]
    rng = np.random.default_rng(seed)
    return arrays + [spec.make(rng) for spec in randoms]


def output_names(count: int) -> list[str]:
    return [f"output_{i}" for i in range(count)]


def save_outputs(outputs: Sequence[np.ndarray], path: str | Path) -> None:
    """Save ``output_0, output_1, ...`` to an ``.npz`` atomically (nothing left on failure)."""
    buffer = io.BytesIO()
    arrays = dict(zip(output_names(len(outputs)), outputs, strict=True))
    np.savez(buffer, **arrays)  # type: ignore[arg-type]  # numpy's stub mistypes **kwds
    write_atomic(path, buffer.getvalue())


def format_outputs(outputs: Sequence[np.ndarray]) -> str:
    """Each output's name, shape, dtype and values; large arrays are summarized."""
    blocks = []
    with np.printoptions(threshold=100, edgeitems=3, linewidth=100):
        for name, array in zip(output_names(len(outputs)), outputs, strict=True):
            header = f"{name}: shape {tuple(array.shape)}, dtype {array.dtype}"
            blocks.append(f"{header}\n{np.array2string(array)}")
    return "\n".join(blocks)
