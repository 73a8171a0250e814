"""The one lowering table the graph walk reads: the op families (ops.py's base ops, math_ops,
shape_ops, attention_ops, einsum, recurrent, typed_ops, resize_ops, selection_ops,
state_ops) merged, the
composite ops made of them (composite_ops) added, each wrapped with constant folding, and the
scalar folds with the tensor factories.

The op modules only define their own tables (using ops.py's helpers); this module imports
them all, so no op module imports another's table and there is no import cycle.
"""

from __future__ import annotations

from liteexport.compiler import (
    attention_ops,
    einsum,
    math_ops,
    ops,
    quantized_ops,
    recurrent,
    resize_ops,
    scalars,
    selection_ops,
    shape_ops,
    state_ops,
    symbolic_ops,
    typed_ops,
)
from liteexport.compiler.composite_ops import composite_lowerings
from liteexport.compiler.constant_fold import CONSTANT_ONLY, with_constant_folding
from liteexport.compiler.ops import Lowering
from liteexport.compiler.scalars import ScalarFold

__all__ = ["INPLACE", "LOWERINGS", "SCALAR_FOLDS", "SYMBOLIC_FACTORIES"]

LOWERINGS: dict[str, Lowering] = {
    **ops.LOWERINGS, **math_ops.LOWERINGS, **shape_ops.LOWERINGS, **attention_ops.LOWERINGS,
    **einsum.LOWERINGS, **recurrent.LOWERINGS, **typed_ops.LOWERINGS, **resize_ops.LOWERINGS,
    **selection_ops.LOWERINGS, **state_ops.LOWERINGS,
    **symbolic_ops.LOWERINGS,  # last: they wrap some of the above for sizes known only at run time
}
# ops made of the ones above, calling this table's lowerings (with the wrappers added below)
LOWERINGS.update(composite_lowerings(LOWERINGS))
# integer and bool constants (index buffers, masks) fold with torch itself
for _kind in [*LOWERINGS, *CONSTANT_ONLY]:
    LOWERINGS[_kind] = with_constant_folding(_kind, LOWERINGS.get(_kind))
# ATen ops on a quantized model's activations keep, restore or fix its grid (quantized_ops.py)
for _kind in list(LOWERINGS):
    LOWERINGS[_kind] = quantized_ops.on_quantized_inputs(_kind, LOWERINGS[_kind])
LOWERINGS.update(quantized_ops.LOWERINGS)

# in-place variants compiled as their out-of-place op (the op spec's `inplace`); the walk rebinds
# the mutated input
INPLACE: dict[str, str] = ops.INPLACE

# factories lowered rather than folded when a size argument is known only at run time (arange(S))
SYMBOLIC_FACTORIES = symbolic_ops.FACTORIES

# tensor factories (zeros, ones, full, arange) take no tensor: the walk folds them with the scalars
SCALAR_FOLDS: dict[str, ScalarFold] = {**scalars.SCALAR_FOLDS, **shape_ops.FACTORY_FOLDS}
