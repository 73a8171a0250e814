"""The ``liteexport`` command line: export, inspect, run, profile, verify, generate.

Errors are caught in exactly one place, ``_Group.invoke``: a LiteExportError prints
``Error: <message>`` on stderr and exits with the error's exit code; anything else is
our bug and becomes an InternalError (exit 70). ``--debug`` adds the Python traceback.
Click's own usage errors keep click's exit code 2. torch is imported only by ``export``.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from liteexport import __version__
from liteexport.errors import VerificationError
from liteexport.input_spec import DimRange, TensorSpec, parse_dim_range, parse_tensor_specs
from liteexport.run_inputs import RandomSpec
from liteexport.specialize import by_method, parse_specialization
from runtime_py.errors import InputError, InternalError, LiteExportError


class _Group(click.Group):
    """The command group; its ``invoke`` is the CLI's one catch site."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise  # click's own: usage errors exit 2, --help/--version exit 0
        except LiteExportError as exc:
            _fail(ctx, exc, exc)
        except KeyboardInterrupt:  # Ctrl-C: the atomic writer left any old output untouched
            click.echo("Error: interrupted (SIGINT); nothing was written", err=True)
            ctx.exit(130)
        except Exception as exc:  # anything else is a bug in liteexport
            hint = "" if ctx.params.get("debug") else " (rerun with --debug for the traceback)"
            _fail(ctx, InternalError(f"{type(exc).__name__}: {exc}{hint}"), exc)


def _fail(ctx: click.Context, error: LiteExportError, cause: BaseException) -> None:
    if ctx.params.get("debug"):
        click.echo("".join(traceback.format_exception(cause)).rstrip(), err=True)
    click.echo(f"Error: {error.message}", err=True)
    ctx.exit(error.exit_code)


class _ParsedType(click.ParamType):  # type: ignore[type-arg]  # generic only from click 8.2
    """A click parameter parsed by a function that raises ValueError on bad text."""

    def __init__(self, name: str, parse: Callable[[str], Any]) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str):
            return value
        try:
            return self._parse(value)
        except ValueError as exc:
            self.fail(str(exc), param, ctx)


def _note(text: str) -> None:
    """A note on stderr: something the user should know that is not an error."""
    click.echo(f"Note: {text}", err=True)


def _parse_input_shape(text: str) -> tuple[str, tuple[TensorSpec, ...]]:
    """``forward:1x3x32x32,1x10`` or ``forward:1xS:int64,1xS:int64`` (method optional, default
    forward; a size may be a dim's name; each shape may end in ``:DTYPE``) -> (method, specs)."""
    first, sep, rest = text.partition(":")
    method, specs = (first, rest) if sep and first.isidentifier() and not _is_shape(first) else ("forward", text)
    if sep and not first.isidentifier() and not _is_shape(first):
        raise ValueError(f"'{first}' is not a method name")
    return method, parse_tensor_specs(specs)


def _is_shape(text: str) -> bool:
    """Whether ``text`` reads as a shape (``1x3``, ``1xS``, ``8``) rather than a method name."""
    parts = text.split("x")
    return len(parts) > 1 or text.isdigit()


def _parse_example_inputs(text: str) -> tuple[str, str]:
    """``embed:pair.npz`` -> ("embed", "pair.npz"); a bare file is for forward."""
    method, sep, path = text.partition(":")
    return (method, path) if sep and method.isidentifier() else ("forward", text)


def _parse_extra_file(text: str) -> tuple[str, str]:
    """``labels=labels.txt`` -> ("labels", "labels.txt"); a bare path is stored under its file name."""
    name, sep, path = text.partition("=")
    if not sep:
        name, path = Path(text).name, text
    if not name or not path:
        raise ValueError(f"'{text}' is not NAME=PATH (e.g. labels.txt=data/labels.txt)")
    return name, path


_BYTE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _parse_ids(text: str, option: str) -> tuple[int, ...]:
    """``1,2,3`` -> (1, 2, 3); "" -> ()."""
    try:
        return tuple(int(t) for t in text.replace(" ", "").split(",") if t)
    except ValueError:
        raise ValueError(f"{option} takes token ids separated by commas, e.g. 1,2,3; got {text!r}") from None


