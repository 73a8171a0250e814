"""Turn the MODEL argument of ``liteexport export`` into a scripted module in eval mode.

MODEL is either a TorchScript archive written by ``torch.jit.save`` (``model.pt``) or
``path/file.py:Name``, where Name is an ``nn.Module`` class (constructed with no
arguments), a function returning a module, or a module instance. Every way this can go
wrong becomes a ModelError that says what to fix; torch is imported only in here, and
only when a model is actually loaded, so ``inspect``/``run`` never need it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import os
import sys
import traceback
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from liteexport.errors import ModelError

if TYPE_CHECKING:
    import torch


class LoadedModel(NamedTuple):
    """MODEL loaded: scripted in eval mode, with what the export needs to know of it."""

    scripted: torch.jit.ScriptModule
    functions: Any  # an archive's compilation unit (its free functions); None for Python sources
    was_training: bool  # the model came in training mode (it is exported in eval mode)


def load_scripted(spec: str) -> torch.jit.ScriptModule:
    """Load MODEL (``model.pt`` or ``file.py:Name``) as a ScriptModule in eval mode."""
    return load_model(spec).scripted


def load_model(spec: str, share_types: bool = True) -> LoadedModel:
    """MODEL as a ScriptModule in eval mode, and the compilation unit holding its free
    functions when it comes from an archive (None: this process's own, for a scripted
    model). ``torch.jit.load`` keeps an archive's unit to itself, so it is loaded here."""
    path_text, sep, name = spec.rpartition(":")
    if sep and path_text.endswith(".py"):
        return _load_python(Path(path_text), name, share_types)
    if spec.endswith(".py"):
        raise ModelError(f"{spec}: name the model inside the file, as {spec}:ClassName")
    return _load_archive(Path(spec))


def _check_file(path: Path) -> None:
    if path.is_dir():
        raise ModelError(f"{path} is a directory, not a model file")
    if not path.exists():
        raise ModelError(f"model file not found: {path}")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _import_torch() -> Any:
    """torch, or a ModelError saying how to get it (inspect and run never need it)."""
    try:
        import torch
    except ImportError as exc:
        raise ModelError("exporting needs torch, which is not installed: "
                         "pip install 'liteexport[export]'") from exc
    return torch


@contextlib.contextmanager
def _torchscript_quietly() -> Iterator[None]:
    """TorchScript is what liteexport lowers, on purpose: silence torch's deprecation notice."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, message=".*torch.jit")
        yield


def _load_archive(path: Path) -> LoadedModel:
    _check_file(path)
    torch = _import_torch()
    _backend_for_lowered(path)

    try:
        with _torchscript_quietly():
            # what torch.jit.load does, keeping the compilation unit
            unit = torch._C.CompilationUnit()
            cpp_module = torch._C.import_ir_module(unit, str(path), torch.device("cpu"), {}, False)
            module = torch.jit._recursive.wrap_cpp_module(cpp_module)
    except Exception as exc:  # torch reports a bad archive as RuntimeError, ValueError, ...
        raise ModelError(f"cannot load {path} as a TorchScript archive (written by torch.jit.save): "
                         f"{_first_line(exc)}") from exc
    training = bool(getattr(module, "training", False))  # a lowered archive's wrapper has none
    return LoadedModel(module.eval(), unit, training)


def _backend_for_lowered(path: Path) -> None:
    """An archive holding a module lowered by torch's to_backend loads only with its backend
    registered (loading runs the backend's compile): load liteexport's first."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            lowered = any("/LoweredModule/" in name for name in archive.namelist())
    except (OSError, zipfile.BadZipFile):
        return  # torch.jit.load says what is wrong with the file
    if lowered:
        from liteexport.torch_backend import load_torch_backend

        load_torch_backend()


class _ProcessEnded(BaseException):
    """Raised in place of ``os._exit`` while the model file runs: a BaseException, so the
    model's own ``except Exception`` does not swallow it."""


@contextlib.contextmanager
def _process_exit_caught() -> Iterator[None]:
    """While the model file is imported and built, ``os._exit(n)`` raises instead of ending
    the process (it skips atexit and every handler, so the export would end silently, exit n)."""
    real_exit = os._exit

    def refuse(status: int) -> None:
        caller = sys._getframe(1)
        raise _ProcessEnded(f"os._exit({status}) at {caller.f_code.co_filename}:{caller.f_lineno}")

    os._exit = refuse  # type: ignore[assignment]
    try:
        yield
    finally:
        os._exit = real_exit


def _ended(exc: BaseException, path: Path) -> ModelError:
    """The ModelError for a model file that tried to end the process (os._exit, sys.exit, exit)."""
    if isinstance(exc, _ProcessEnded):
        return ModelError(f"the model file ended the process: {exc}")
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen")]
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return ModelError(f"the model file ended the process: sys.exit({exc}){where} ({path})")


def _import_file(path: Path) -> ModuleType:
    """Execute ``path`` as a fresh module, registered in sys.modules because TorchScript
    resolves names there. The module is named after the file (``tiny_cnn``), as a plain
    import would name it: the name becomes part of the model's TorchScript qualified name
    (``__torch__.tiny_cnn.TinyCNN``), so it must not depend on where the file lies, or two
    exports from different folders would differ."""
    module_name = _free_module_name(path.stem)
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ModelError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except (SystemExit, _ProcessEnded) as exc:
        del sys.modules[module_name]
        raise _ended(exc, path) from exc
    except Exception as exc:  # the user's code may raise anything while importing
        del sys.modules[module_name]
        raise ModelError(f"cannot import {path}: {_first_line(exc)}{_where(exc, path)}") from exc
    return module


def _free_module_name(stem: str) -> str:
    """``stem`` when no other module has that name (``numpy.py`` must not replace numpy)."""
    base = stem if stem.isidentifier() else "_" + "".join(c if c.isalnum() else "_" for c in stem)
    name, suffix = base, 1
    while name in sys.modules:
        suffix += 1
        name = f"{base}_{suffix}"
    return name


def _where(exc: BaseException, path: Path) -> str:
    """`` (file, line N)`` of the innermost frame in the user's code that raised ``exc``."""
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno:
        return f' (File "{exc.filename}", line {exc.lineno})'
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen")]
    if not frames:
        return ""
    mine = [f for f in frames if Path(f.filename).resolve() == path.resolve()]
    frame = (mine or frames)[-1]
    return f' (File "{frame.filename}", line {frame.lineno})'


def load_module(spec: str) -> Any:
    """``file.py:Name`` as the nn.Module it builds, not scripted (the torch.export front end's
    MODEL). A ScriptModule it builds is returned as it is."""
    path_text, sep, name = spec.rpartition(":")
    if not (sep and path_text.endswith(".py")):
        raise ModelError(f"{spec}: expected path/file.py:Name")
    return _build_python(Path(path_text), name)


def _build_python(path: Path, name: str) -> Any:
    """The module ``path:name`` builds (imported with the file's folder on sys.path)."""
    _check_file(path)
    if not name.isidentifier():
        raise ModelError(f"{path}:{name}: '{name}' is not a Python name; give it as {path}:ClassName")
    torch = _import_torch()

    # The file's own folder first on sys.path, so its sibling imports (from layers import X) work.
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)
    try:
        with _process_exit_caught():
            module = _import_file(path)
            if not hasattr(module, name):
                raise ModelError(f"{path} defines no '{name}'; {_candidates(module, torch)}")
            try:
                return _instantiate(getattr(module, name), f"{path}:{name}", torch)
            except (SystemExit, _ProcessEnded) as exc:
                raise _ended(exc, path) from exc
    finally:
        if folder in sys.path:
            sys.path.remove(folder)


