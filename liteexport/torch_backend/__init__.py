"""liteexport's backend ``backend_with_compiler_demo``, registered with torch for interop.

Torch loads a liteexport bundle only if a backend named ``backend_with_compiler_demo`` is
registered with it: loading runs the LoweredModule's ``__setstate__``, which creates the custom
class ``__torch__.torch.classes.__backends__.backend_with_compiler_demo`` and calls its
``compile(processed, method_compile_spec)``. :func:`load_torch_backend` builds (first use, a
small C++ extension compiled with ``torch.utils.cpp_extension.load_inline`` and cached under
torch's extensions directory) and loads that backend. Its ``compile`` validates the processed
module liteexport writes (``{"programs": Dict[str, Tensor(uint8)], "weights": List[Tensor]}``)
and returns per method the handle ``(program, weights)``; its ``execute`` is not implemented
yet and raises a clear error (run bundles with runtime_py instead).

Only torch interop needs this (and so a C++ compiler); liteexport and runtime_py do not.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import threading
from pathlib import Path
from types import ModuleType

from liteexport.torch_backend._cpp_source import CPP_SOURCE
from runtime_py.errors import UserError

BACKEND_NAME = "backend_with_compiler_demo"
CUSTOM_CLASS = f"__torch__.torch.classes.__backends__.{BACKEND_NAME}"
# The extension's name carries a hash of its source, so a stale cached build is never loaded.
EXTENSION_NAME = "liteexport_torch_backend_v1_" + hashlib.sha256(CPP_SOURCE.encode()).hexdigest()[:10]

_INSTALL_HINT = (
    "Install a C++ compiler (e.g. `apt-get install g++`, or set CXX to one) and ninja "
    "(`apt-get install ninja-build` or `pip install ninja`). Only torch interop (loading liteexport "
    "bundles with torch) needs them; liteexport export and runtime_py (`liteexport run`) do not."
)

_lock = threading.Lock()
_extension: ModuleType | None = None


class TorchBackendUnavailable(UserError):
    """liteexport's torch backend cannot be built or loaded (no C++ compiler, or a name clash)."""


def _compiler() -> str | None:
    """The C++ compiler torch's extension builder would use, if it exists."""
    return shutil.which(os.environ.get("CXX", "c++")) or shutil.which("g++")


def _cached_library() -> Path | None:
    """The already-built extension library in torch's extensions directory, if any."""
    from torch.utils.cpp_extension import _get_build_directory

    try:
        path = Path(_get_build_directory(EXTENSION_NAME, verbose=False)) / f"{EXTENSION_NAME}.so"
    except Exception:  # noqa: BLE001 - any failure just means "not cached"
        return None
    return path if path.is_file() else None


def _import_library(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(EXTENSION_NAME, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[EXTENSION_NAME] = module
    return module


def _class_registered() -> bool:
    """Whether some backend named ``backend_with_compiler_demo`` is already registered with torch."""
    import torch

    try:
        torch._C._get_custom_class_python_wrapper("__backends__", BACKEND_NAME)
    except RuntimeError:
        return False
    return True


def _build_and_import() -> ModuleType:
    from torch.utils.cpp_extension import is_ninja_available, load_inline

    if _compiler() is None or not is_ninja_available():
        cached = _cached_library()
        if cached is not None:
            return _import_library(cached)
        missing = "a C++ compiler" if _compiler() is None else "ninja"
        raise TorchBackendUnavailable(
            f"Cannot build liteexport's torch backend '{BACKEND_NAME}': {missing} was not found. "
            + _INSTALL_HINT)
    try:
        module: ModuleType = load_inline(EXTENSION_NAME, cpp_sources=[CPP_SOURCE], functions=["registered_backend"])
        return module
    except Exception as exc:  # noqa: BLE001 - every build failure becomes one clear error
        detail = str(exc).strip().splitlines()
        raise TorchBackendUnavailable(
            f"Building liteexport's torch backend '{BACKEND_NAME}' failed"
            + (f" ({detail[-1]})" if detail else "") + ". " + _INSTALL_HINT) from exc


def load_torch_backend() -> None:
    """Register liteexport's ``backend_with_compiler_demo`` with torch (builds it on first use).

    Idempotent: later calls are no-ops. Raises :class:`TorchBackendUnavailable` when the
    extension cannot be built (no C++ compiler) or another library already registered a
    backend of that name in this process.
    """
    global _extension
    with _lock:
        if _extension is not None:
            return
        try:
            import torch  # noqa: F401
        except ImportError as exc:
            raise TorchBackendUnavailable(
                "torch is not installed; loading liteexport bundles with torch needs it "
                "(pip install 'liteexport[export]').") from exc
        if _class_registered():
            raise TorchBackendUnavailable(
                f"Another backend named '{BACKEND_NAME}' is already registered with torch in this "
                "process (e.g. by torch's reference lowering tool), so liteexport's cannot be loaded. "
                "Load liteexport bundles with torch in a fresh process.")
        module = _build_and_import()
        if not _class_registered():  # pragma: no cover - the extension registers it when loaded
            raise TorchBackendUnavailable(
                f"liteexport's torch extension loaded but did not register '{CUSTOM_CLASS}'.")
        _extension = module


def torch_backend_available() -> bool:
    """Whether :func:`load_torch_backend` can work: already loaded, built, or buildable here."""
    if _extension is not None:
        return True
    try:
        from torch.utils.cpp_extension import is_ninja_available
    except ImportError:
        return False
    return (_compiler() is not None and is_ninja_available()) or _cached_library() is not None


__all__ = [
    "BACKEND_NAME",
    "CUSTOM_CLASS",
    "TorchBackendUnavailable",
    "load_torch_backend",
    "torch_backend_available",
]
