"""The torch.export front end's model side: an ``nn.Module`` exported with ``torch.export.export``,
and ``.pt2`` files (``torch.export.save``) loaded; no TorchScript anywhere on this path.

``--input-shape forward:1xS:int64 --dim S=1..128`` becomes example inputs (the named dim at a
size torch keeps symbolic) and ``dynamic_shapes`` with ``torch.export.Dim("S", min=1, max=128)``;
example inputs alone give static shapes and dtypes. torch.export's own refusals (a branch on
data, a guard that contradicts the dims, a construct it cannot trace) become one ModelError
(exit 3): torch's reason, the user's line, and what to try.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import re
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from liteexport.errors import ModelError
from liteexport.input_spec import DimRange, TensorSpec

_TORCH_FILES = re.compile(r"[/\\](torch|transformers|torchvision|timm|contextlib|functools)[/\\]|^<")
# where torch's reason turns to its own debugging aids (log variables, draft_export, tracebacks)
_NOISE = re.compile(r"For more information|For extended logs|If you suspect|The error above occurred|draft_export|"
                    r"Caused by:|TORCH_LOGS|TORCHDYNAMO|consider using data-dependent friendly|get a list of all")
_SENTENCE = re.compile(r"(?<=[.!])\s+")
_REASON_LINES = 12  # lines of torch's message kept: its first paragraph, not its tutorial links


def load_program(path: Path) -> Any:
    """A ``.pt2`` file as its ExportedProgram (ModelError when it is not one)."""
    import torch

    if path.is_dir():
        raise ModelError(f"{path} is a directory, not a model file")
    if not path.exists():
        raise ModelError(f"model file not found: {path}")
    from liteexport.compiler.exported import torch_quietly

    try:
        with torch_quietly():  # torch logs its deserializing errors as warnings before raising them
            return torch.export.load(str(path))
    except Exception as exc:  # torch reports a bad file as RuntimeError, KeyError, zipfile errors...
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ModelError(f"cannot load {path} as a torch.export program (written by torch.export.save): "
                         f"{type(exc).__name__}: {first}") from exc


def example_size(bounds: DimRange) -> int:
    """The size a named dim takes in the example inputs torch traces: inside the bounds, and not
    0 or 1 where the bounds allow more (torch specializes a dim it sees at 0 or 1)."""
    return min(max(bounds.lo, 2, (bounds.lo + bounds.hi) // 2 if bounds.hi < 64 else 8), bounds.hi)


def example_args(specs: Sequence[TensorSpec], dims: Mapping[str, DimRange]) -> tuple[Any, ...]:
    """Inputs of ``specs``' shapes and dtypes for torch to trace (integers 0 and 1, normal floats)."""
    import torch

    from bundle_format.program import DType
    from liteexport.typed_inputs import typed_input

    rng = np.random.default_rng(0)
    tensors = []
    for spec in specs:
        shape = [example_size(dims[d]) if isinstance(d, str) else d for d in spec.shape]
        # integers as a padding mask draws them: ones then a tail of zeros, ids every embedding table has
        tensors.append(torch.from_numpy(typed_input(shape, DType[spec.dtype.upper()], None, rng)))
    return tuple(tensors)


def dynamic_shapes(specs: Sequence[TensorSpec], dims: Mapping[str, DimRange]) -> tuple[Any, ...] | None:
    """``dynamic_shapes`` for torch.export: per input, its named axes as one shared Dim per name."""
    import torch

    if not any(spec.dim_names for spec in specs):
        return None
    made = {name: torch.export.Dim(name, min=d.lo, max=d.hi) for name, d in dims.items()}
    return tuple({axis: made[size] for axis, size in enumerate(spec.shape) if isinstance(size, str)} or None
                 for spec in specs)


