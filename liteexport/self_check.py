"""The export self-check: the compiled program, run by runtime_py, against the scripted
module run by torch on the same inputs, before anything is written.

It runs whenever inputs can be made: the method's ``--example-inputs`` (their torch
outputs were recorded anyway), else random inputs of its static ``--input-shape``. A
difference beyond the parity tolerance that float32 rounding does not explain (see
``liteexport.parity``; the model is then run in float64 too) fails the export (VerificationError, exit 9)
naming the first instruction where runtime_py and ATen disagree, with its source line
(``liteexport verify``'s localization); when every instruction agrees, the compiled
program itself computes something else than the model, which is a compiler bug.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from liteexport.errors import VerificationError
from liteexport.lowered import CompiledModule
from liteexport.parity import (
    ATOL,
    RTOL,
    as_outputs,
    explained_by_float32,
    is_constant,
    max_errors,
    scaled_atol,
    structure_problem,
    within_tolerance,
)
from liteexport.quantized_parity import DYNAMIC_TOLERANCE, QUANTA, dynamic_linears, output_quantum, quanta_apart
from liteexport.test_vectors import TestVector
from liteexport.verify import Divergence, describe_divergence, divergence_at, localize
from runtime_py.backends.demo import executor
from runtime_py.backends.demo.backend import widened
from runtime_py.backends.demo.plan import build_plan
from runtime_py.errors import LiteExportError

SEED = 0


def random_inputs(shapes: Sequence[Sequence[int]], seed: int = SEED) -> list[np.ndarray]:
    """Standard normal float32 inputs; a dynamic dim (-1) becomes 2."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal([2 if d < 0 else d for d in shape]).astype(np.float32) for shape in shapes]


def check_vectors(scripted: Any, compiled: CompiledModule, vectors: Mapping[str, Sequence[TestVector]]) -> list[str]:
    """Check every compiled method that has test vectors (the examples', or torch's outputs on random
    inputs of its static shapes: see ``liteexport.pipeline.refer``). Returns a note per method
    (checked, with its largest error, or why not); raises VerificationError on the first method
    whose outputs differ."""
    notes = []
    for index, signature in enumerate(compiled.methods):
        method = signature.name
        items = list(vectors.get(method, ()))
        if not items:
            notes.append(f"self-check skipped for {method}: give --input-shape or --example-inputs")
            continue
        error = max(_check(scripted, compiled, index, n, vector) for n, vector in enumerate(items))
        dynamic = dynamic_linears(compiled.programs[index], compiled.weights)
        allowed = (f" (allowed: {DYNAMIC_TOLERANCE:g} x the output's magnitude, for {dynamic} dynamically quantized "
                   "linear layers computed on float activations)") if dynamic else ""
        notes.append(f"self-check passed for {method}: max abs error {error:.2g} against torch "
                     f"on {len(items)} input set{'s' if len(items) > 1 else ''}{allowed}")
    return notes


def _leaves(value: Any) -> tuple[Any, ...]:
    """A result's tensors (numpy arrays) and constants in order, through tuples, lists and dicts
    (lraspp returns {"out": ...}; as_outputs keeps such a container as one object array)."""
    if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0:
        value = value.item()
    if isinstance(value, dict):
        return tuple(leaf for key in value for leaf in _leaves(value[key]))
    if isinstance(value, (tuple, list)):
        return tuple(leaf for item in value for leaf in _leaves(item))
    return (value,) if is_constant(value) else as_outputs(value)


RUNTIME_PY, TORCH_LITE = "runtime_py", "torch's lite interpreter with liteexport's backend"


