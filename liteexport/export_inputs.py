"""The export's inputs beyond the model: example and calibration input files read for a method's
arguments, extra files, the shapes example inputs imply, and float64 sets converted to float32
(the pipeline's load stage reads them; liteexport.pipeline)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from liteexport.input_spec import InputSpecError, TensorSpec
from runtime_py.errors import InputError

if TYPE_CHECKING:
    from liteexport.pipeline import Report, Request, Source

__all__ = ["float32_sets", "implied_shapes", "read_examples", "read_extra_files"]


def _quiet(_: str) -> None:
    """A report nobody reads."""


def read_examples(scripted: Any, files: Sequence[tuple[str, str]], option: str = "--example-inputs",
                  note: Report = _quiet) -> dict[str, tuple[tuple[np.ndarray, ...], ...]]:
    """The input sets of ``--example-inputs METHOD:FILE`` (or ``option``'s: an .npz's arrays named by
    the method's own arguments are taken in their order; float64 ones as float32, with a ``note``);
    InputError for a method the model does not have."""
    from liteexport.run_inputs import read_input_file

    examples: dict[str, list[tuple[np.ndarray, ...]]] = {}
    for method, path in files:
        if not hasattr(scripted, "_c"):  # the torch.export front end's eager module
            from liteexport.export_frontend import argument_names

            examples.setdefault(method, []).append(tuple(read_input_file(path, argument_names(scripted, method), note)))
            continue
        if method not in scripted._c._method_names():
            raise InputError(f"{option} names method '{method}', which the model does not have")
        arg_names = [a.name for a in scripted._c._get_method(method).schema.arguments][1:]  # self left out
        examples.setdefault(method, []).append(tuple(read_input_file(path, arg_names, note)))
    return {method: tuple(sets) for method, sets in examples.items()}


def read_extra_files(items: Sequence[tuple[str, str]]) -> dict[str, bytes]:
    """The contents of ``--extra-file NAME=PATH`` files, by name; InputError when one cannot be read
    or a name is given twice."""
    files: dict[str, bytes] = {}
    for name, path in items:
        if name in files:
            raise InputError(f"--extra-file {name}: the name is given twice")
        try:
            files[name] = Path(path).read_bytes()
        except OSError as exc:
            raise InputError(f"--extra-file {name}={path}: cannot read it: {exc.strerror or exc}") from exc
    return files


def implied_shapes(source: Source, request: Request) -> dict[str, tuple[TensorSpec, ...]]:
    """``request``'s input shapes and those its example inputs imply: a method given example inputs
    and no input shapes takes its examples' dtypes and sizes, a size the sets disagree on as any
    (-1; the torch.export front end needs such a dim named). Sets of a count the method does not
    take imply nothing (record_test_vectors says what is wrong with them); sets that disagree on an
    input's rank or dtype are an InputError."""
    from liteexport.test_vectors import arity

    shapes = dict(request.input_shapes)
    for method, input_sets in request.examples.items():
        if method in shapes or not input_sets or not hasattr(source.scripted, method):
            continue
        names, fewest = arity(source.scripted, method)
        arrays = [[np.asarray(x) for x in inputs] for inputs in input_sets]
        if not all(fewest <= len(inputs) <= len(names) for inputs in arrays) or len({len(i) for i in arrays}) != 1:
            continue
        for index, column in enumerate(zip(*arrays, strict=True)):
            kinds = [f"{x.ndim}-d {x.dtype.name}" for x in column]
            if len(set(kinds)) != 1:
                other = next(n for n, kind in enumerate(kinds) if kind != kinds[0])
                raise InputError(f"example inputs of {method}: input {index} ({names[index]}) is {kinds[0]} in set 0 "
                                 f"and {kinds[other]} in set {other}; a compiled input has one rank and dtype: give "
                                 "input shapes (--input-shape) to say which")
        try:
            specs = tuple(TensorSpec(tuple(sizes[0] if len(set(sizes)) == 1 else -1 for sizes in
                                           zip(*(inputs[i].shape for inputs in arrays), strict=True)),
                                     arrays[0][i].dtype.name) for i in range(len(arrays[0])))
        except InputSpecError:  # a dtype no input can have: record_test_vectors says which
            continue
        if source.frontend == "export" and any(-1 in spec.shape for spec in specs):
            raise InputError(f"example inputs of {method} differ in size ({', '.join(map(str, specs))}, -1 where they "
                             "differ); torch.export traces one size per dim unless it is named: give input shapes "
                             "with a named dim and its bounds (--input-shape Bx3x224x224 --dim B=1..8), or "
                             "--frontend torchscript, which compiles such a dim for any size")
        shapes[method] = specs
    return shapes


def float32_sets(sets_by_method: Mapping[str, tuple[tuple[np.ndarray, ...], ...]], what: str,
                  note: Report) -> dict[str, tuple[tuple[np.ndarray, ...], ...]]:
    """The API's input sets with float64 arrays as float32 (a note each: liteexport.run_inputs.as_float32)."""
    from liteexport.run_inputs import as_float32

    return {method: tuple(tuple(as_float32(x, f"{what} of {method}, set {n}, input {i}", note)
                                for i, x in enumerate(inputs)) for n, inputs in enumerate(sets))
            for method, sets in sets_by_method.items()}
