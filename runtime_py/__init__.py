"""runtime_py: liteexport's reference runtime for PTMF bundles. numpy only, never torch.

    import runtime_py
    module = runtime_py.load("tiny.ptl")
    out = module.forward(x)            # x: np.ndarray (float32)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    from runtime_py.module import Module


def load(path: str | Path, *, max_instructions: int | None = None, timeout: float | None = None,
         max_memory: int | None = None) -> Module:
    """Read, verify and load the bundle at ``path``.

    Parameters
    ----------
    path
        A bundle written by ``liteexport export`` or by torch (``_save_for_lite_interpreter``,
        flatbuffer or zip).
    max_instructions, timeout
        Optional limits of each method call: bytecode instructions interpreted, and seconds
        (a hostile bundle's bytecode can loop forever). Exceeding one raises RunLimitExceeded.
    max_memory
        Bytes a compiled program may hold alive (inputs and results, not weights); default 2 GiB.

    Returns
    -------
    runtime_py.module.Module
        Call its methods as attributes (``module.forward(x)``) or with ``run_method(name, *inputs)``;
        ``method_names``, ``method_schema(name)``, ``extra_files`` and ``debug_table`` describe it.

    Raises
    ------
    FormatError
        The file is not a bundle this runtime reads, or is malformed (exit 5 in the CLI).

    Examples
    --------
    >>> import numpy as np, runtime_py
    >>> module = runtime_py.load("tiny.ptl")  # doctest: +SKIP
    >>> module.forward(np.zeros((1, 3, 32, 32), np.float32)).shape  # doctest: +SKIP
    (1, 10)
    >>> module.extra_files.get("labels.txt")  # doctest: +SKIP
    """
    # Imported here so that the format layer (bundle_format) can be used on its own.
    from runtime_py.module import load as _load

    return _load(path, max_instructions=max_instructions, timeout=timeout, max_memory=max_memory)


__all__ = ["load"]