def _parse_bytes(text: str) -> int:
    """``4096``, ``512M``, ``2G`` (binary units, an optional ``iB``/``B``) -> bytes, at least 1."""
    number = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = number[-1:] if number[-1:] in _BYTE_UNITS else ""
    digits = number[: len(number) - len(unit)]
    if not digits.isdigit() or int(digits) < 1:
        raise ValueError(f"'{text}' is not a size in bytes (such as 4096, 512M or 2G)")
    return int(digits) * _BYTE_UNITS[unit]


INPUT_SHAPE = _ParsedType("[METHOD:]SHAPE[:DTYPE][,SHAPE...]", _parse_input_shape)
DIM = _ParsedType("NAME=LO..HI", parse_dim_range)
EXAMPLE_INPUTS = _ParsedType("[METHOD:]FILE", _parse_example_inputs)
RANDOM_SPEC = _ParsedType("SHAPE[:DTYPE]", RandomSpec.parse)
BYTES = _ParsedType("BYTES", _parse_bytes)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="liteexport")
@click.option("--debug", is_flag=True, help="Show the Python traceback when a command fails.")
def cli(debug: bool) -> None:
    """Lower PyTorch models through the demo compiler backend into PTMF bundles (.ptl),
    look inside them, and run them with runtime_py (numpy, no torch).

    \b
    Examples:
      liteexport export examples/tiny_cnn.py:TinyCNN -o tiny.ptl
      liteexport export model.pt -o model.ptl --input-shape forward:1x3x32x32
      liteexport inspect tiny.ptl
      liteexport run tiny.ptl --random 1x3x32x32
      liteexport verify tiny.ptl --engine all

    \b
    Exit codes:
      0 success, 1 other user error, 2 usage error, 3 bad model, 4 unsupported nodes,
      5 bad bundle, 6 bad input, 7 execution failure (--max-instructions/--timeout
      exceeded included), 8 output not writable,
      9 verification failed, 130 interrupted (Ctrl-C),
      70 internal error (a bug in liteexport: please report it)
    """


@cli.command(short_help="Compile a model into a bundle (.ptl).")
@click.argument("model", metavar="MODEL")
@click.option("-o", "--output", "output", required=True, type=click.Path(),
              help="Bundle to write (.ptl). Nothing is written when the export fails.")
@click.option("--method", "methods", multiple=True, metavar="NAME",
              help="Method to lower; repeat for several. "
                   "Default: forward and every @torch.jit.export method.")
@click.option("--input-shape", "input_shapes", multiple=True, type=INPUT_SHAPE,
              help="Input shape(s) of a method, e.g. forward:1x3x32x32, or forward:1x3x32x32,1x10 for two "
                   "inputs; a shape may end in :DTYPE (float32, int64, int32, bool; default float32) and a size "
                   "may be a dim's name bounded by --dim, e.g. forward:1xS:int64,1xS:int64. The method defaults "
                   "to forward; repeating the option for a method adds inputs in order.")
@click.option("--dim", "dims", multiple=True, type=DIM,
              help="Bounds of a named dim of --input-shape, inclusive, e.g. S=1..128: the program is compiled "
                   "once for every size in the range, and self-checked at the lower bound, the upper bound "
                   "and one size between. Repeatable.")
@click.option("--example-inputs", "example_inputs", multiple=True, type=EXAMPLE_INPUTS,
              help="Inputs (.npy/.npz) for a method, e.g. x.npy or embed:pair.npz (method defaults to "
                   "forward). Each occurrence is one test vector: its outputs from torch are stored in the "
                   "bundle for `liteexport verify`.")
@click.option("--no-check", "no_check", is_flag=True,
              help="Skip the self-check (by default, when input shapes or example inputs are given, the "
                   "compiled program is run in runtime_py and the model in torch on the same inputs, and the "
                   "export fails with exit code 9 when they differ). With --weights/--quantize the cost against "
                   "the float model is still stated where there are inputs (calibration, held-out, example), "
                   "but not enforced.")
@click.option("-q", "--quiet", is_flag=True, help="Do not print progress to stderr.")
@click.option("--lower", "lower", multiple=True, metavar="SUBMODULE|auto",
              help="Compile only this submodule (dotted name; repeat for several) and keep the rest as "
                   "TorchScript bytecode; 'auto' picks the largest submodules that compile and lists the rest "
                   "with why. Uses liteexport's torch backend (a C++ compiler on first use).")
