"""The export pipeline: the one place an export runs, for ``liteexport export`` and
``liteexport.export`` alike, with one set of rules.

Its stages, each a function of this module handing plain data to the next:

    load     MODEL (``file.py:Name``, an archive, or a module object) -> `Source`: the module
             scripted in eval mode ("script"), the archive's compilation unit, and how to script
             it again with a type per module (partial lowering needs that of Python sources)
    refer    torch's outputs on the example inputs (stored as test vectors) and on random
             inputs of the static input shapes (for the self-check only); recorded before
             lowering, because torch's selective lowering edits the module it lowers
    select   partial lowering only: the submodules to lower (the model scripted again with a
             type per module when torch's selective lowering needs that)
    lower    `Source` -> `Lowering`: a `WholeLowering` (every method compiled: a CompiledModule;
             specialized too, compiled for the values given), or a `MixedLowering` (partial, or
             lowered already by torch's to_backend: a ScriptModule holding lowered parts, the rest
             TorchScript bytecode); `Mode` names which
    check    the self-check: a whole lowering's methods in runtime_py against torch's outputs
    narrow   ``--quantize`` / ``--weights fp16``: a whole lowering's weights (and, for int8, its
             activations) narrowed, with what that costs against the float program
    pack     the bundle's bytes, once (debug table, test vectors and their tolerances as extra
             files); a mixed bundle is self-checked as the bytes packed, so what is written is what
             was checked
    write    the bytes to the output, atomically (nothing is written when any stage fails)

The rules (``check_options``, before loading; ``check_request``, once the model is known):
``lower`` (submodules or ``auto``) and ``specialize`` exclude each other; a
module lowered already takes no ``methods`` or ``input_shapes`` (it is packed as it is);
``specialize`` is a whole lowering of the methods it names (and ``methods``), compiled for its
values: the model is then seen through ``liteexport.specialize.reference_module``, whose methods
take the Tensor arguments only, as the bundle's do; example inputs are stored and checked in every
mode; the self-check runs whenever there is something to run it on, unless ``check`` is False.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from liteexport.errors import OutputError
from liteexport.export_inputs import float32_sets, implied_shapes, read_examples, read_extra_files
from liteexport.input_spec import DimRange, TensorSpec, as_tensor_spec
from liteexport.lowered import CompiledModule
from liteexport.narrowing import narrow
from liteexport.test_vectors import StoredTolerance, TestVector
from runtime_py.errors import InputError

Inputs = Sequence[np.ndarray]
Shape = tuple[int, ...]
Report = Callable[[str], None]

RESERVED_PREFIX = "liteexport/"  # the extra files liteexport writes itself (debug table, test vectors)


class Mode(Enum):
    """How a model is lowered (``check_request`` decides): each mode's result is a WholeLowering
    (WHOLE, SPECIALIZED) or a MixedLowering (PARTIAL, PRELOWERED)."""

    WHOLE = "whole"  # every method compiled
    SPECIALIZED = "specialized"  # whole, compiled for the values of the non-Tensor arguments given
    PARTIAL = "partial"  # the submodules chosen compiled (torch's selective to_backend), the rest TorchScript
    PRELOWERED = "lowered by torch's to_backend"  # packed as it is


WHOLE, SPECIALIZED, PARTIAL, PRELOWERED = Mode.WHOLE, Mode.SPECIALIZED, Mode.PARTIAL, Mode.PRELOWERED


def _quiet(_: str) -> None:
    """A report nobody reads."""


@dataclass(frozen=True)
class Request:
    """What to export and how; every field has the meaning of the CLI option of the same name."""

    methods: tuple[str, ...] = ()  # () : forward and every @torch.jit.export method
    input_shapes: Mapping[str, tuple[TensorSpec, ...]] = field(default_factory=dict)  # method -> its inputs
    dims: Mapping[str, DimRange] = field(default_factory=dict)  # the named dims' bounds (--dim S=1..128)
    examples: Mapping[str, tuple[tuple[np.ndarray, ...], ...]] = field(default_factory=dict)  # method -> input sets
    example_files: tuple[tuple[str, str], ...] = ()  # (method, .npy/.npz file): read once the model is loaded
    lower: tuple[str, ...] = ()  # () : the whole module; ("auto",) or dotted submodule names
    specialize: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # method -> argument -> value
    check: bool = True
    extra_files: Mapping[str, bytes] = field(default_factory=dict)  # name -> content, as torch's _extra_files
    strip_debug: bool = False  # leave the debug table out (errors then name instructions only)
    weights: str = "fp32"  # "fp16": float32 weights stored as float16 (liteexport.weight_precision)
    quantize: str = "none"  # "dynamic-int8": linear layers' weights stored as per-channel int8; "int8": static
    calibration: Mapping[str, tuple[tuple[np.ndarray, ...], ...]] = field(default_factory=dict)  # int8: method -> sets
    calibration_files: tuple[tuple[str, str], ...] = ()  # (method, .npy/.npz file): read once the model is loaded
    frontend: str = ""  # "export" or "torchscript"; "": the model's own, or export unless TorchScript is needed (load)
    stop_ids: tuple[int, ...] = ()  # a decoder LM's stop tokens, in its generation record (liteexport.generatable)
    tokenizer: bytes = b""  # a Hugging Face tokenizer.json stored for `liteexport generate --prompt`


@dataclass(frozen=True)
class Source:
    """The model, scripted: the ``load`` and ``script`` stages' result."""

    scripted: Any  # a ScriptModule in eval mode
    functions: Any = None  # an archive's compilation unit (its free functions); None otherwise
    rescript: Callable[[], Any] | None = None  # the model scripted with a type per module, when it can be
    selection: Any = None  # partial lowering: the submodules chosen (liteexport.partial.Selection), once chosen
    was_training: bool = False  # the model came in training mode; it is exported in eval mode
    frontend: str = "torchscript"  # "export": ``scripted`` is the eager module (or ep.module()), see ``program``
    program: Any = None  # the torch.export front end's ExportedProgram, when given (None: exported by ``lower``)