def export_module(module: Any, specs: Sequence[TensorSpec] | None, dims: Mapping[str, DimRange],
                  examples: Sequence[Sequence[np.ndarray]] | None, what: str) -> tuple[Any, dict[str, str]]:
    """``module`` (an nn.Module, in eval mode) through ``torch.export.export``: the program, and
    torch's dim symbols by the user's names (``{"s0": "S"}``). ``what`` names the model in errors."""
    import torch

    if specs is not None:
        check_input_count(module, len(specs))
        args = example_args(specs, dims)
    elif examples:
        args = tuple(torch.from_numpy(np.array(x)) for x in examples[0])
    else:
        raise ModelError(f"the torch.export front end traces {what} on inputs: give their shapes (--input-shape "
                         "forward:1x3x224x224, input_shapes=... in the API) or example inputs")
    from liteexport.compiler.exported import torch_quietly

    try:
        # torch prints a failed export's partial graph to stderr itself: the error says what matters
        with torch_quietly(), contextlib.redirect_stderr(io.StringIO()):
            program = torch.export.export(module, args, dynamic_shapes=dynamic_shapes(specs or (), dims))
    except Exception as exc:  # torch.export raises many types; each becomes one paragraph
        if specs:
            _check_runs(module, args)  # the model itself refusing inputs of the given shapes is the user's input
        raise export_failure(exc, module, what) from exc
    return program, symbol_names(program, specs or ())


def check_input_count(module: Any, count: int) -> None:
    """InputError (exit 6) when forward cannot take ``count`` inputs, as a call with another number
    of inputs would be: the user's input, not a model torch.export cannot trace."""
    from runtime_py.errors import InputError

    parameters = _positional_parameters(module, "forward")
    if any(p.kind == p.VAR_POSITIONAL for p in inspect.signature(module.forward).parameters.values()):
        return
    fewest = sum(1 for p in parameters if p.default is p.empty)
    if not fewest <= count <= len(parameters):
        takes = f"{len(parameters)}" if fewest == len(parameters) else f"{fewest} to {len(parameters)}"
        raise InputError(f"method 'forward' takes {takes} inputs ({', '.join(p.name for p in parameters) or 'none'}) "
                         f"but --input-shape / input_shapes gives {count} shapes")


def _check_runs(module: Any, args: Sequence[Any]) -> None:
    """InputError when eager ``module`` fails on ``args`` (inputs of the user's shapes) too."""
    import torch

    from runtime_py.errors import InputError

    try:
        with torch.no_grad():
            module(*args)
    except Exception as exc:  # the model's own code refused inputs of these shapes
        summary = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        shapes = ", ".join(f"{x.dtype} {tuple(x.shape)}" for x in args)
        raise InputError(f"forward fails on inputs of the given shapes ({shapes}): {summary}") from exc


def symbol_names(program: Any, specs: Sequence[TensorSpec]) -> dict[str, str]:
    """torch's symbol (``s0``) for each named dim of ``specs``, as the user named it (``S``)."""
    from torch.export.graph_signature import InputKind

    names: dict[str, str] = {}
    placeholders = [n for n in program.graph.nodes if n.op == "placeholder"]
    user = [node for spec, node in zip(program.graph_signature.input_specs, placeholders, strict=True)
            if spec.kind == InputKind.USER_INPUT]
    for spec, node in zip(specs, user, strict=False):
        for size, value in zip(spec.shape, node.meta["val"].shape, strict=False):
            if isinstance(size, str) and not isinstance(value, int):
                names[str(value.node.expr)] = size
    return names


def export_failure(exc: BaseException, module: Any, what: str) -> ModelError:
    """torch.export's refusal as one paragraph: what torch says, where in the user's code, what to try."""
    from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode

    name = type(exc).__name__
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    reason = " ".join(line.strip() for line in lines[:_REASON_LINES]) or name
    # torch's pointers to its own debugging aids are not for this user
    reason = " ".join(part for part in _SENTENCE.split(reason) if not _NOISE.search(part)) or name
    where = _user_line(exc, module)
    text = str(exc)
    if isinstance(exc, GuardOnDataDependentSymNode) or "data-dependent" in text or "data dependent" in text:
        kind = "a branch or size that depends on a tensor's values"
        advice = ("compute it with torch.where, or express the branch with torch.cond; or export with "
                  "--frontend torchscript")
    elif "Constraints violated" in text or "specialized" in text or "ConstraintViolation" in name:
        kind = "a guard that contradicts the given dims"
        advice = ("give --dim bounds the model accepts (torch's suggested fixes are in its message above), or a "
                  "static size in --input-shape")
    else:
        kind = "a construct torch.export cannot trace"
        advice = "rewrite the line, or export with --frontend torchscript"
    return ModelError(f"torch.export cannot export {what}: {kind}{where}. torch says: {name}: {reason} "
                      f"What to try: {advice}.")