@click.option("--specialize", "specialize", multiple=True, metavar="[METHOD:]ARG=VALUE",
              type=_ParsedType("[METHOD:]ARG=VALUE", parse_specialization),
              help="Lower a method with non-Tensor arguments for this value (e.g. forward:k=3, scale=0.5, "
                   "dims=[1,2]; repeat per argument): the value is compiled in, and the bundle's method takes "
                   "the Tensor arguments only. Works with --input-shape, --method and --example-inputs.")
@click.option("--extra-file", "extra_files", multiple=True, metavar="NAME=PATH",
              type=_ParsedType("NAME=PATH", _parse_extra_file),
              help="Store this file in the bundle under NAME (labels, normalization constants, ...), as torch "
                   "stores _extra_files: runtime_py, torch._C._get_model_extra_files, the Java API and "
                   "`liteexport inspect` read it. Repeatable; a bare PATH is stored under its file name.")
@click.option("--strip-debug", is_flag=True,
              help="Leave the debug table out of the bundle (smaller; errors then name instructions, not "
                   "source lines).")
@click.option("--weights", "weights", type=click.Choice(["fp32", "fp16"]), default="fp32", show_default=True,
              help="Storage of the compiled program's float weights: fp16 halves a float model's bundle (every "
                   "engine widens them to float32 when loading); the export states the error this costs "
                   "against the float model and fails (exit 9) beyond 1e-2 x the output's magnitude.")
@click.option("--quantize", "quantize", type=click.Choice(["none", "dynamic-int8", "int8"]), default="none",
              show_default=True,
              help="dynamic-int8: the weights of linear layers (and LSTM/GRU cells) and embedding tables stored as "
                   "int8, symmetric per output channel (torch's qint8 tensors), about 4x smaller; every engine "
                   "dequantizes them when loading and computes in float; fails (exit 9) beyond 5e-2 x the "
                   "output's magnitude against the float model. int8: static quantization (needs "
                   "--calibration-inputs): conv and linear weights int8 per output channel, activations int8 per "
                   "tensor on grids observed on the calibration inputs less the held-out ones; fails (exit 9) beyond "
                   "0.1 x the output's range against the float model on any of them. Either states its error.")
@click.option("--calibration-inputs", "calibration_inputs", multiple=True, type=EXAMPLE_INPUTS,
              help="Inputs (.npy/.npz, as --example-inputs) for --quantize int8 to observe the activations' ranges "
                   "on, e.g. img1.npy or embed:pair.npz (method defaults to forward). Repeatable: a few inputs like "
                   "those the model will see. The last quarter of them (at least one of two or more) is held out "
                   "to check the result on; a single one is checked on 4 sets drawn from its per-channel "
                   "statistics.")
@click.option("--stop-ids", "stop_ids", type=_ParsedType("IDS", lambda t: _parse_ids(t, "--stop-ids")), default="",
              help="A decoder LM's stop tokens, e.g. 2 or 2,32000: stored in the bundle's generation record, where "
                   "`liteexport generate` and the engines' generators stop.")
@click.option("--tokenizer", "tokenizer", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A Hugging Face tokenizer.json stored in the bundle, so that `liteexport generate --prompt TEXT` "
                   "encodes the prompt and decodes what it generates.")
@click.option("--frontend", "frontend", type=click.Choice(["export", "torchscript"]), default=None,
              help="How a Python model (file.py:Name) becomes a graph: torch.export.export (with --input-shape and "
                   "--dim as its example inputs and dynamic_shapes, or --example-inputs) or TorchScript (scripted, "
                   "the legacy path). Default: export, or torchscript with a note when the export needs it (--lower, "
                   "--specialize, methods other than forward, no input shapes). A .pt2 file (torch.export.save) "
                   "always takes the export front end, a TorchScript archive the TorchScript one.")