@dataclass(frozen=True)
class WholeLowering:
    """The ``lower`` stage's result when every method is compiled: one CompiledModule."""

    mode: Mode  # WHOLE or SPECIALIZED
    compiled: CompiledModule
    lowered: tuple[str, ...] = ()  # SPECIALIZED: METHOD:ARG=VALUE

    @property
    def method_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.compiled.methods)


@dataclass(frozen=True)
class MixedLowering:
    """The ``lower`` stage's result when lowered parts sit in TorchScript: a ScriptModule holding them."""

    mode: Mode  # PARTIAL or PRELOWERED
    module: Any
    debug_table: Any = None  # PARTIAL: the lowered nodes seen from the outer call (DebugTable)
    lowered: tuple[str, ...] = ()  # PARTIAL: the submodules compiled
    unlowered: tuple[tuple[str, str], ...] = ()  # PARTIAL with auto: (submodule, why it stayed TorchScript)

    @property
    def method_names(self) -> tuple[str, ...]:
        return tuple(self.module._c._method_names())


Lowering = WholeLowering | MixedLowering


@dataclass(frozen=True)
class Result:
    """What an export wrote, and what the CLI prints of it."""

    path: str
    size: int  # bytes written
    summary: str  # "Wrote PATH: N bytes; ..." (and, for partial lowering, what went where)
    notes: tuple[str, ...] = ()  # the compiler's and the self-check's, one line each


# ---- load and script ---------------------------------------------------------------------------