def check_mixed(data: bytes, vectors: Mapping[str, Sequence[TestVector]]) -> tuple[str, ...]:
    """The self-check of a mixed bundle (lowered parts and TorchScript bytecode), on its bytes
    ``data``: each method with vectors run against torch's outputs (VerificationError, exit 9, on a
    difference) by runtime_py, or, when runtime_py reaches an operator it lacks, by torch's lite
    interpreter with liteexport's backend registered (it has every operator torch wrote); the note
    names the engine."""
    from bundle_format.bundle_file import read_bundle_bytes
    from runtime_py.module import Module

    if not vectors:
        return ()
    module = Module(read_bundle_bytes(data))
    notes = []
    for method, items in vectors.items():
        engine, lacking = RUNTIME_PY, ""
        try:
            largest = max(_check_mixed_vector(getattr(module, method), method, v, engine) for v in items)
        except VerificationError:
            raise
        except LiteExportError as exc:
            if "not implemented in runtime_py" not in str(exc):
                raise VerificationError(f"self-check failed: {method} does not run in runtime_py on the check "
                                        f"inputs: {exc}. Nothing was written; --no-check skips this check") from exc
            engine, lacking = TORCH_LITE, f" (runtime_py cannot run it: {exc})"
            largest = max(_check_mixed_vector(_torch_lite_method(data, method), method, v, engine) for v in items)
        notes.append(f"self-check passed for {method}: max abs error {largest:.2g} against torch "
                     f"on {len(items)} input set{'s' if len(items) > 1 else ''} ({engine}, mixed bundle){lacking}")
    return tuple(notes)


def _torch_lite_method(data: bytes, method: str) -> Any:
    """``method`` of the bundle ``data`` in torch's lite interpreter, taking and returning numpy arrays."""
    import io

    import torch
    from torch.jit.mobile import _load_for_lite_interpreter

    from liteexport.torch_backend import load_torch_backend

    load_torch_backend()
    lite = _load_for_lite_interpreter(io.BytesIO(data))

    def numpy(value: Any) -> Any:
        if isinstance(value, torch.Tensor):
            return value.detach().numpy()
        if isinstance(value, dict):
            return {k: numpy(v) for k, v in value.items()}
        if isinstance(value, (tuple, list)):
            return type(value)(numpy(v) for v in value)
        return value

    def run(*inputs: Any) -> Any:
        args = [torch.from_numpy(np.array(x)) if isinstance(x, np.ndarray) else x for x in inputs]
        try:
            return numpy(lite.run_method(method, *args))
        except RuntimeError as exc:
            raise VerificationError(f"self-check failed: {method} does not run in {TORCH_LITE} on the check inputs: "
                                    f"{exc}. Nothing was written; --no-check skips this check") from exc
    return run


def _check_mixed_vector(run: Any, method: str, vector: TestVector, engine: str) -> float:
    """The largest absolute error of ``run`` (the method in ``engine``) on ``vector``; raises when
    an output differs from torch's."""
    got = _leaves(run(*vector.inputs))
    expected = _leaves(vector.expected)
    problem = structure_problem(got, expected)
    if problem:
        raise VerificationError(f"self-check failed: {method} returns another structure than torch's "
                                f"({problem}). Nothing was written; --no-check skips this check")
    largest = 0.0
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        if not isinstance(e, np.ndarray):
            continue
        g = np.asarray(g)
        if g.shape != e.shape or not within_tolerance(g, e):
            what = (f"got shape {list(g.shape)}, torch {list(e.shape)}" if g.shape != e.shape
                    else f"max abs err {max_errors(g, e)[0]:.3g}")
            raise VerificationError(f"self-check failed: {method} output {i} of the mixed bundle in {engine} "
                                    f"differs from torch's ({what}). Nothing was written; --no-check skips this check")
        largest = max(largest, max_errors(g, e)[0])
    return largest


