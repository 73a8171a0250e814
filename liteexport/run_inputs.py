"""The arrays ``liteexport run`` feeds a method, and what it does with the results.

Inputs come from ``.npy``/``.npz`` files (read without pickle: an input file must never
run code) and from ``--random SHAPE[:DTYPE]`` specs; outputs are printed or saved to an
``.npz``. numpy only: ``run`` works on a machine without torch.
"""

from __future__ import annotations

import io
import math
import os
import stat
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from liteexport.atomic_write import write_atomic
from liteexport.parity import is_constant
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

    def make(self, rng: np.random.Generator, bound: int | None = None) -> np.ndarray:
        """Standard normal floats, small integers (in [0, bound) when given: ids of an embedding
        table the input reaches, see liteexport.typed_inputs.index_bounds), or fair booleans."""
        # generated as float64/int64 first: 8 bytes an element at the peak
        _check_fits_in_memory(math.prod(self.shape) * 8, f"--random {'x'.join(map(str, self.shape))}")
        kind = np.dtype(self.dtype).kind
        if kind == "f":
            return rng.standard_normal(self.shape).astype(self.dtype)
        if kind == "b":
            return rng.random(self.shape) < 0.5
        return rng.integers(0, 10 if bound is None else max(bound, 1), size=self.shape).astype(self.dtype)


def _check_fits_in_memory(nbytes: int, what: str) -> None:
    """Refuse an input bigger than this machine's memory before numpy tries to allocate it."""
    memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 1 << 62
    if nbytes > memory:
        raise InputError(f"{what} needs {nbytes:,} bytes, more than this machine's memory ({memory:,} bytes)")


# deflate expands at most ~1032x: a member claiming more than this per stored byte is lying
_MAX_DEFLATE_RATIO = 1100


def _check_claimed_sizes(path: str | Path) -> None:
    """An array file's header says how big its array is, and numpy allocates that before reading:
    a header claiming 10**15 elements must be a bad input, not a MemoryError. Every array must fit
    in the bytes that follow its header (in its npz member, for an .npz)."""
    if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode) and not os.path.isdir(path):
        # a FIFO or a device would block the read (or never end): only regular files are inputs
        raise InputError(f"input file {path} is not a regular file (a FIFO or a device?)")
    with open(path, "rb") as f:
        if f.read(len(np.lib.format.MAGIC_PREFIX)) != np.lib.format.MAGIC_PREFIX:
            if zipfile.is_zipfile(f):
                try:
                    with zipfile.ZipFile(f) as archive:
                        for info in archive.infolist():
                            stored = info.compress_size * (1 if info.compress_type == zipfile.ZIP_STORED
                                                           else _MAX_DEFLATE_RATIO)
                            with archive.open(info) as member:
                                _check_header(member, min(info.file_size, stored), f"{path} member {info.filename}")
                except (zipfile.BadZipFile, RuntimeError, NotImplementedError, EOFError, ValueError) as exc:
                    raise InputError(f"input file {path} is not an .npz archive numpy reads: {exc}") from exc
            return  # anything else: np.load says what is wrong
        f.seek(0)
        _check_header(f, os.fstat(f.fileno()).st_size, str(path))


def _check_header(f: Any, size: int, what: str) -> None:
    try:
        version = np.lib.format.read_magic(f)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, _, dtype = read_header(f)
    except (ValueError, EOFError, OSError):
        return  # np.load reports a malformed header itself
    nbytes = math.prod(shape) * dtype.itemsize
    available = size - f.tell()
    if nbytes > available:
        raise InputError(f"input {what}: its header claims an array of shape {tuple(shape)} and dtype {dtype} "
                         f"({nbytes:,} bytes), but only {max(available, 0):,} bytes follow it")


def _quiet(_: str) -> None:
    """A note nobody reads."""


def as_float32(array: np.ndarray, what: str, note: Callable[[str], None]) -> np.ndarray:
    """``array``, or as float32 (with a note naming ``what``) when it is float64, numpy's default
    float: compiled programs compute in float32 and would refuse it. Other dtypes (ids, masks,
    float16) are left as they are."""
    if array.dtype != np.float64:
        return array
    note(f"{what} is float64 (numpy's default); converted to float32, the dtype compiled programs compute in")
    return array.astype(np.float32)


def read_input_file(path: str | Path, arg_names: Sequence[str],
                    note: Callable[[str], None] = _quiet) -> list[np.ndarray]:
    """The arrays in one input file: a ``.npy`` holds one; a ``.npz`` holds several, taken
    in the order of ``arg_names`` when its keys are exactly those names, else in file order.
    A float64 array is converted to float32, with a ``note`` (``as_float32``)."""
    try:
        _check_claimed_sizes(path)
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            return [as_float32(np.asarray(loaded), f"input file {path}", note)]
        with loaded:
            keys = list(loaded.files)
            if sorted(keys) == sorted(arg_names):
                keys = list(arg_names)
            return [as_float32(loaded[k], f"input file {path}, array '{k}'", note) for k in keys]
    except OSError as exc:
        raise InputError(f"cannot read input file {path}: {exc.strerror or exc}") from exc
    except MemoryError as exc:  # what the size checks cannot foresee (memory already in use)
        raise InputError(f"input file {path} holds more than fits in memory") from exc
    except (ValueError, EOFError, zipfile.BadZipFile) as exc:  # not npy/npz, truncated, or pickled objects
        summary = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"input file {path} is not a .npy/.npz array file numpy reads without pickle: "
                         f"{summary}") from exc


def collect_inputs(files: Sequence[str], randoms: Sequence[RandomSpec], seed: int,
                   arg_names: Sequence[str], note: Callable[[str], None] = _quiet) -> list[np.ndarray]:
    """Every input in call order: the files' arrays first (float64 ones as float32, with a
    ``note``), then the random ones (of the dtype asked for)."""
    arrays = [a for f in files for a in read_input_file(f, arg_names, note)]
    rng = np.random.default_rng(seed)
    try:
        return arrays + [spec.make(rng) for spec in randoms]
    except MemoryError as exc:  # what the size check cannot foresee (memory already in use)
        raise InputError("the --random inputs do not fit in memory") from exc


def output_names(count: int) -> list[str]:
    return [f"output_{i}" for i in range(count)]


def save_outputs(outputs: Sequence[Any], path: str | Path) -> list[str]:
    """Save the tensor outputs as ``output_0, output_1, ...`` to an ``.npz`` atomically (nothing
    left on failure); returns the names of the constants (the None of googlenet's (logits, None,
    None)), which an npz cannot hold without pickle and are left out."""
    buffer = io.BytesIO()
    named = dict(zip(output_names(len(outputs)), outputs, strict=True))
    arrays = {name: o for name, o in named.items() if not is_constant(o)}
    np.savez(buffer, **arrays)
    write_atomic(path, buffer.getvalue())
    return [name for name in named if name not in arrays]


def format_outputs(outputs: Sequence[Any]) -> str:
    """Each output's name, shape, dtype and values (large arrays are summarized); a constant's value."""
    blocks = []
    with np.printoptions(threshold=100, edgeitems=3, linewidth=100):
        for name, array in zip(output_names(len(outputs)), outputs, strict=True):
            if is_constant(array):
                blocks.append(f"{name}: {array!r}")
                continue
            header = f"{name}: shape {tuple(array.shape)}, dtype {array.dtype}"
            blocks.append(f"{header}\n{np.array2string(array)}")
    return "\n".join(blocks)