def check_output(path: str | Path) -> None:
    """Fail before the slow work when ``path`` obviously cannot be written (OutputError, exit 8)."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory")
    if not folder.is_dir():
        raise OutputError(f"cannot write {path}: folder {folder} does not exist")


def load(model: Any, request: Request | None = None, note: Report = _quiet) -> Source:
    """MODEL, loaded for its front end (liteexport.export_frontend.choose_frontend): a torch.export
    program (an ExportedProgram or ``.pt2`` file) as it is; a TorchScript archive or ScriptModule
    scripted in eval mode; a Python model (``file.py:Name`` or an nn.Module) in eval mode for
    torch.export, or scripted with ``--frontend torchscript``, or by default when ``request`` needs
    TorchScript (``note`` says why). The caller's module is left as it is."""
    from liteexport import export_frontend as ef
    from liteexport.model_loading import load_model, load_module, script_built, script_unshared
    from liteexport.to_backend import scripted_module

    request = request or Request()
    frontend = ef.choose_frontend(model, request.frontend)
    built = None
    if not frontend:  # a Python model, no front end asked: torch.export unless the request needs TorchScript
        built = load_module(str(model)) if isinstance(model, (str, Path)) else model
        scripted = _is_scripted(built)
        why = "" if scripted else ef.torchscript_reason(
            built, methods=request.methods, lower=bool(request.lower), specialize=bool(request.specialize),
            traced=[*request.input_shapes, *request.examples, *(method for method, _ in request.example_files)])
        frontend = ef.TORCHSCRIPT if why or scripted else ef.EXPORT
        if why:
            note(f"scripted with TorchScript, the legacy front end: {why}")
    if frontend == ef.EXPORT:
        module, program, training = ef.load_for_export(model, built)
        return Source(module, was_training=training, frontend=ef.EXPORT, program=program)
    if isinstance(model, (str, Path)):
        spec = str(model)
        loaded = load_model(spec) if built is None else script_built(built, spec)
        from_source = spec.rpartition(":")[0].endswith(".py")
        return Source(loaded.scripted, loaded.functions,
                      (lambda: load_model(spec, share_types=False).scripted) if from_source else None,
                      was_training=loaded.was_training)
    training = bool(getattr(model, "training", False))
    scripted = scripted_module(model)  # in eval mode; the caller's module is left as it is
    return Source(scripted, None, None if scripted is model else lambda: script_unshared(model).eval(),
                  was_training=training)


def _is_scripted(module: Any) -> bool:
    import torch

    return isinstance(module, torch.jit.ScriptModule)


def check_options(request: Request) -> None:
    """The rules ``request``'s options obey whatever the model: InputError (exit 6) when they
    conflict. Checked once, before the model is loaded, for the CLI and the API alike."""
    used = {name for specs in request.input_shapes.values() for spec in specs for name in spec.dim_names}
    unbounded, unused = sorted(used - set(request.dims)), sorted(set(request.dims) - used)
    if unbounded:
        raise InputError(f"the input shapes name dim {', '.join(unbounded)}, which has no bounds: give "
                         f"--dim {unbounded[0]}=LO..HI (dims=... in the API)")
    if unused:
        raise InputError(f"--dim {unused[0]} names a dim no input shape uses (a size may be a name: 1x{unused[0]})")
    for name in request.extra_files:
        if not name or name.startswith(RESERVED_PREFIX):
            raise InputError(f"extra file name {name!r}: give a name, not one under {RESERVED_PREFIX!r} "
                             "(liteexport's own files: debug table, test vectors)")

    calibrated = bool(request.calibration or request.calibration_files)
    if request.quantize == "int8" and not calibrated:
        raise InputError("--quantize int8 needs calibration inputs: give --calibration-inputs FILE (calibration_inputs="
                         "[...] in the API), inputs like those the model will see, to observe its activations' ranges")
    if calibrated and request.quantize != "int8":
        raise InputError("calibration inputs (--calibration-inputs) are for --quantize int8 only")
    if request.lower and request.specialize:
        raise InputError("lower (--lower) and specialize (--specialize) exclude each other: give one")


def check_request(source: Source, request: Request) -> Mode:
    """The lowering mode of ``request`` (``check_options`` passed) for ``source``; InputError when
    its options do not apply to it."""
    from liteexport.partial import has_lowered_parts

    if source.frontend == "export":
        if request.lower or request.specialize or set(request.methods) - {"forward"}:
            raise InputError("--lower, --specialize and methods other than forward are the TorchScript front end's: "
                             "give --frontend torchscript (the torch.export front end compiles forward whole)")
        return WHOLE
    narrowing = [f"--weights {request.weights}"] * (request.weights != "fp32") + \
        [f"--quantize {request.quantize}"] * (request.quantize != "none")
    if narrowing and (request.lower or has_lowered_parts(source.scripted)):
        raise InputError(f"{' and '.join(narrowing)} applies to a model lowered whole: its weights are the compiled "
                         "program's (give no --lower)")
    if has_lowered_parts(source.scripted):
        if request.lower or request.specialize or request.methods or request.input_shapes:
            raise InputError("the module is lowered already (torch's to_backend): it is packed as it is, so "
                             "methods, input shapes, lower and specialize do not apply")
        return PRELOWERED
    if request.specialize:
        return SPECIALIZED
    return PARTIAL if request.lower else WHOLE