def _user_line(exc: BaseException, module: Any) -> str:
    """`` at FILE:LINE`` of the innermost frame in the model's code that was running, or ""."""
    from liteexport.compiler.source import display_path

    try:
        model_file = str(Path(inspect.getfile(type(module))).resolve())
    except (TypeError, OSError):
        model_file = ""
    frames = traceback.extract_tb(exc.__traceback__)
    mine = [f for f in frames if model_file and str(Path(f.filename).resolve()) == model_file] or \
        [f for f in frames if not _TORCH_FILES.search(f.filename) and "site-packages" not in f.filename
         and "liteexport" not in f.filename]
    if not mine:
        match = re.search(r'File "([^"]+)", line (\d+)', str(exc))
        return f" at {display_path(match.group(1))}:{match.group(2)}" if match else ""
    frame = mine[-1]
    return f" at {display_path(frame.filename)}:{frame.lineno} ({(frame.line or '').strip()})"


# ---- the pipeline's load and lower stages for this front end ---------------------------------------

EXPORT, TORCHSCRIPT = "export", "torchscript"
FRONTENDS = (EXPORT, TORCHSCRIPT)
DEFAULT_FRONTEND = EXPORT  # for Python models, unless they need TorchScript (torchscript_reason)


def choose_frontend(model: Any, frontend: str) -> str:
    """The front end compiling ``model``: a torch.export program (an ExportedProgram, a ``.pt2``
    file) takes the export one, a TorchScript archive or scripted module the TorchScript one, a
    Python model (``file.py:Name``, an nn.Module) ``frontend``, or "" when none is asked: the
    default, decided once the model is built (``torchscript_reason``). InputError when the asked
    front end cannot take the model."""
    from runtime_py.errors import InputError

    if frontend and frontend not in FRONTENDS:
        raise InputError(f"frontend: expected one of {', '.join(FRONTENDS)}, got {frontend!r}")
    if _is_program(model):
        fixed, what = EXPORT, "a torch.export program"
    elif _is_torchscript(model):
        fixed, what = TORCHSCRIPT, "a TorchScript module"
    else:
        return frontend
    if frontend and frontend != fixed:
        raise InputError(f"{model if isinstance(model, (str, Path)) else type(model).__name__} is {what}: the "
                         f"{frontend} front end does not take it (give --frontend {fixed}, or the Python model)")
    return fixed


def torchscript_reason(module: Any, *, methods: Sequence[str], traced: Sequence[str], lower: bool,
                       specialize: bool) -> str:
    """Why a Python model given no front end is scripted rather than exported with torch.export, as
    a note's clause ("" when torch.export takes it): ``methods`` asked (--method), ``traced`` the
    methods with input shapes or example inputs, ``lower``/``specialize`` those options given."""
    if lower or specialize:
        return f"{'--lower' if lower else '--specialize'} is the TorchScript front end's"
    if quantized := eager_quantized_modules(module):
        return (f"torch's eager-mode quantized modules ({', '.join(quantized)}) hold packed weights torch.export "
                "cannot trace")
    others = sorted({*methods, *traced} - {"forward"})
    if others:
        return f"methods other than forward ({', '.join(others)}) are the TorchScript front end's"
    if not methods and (exported := jit_exported_methods(module)):
        return (f"the model's @torch.jit.export methods ({', '.join(exported)}) are compiled with forward "
                "(give --method forward to export forward alone with torch.export)")
    if "forward" not in traced:
        return ("torch.export traces the model on inputs, and none were given (give --input-shape or "
                "--example-inputs to export with torch.export)")
    return ""


def eager_quantized_modules(module: Any) -> list[str]:
    """The classes of ``module``'s torch.ao quantized submodules (quantized::conv2d and linear's
    packed parameters: a TorchScript class torch.export cannot trace), first seen first."""
    prefixes = ("torch.ao.nn.quantized", "torch.ao.nn.intrinsic.quantized", "torch.nn.quantized")
    found = [type(m).__name__ for m in module.modules() if type(m).__module__.startswith(prefixes)]
    return list(dict.fromkeys(found))


