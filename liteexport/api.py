"""liteexport from Python: ``liteexport.export(module, path, ...)`` and ``liteexport.lower(module)``.

``export`` writes a bundle as ``liteexport export`` does (the whole module compiled by the demo
compiler, or, with ``lower=[...]``/``"auto"``, chosen submodules compiled and the rest kept as
TorchScript bytecode). ``lower`` returns a module lowered through torch's own to_backend API
(``torch._C._jit_to_backend`` with liteexport's compiler as the backend's preprocess): it runs in
TorchScript and saves with ``torch.jit.save`` or ``_save_for_lite_interpreter`` like any module
torch lowered itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from liteexport.backend import DEMO_BACKEND
from liteexport.to_backend import Shapes, compile_spec, lower, scripted_module
from runtime_py.errors import InputError

Examples = Mapping[str, Sequence[Sequence[Any]]] | Sequence[Sequence[Any]]

__all__ = ["compile_spec", "export", "lower", "scripted_module"]


def _examples(examples: Examples | None) -> dict[str, list[list[np.ndarray]]]:
    """Example inputs by method: a mapping method -> input tuples, or input tuples of forward."""
    if examples is None:
        return {}
    by_method = examples if isinstance(examples, Mapping) else {"forward": examples}
    for method, input_sets in by_method.items():
        for inputs in input_sets:
            for x in inputs:
                if not (hasattr(x, "detach") or isinstance(x, np.ndarray)):
                    raise InputError(f"example_inputs of {method}: a {type(x).__name__} input; test vectors "
                                     "hold tensors (arrays) only")
    return {method: [[np.asarray(x.detach().numpy() if hasattr(x, "detach") else x) for x in inputs]
                     for inputs in input_sets]
            for method, input_sets in by_method.items()}


def export(module: Any, path: str | Path, methods: Sequence[str] | None = None,
           input_shapes: Shapes | None = None, example_inputs: Examples | None = None,
           lower: bool | str | Sequence[str] = True, check: bool = True,
           specialize: Mapping[str, Mapping[str, Any]] | None = None) -> int:
    """Write ``module`` (an nn.Module or a ScriptModule) as a bundle at ``path``; returns its
    size in bytes. ``lower=True`` compiles every method (``methods``, default forward and every
    ``@torch.jit.export`` method) with the demo compiler, as ``liteexport export`` does;
    ``lower=["encoder", ...]`` compiles those submodules and keeps the rest as TorchScript
    bytecode, ``lower="auto"`` picks the largest submodules that compile (see
    ``liteexport.partial``). ``example_inputs`` (input tuples of forward, or a mapping method ->
    input tuples) are stored in the bundle as test vectors with torch's outputs; with them or
    with ``input_shapes``, the compiled programs are checked against torch first (``check``).
    ``specialize={"forward": {"k": 3}}`` lowers methods with non-Tensor arguments for those
    values (``liteexport.specialize``; a ScriptModule given gets the specialized method added)."""
    from liteexport.bundle import write_bundle
    from liteexport.self_check import check_vectors
    from liteexport.test_vectors import TEST_VECTORS_EXTRA_FILE, encode_test_vectors, record_test_vectors

    scripted = scripted_module(module)
    examples = _examples(example_inputs)
    if specialize:
        from liteexport.partial import write_mixed
        from liteexport.specialize import specialized

        if lower is not True or methods or input_shapes:
            raise InputError("specialize lowers the methods it names whole: give no lower, methods or input_shapes")
        return write_mixed(specialized(scripted, specialize), path,
                           record_test_vectors(scripted, examples) if examples else {})
    if lower is not True:
        if lower is False:
            raise InputError("lower=False: export needs something to lower (True, submodule names or 'auto')")
        from liteexport.model_loading import script_unshared
        from liteexport.partial import export_partial

        unshared = None if scripted is module else lambda: script_unshared(module).eval()
        return export_partial(scripted, path, [lower] if isinstance(lower, str) else list(lower),
                              methods=methods, input_shapes=input_shapes, examples=examples,
                              unshared=unshared, check=check).size
    from liteexport.partial import has_lowered_parts, write_mixed

    if has_lowered_parts(scripted):  # lowered already (torch's to_backend): packed as it is
        return write_mixed(scripted, path, record_test_vectors(scripted, examples) if examples else {})
    shapes = {name: [tuple(s) for s in method_shapes] for name, method_shapes in (input_shapes or {}).items()}
    compiled = DEMO_BACKEND.preprocess(scripted, methods, shapes)
    vectors = record_test_vectors(scripted, examples) if examples else {}
    if check:
        check_vectors(scripted, compiled, shapes, vectors)
    extra_files = {TEST_VECTORS_EXTRA_FILE: encode_test_vectors(vectors)} if vectors else {}
    return write_bundle(compiled, path, extra_files)


__all__ = ["compile_spec", "export", "lower", "scripted_module"]