# ---- refer: torch's outputs, before lowering ------------------------------------------------------

def refer(source: Source, request: Request, methods: Sequence[str] | None,
          progress: Report = _quiet, compiled: CompiledModule | None = None,
          recorded: dict[str, list[TestVector]] | None = None) -> tuple[
              dict[str, list[TestVector]], dict[str, list[TestVector]]]:
    """(stored, checked): the test vectors of the example inputs, stored in the bundle, and what the
    self-check runs: for each of ``methods`` (None: every method with examples or input shapes),
    its stored vectors, else torch's outputs on inputs of its input shapes, one set per sample of the
    named dims (lower bound, upper bound, one between). With ``compiled`` (whole lowering), integer
    inputs that index an embedding table hold ids below its rows (liteexport.typed_inputs).
    ``recorded``: the example inputs' vectors, recorded already (the export front end records them before tracing)."""
    from liteexport.test_vectors import record_test_vectors

    stored: dict[str, list[TestVector]] = dict(recorded or {})
    if request.examples and recorded is None:
        progress(f"recording outputs for {sum(len(v) for v in request.examples.values())} test vector(s)")
        stored = record_test_vectors(source.scripted, request.examples)
    if not request.check:
        return stored, {}
    names = list(methods) if methods is not None else list(dict.fromkeys([*stored, *request.input_shapes]))
    checked: dict[str, list[TestVector]] = {}
    for method in names:
        if method in stored:
            checked[method] = stored[method]
        elif method in request.input_shapes:
            input_sets = [check_inputs(request.input_shapes[method], sizes, compiled, method, seed)
                          for seed, sizes in enumerate(dim_samples(request.dims))]
            checked.update(record_test_vectors(source.scripted, {method: input_sets}))
    return stored, checked


