"""Both front ends side by side on the models the tests check (not a test: run it by hand):

    PYTHONPATH=. python tests/frontend_export/report.py [zoo] [text] [NAME ...]

For each model: whether it lowers whole through each front end (and else its blockers), the max
abs error of runtime_py against eager torch on seeded inputs, and the time from the module to the
compiled program (scripting or torch.export included). The zoo models are tests/compiler's default
set with its seeded weights; the text models are tests/text_models' (ids and mask over S=1..32).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from liteexport.compiler import compile_module  # noqa: E402
from liteexport.compiler.exported import compile_exported  # noqa: E402
from liteexport.errors import UnsupportedNodesError  # noqa: E402
from liteexport.export_frontend import export_module  # noqa: E402
from liteexport.input_spec import DimRange, TensorSpec, parse_tensor_spec  # noqa: E402
from liteexport.lowered import CompiledModule  # noqa: E402
from liteexport.parity import as_outputs  # noqa: E402
from runtime_py.backends.demo import executor  # noqa: E402
from runtime_py.backends.demo.plan import build_plan  # noqa: E402
from runtime_py.errors import LiteExportError  # noqa: E402


def _max_error(compiled: CompiledModule, model: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> float:
    with torch.no_grad():
        expected = [np.asarray(o) for o in as_outputs(model(*inputs)) if isinstance(o, np.ndarray)]
    got = executor.run(build_plan(compiled.programs[0], compiled.weights), [x.numpy() for x in inputs])
    if len(got) != len(expected):
        return float("inf")
    pairs = zip(got, expected, strict=True)
    return max(float(np.abs(np.asarray(g, np.float64) - e).max(initial=0.0)) for g, e in pairs)


def _run(frontend: str, model: torch.nn.Module, specs: Sequence[TensorSpec], dims: dict[str, DimRange],
         inputs: Sequence[torch.Tensor], trace: bool) -> tuple[str, str, float]:
    start = time.perf_counter()
    try:
        if frontend == "export":
            program, names = export_module(model, specs, dims, None, type(model).__name__)
            compiled = compile_exported(program, dims=dims, names=names)
        else:
            scripted = torch.jit.trace(model, tuple(inputs)) if trace else torch.jit.script(model)
            compiled = compile_module(scripted, input_shapes={"forward": list(specs)}, dims=dims)
    except UnsupportedNodesError as error:
        return "no", ", ".join(f"{k} x{n}" for k, n in error.counts.items()), time.perf_counter() - start
    except LiteExportError as error:
        return "no", str(error).splitlines()[0][:160], time.perf_counter() - start
    elapsed = time.perf_counter() - start
    return "yes", f"{_max_error(compiled, model, inputs):.2g}", elapsed


def zoo_cases() -> list[tuple[str, Callable[[], torch.nn.Module], list[TensorSpec], dict[str, DimRange], bool]]:
    from tests.compiler.models.model_zoo import NN_CASES, _randomize, torchvision_case
    from tests.compiler.test_model_zoo import DEFAULT

    cases = []
    for case in [*(torchvision_case(n) for n in sorted(DEFAULT)), *NN_CASES]:
        def build(case: Any = case) -> torch.nn.Module:
            return _randomize(case.build(), case.input_shapes, 0)

        cases.append((case.name, build, [TensorSpec(s) for s in case.input_shapes], {}, False))
    return cases


def text_cases() -> list[tuple[str, Callable[[], torch.nn.Module], list[TensorSpec], dict[str, DimRange], bool]]:
    import tests.text_models.test_text_models as tm

    specs = [parse_tensor_spec("1xS:int64"), parse_tensor_spec("1xS:int64")]
    return [(f"{name} (S=1..32)", lambda name=name: tm._model(name), specs, {"S": DimRange("S", 1, 32)}, True)
            for name in sorted(tm.MODELS)]


def _inputs(specs: Sequence[TensorSpec], length: int) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(1)
    out = []
    for spec in specs:
        shape = [length if isinstance(d, str) else d for d in spec.shape]
        if spec.dtype == "float32":
            out.append(torch.randn(shape, generator=generator))
        else:  # the text models' ids (below their vocabulary of 100), then a mask of ones
            ids = torch.randint(0, 100, shape, generator=generator)
            out.append(torch.ones(shape, dtype=torch.int64) if out else ids)
    return out


def main(argv: Sequence[str]) -> None:
    groups = [g for g in argv if g in ("zoo", "text")] or ["zoo", "text"]
    names = [a for a in argv if a not in ("zoo", "text")]
    cases = (zoo_cases() if "zoo" in groups else []) + (text_cases() if "text" in groups else [])
    print("| model | front end | lowered whole | max error, runtime_py (or blockers) | time to program |")
    print("|---|---|---|---|---|")
    for name, build, specs, dims, trace in cases:
        if names and not any(n in name for n in names):
            continue
        for frontend in ("export", "torchscript"):
            model = build()
            inputs = _inputs(specs, 8)
            lowered, detail, seconds = _run(frontend, model, specs, dims, inputs, trace)
            print(f"| {name} | {frontend} | {lowered} | {detail} | {seconds:.1f} s |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
