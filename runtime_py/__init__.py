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
    """Read, verify and load the bundle at ``path`` (see runtime_py.module.load);
    ``max_instructions``/``timeout`` (seconds) optionally limit each method call, ``max_memory``
    (bytes, default 2 GiB) bounds what a compiled program holds alive."""
    # Imported here so that the format layer (bundle_format) can be used on its own.
    from runtime_py.module import load as _load

    return _load(path, max_instructions=max_instructions, timeout=timeout, max_memory=max_memory)


__all__ = ["load"]
