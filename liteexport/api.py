"""liteexport from Python: ``liteexport.export(module, path, ...)`` and ``liteexport.lower(module)``.

``export`` writes a bundle as ``liteexport export`` does (the whole module compiled by the demo
compiler, or, with ``lower=[...]``/``"auto"``, chosen submodules compiled and the rest kept as
TorchScript bytecode). ``lower`` returns a module lowered through torch's own to_backend API
(``torch._C._jit_to_backend`` with liteexport's compiler as the backend's preprocess): it runs in
TorchScript and saves with ``torch.jit.save`` or ``_save_for_lite_interpreter`` like any module
torch lowered itself.

The notes ``liteexport export`` prints (the self-check's result, what narrowing weights costs,
converted inputs...) are logged by ``export`` at INFO through the ``liteexport`` logger
(``logging.basicConfig(level=logging.INFO)`` shows them; its stages are logged at DEBUG) and
returned in ``Exported.notes``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from liteexport.input_spec import DimRange, InputSpecError, TensorSpec, example_array, parse_tensor_spec
from liteexport.pipeline import Request, Result
from liteexport.pipeline import export as run_export
from liteexport.to_backend import compile_spec, lower, scripted_module
from liteexport.weight_precision import QUANTIZATIONS, WEIGHT_PRECISIONS
from runtime_py.errors import InputError

Examples = Mapping[str, Sequence[Sequence[Any]]] | Sequence[Sequence[Any]]

__all__ = ["Exported", "compile_spec", "export", "lower", "scripted_module"]

LOG = logging.getLogger("liteexport")
LOG.addHandler(logging.NullHandler())  # a library's logger: the application chooses where notes go


class Exported(int):
    """What ``export`` returns: the bundle's size in bytes (an int, as ``export`` always returned),
    with the notes the CLI prints on stderr (one line each, without "Note: ") and its summary line."""

    path: str
    notes: tuple[str, ...]
    summary: str  # "Wrote PATH: N bytes; ..."

    def __new__(cls, size: int, path: str = "", notes: tuple[str, ...] = (), summary: str = "") -> Exported:
        # the size first and alone suffices: pickle and copy rebuild an int subclass from its value
        exported = super().__new__(cls, size)
        exported.path, exported.notes, exported.summary = path, notes, summary
        return exported

    @classmethod
    def of(cls, result: Result) -> Exported:
        return cls(result.size, result.path, result.notes, result.summary)

    @property
    def size(self) -> int:
        return int(self)


def _by_method(value: Any, what: str, items: str) -> dict[str, Any]:
    """A mapping method -> items as a dict; a plain sequence is forward's."""
    if isinstance(value, Mapping):
        for method in value:
            if not isinstance(method, str) or not method.isidentifier():
                raise InputError(f"{what}: {method!r} is not a method name")
        return dict(value)
    if isinstance(value, (list, tuple)):
        return {"forward": value}
    raise InputError(f"{what}: expected a mapping method -> {items}, or a list of {items} for forward, "
                     f"got a {type(value).__name__}")


def _examples(examples: Examples | None, what: str = "example_inputs") -> dict[str, tuple[tuple[np.ndarray, ...], ...]]:
    """Example (or calibration, ``what``) inputs by method: a mapping method -> input tuples, or
    input tuples of forward."""
    if examples is None:
        return {}
    by_method = _by_method(examples, what, "input tuples")
    for method, input_sets in by_method.items():
        if not isinstance(input_sets, (list, tuple)) or not all(isinstance(s, (list, tuple)) for s in input_sets):
            raise InputError(f"{what} of {method}: expected a list of input tuples, such as [(x,), (y,)]")
    return {method: tuple(tuple(example_array(x, f"{what} of {method}, set {number}, input {index}")
                                for index, x in enumerate(inputs))
                          for number, inputs in enumerate(input_sets))
            for method, input_sets in by_method.items()}


def _shapes(input_shapes: Any) -> dict[str, tuple[TensorSpec, ...]]:
    """Input specs by method: a mapping method -> shapes, or forward's shapes. A shape is a tuple of
    sizes (ints, or dim names bounded by ``dims``; float32), a TensorSpec, or CLI text (``"1xS:int64"``)."""
    if input_shapes is None:
        return {}
    specs: dict[str, tuple[TensorSpec, ...]] = {}
    for method, method_shapes in _by_method(input_shapes, "input_shapes", "shapes").items():
        if not isinstance(method_shapes, (list, tuple)):
            raise InputError(f"input_shapes of {method}: expected a list of shapes, such as [(1, 3, 224, 224)] "
                             f"or ['1xS:int64'], got {method_shapes!r}")
        try:
            specs[method] = tuple(_spec(shape) for shape in method_shapes)
        except (InputSpecError, TypeError) as exc:
            raise InputError(f"input_shapes of {method}: {exc}; expected shapes such as (1, 3, 224, 224), "
                             f"(1, 'S') or '1xS:int64'") from None
    return specs