def _load_python(path: Path, name: str, share_types: bool = True) -> LoadedModel:
    return script_built(_build_python(path, name), f"{path}:{name}", share_types)


def script_built(model: Any, spec: str, share_types: bool = True) -> LoadedModel:
    """``model``, built by ``file.py:Name`` (``spec``), scripted in eval mode (a ScriptModule as it is)."""
    torch = _import_torch()
    training = bool(getattr(model, "training", False))
    if isinstance(model, torch.jit.ScriptModule):
        return LoadedModel(model.eval(), None, training)
    folder = str(Path(spec.rpartition(":")[0]).resolve().parent)  # scripting resolves the file's sibling imports too
    sys.path.insert(0, folder)
    try:
        with _torchscript_quietly():
            scripted = torch.jit.script(model.eval()) if share_types else script_unshared(model.eval())
    except Exception as exc:  # TorchScript raises several types; its text carries the source range
        raise ModelError(f"TorchScript cannot script {spec}:\n{str(exc).strip()}") from exc
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    return LoadedModel(scripted.eval(), None, training)


def script_unshared(model: Any) -> torch.jit.ScriptModule:
    """``model`` scripted with a TorchScript type per module instance (torch.jit.script gives
    instances of one class one type), as torch's selective lowering needs of a chosen module's
    parent and siblings."""
    import torch.jit._recursive as recursive

    return recursive.create_script_module(model, recursive.infer_methods_to_compile, share_types=False)


def _candidates(module: ModuleType, torch: Any) -> str:
    """What the file defines that could be named instead: module classes and functions."""
    found = []
    for attr, obj in vars(module).items():
        if getattr(obj, "__module__", None) != module.__name__ or attr.startswith("_"):
            continue
        if inspect.isclass(obj) and issubclass(obj, torch.nn.Module):
            found.append(f"{attr} (nn.Module class)")
        elif inspect.isfunction(obj):
            found.append(f"{attr} (function)")
    if not found:
        return "it defines no nn.Module class or function"
    return "it defines: " + ", ".join(found)


def _instantiate(obj: Any, what: str, torch: Any) -> Any:
    """The module behind ``obj``: a module instance as is, a class or function called
    with no arguments (and its result checked)."""
    if isinstance(obj, torch.nn.Module):
        return obj
    is_module_class = inspect.isclass(obj) and issubclass(obj, torch.nn.Module)
    if not (is_module_class or inspect.isfunction(obj)):
        kind = "class" if inspect.isclass(obj) else type(obj).__name__
        raise ModelError(f"{what} is a {kind}, not an nn.Module class or a function returning a module")
    try:
        inspect.signature(obj).bind()
    except TypeError as exc:  # tell a missing-argument problem apart from an error inside __init__
        raise ModelError(f"{what} cannot be built without arguments ({exc}); liteexport calls it with "
                         "none: wrap it in a function that returns the module, and name that") from exc
    except ValueError:  # no signature available (a builtin); just try to call it
        pass
    try:
        result = obj()
    except Exception as exc:  # anything the user's constructor raises
        where = _where(exc, Path(inspect.getfile(obj)))
        raise ModelError(f"building {what} failed: {_first_line(exc)}{where}") from exc
    if not isinstance(result, torch.nn.Module):
        raise ModelError(f"{what}() returned a {type(result).__name__}, not an nn.Module")
    return result
