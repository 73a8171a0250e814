"""Which submodules of a quantized model take or return a quantized tensor: those partial lowering
must keep as TorchScript.

A compiled program holds float, integer and bool tensors only: the compiler computes a quantized
model's activations as floats on their quantization grid (liteexport.compiler.quantized_ops). A
lowered submodule therefore returns floats where the TorchScript around it expects torch's
quantized tensor (``quantized::conv2d_relu expects a quantized tensor, got a float tensor``), and
reads a quantized tensor handed to it as if it were float. Whether a submodule's boundary carries
one is not in its own code (TorchScript types every tensor ``Tensor``): it is found here by walking
the whole module's ``forward`` as the compiler does, which tags every quantized value with its
grid, and noting what each submodule call receives and returns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from bundle_format.program import DTYPES_BY_NAME
from liteexport.input_spec import TensorSpec, as_tensor_spec

QUANTIZED_INPUT = "its input is a quantized tensor, which a lowered module would read as floats"
QUANTIZED_OUTPUT = "it returns a quantized tensor, which a lowered module would return as floats"
NOT_CALLED = ("the walk of the model's forward never calls its forward (nothing to lower, or a call in code the "
              "compiler cannot follow)")
UNKNOWN = ("its input or result may be a quantized tensor, which a lowered module would take and return as floats "
           "(the compiler cannot follow the code computing it; --input-shape may help)")
BOUNDARY_NOTE = ("a lowered module takes and returns float tensors (the compiler computes quantized activations as "
                 "floats on their grid), not torch's quantized tensors: lower it with the modules that quantize and "
                 "dequantize around it, or the whole model")
_QUANTIZED_KINDS = ("quantized::", "aten::quantize_per_tensor", "aten::quantize_per_channel")


def has_quantized_ops(scripted: Any) -> bool:
    """Whether any method of any module in ``scripted`` quantizes a tensor or runs a quantized op."""
    for _, module in scripted.named_modules():
        for method in module._c._method_names():
            if any(node.kind().startswith(_QUANTIZED_KINDS)
                   for node in _all_nodes(module._c._get_method(method).graph.nodes())):
                return True
    return False


def _all_nodes(nodes: Any) -> Iterator[Any]:
    for node in nodes:
        yield node
        for block in node.blocks():
            yield from _all_nodes(block.nodes())


def quantized_boundaries(scripted: Any, functions: Any = None,
                         shapes: Sequence[Sequence[int] | TensorSpec] | None = None) -> dict[str, str] | None:
    """{dotted submodule name: why its boundary carries a quantized tensor, or `NOT_CALLED`} for
    the submodules of a quantized model (``shapes``: forward's inputs', when known: sizes the walk
    can follow further); {} for a model without quantized ops; None when the walk itself cannot
    run (then no submodule of a quantized model is known to be safe)."""
    if not has_quantized_ops(scripted):
        return {}
    from liteexport.compiler.graph_walk import MethodWalk
    from liteexport.compiler.reports import ReportLog
    from liteexport.compiler.values import ModuleRef, Poison, Sym

    def quantized(value: Any) -> str | None:
        """"yes", "unknown" or None for a call's argument or result."""
        if isinstance(value, Poison) or (isinstance(value, Sym) and value.blocked):
            return "unknown"
        if isinstance(value, Sym):
            return "yes" if value.quant is not None else None
        if isinstance(value, (list, tuple)):
            found = [q for q in (quantized(v) for v in value) if q is not None]
            return "yes" if "yes" in found else found[0] if found else None
        return None

    found: dict[str, str] = {}
    called: set[str] = set()

    class BoundaryWalk(MethodWalk):
        def _call_method(self, node: Any, args: list[Any], ctx: Any) -> list[Any]:
            results = super()._call_method(node, args, ctx)
            target = args[0]
            if node.s("name") == "forward" and isinstance(target, ModuleRef) and len(target.path) > 1:
                name = ".".join(part for part, _ in target.path[1:])
                called.add(name)
                inputs = [q for q in map(quantized, args[1:]) if q is not None]
                outputs = [q for q in map(quantized, results) if q is not None]
                why = (QUANTIZED_INPUT if "yes" in inputs else QUANTIZED_OUTPUT if "yes" in outputs
                       else UNKNOWN if inputs or outputs else None)
                if why is not None and found.get(name) in (None, UNKNOWN):
                    found[name] = why
            return results

    if "forward" not in scripted._c._method_names():
        return None
    arguments = list(scripted._c._get_method("forward").schema.arguments)[1:]
    specs = [as_tensor_spec(s) for s in shapes] if shapes is not None and len(shapes) == len(arguments) else None
    inputs = [Sym(None, input_index=i) if specs is None else
              Sym(specs[i].static_shape, input_index=i, dtype=DTYPES_BY_NAME[specs[i].dtype])
              for i in range(len(arguments))]
    walk = BoundaryWalk("forward", ReportLog(), () if functions is None else (functions,))
    root = ModuleRef(scripted._c, (("top", "top"),))
    try:
        walk.run(root, inputs)
    except Exception:  # noqa: BLE001  (any failure of the walk: nothing is known, which the caller treats as unsafe)
        return None
    # (a QFunctional's activation_post_process in a block without its residual add, say)
    return found | {name: NOT_CALLED for name, _ in scripted.named_modules() if name and name not in called}


__all__ = ["BOUNDARY_NOTE", "NOT_CALLED", "QUANTIZED_INPUT", "QUANTIZED_OUTPUT", "UNKNOWN", "has_quantized_ops",
           "quantized_boundaries"]