def dim_samples(dims: Mapping[str, DimRange]) -> list[dict[str, int]]:
    """The sizes the self-check runs the named dims at: every lower bound, every upper bound, and
    one size between (the midpoint), without repeats; one empty sample without named dims."""
    samples = [{name: d.lo for name, d in dims.items()}, {name: d.hi for name, d in dims.items()},
               {name: (d.lo + d.hi) // 2 for name, d in dims.items()}]
    return [dict(t) for t in dict.fromkeys(tuple(sorted(s.items())) for s in samples)]


def check_inputs(specs: Sequence[TensorSpec], sizes: Mapping[str, int], compiled: CompiledModule | None,
                 method: str, seed: int) -> tuple[np.ndarray, ...]:
    """One input set of ``specs`` with the named dims at ``sizes``, of each input's dtype."""
    from bundle_format.program import DType
    from liteexport.typed_inputs import method_inputs, typed_input

    shapes = [tuple(sizes[d] if isinstance(d, str) else d for d in spec.shape) for spec in specs]
    programs = {p.method: p for p in compiled.programs} if compiled is not None else {}
    if method in programs and compiled is not None:
        return tuple(method_inputs(programs[method], compiled.weights, shapes, seed))
    rng = np.random.default_rng(seed)
    return tuple(typed_input(shape, DType[spec.dtype.upper()], None, rng) for shape, spec in zip(shapes, specs,
                                                                                                 strict=True))


# ---- lower -------------------------------------------------------------------------------------

def select(source: Source, request: Request, progress: Report = _quiet) -> Source:
    """Partial lowering's first step: the submodules to lower chosen (``request.lower``), and the
    source as that choice needs it (scripted again with a type per module, when it can and must be)."""
    from liteexport.partial import select_submodules

    progress(f"choosing the submodules to lower ({', '.join(request.lower)})")
    selection = select_submodules(source.scripted, request.lower, rescript=source.rescript, functions=source.functions,
                                  shapes=request.input_shapes.get("forward"))
    return replace(source, scripted=selection.module, selection=selection)


def lower(source: Source, request: Request, mode: Mode, progress: Report = _quiet) -> Lowering:
    """The module lowered as ``mode`` says (see ``check_request``; partial lowering lowers the
    submodules ``select`` chose)."""
    if mode == PRELOWERED:
        return MixedLowering(PRELOWERED, module=source.scripted)
    if mode == SPECIALIZED:
        from liteexport.backend import DEMO_BACKEND
        from liteexport.specialize import specialized_model

        names = tuple(f"{method}:{arg}={value!r}" for method, arguments in request.specialize.items()
                      for arg, value in arguments.items())
        progress(f"compiling for {', '.join(names)}")
        methods = list(dict.fromkeys([*request.specialize, *request.methods]))
        compiled = DEMO_BACKEND.preprocess(specialized_model(source.scripted), methods, request.input_shapes,
                                           progress=progress, functions=source.functions, dims=request.dims,
                                           specialize=request.specialize)
        return WholeLowering(SPECIALIZED, compiled, lowered=names)
    if mode == PARTIAL:
        from liteexport.partial import lower_selection

        if source.selection is None:
            source = select(source, request, progress)
        assert source.selection is not None
        progress(f"lowering {', '.join(source.selection.chosen)}")
        partial = lower_selection(source.selection, source.functions)
        return MixedLowering(PARTIAL, partial.module, debug_table=partial.debug_table, lowered=partial.lowered,
                             unlowered=partial.unlowered)
    if source.frontend == "export":
        from liteexport.export_frontend import compile_for_export

        return WholeLowering(WHOLE, compile_for_export(
            source.scripted, source.program, request.input_shapes.get("forward"), request.dims,
            request.examples.get("forward"), progress))
    from liteexport.backend import DEMO_BACKEND

    compiled = DEMO_BACKEND.preprocess(source.scripted, request.methods, request.input_shapes, progress=progress,
                                       functions=source.functions, dims=request.dims)
    return WholeLowering(WHOLE, compiled)


# ---- pack, check, write --------------------------------------------------------------------------

def pack(lowering: Lowering, stored: Mapping[str, Sequence[TestVector]], request: Request,
         tolerances: Mapping[str, StoredTolerance] | None = None) -> list[memoryview]:
    """The bundle's bytes, in chunks: our own layout for a whole lowering, torch's flatbuffer
    writer for a mixed module; the debug table (unless stripped), the ``stored`` test vectors (with
    the ``tolerances`` the self-check accepted for them, when wider than verify's default: see
    ``narrow``) and the user's extra files ride as extra files."""
    from liteexport import test_vectors as tv

    extra_files = dict(request.extra_files)
    if stored:
        extra_files[tv.TEST_VECTORS_EXTRA_FILE] = tv.encode_test_vectors(stored)
        kept = {method: t for method, t in (tolerances or {}).items() if method in stored}
        if kept:
            extra_files[tv.TOLERANCES_EXTRA_FILE] = tv.encode_tolerances(kept)
    if isinstance(lowering, MixedLowering):
        from liteexport.partial import mixed_bytes

        debug_table = None if request.strip_debug else lowering.debug_table
        return [memoryview(mixed_bytes(lowering.module, extra_files, debug_table))]
    from liteexport.bundle import pack_chunks
    from liteexport.generatable import generation_spec
    from runtime_py.generation import GENERATION_EXTRA_FILE, TOKENIZER_EXTRA_FILE

    spec = generation_spec(lowering.compiled, request.stop_ids)
    if spec is not None:
        extra_files[GENERATION_EXTRA_FILE] = spec.to_json()
    if request.tokenizer:
        extra_files[TOKENIZER_EXTRA_FILE] = request.tokenizer
    return pack_chunks(lowering.compiled, extra_files, debug=not request.strip_debug)


def check(source: Source, lowering: WholeLowering, checked: Mapping[str, Sequence[TestVector]]) -> tuple[str, ...]:
    """The self-check of a whole lowering's notes, one per method (passed with its largest error, or
    skipped and why); VerificationError (exit 9) when a method's outputs differ from torch's."""
    from liteexport import self_check

    return tuple(self_check.check_vectors(source.scripted, lowering.compiled, checked))


def check_mixed(chunks: Sequence[memoryview], checked: Mapping[str, Sequence[TestVector]]) -> tuple[str, ...]:
    """The self-check of a mixed bundle, on the bytes packed (what is written is what was checked)."""
    from liteexport import self_check

    return self_check.check_mixed(b"".join(chunks), checked)


def write(path: str | Path, chunks: Sequence[memoryview]) -> int:
    """Write the bundle atomically; returns its size."""
    from liteexport.atomic_write import write_atomic

    write_atomic(path, chunks)
    return sum(chunk.nbytes for chunk in chunks)


def summary(path: str | Path, size: int, lowering: Lowering) -> str:
    """The result line(s) the CLI prints."""
    if isinstance(lowering, WholeLowering):
        compiled = lowering.compiled
        instructions = sum(len(p.instructions) for p in compiled.programs)
        weight_bytes = sum(int(w.nbytes) for w in compiled.weights)
        specialized = f"; compiled for {', '.join(lowering.lowered)}" if lowering.mode == SPECIALIZED else ""
        return (f"Wrote {path}: {size:,} bytes; methods: {', '.join(lowering.method_names)}{specialized}; "
                f"{instructions} instructions; weights: {len(compiled.weights)} tensors, {weight_bytes:,} bytes")
    if lowering.mode == PRELOWERED:
        return f"Wrote {path}: {size:,} bytes (lowered by torch's to_backend)"
    from liteexport.partial import engine_report

    lines = [f"Wrote {path}: {size:,} bytes; lowered: {', '.join(lowering.lowered)}"]
    if lowering.unlowered:
        lines.append("kept as TorchScript bytecode:")
        lines += [f"  {name}: {why}" for name, why in lowering.unlowered]
    lines.append("runs in:")
    lines += [f"  {line}" for line in engine_report(path)]
    return "\n".join(lines)


def _reads_training(scripted: Any) -> bool:
    """Whether any method's code reads a module's ``training`` flag (dropout, batch norm, or the
    model's own ``if self.training``): only then does exporting in eval mode change what it computes."""

    if not hasattr(scripted, "_c"):  # an eager module (torch.export front end): its code is not at hand
        return True

    def nodes(block: Any) -> Any:
        for node in block.nodes():
            yield node
            for inner in node.blocks():
                yield from nodes(inner)

    return any(n.kind() == "prim::GetAttr" and n.s("name") == "training"
               for name in scripted._c._method_names() for n in nodes(scripted._c._get_method(name).inlined_graph))


def _specialized_source(source: Source, request: Request) -> tuple[Source, Request]:
    """``source`` seen through the module whose methods take the Tensor arguments only (the
    specialized values passed for the others), and ``request`` with its values checked against the
    methods' signatures (ModelError otherwise; liteexport.specialize)."""
    from liteexport.specialize import checked_values, reference_module

    values = checked_values(source.scripted, request.specialize)
    return (replace(source, scripted=reference_module(source.scripted, values, request.methods), rescript=None),
            replace(request, specialize=values))


def _check_examples_lowered(request: Request, lowering: Lowering) -> None:
    """Whole lowering stores test vectors of lowered methods only (InputError otherwise)."""
    unlowered = sorted(set(request.examples) - set(lowering.method_names))
    if isinstance(lowering, WholeLowering) and unlowered:
        raise InputError(f"--example-inputs names method '{unlowered[0]}', which is not lowered "
                         f"(lowered: {', '.join(lowering.method_names)})")


# ---- the whole run -----------------------------------------------------------------------------

def export(model: Any, path: str | Path, request: Request, progress: Report = _quiet,
           note: Report = _quiet) -> Result:
    """Run every stage: ``model`` (see ``load``) exported to ``path`` as ``request`` says.
    ``progress`` hears each stage as it starts, ``note`` each note as it is made (also in the
    result). Nothing is written when a stage fails."""
    check_output(path)
    # plain int shapes are float32 inputs (liteexport.input_spec)
    request = replace(request, input_shapes={method: tuple(as_tensor_spec(s) for s in specs)
                                             for method, specs in request.input_shapes.items()})
    check_options(request)
    notes: list[str] = []

    def say(text: str) -> None:
        note(text)
        notes.append(text)

    progress(f"loading {model if isinstance(model, (str, Path)) else type(model).__name__}")
    source = load(model, request, say)
    if source.program is not None and not request.input_shapes:  # a torch.export program knows its shapes
        from liteexport.export_frontend import program_shapes

        request = replace(request, input_shapes=program_shapes(source.program))

    request = replace(request, examples=float32_sets(request.examples, "example_inputs", say),
                      calibration=float32_sets(request.calibration, "calibration_inputs", say))
    if request.specialize:
        source, request = _specialized_source(source, request)
    if request.example_files:
        examples = dict(request.examples)
        for method, sets in read_examples(source.scripted, request.example_files, note=say).items():
            examples[method] = examples.get(method, ()) + sets
        request = replace(request, examples=examples, example_files=())
    # each calibration set's name for errors: the API's by number, then the files
    sources = {method: [f"calibration input set {n}" for n in range(len(sets))]
               for method, sets in request.calibration.items()}
    if request.calibration_files:
        calibration = dict(request.calibration)
        for method, sets in read_examples(source.scripted, request.calibration_files, "--calibration-inputs",
                                          say).items():
            calibration[method] = calibration.get(method, ()) + sets
        for method, file in request.calibration_files:
            sources.setdefault(method, []).append(file)
        request = replace(request, calibration=calibration, calibration_files=())
    mode = check_request(source, request)
    if mode != PRELOWERED:
        shapes = implied_shapes(source, request)
        for method in shapes.keys() - request.input_shapes.keys():
            say(f"{method} is compiled for its example inputs' shapes, {', '.join(map(str, shapes[method]))} "
                "(give input shapes, with named dims, for other sizes)")
        request = replace(request, input_shapes=shapes)
    if source.was_training and _reads_training(source.scripted):
        say("the model was in training mode; it is exported in eval mode (dropout off, batch norm with its "
            "running statistics), as inference needs")
    if mode == PARTIAL:  # torch's selective lowering edits the module: torch's outputs come first
        source = select(source, request, progress)
        stored, checked = refer(source, request, request.methods or None, progress)
    recorded = None
    if source.frontend == "export" and request.examples:
        # torch.export traces the model on these inputs: ones the model refuses are the user's input
        # (exit 6, as on the TorchScript path), said before torch.export fails on them less clearly
        recorded, _ = refer(source, replace(request, check=False), None, progress)
    lowering = lower(source, request, mode, progress)
    if isinstance(lowering, MixedLowering):
        if mode != PARTIAL:  # (PARTIAL recorded torch's outputs before torch's selective lowering)
            stored, checked = refer(source, request, None, progress)
        progress(f"packing {path}")
        chunks = pack(lowering, stored, request)
        if request.check and checked:
            progress("self-check: runtime_py against torch")
            for text in check_mixed(chunks, checked):
                say(text)
        size = write(path, chunks)
        return Result(str(path), size, summary(path, size, lowering), tuple(notes))
    for text in lowering.compiled.notes:
        say(text)
    # after lowering: a model that does not compile fails before torch runs it
    _check_examples_lowered(request, lowering)
    stored, checked = refer(source, request, lowering.method_names, progress, lowering.compiled, recorded)
    if request.check:
        if checked:  # the self-check notes the methods it could not check, without a stage of its own
            progress("self-check: runtime_py against torch")
        for text in check(source, lowering, checked):
            say(text)
    tolerances: dict[str, StoredTolerance] = {}
    if request.weights != "fp32" or request.quantize != "none":
        # with --no-check, the cost is still stated on the stored vectors (and the calibration inputs)
        lowering, cost, tolerances = narrow(lowering, request, {**stored, **checked}, progress, source, sources)
        for text in cost:
            say(text)
        for method, tolerance in tolerances.items():
            say(f"liteexport verify checks {method}'s test vectors within atol {tolerance.atol:.3g} by default: the "
                f"tolerance they passed here ({tolerance.rule}), stored in the bundle")
    progress(f"packing {path}")
    chunks = pack(lowering, stored, request, tolerances)
    size = write(path, chunks)
    return Result(str(path), size, summary(path, size, lowering), tuple(notes))


__all__ = ["PARTIAL", "PRELOWERED", "SPECIALIZED", "WHOLE", "Lowering", "MixedLowering", "Mode", "Request", "Result",
           "Source", "WholeLowering", "check", "check_mixed", "check_options", "check_output", "check_request",
           "export", "load", "lower", "narrow", "pack",
           "read_examples", "read_extra_files", "refer", "select", "summary", "write"]