def exact_outputs(scripted: Any, method: str, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The method's outputs computed in float64 (on a copy of the module): the reference
    that tells float32 rounding from a wrong program."""
    import copy

    import torch

    double = copy.deepcopy(scripted).double()
    with torch.no_grad():  # float inputs in float64; ids and masks as they are
        result = getattr(double, method)(*[torch.from_numpy(np.asarray(x, np.float64) if np.asarray(x).dtype.kind == "f"
                                                            else np.asarray(x)) for x in inputs])
    return list(as_outputs(result))


def _check(scripted: Any, compiled: CompiledModule, index: int, n: int, vector: TestVector) -> float:
    """The largest absolute error of the method's outputs on ``vector``; raises when any
    output differs from torch's beyond tolerance (and float32 rounding)."""
    program = compiled.programs[index]
    method = program.method
    signature = compiled.methods[index]
    try:
        tensors = [np.asarray(o) for o in executor.run(build_plan(program, widened(compiled.weights)),
                                                       list(vector.inputs))]
    except LiteExportError as exc:
        raise VerificationError(f"self-check failed: {method} does not run in runtime_py on the check inputs: "
                                f"{exc}") from exc
    # the method's result as the bundle returns it: the wrapper adds the tuple's constants
    got = signature.elements(tensors) if signature.returns_tuple else tuple(tensors)
    problem = structure_problem(got, vector.expected)
    if problem:
        raise VerificationError(f"self-check failed: {method} returns another structure than torch's ({problem}). "
                                "Nothing was written; --no-check skips this check")
    exact: list[Any] | None = None
    largest = 0.0
    dynamic = dynamic_linears(program, compiled.weights)
    tensor_positions = [i for i, e in enumerate(vector.expected) if not is_constant(e)]
    for output, (i, g) in enumerate(zip(tensor_positions, tensors, strict=True)):
        e = np.asarray(vector.expected[i])
        if g.shape == e.shape:
            largest = max(largest, max_errors(g, e)[0])
        quantum = output_quantum(program, output)
        if quantum is not None and g.shape == e.shape:  # a quantized model's output: compared in quanta
            apart = quanta_apart(g, e, quantum)
            if apart <= QUANTA + 1e-3:
                continue
            raise VerificationError(
                f"self-check failed: {method} output {i} is {apart:.3g} quanta (of its grid, scale {quantum:.3g}) "
                f"from torch's quantized engine, more than the {QUANTA} allowed; "
                f"{_where(compiled, index, n, vector, output)}. Nothing was written; --no-check skips this check")
        if within_tolerance(g, e):
            continue
        if dynamic and g.shape == e.shape:  # torch rounded the inputs of its quantize_dynamic layers
            error, limit = max_errors(g, e)[0], DYNAMIC_TOLERANCE * max(1.0, float(np.abs(e).max(initial=0.0)))
            if error <= limit:
                continue
            raise VerificationError(
                f"self-check failed: {method} output {i} is off torch's by {error:.3g}, more than the "
                f"{DYNAMIC_TOLERANCE:g} x magnitude ({limit:.3g}) allowed for its {dynamic} dynamically quantized "
                f"linear layer{'s' if dynamic > 1 else ''} (float activations here, 8-bit in torch). Nothing was "
                "written; --no-check skips this check")
        if exact is None:
            exact = exact_outputs(scripted, method, vector.inputs)
        if explained_by_float32(g, e, exact[i]):
            continue
        what = (f"got shape {list(g.shape)}, torch {list(e.shape)}" if g.shape != e.shape else
                f"max abs err {max_errors(g, e)[0]:.3g} > atol {scaled_atol(e):.3g} (+ rtol {RTOL:g})")
        inputs = ", ".join("x".join(map(str, x.shape)) for x in vector.inputs)
        raise VerificationError(
            f"self-check failed: {method} output {i} differs from torch's on inputs {inputs} ({what}); "
            f"{_where(compiled, index, n, vector, output)}. Nothing was written; --no-check skips this check")
    return largest


def _where(compiled: CompiledModule, index: int, n: int, vector: TestVector, output: int) -> str:
    """The first instruction where runtime_py and ATen disagree (``output``: the index among
    the program's outputs, which leave out the tuple's constants); when they agree on every
    one, the program itself is wrong (a compiler bug) and the instruction producing the
    output is the nearest place to point at."""
    program = compiled.programs[index]
    # (the self-check runs before weights are narrowed: they are all arrays)
    weights = cast("list[np.ndarray]", list(compiled.weights))
    found = localize(program.method, n, program, weights, vector, compiled.debug_table, ATOL, RTOL)
    if isinstance(found, Divergence):
        return describe_divergence(found)
    # the last instruction writing the output's slot (slots are reused)
    writers = [k for k, ins in enumerate(program.instructions) if program.outputs[output] in ins.outputs]
    producer = writers[-1] if writers else None
    if producer is None:
        return f"{found} (a compiler bug: please report it)"
    at = divergence_at(program.method, n, program, producer, compiled.debug_table, float("nan"))
    return (f"runtime_py and ATen agree on every instruction, so the compiled program differs from the model "
            f"(a compiler bug: please report it); the output comes from {at.instruction}, debug handle "
            f"{at.debug_handle}: {at.location} {at.module_hierarchy}")