def export(model: str, output: str, methods: tuple[str, ...],
           input_shapes: tuple[tuple[str, tuple[TensorSpec, ...]], ...], dims: tuple[DimRange, ...],
           example_inputs: tuple[tuple[str, str], ...], no_check: bool, quiet: bool,
           lower: tuple[str, ...], specialize: tuple[tuple[str, str, Any], ...],
           extra_files: tuple[tuple[str, str], ...], strip_debug: bool, weights: str, quantize: str,
           calibration_inputs: tuple[tuple[str, str], ...], stop_ids: tuple[int, ...], tokenizer: str | None,
           frontend: str | None) -> None:
    """Script MODEL in eval mode, compile it with the demo backend and write a bundle.

    MODEL is a TorchScript archive written by torch.jit.save (model.pt; scripted or
    traced), a torch.export program written by torch.export.save (model.pt2), or
    path/file.py:Name where Name is an nn.Module class (built with no
    arguments) or a function returning a module. Unsupported nodes are all reported at
    once, grouped by kind, each with its source line and module hierarchy. With input
    shapes or example inputs, the compiled program is checked against torch before the
    bundle is written (--no-check skips that). Progress goes to stderr once an export
    takes more than a second (-q: never).

    \b
    Examples:
      liteexport export examples/tiny_cnn.py:TinyCNN -o tiny.ptl
      liteexport export model.pt -o model.ptl --method forward --method encode
      liteexport export net.py:build -o net.ptl --input-shape forward:1x3x224x224
      liteexport export bert.pt -o bert.ptl --input-shape forward:1xS:int64,1xS:int64 --dim S=1..128
      liteexport export net.py:Net -o net.ptl --input-shape forward:1x16,1x4 --quiet
      liteexport export net.py:Net -o net.ptl --example-inputs x1.npy --example-inputs x2.npy
      liteexport export net.py:Net -o net.ptl --lower encoder --lower head
      liteexport export net.py:Net -o net.ptl --lower auto
      liteexport export net.py:Net -o net.ptl --extra-file labels.txt=labels.txt --strip-debug
      liteexport export net.py:Net -o net.ptl --input-shape forward:1x3x224x224 --weights fp16
      liteexport export bert.pt -o bert.ptl --input-shape forward:1x128:int64,1x128:int64 --quantize dynamic-int8
      liteexport export net.py:Net -o net.ptl --quantize int8 --calibration-inputs a.npy --calibration-inputs b.npy
    """
    from liteexport import pipeline
    from liteexport.progress import Progress

    shapes: dict[str, tuple[TensorSpec, ...]] = {}
    for method, method_shapes in input_shapes:
        shapes[method] = shapes.get(method, ()) + method_shapes
    progress = Progress(enabled=not quiet)

    def note(text: str) -> None:
        if not quiet:
            _note(text)

    bounds = {d.name: d for d in dims}
    if len(bounds) != len(dims):
        raise InputError("--dim: a dim is bounded twice")
    request = pipeline.Request(methods=methods, input_shapes=shapes, dims=bounds, example_files=example_inputs,
                               lower=lower,
                               specialize=by_method(specialize), check=not no_check,
                               extra_files=pipeline.read_extra_files(extra_files),
                               tokenizer=Path(tokenizer).read_bytes() if tokenizer else b"",
                               strip_debug=strip_debug, weights=weights, quantize=quantize,
                               calibration_files=calibration_inputs, frontend=frontend or "", stop_ids=stop_ids)
    result = pipeline.export(model, output, request, progress, note)
    click.echo(result.summary)


@cli.command(short_help="Show what a bundle holds and how big each part is.")
@click.argument("bundle", metavar="BUNDLE")
@click.option("--json", "as_json", is_flag=True, help="Print the description as JSON (for machines).")
def inspect(bundle: str, as_json: bool) -> None:
    """Show what BUNDLE holds and how big each part is.

    Lists the methods and their signatures, the delegate (backend) with each
    compiled program's instruction count and op histogram, the weights, the
    debug table (handle -> node, source line, module hierarchy) and a size
    breakdown by section. Works on plain torch flatbuffers too (no delegate).

    \b
    Examples:
      liteexport inspect tiny.ptl
      liteexport inspect tiny.ptl --json | python -m json.tool
    """
    from liteexport.inspect_bundle import describe, format_description

    description = describe(bundle)
    click.echo(json.dumps(description, indent=2) if as_json else format_description(description))


