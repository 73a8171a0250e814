"""Test vectors stored in a bundle: example inputs and the outputs torch eager gave for them.

They travel in the bundle's extra file ``liteexport/test_vectors.npz`` (numpy's own
self-describing archive, read with ``allow_pickle=False``), keyed
``<method>/<vector>/input_<i>`` and ``<method>/<vector>/output_<j>``, so that
``liteexport verify`` can check any engine against them later, anywhere. An output that is a
constant (None, bool, int, float: googlenet's eval-mode auxiliary outputs are None) is kept as
``<method>/<vector>/constant_<j>``, its JSON text in a 0-d string array (no pickle needed).

Beside them, in the extra file ``liteexport/test_tolerances.json``, an export whose self-check
held the program to a wider tolerance than verify's default (narrowed weights: ``--weights fp16``,
``--quantize dynamic-int8``, ``--quantize int8``, whose expected outputs are the float model's)
stores, per method, the tolerance it accepted::

    {"format": 1, "methods": {"forward": {"atol": 0.0123, "rtol": 0.0,
                                          "rule": "0.1 x the output's range under --quantize int8"}}}

``atol`` and ``rtol`` are as numpy's allclose takes them (|got - expected| <= atol + rtol x
|expected|); ``rule`` says, for people, how the export came to them. A separate file, so that
readers that predate it (an older liteexport, the native core) still read the vectors.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from liteexport.input_spec import check_example_dtype
from liteexport.parity import as_outputs, is_constant
from runtime_py.errors import FormatError, InputError

TEST_VECTORS_EXTRA_FILE = "liteexport/test_vectors.npz"
TOLERANCES_EXTRA_FILE = "liteexport/test_tolerances.json"
TOLERANCES_FORMAT = 1
_MAX_RULE = 200  # characters of a stored tolerance's rule verify prints
_KEY = re.compile(r"^(?P<method>[A-Za-z_]\w*)/(?P<vector>\d+)/(?P<kind>input|output|constant)_(?P<index>\d+)$")


@dataclass(frozen=True)
class TestVector:
    __test__ = False  # a data class, not a pytest test class
    inputs: tuple[np.ndarray, ...]
    expected: tuple[Any, ...]  # numpy arrays, and constants (see liteexport.parity.is_constant)


TestVectors = Mapping[str, Sequence[TestVector]]  # method -> vectors


def encode_test_vectors(vectors: TestVectors) -> bytes:
    """The npz bytes holding ``vectors`` (deterministic: no timestamps in the archive)."""
    arrays: dict[str, np.ndarray] = {}
    for method, items in vectors.items():
        for n, vector in enumerate(items):
            for kind, values in (("input", vector.inputs), ("output", vector.expected)):
                for i, value in enumerate(values):
                    if kind == "output" and is_constant(value):
                        arrays[f"{method}/{n}/constant_{i}"] = np.array(json.dumps(value))
                    else:
                        # not ascontiguousarray: it makes a 0-d array 1-d
                        arrays[f"{method}/{n}/{kind}_{i}"] = np.asarray(value)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for key in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, arrays[key], allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            archive.writestr(info, member.getvalue())
    return buffer.getvalue()


def decode_test_vectors(content: bytes) -> dict[str, list[TestVector]]:
    """The vectors in ``content``; FormatError for anything that is not such an archive."""
    try:
        with np.load(io.BytesIO(content), allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except Exception as exc:  # zipfile, numpy and pickle refusal errors alike
        raise FormatError(f"malformed test vectors: {exc}", where=TEST_VECTORS_EXTRA_FILE) from exc
    grouped: dict[str, dict[int, dict[str, dict[int, np.ndarray]]]] = {}
    for key, value in arrays.items():
        match = _KEY.match(key)
        if match is None:
            raise FormatError(f"unexpected array {key!r} in test vectors", where=TEST_VECTORS_EXTRA_FILE)
        slot = grouped.setdefault(match["method"], {}).setdefault(int(match["vector"]), {})
        kind, index = match["kind"], int(match["index"])
        values = slot.setdefault("input" if kind == "input" else "output", {})
        if index in values:  # output_<j> and constant_<j>
            raise FormatError(f"{key}: that output is stored twice", where=TEST_VECTORS_EXTRA_FILE)
        values[index] = _constant(key, value) if kind == "constant" else value
    return {method: [TestVector(_ordered(parts.get("input", {})), _ordered(parts.get("output", {})))
                     for _, parts in sorted(by_vector.items())]
            for method, by_vector in grouped.items()}


def _constant(key: str, value: np.ndarray) -> Any:
    """The constant a ``constant_<j>`` array holds; FormatError for anything else."""
    try:
        constant = json.loads(str(value)) if value.dtype.kind == "U" and value.ndim == 0 else ...
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        constant = ...
    if not is_constant(constant):
        raise FormatError(f"{key} is not a constant (None, bool, int or float as JSON text)",
                          where=TEST_VECTORS_EXTRA_FILE)
    return constant


def _ordered(values: dict[int, Any]) -> tuple[Any, ...]:
    if sorted(values) != list(range(len(values))):
        raise FormatError("test vector arrays are not numbered 0..n-1", where=TEST_VECTORS_EXTRA_FILE)
    return tuple(values[i] for i in range(len(values)))


@dataclass(frozen=True)
class StoredTolerance:
    """The tolerance an export's self-check accepted for a method's test vectors."""

    atol: float
    rtol: float
    rule: str = ""  # how the export came to it, e.g. "0.05 x the output's magnitude under --quantize dynamic-int8"


def encode_tolerances(tolerances: Mapping[str, StoredTolerance]) -> bytes:
    """The JSON bytes of ``liteexport/test_tolerances.json`` (keys sorted: deterministic)."""
    methods = {method: {"atol": t.atol, "rtol": t.rtol, "rule": t.rule} for method, t in tolerances.items()}
    return json.dumps({"format": TOLERANCES_FORMAT, "methods": methods}, sort_keys=True).encode()


def decode_tolerances(content: bytes) -> dict[str, StoredTolerance]:
    """The tolerances in ``content``; FormatError for anything else (a tolerance that is not a finite
    number >= 0, a format of a newer liteexport)."""
    def fail(problem: str) -> FormatError:
        return FormatError(f"malformed test tolerances: {problem}", where=TOLERANCES_EXTRA_FILE)

    try:
        data = json.loads(content.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise fail(str(exc)) from exc
    if not isinstance(data, dict) or not isinstance(data.get("methods"), dict):
        raise fail('not an object with "methods"')
    if data.get("format") != TOLERANCES_FORMAT:
        raise fail(f"format {data.get('format')!r}, this liteexport reads format {TOLERANCES_FORMAT}")
    tolerances = {}
    for method, entry in data["methods"].items():
        if not isinstance(entry, dict):
            raise fail(f"{method!r} is not an object")
        atol, rtol = (_nonnegative(entry.get(key)) for key in ("atol", "rtol"))
        if atol is None or rtol is None:
            raise fail(f"{method}: atol and rtol must be finite numbers >= 0, not {entry.get('atol')!r} and "
                       f"{entry.get('rtol')!r}")
        rule = entry.get("rule", "")  # printed by verify: one line of printable text, or nothing
        printable = isinstance(rule, str) and rule.isprintable() and len(rule) <= _MAX_RULE
        tolerances[method] = StoredTolerance(atol, rtol, rule if printable else "")
    return tolerances


def _nonnegative(value: object) -> float | None:
    """``value`` as a float when it is a finite number >= 0 (a bool is none), else None."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