def _spec(shape: Any) -> TensorSpec:
    if isinstance(shape, TensorSpec):
        return shape
    if isinstance(shape, str):
        return parse_tensor_spec(shape)
    if not isinstance(shape, (list, tuple)) or any(isinstance(d, bool) for d in shape):
        raise TypeError(f"{shape!r} is not a shape")
    return TensorSpec(tuple(shape))


def _dims(dims: Any) -> dict[str, DimRange]:
    """Named dims' bounds: a mapping name -> (lo, hi) or DimRange."""
    if dims is None:
        return {}
    if not isinstance(dims, Mapping):
        raise InputError(f"dims: expected a mapping name -> (lo, hi), such as {{'S': (1, 128)}}, got {dims!r}")
    bounds: dict[str, DimRange] = {}
    for name, value in dims.items():
        try:
            bounds[name] = value if isinstance(value, DimRange) else DimRange(name, *map(int, value))
        except (InputSpecError, TypeError, ValueError) as exc:
            raise InputError(f"dims[{name!r}]: {exc}; expected (lo, hi) with 0 <= lo <= hi") from None
    return bounds


def export(module: Any, path: str | Path, methods: Sequence[str] | None = None,
           input_shapes: Mapping[str, Sequence[Any]] | Sequence[Any] | None = None,
           example_inputs: Examples | None = None,
           lower: bool | str | Sequence[str] = True, check: bool = True,
           specialize: Mapping[str, Mapping[str, Any]] | None = None,
           extra_files: Mapping[str, str | bytes] | None = None, strip_debug: bool = False,
           dims: Mapping[str, tuple[int, int] | DimRange] | None = None, weights: str = "fp32",
           quantize: str = "none", calibration_inputs: Examples | None = None, frontend: str | None = None,
           stop_ids: Sequence[int] = (), tokenizer: str | Path | None = None) -> Exported:
    """Write ``module`` as a bundle at ``path``, as ``liteexport export`` does; returns its size in
    bytes (an ``Exported``: an int with the export's ``notes``, also logged, see the module's doc).

    Parameters
    ----------
    module
        An ``nn.Module`` (scripted here, in eval mode; yours is left as it is), a ScriptModule, a
        ``torch.export.ExportedProgram``, or what the CLI's MODEL takes: ``"path/file.py:Name"``, a
        TorchScript archive's path or a ``.pt2`` file's (``torch.export.save``).
    path
        The bundle to write (``.ptl``). Nothing is written when the export fails.
    methods
        The methods to compile; default ``forward`` and every ``@torch.jit.export`` method.
    input_shapes
        Input shapes, ``{"forward": [(1, 3, 224, 224)]}``, or a list of shapes for forward. A shape
        may be a tuple of sizes (float32), CLI text with a dtype (``"1x8:int64"``), or a
        ``liteexport.input_spec.TensorSpec``; a size may be a dim's name (``(1, "S")``,
        ``"1xS:int64"``) bounded by ``dims``. With them, the compiled program is checked against
        torch on inputs of those dtypes (ids within the embedding tables they index, masks of ones
        and zeros, normal floats).
    dims
        Bounds of the named dims, inclusive: ``{"S": (1, 128)}``. The program is compiled once for
        the whole range and self-checked at the lower bound, the upper bound and one size between.
    example_inputs
        Input tuples of forward, ``[(x,), (x2,)]``, or a mapping method -> input tuples. They are
        stored in the bundle as test vectors with torch's outputs (``liteexport verify``) and checked.
        float64 ones (numpy's default) are converted to float32, with a note.
    lower
        ``True``: compile the whole module. A list of dotted submodule names: compile those and keep
        the rest as TorchScript bytecode. ``"auto"``: the largest submodules that compile.
    check
        Run the self-check (runtime_py against torch) when there are inputs to run it on.
    specialize
        ``{"forward": {"k": 3}}`` lowers methods with non-Tensor arguments for those values.
    extra_files
        ``{"labels.txt": "cat\\ndog"}``: files stored in the bundle as torch stores ``_extra_files``
        (text is stored as UTF-8), read back by ``runtime_py.Module.extra_files``,
        ``torch._C._get_model_extra_files(path, {})`` and the Java API's ``Module.extraFile``.
    strip_debug
        Leave the debug table out (errors then name instructions, not source lines).
    weights
        ``"fp32"``, or ``"fp16"``: the compiled program's float32 weights stored as float16 (half
        the bundle; every engine widens them when loading). The self-check then states the error
        against the float model and fails beyond 1e-2 times the output's magnitude.
    quantize
        ``"none"``, or ``"dynamic-int8"``: the weights of linear layers (and LSTM/GRU cells) and
        embedding tables stored as int8, symmetric per output channel; every engine dequantizes them when loading and
        computes in float. The self-check states the error against the float model and fails
        beyond 5e-2 times the output's magnitude. ``"int8"``: static quantization on
        ``calibration_inputs`` (liteexport.static_int8): conv and linear weights int8 per output
        channel, activations int8 per tensor; its cost is stated on the calibration inputs its grids
        were observed on and on held-out ones (liteexport.held_out), and the export fails beyond 0.1
        times the output's range (with ``check=False`` it is only stated).
    calibration_inputs
        For ``quantize="int8"``: input tuples of forward, ``[(x,), (x2,)]``, or a mapping method ->
        input tuples, as ``example_inputs``; the activations' ranges are observed on them, less the
        last quarter (at least one of two or more), held out to check the result on; a single set
        is checked on 4 sets drawn from its per-channel statistics.

    frontend
        ``"export"``: an nn.Module (or ``file.py:Name``) is exported with ``torch.export.export`` on
        inputs of ``input_shapes`` (named dims as ``torch.export.Dim`` bounded by ``dims``) or the first
        of ``example_inputs``, and compiled from its Core ATen graph; ``"torchscript"``: scripted (needed
        for ``lower`` and ``specialize``). Default: ``"export"``, or ``"torchscript"`` with a note when the
        request needs it (``lower``, ``specialize``, methods other than forward, no input shapes or
        example inputs); an ExportedProgram or ``.pt2`` file always takes the export front end.
    stop_ids
        For a decoder LM (a forward of ``(input_ids, cache_position)`` keeping its KV cache in
        buffers, as transformers' ``TorchExportableModuleForDecoderOnlyLM`` exports one): the tokens
        that end a generation (the model's ``eos_token_id``), stored in the bundle's generation
        record (``liteexport generate``, runtime_py.generation).
    tokenizer
        A Hugging Face ``tokenizer.json`` stored in the bundle, so that ``liteexport generate
        --prompt TEXT`` encodes the prompt and decodes the tokens (on the desktop).

    Returns
    -------
    Exported
        The bundle's size in bytes, an int; ``.notes``: the notes the CLI prints (the self-check's
        result, the cost of narrowed weights, float64 inputs converted...), each also logged at
        INFO by the ``liteexport`` logger as it is made; ``.summary``: the CLI's "Wrote ..." line.

    Raises
    ------
    ModelError, UnsupportedNodesError, VerificationError, OutputError, InputError
        Each a ``runtime_py.errors.LiteExportError`` with the CLI's exit code in ``exit_code``.

    Examples
    --------
    >>> import torch, liteexport
    >>> model = torch.nn.Sequential(torch.nn.Linear(4, 2), torch.nn.ReLU())
    >>> liteexport.export(model, "tiny.ptl", input_shapes={"forward": [(1, 4)]})  # doctest: +SKIP
    1520
    >>> liteexport.export(model, "tiny.ptl", example_inputs=[(torch.randn(1, 4),)])  # doctest: +SKIP
    >>> liteexport.export(bert, "bert.ptl", input_shapes=["1xS:int64", "1xS:int64"],
    ...                   dims={"S": (1, 128)})  # doctest: +SKIP
    """
    if lower is False:
        raise InputError("lower=False: export needs something to lower (True, submodule names or 'auto')")
    if lower is not True and not isinstance(lower, (str, list, tuple)):
        raise InputError(f"lower: expected True, 'auto' or a list of submodule names, got {lower!r}")
    if methods is not None and (isinstance(methods, str) or not all(isinstance(m, str) for m in methods)):
        raise InputError(f"methods: expected a list of method names, got {methods!r}")
    if specialize is not None and not (isinstance(specialize, Mapping)
                                       and all(isinstance(v, Mapping) for v in specialize.values())):
        raise InputError(f"specialize: expected a mapping method -> {{argument: value}}, got {specialize!r}")
    if extra_files is not None and not (isinstance(extra_files, Mapping) and all(
            isinstance(k, str) and isinstance(v, (str, bytes)) for k, v in extra_files.items())):
        raise InputError("extra_files: expected a mapping name -> content (str or bytes)")
    if weights not in WEIGHT_PRECISIONS:
        raise InputError(f"weights: expected one of {', '.join(WEIGHT_PRECISIONS)}, got {weights!r}")
    if quantize not in QUANTIZATIONS:
        raise InputError(f"quantize: expected one of {', '.join(QUANTIZATIONS)}, got {quantize!r}")
    files = {name: content.encode() if isinstance(content, str) else content
             for name, content in (extra_files or {}).items()}
    request = Request(methods=tuple(methods or ()), input_shapes=_shapes(input_shapes), dims=_dims(dims),
                      extra_files=files, strip_debug=strip_debug, weights=weights, quantize=quantize,
                      calibration=_examples(calibration_inputs, "calibration_inputs"),
                      examples=_examples(example_inputs),
                      lower=() if lower is True else ((lower,) if isinstance(lower, str) else tuple(lower)),
                      specialize={m: dict(v) for m, v in (specialize or {}).items()}, check=check,
                      frontend=frontend or "", stop_ids=tuple(int(t) for t in stop_ids),
                      tokenizer=Path(tokenizer).read_bytes() if tokenizer is not None else b"")
    result = run_export(module, path, request, progress=LOG.debug, note=LOG.info)
    return Exported.of(result)