def _run_limit_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--max-instructions, --timeout and --max-memory: the limits of each method call runtime_py runs."""
    command = click.option(
        "--max-memory", type=BYTES, default=None,
        help="Stop a method call of runtime_py whose compiled program would hold more than this alive "
             "(inputs and results, not weights; checked before each instruction allocates; exit 7). "
             "Units K, M, G (binary). Default: 2G.")(command)
    command = click.option(
        "--timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
        help="Stop a method call of runtime_py that runs longer than this (exit 7). Default: no limit.")(command)
    return click.option(
        "--max-instructions", type=click.IntRange(min=1), default=None, metavar="N",
        help="Stop a method call of runtime_py that interprets more than N bytecode instructions (exit 7): "
             "a hostile bundle can loop forever. Compiled programs are not counted. Default: no limit.")(command)


@cli.command(short_help="Run a method of a bundle with runtime_py.")
@click.argument("bundle", metavar="BUNDLE")
@click.option("--method", default="forward", show_default=True, metavar="NAME", help="Method to run.")
@click.option("-i", "--input", "input_files", multiple=True, metavar="FILE",
              help="Input arrays: a .npy holds one input, a .npz several (taken in the order of the "
                   "method's argument names when its keys are those names, else in file order). Repeatable.")
@click.option("-r", "--random", "randoms", multiple=True, type=RANDOM_SPEC,
              help="A random input of this shape, e.g. 1x3x32x32 or 1,3,32,32:float32 (default float32). "
                   "Repeatable; random inputs follow the --input ones.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed for --random inputs.")
@click.option("-o", "--output", "output", type=click.Path(),
              help="Save outputs to this .npz (as output_0, output_1, ...) instead of printing them.")
@_run_limit_options
def run(bundle: str, method: str, input_files: tuple[str, ...], randoms: tuple[RandomSpec, ...], seed: int,
        output: str | None, max_instructions: int | None, timeout: float | None, max_memory: int | None) -> None:
    """Run a method of BUNDLE with runtime_py (numpy, no torch) and show its outputs.

    \b
    Examples:
      liteexport run tiny.ptl --input x.npy
      liteexport run tiny.ptl --random 1x3x32x32 --seed 1
      liteexport run model.ptl --method encode --input inputs.npz --output out.npz
      liteexport run untrusted.ptl --random 1x3x32x32 --max-instructions 1000000 --timeout 10 --max-memory 512M
    """
    import runtime_py
    from liteexport.inspect_bundle import format_signature
    from liteexport.parity import as_outputs
    from liteexport.pipeline import check_output
    from liteexport.run_inputs import collect_inputs, format_outputs, save_outputs

    if output is not None:
        check_output(output)
    module = runtime_py.load(bundle, max_instructions=max_instructions, timeout=timeout, max_memory=max_memory)
    schema = module.method_schema(method)  # InputError naming the methods there are
    arg_names = [a.name for a in schema.arguments if a.name != "self"]
    inputs = collect_inputs(input_files, randoms, seed, arg_names, note=_note)
    if arg_names and not inputs:
        raise InputError(f"{format_signature(method, schema)} needs {len(arg_names)} input(s): "
                         "give them with --input FILE or --random SHAPE")
    result = module.run_method(method, *inputs)
    outputs = as_outputs(result)
    if output is None:
        click.echo(format_outputs(outputs))
        return
    constants = save_outputs(outputs, output)
    left_out = f" ({', '.join(constants)}: constants, not saved)" if constants else ""
    click.echo(f"Wrote {output}: {len(outputs) - len(constants)} output(s){left_out}")


@cli.command(short_help="Show where a bundle's time goes, per instruction and op, by source line.")
@click.argument("bundle", metavar="BUNDLE")
@click.option("--method", default="forward", show_default=True, metavar="NAME", help="Method to profile.")
@click.option("-i", "--input", "input_files", multiple=True, metavar="FILE",
              help="Input arrays (.npy/.npz), as for `liteexport run`. Repeatable.")
@click.option("-r", "--random", "randoms", multiple=True, type=RANDOM_SPEC,
              help="A random input of this shape, e.g. 1x3x224x224 or 1x8:int64. Repeatable.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed for --random inputs.")
@click.option("--engine", type=click.Choice(["runtime_py", "native", "torch"]), default="runtime_py",
              show_default=True,
              help="Engine to profile: runtime_py (numpy), native (the native core's host tool, built by "
                   "native/build.sh host) or torch (torch's lite interpreter, timed by torch.profiler).")
@click.option("--threads", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Threads the native core and torch compute on (runtime_py: numpy's BLAS threads).")
@click.option("--runs", default=20, show_default=True, type=click.IntRange(min=1), help="Measured runs.")
@click.option("--warmup", default=2, show_default=True, type=click.IntRange(min=0), help="Unmeasured runs first.")
@click.option("--top", default=15, show_default=True, type=click.IntRange(min=1), help="Instructions listed.")
@click.option("--json", "as_json", is_flag=True, help="Print every instruction's and op's cost as JSON.")
@click.option("--chart", type=click.Path(), default=None, help="Also write a PNG bar chart of the top instructions.")
def profile(bundle: str, method: str, input_files: tuple[str, ...], randoms: tuple[RandomSpec, ...], seed: int,
            engine: str, threads: int, runs: int, warmup: int, top: int, as_json: bool, chart: str | None) -> None:
    """Run a method of BUNDLE repeatedly and show where its time goes: per op and per compiled
    instruction (time, calls, share), each instruction with the source line and module
    hierarchy it was compiled from (the bundle's debug table), most expensive first.

    \b
    Examples:
      liteexport profile tiny.ptl --random 1x3x32x32
      liteexport profile model.ptl --random 1x3x224x224 --top 5 --chart profile.png
      liteexport profile model.ptl --input x.npy --json > profile.json
      liteexport profile model.ptl --random 1x3x224x224 --engine native --threads 2
    """
    from liteexport.inspect_bundle import format_signature
    from liteexport.pipeline import check_output
    from liteexport.profile import format_profile, profile_bundle, write_chart
    from liteexport.run_inputs import collect_inputs

    if chart is not None:
        check_output(chart)
    import runtime_py

    schema = runtime_py.load(bundle).method_schema(method)
    arg_names = [a.name for a in schema.arguments if a.name != "self"]
    inputs = collect_inputs(input_files, randoms, seed, arg_names, note=_note)
    if arg_names and not inputs:
        raise InputError(f"{format_signature(method, schema)} needs {len(arg_names)} input(s): "
                         "give them with --input FILE or --random SHAPE")
    result = profile_bundle(bundle, method, inputs, runs=runs, warmup=warmup, engine=engine, threads=threads)
    click.echo(json.dumps(result.as_json(), indent=2) if as_json else format_profile(result, top))
    if chart is not None:
        write_chart(result, chart, top)
        if not as_json:
            click.echo(f"Wrote {chart}")


@cli.command(short_help="Check a bundle's stored test vectors on runtime_py and/or torch.")
@click.argument("bundle", metavar="BUNDLE")
@click.option("--engine", type=click.Choice(["runtime_py", "torch", "all"]), default="runtime_py",
              show_default=True, help="Engine(s) to run the vectors on; torch needs liteexport's torch backend "
                                      "(built on first use with a C++ compiler).")
@click.option("--atol", type=float, help="Absolute tolerance [default: the one the export stored for the method "
              "(narrowed weights: the self-check's), else 1e-05].")
@click.option("--rtol", type=float, help="Relative tolerance [default: the one the export stored for the method, "
              "else 0.0001].")
@_run_limit_options
def verify(bundle: str, engine: str, atol: float | None, rtol: float | None, max_instructions: int | None,
           timeout: float | None, max_memory: int | None) -> None:
    """Run the test vectors stored in BUNDLE (export --example-inputs) on each engine.

    Reports, per method, vector and output, the max abs/rel error against torch's
    outputs recorded at export time, and pass/fail against the tolerance. When a
    delegated method fails, names the first compiled instruction (debug handle and
    source line) where runtime_py and ATen disagree. Exit code 9 when anything fails.

    The tolerance is --atol and --rtol when given, else the one the export stored for
    the method (with --weights fp16 or --quantize the stored outputs are the float
    model's, and the export stores the wider tolerance its self-check accepted), else
    atol 1e-05, rtol 0.0001; the first line of the report says which.

    \b
    Examples:
      liteexport export examples/tiny_cnn.py:TinyCNN -o tiny.ptl --example-inputs x.npy
      liteexport verify tiny.ptl
      liteexport verify tiny.ptl --engine all --atol 1e-4
    """
    from liteexport.verify import ENGINES, format_report, verify_bundle

    engines = ENGINES if engine == "all" else (engine,)
    report = verify_bundle(bundle, engines, atol=atol, rtol=rtol, max_instructions=max_instructions, timeout=timeout,
                           max_memory=max_memory)
    click.echo(format_report(report))
    if not report.passed:
        failed = sum(not c.passed for c in report.checks)
        raise VerificationError(f"{failed} of {len(report.checks)} output check(s) failed")


@cli.command(short_help="Generate tokens with a decoder LM bundle (a KV cache kept as program state).")
@click.argument("bundle", metavar="BUNDLE")
@click.option("--prompt-ids", "prompt_ids", type=_ParsedType("IDS", lambda t: _parse_ids(t, "--prompt-ids")),
              default=None, help="The prompt as token ids, e.g. 1,2,3.")
@click.option("--prompt", "prompt", default=None, metavar="TEXT",
              help="The prompt as text, encoded with the tokenizer the export stored (--tokenizer).")
@click.option("--max-new-tokens", type=click.IntRange(min=1), default=32, show_default=True)
@click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="0: greedy (the most likely token); else sampled at this temperature.")
@click.option("--top-k", type=click.IntRange(min=0), default=0, show_default=True, help="0: no top-k cut.")
@click.option("--top-p", type=click.FloatRange(min=0, max=1, min_open=True), default=1.0, show_default=True,
              help="1: no nucleus cut.")
@click.option("--seed", type=click.IntRange(min=0, max=2**64 - 1), default=0, show_default=True,
              help="The sampler's seed: the same seed gives the same tokens on every engine.")
@click.option("--stop-ids", "stop_ids", type=_ParsedType("IDS", lambda t: _parse_ids(t, "--stop-ids")), default=None,
              help="Stop tokens instead of the bundle's, e.g. 2 (empty: none).")
@click.option("--engine", type=click.Choice(["runtime_py", "torch", "native"]), default="runtime_py",
              show_default=True,
              help="runtime_py (numpy), torch's lite interpreter with liteexport's backend, or the native core "
                   "(its own generation loop, through liteexport_native_run: the tokens come at the end).")
def generate(bundle: str, prompt_ids: tuple[int, ...] | None, prompt: str | None, max_new_tokens: int,
             temperature: float, top_k: int, top_p: float, seed: int, stop_ids: tuple[int, ...] | None,
             engine: str) -> None:
    """Generate up to --max-new-tokens tokens after a prompt with BUNDLE, a decoder LM
    exported from transformers' on-device recipe (its KV cache kept as program state).

    The prompt is prefilled in chunks of at most the upper bound of its named dim,
    then one token per call is decoded. Tokens stream to stdout as they come (text
    when the bundle has a tokenizer and the prompt was --prompt); the last line on
    stderr says why it stopped (a stop token, --max-new-tokens, the end of the cache)
    and the prefill and decode speed in tokens per second.

    \b
    Examples:
      liteexport generate llama.ptl --prompt-ids 1,450,4996 --max-new-tokens 16
      liteexport generate llama.ptl --prompt "Once upon a time" --temperature 0.8 --top-p 0.9 --seed 7
    """
    from liteexport.generation_engines import generate_native, generator_for, tokenizer_of
    from runtime_py.sampling import SamplingConfig

    if (prompt_ids is None) == (prompt is None):
        raise InputError("give the prompt either as --prompt-ids 1,2,3 or as --prompt TEXT")
    tokenizer: Any = None
    if prompt is not None:
        tokenizer = tokenizer_of(bundle)
        ids = list(tokenizer.encode(prompt).ids)
    else:
        ids = list(prompt_ids or ())
    config = SamplingConfig(temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)
    shown: list[int] = []

    def on_token(token: int) -> None:
        if tokenizer is None:
            click.echo(f"{token} ", nl=False)
            return
        before = tokenizer.decode(shown)
        shown.append(token)
        click.echo(tokenizer.decode(shown)[len(before):], nl=False)

    if engine == "native":
        result = generate_native(bundle, ids, max_new_tokens, config, stop_ids)
        for token in result.tokens:
            on_token(token)
    else:
        result = generator_for(bundle, engine).generate(ids, max_new_tokens, config, on_token=on_token,
                                                        stop_ids=stop_ids)
    click.echo("")
    click.echo(f"[{result.stop_reason}] {result.prompt_tokens} prompt tokens at "
               f"{result.prefill_tokens_per_second:.1f} tok/s, {len(result.tokens)} new tokens at "
               f"{result.decode_tokens_per_second:.1f} tok/s ({engine})", err=True)


def main() -> None:
    """Console entry point (``liteexport``)."""
    cli(prog_name="liteexport")