def arity(module: Any, method: str) -> tuple[list[str], int]:
    """``method``'s input names and the fewest inputs it takes: a ScriptModule's from its schema
    (all of them), an eager module's (the torch.export front end's) from its signature."""
    if hasattr(module, "_c"):
        names = [arg.name for arg in list(module._c._get_method(method).schema.arguments)[1:]]
        return names, len(names)
    from liteexport.export_frontend import argument_names, required_argument_count

    return argument_names(module, method), required_argument_count(module, method)


@contextlib.contextmanager
def from_initial_state(module: Any) -> Iterator[None]:
    """A call of ``module`` that leaves its buffers as they were: each test vector is a call from
    the model's initial state (a KV cache written by one vector is not seen by the next), as every
    engine runs it (runtime_py resets its program state before each vector)."""
    import torch

    saved = [(b, b.detach().clone()) for b in module.buffers()] if hasattr(module, "buffers") else []
    try:
        yield
    finally:
        with torch.no_grad():
            for buffer, value in saved:
                buffer.copy_(value)


def record_test_vectors(scripted: Any, examples: Mapping[str, Sequence[Sequence[np.ndarray]]]) -> dict[
        str, list[TestVector]]:
    """Run ``scripted`` (a torch ScriptModule) on each method's example inputs and keep the
    outputs as the expected values. Inputs that do not fit the method (an unknown method, another
    number of inputs than it takes, inputs its code refuses) are an InputError (exit 6), as the
    same inputs are when a bundle runs them."""
    import torch

    vectors: dict[str, list[TestVector]] = {}
    for method, input_sets in examples.items():
        fn = getattr(scripted, method, None)
        if fn is None:
            raise InputError(f"--example-inputs names method '{method}', which the model does not have")
        arguments, fewest = arity(scripted, method)
        for number, inputs in enumerate(input_sets):
            where = f"input set {number} of {method}"
            if not fewest <= len(inputs) <= len(arguments):
                count = f"{len(arguments)}" if fewest == len(arguments) else f"{fewest} to {len(arguments)}"
                raise InputError(f"{where}: {method} takes {count} inputs ({', '.join(arguments) or 'none'}), "
                                 f"the set holds {len(inputs)}")
            for index, x in enumerate(inputs):
                check_example_dtype(np.asarray(x), f"{where}, input {index}")
            tensors = [torch.from_numpy(np.array(x)) for x in inputs]
            try:
                with torch.no_grad(), from_initial_state(scripted):
                    result = fn(*tensors)
            except Exception as exc:  # the model's own code refused the user's inputs
                summary = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                shapes = ", ".join(f"{x.dtype} {tuple(x.shape)}" for x in tensors)
                raise InputError(f"{method} fails on {where} ({shapes}): {summary}") from exc
            outputs = tuple(o.copy() if isinstance(o, np.ndarray) else o for o in as_outputs(result))
            vectors.setdefault(method, []).append(TestVector(tuple(np.array(x) for x in inputs), outputs))
    return vectors
