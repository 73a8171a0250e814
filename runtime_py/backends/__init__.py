"""Delegate backends runtime_py can execute, looked up by name.

A lowered module names its backend through its custom class,
``__torch__.torch.classes.__backends__.<name>``; ``BACKENDS`` is keyed by ``<name>``.
"""

from __future__ import annotations

from runtime_py.backends.base import Backend
from runtime_py.backends.demo.backend import DemoBackend
from runtime_py.errors import FormatError

__all__ = ["BACKENDS", "Backend", "get_backend"]

BACKENDS: dict[str, type[Backend]] = {
    DemoBackend.name: DemoBackend,  # liteexport's demo compiler backend, run with numpy
}


def get_backend(name: str) -> Backend:
    """A new instance of the backend called ``name``.

    ``name`` is the backend's name or the fully qualified name of its custom class
    (only the part after the last dot counts). Raises ``FormatError`` for an unknown backend.
    """
    key = name.rsplit(".", 1)[-1]
    backend_type = BACKENDS.get(key)
    if backend_type is None:
        known = ", ".join(sorted(BACKENDS))
        raise FormatError(f"unknown delegate backend '{name}' (known backends: {known})", where=f"class {name}")
    return backend_type()