def jit_exported_methods(module: Any) -> list[str]:
    """The methods of ``module``'s class marked ``@torch.jit.export``: TorchScript compiles them
    beside forward; torch.export exports forward alone."""
    from torch._jit_internal import FunctionModifiers, get_torchscript_modifier

    found = []
    for name in dir(type(module)):
        function = inspect.getattr_static(type(module), name, None)
        if inspect.isfunction(function) and get_torchscript_modifier(function) == FunctionModifiers.EXPORT:
            found.append(name)
    return found


def _is_program(model: Any) -> bool:
    if isinstance(model, (str, Path)):
        return str(model).endswith(".pt2")
    return type(model).__name__ == "ExportedProgram" and hasattr(model, "graph_signature")


def _is_torchscript(model: Any) -> bool:
    if isinstance(model, (str, Path)):
        return not str(model).rpartition(":")[0].endswith(".py")
    import torch

    return isinstance(model, torch.jit.ScriptModule)


def load_for_export(model: Any, built: Any = None) -> tuple[Any, Any, bool]:
    """(the module torch runs for reference outputs, its ExportedProgram or None when it is yet
    to be exported, whether it came in training mode). ``built``: the module ``file.py:Name``
    (``model``) built already. The caller's module is left as it is."""
    import copy

    import torch

    from liteexport.model_loading import load_module

    if isinstance(model, (str, Path)) and str(model).endswith(".pt2"):
        model = load_program(Path(model))
    if _is_program(model):
        return model.module(), model, False
    from_file = isinstance(model, (str, Path))
    module = built if built is not None else load_module(str(model)) if from_file else model
    if isinstance(module, torch.jit.ScriptModule):
        from runtime_py.errors import InputError

        raise InputError(f"{model} builds a ScriptModule: give --frontend torchscript for it")
    if not isinstance(module, torch.nn.Module):
        raise ModelError(f"expected a torch.nn.Module, a ScriptModule or a torch.export program, got "
                         f"{type(module).__name__}")
    training = bool(module.training)
    if training and not from_file:
        module = copy.deepcopy(module)  # the caller's module keeps its mode
    return module.eval(), None, training


def argument_names(module: Any, method: str) -> list[str]:
    """The tensor arguments of ``method`` of an eager module (``self`` left out)."""
    return [p.name for p in _positional_parameters(module, method)]


def required_argument_count(module: Any, method: str) -> int:
    """How many of ``method``'s leading arguments have no default: the fewest inputs a call (and
    torch.export, which binds the given ones) can give it. A Hugging Face model's ``forward`` takes
    ``input_ids`` and many optional ones."""
    return sum(1 for p in _positional_parameters(module, method) if p.default is p.empty)


def _positional_parameters(module: Any, method: str) -> list[inspect.Parameter]:
    from runtime_py.errors import InputError

    function = getattr(module, method, None)
    if function is None or not callable(function):
        raise InputError(f"--example-inputs names method '{method}', which the model does not have")
    parameters = inspect.signature(function).parameters.values()
    return [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def compile_for_export(module: Any, program: Any, specs: Sequence[TensorSpec] | None,
                       dims: Mapping[str, DimRange], examples: Sequence[Sequence[np.ndarray]] | None,
                       progress: Any) -> Any:
    """The lower stage of this front end: ``program`` (or ``module`` exported now) compiled. For a
    program given, ``specs`` name its dynamic dims (InputError when they do not match its inputs)."""
    from liteexport.compiler.exported import compile_exported, input_specs

    if program is None:
        what = type(module).__name__
        progress(f"exporting {what} with torch.export")
        program, names = export_module(module, specs, dims, examples, what)
    else:
        names = symbol_names(program, specs or ())
        recorded = input_specs(program, names)
        if specs and tuple(specs) != recorded:
            from runtime_py.errors import InputError

            raise InputError(f"input shapes {', '.join(map(str, specs))} do not match the exported program's inputs "
                             f"{', '.join(map(str, recorded))} (a dynamic dim of the program is named by the input "
                             "shapes; its other sizes and dtypes are the program's)")
    return compile_exported(program, dims=dims, names=names, progress=progress)


def program_shapes(program: Any) -> dict[str, tuple[TensorSpec, ...]]:
    """The input shapes of a program with static shapes, for the self-check ({} when a dim is dynamic:
    the user names it with --input-shape and bounds it with --dim)."""
    from liteexport.compiler.exported import input_specs

    specs = input_specs(program)
    return {} if any(spec.dim_names for spec in specs) else {"forward": specs}
