"""``backend_with_compiler_demo``: the delegate backend that runs demo programs with numpy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

import numpy as np

from bundle_format.error_codes import format_error
from bundle_format.program import Program
from runtime_py.backends.base import Backend
from runtime_py.backends.demo.executor import run
from runtime_py.backends.demo.plan import MethodPlan, build_plan
from runtime_py.backends.demo.state import ModuleState
from runtime_py.errors import FormatError
from runtime_py.profiling import active_profiler
from runtime_py.quantized_tensor import QuantizedTensor

_WHERE = "processed module of backend_with_compiler_demo"


class DemoBackend(Backend):
    """Compiles each method's demo Program into a ``MethodPlan`` and runs it with numpy."""

    name = "backend_with_compiler_demo"

    def is_available(self) -> bool:
        """Always: the backend needs nothing but numpy."""
        return True

    def compile(self, processed: object, method_compile_spec: dict[str, object]) -> dict[str, object]:
        """Decodes and validates every program in ``processed``.

        ``processed`` is ``{"programs": {method: flatbuffer bytes (uint8 array, bytes or
        memoryview) or a decoded Program}, "weights": [float32 array, ...]}``. Every method
        named in ``method_compile_spec`` must have a program; a handle is returned for every
        program. Raises ``FormatError``.
        """
        if not isinstance(method_compile_spec, Mapping):  # the bundle's bytecode passes it: nobody checked it
            raise FormatError(f"compile was given a {type(method_compile_spec).__name__} as the method compile "
                              "spec, not a dict", where=f"{_WHERE}, compile")
        if not isinstance(processed, Mapping) or set(processed) != {"programs", "weights"}:
            got = sorted(map(str, processed)) if isinstance(processed, Mapping) else type(processed).__name__
            raise format_error("PROCESSED_MODULE", where=_WHERE, got=got)
        programs, weights = processed["programs"], processed["weights"]
        if not isinstance(programs, Mapping) or not isinstance(weights, Sequence):
            raise format_error("PROCESSED_TYPES", where=_WHERE)
        for table, names in (("method compile spec", method_compile_spec), ("programs", programs)):
            odd = [name for name in names if not isinstance(name, str)]
            if odd:
                raise FormatError(f"the {table} is keyed by a {type(odd[0]).__name__}, not a method name",
                                  where=f"{_WHERE}, compile")
        weights = widened(weights)
        missing = sorted(set(method_compile_spec) - set(programs))
        if missing:
            raise format_error("MISSING_PROGRAMS", where=_WHERE, methods=", ".join(missing))
        handles: dict[str, object] = {}
        state = ModuleState()  # one per loaded module: its methods share it, another load has its own
        for method, encoded in programs.items():
            try:
                program = encoded if isinstance(encoded, Program) else _decode(encoded)
            except FormatError as exc:
                raise exc.at(f"{_WHERE}, program of method '{method}'") from exc.__cause__
            if program.method != method:
                raise format_error("METHOD_MISMATCH", where=_WHERE, program=program.method, method=method)
            handles[method] = build_plan(program, weights, state)
        return handles

    def execute(self, handle: object, inputs: list[object]) -> list[object]:
        """Runs the method ``handle`` stands for; raises ``ExecutionError``."""
        if not isinstance(handle, MethodPlan):  # the bundle's own bytecode passed something else
            raise FormatError(f"execute was given a {type(handle).__name__} as the method handle, not one "
                              "that compile returned", where=f"{_WHERE}, execute")
        if not isinstance(inputs, list | tuple):
            raise FormatError(f"execute was given a {type(inputs).__name__} as the inputs, not a list",
                              where=f"{_WHERE}, execute")
        profiler = active_profiler()
        if profiler is None:
            # run's list is new and the caller's: typing it as a list of objects is safe
            return cast("list[object]", run(handle, inputs))
        observe, finish = profiler.observer(handle, handle.method, handle.instructions)
        try:
            return cast("list[object]", run(handle, inputs, observe))
        finally:
            finish()


def _decode(encoded: object) -> Program:
    # imported here: the codec (and flatbuffers) are only needed for encoded programs
    from bundle_format.program_codec import decode_program

    return decode_program(encoded)  # type: ignore[arg-type]


def widened(weights: Sequence[object]) -> list[object]:
    """``weights`` with each float16 array and each quantized tensor as float32: such weights
    (liteexport export --weights fp16, --quantize dynamic-int8) are float32 values stored narrow,
    widened once when the bundle is loaded so that every kernel sees float32."""
    return [w.astype(np.float32) if isinstance(w, np.ndarray) and w.dtype == np.float16
            else w.dequantize() if isinstance(w, QuantizedTensor) else w for w in weights]
