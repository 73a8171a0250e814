"""The compiler's memory plan (liveness-based slot reuse), its pure-Python static shapes, and
the demo executor's buffers that are kept between calls."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from bundle_format.program import (
    AxisAttrs,
    BinaryAttrs,
    Conv2dAttrs,
    FlattenAttrs,
    FusedAttrs,
    OpCode,
    PermuteAttrs,
    Pool2dAttrs,
    ShapeAttrs,
)
from liteexport.compiler import compile_module
from liteexport.compiler.semantics import run_op
from liteexport.compiler.shapes import infer_shape
from liteexport.compiler.values import Sym
from runtime_py.backends.demo.executor import run
from runtime_py.backends.demo.plan import build_plan
from tests.compiler.conftest import prepare
from tests.parity import parity_models as models

pytestmark = pytest.mark.torch_oracle

CASES = {
    "mlp": (models.MLP, [(4, 20)]),
    "convnet": (models.ConvNet, [(2, 3, 32, 32)]),
    "residual": (models.ResidualBlock, [(2, 8, 10, 10)]),
    "norm_gelu": (models.NormGeluBlock, [(2, 7, 16)]),
    "attention": (models.Attention, [(2, 6, 16)]),
    "linear_algebra": (models.LinearAlgebra, [(4, 3, 4)]),
}


def _compiled(name: str):
    factory, shapes = CASES[name]
    eager = factory().eval()
    compiled = compile_module(torch.jit.script(eager), methods=["forward"], input_shapes={"forward": shapes})
    return eager, compiled


@pytest.mark.parametrize("name", sorted(CASES))
def test_reused_slots_never_clobber_a_live_value(name: str) -> None:
    """Every model runs with reused slots and matches torch, twice in a row (kept buffers
    hold the previous call's values) and with a nested call in the middle (fresh buffers)."""
    eager, compiled = _compiled(name)
    program = compiled.programs[0]
    for inst in program.instructions:
        assert not set(inst.outputs) & set(inst.inputs), "a result never overwrites its own input"
    plan = build_plan(program, [np.asarray(w) for w in compiled.weights])
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float32) for s in CASES[name][1]]
    with torch.no_grad():
        expected = eager(*[torch.from_numpy(x) for x in xs])
    expected = [expected] if isinstance(expected, torch.Tensor) else list(expected)
    first = [y.copy() for y in run(plan, xs)]
    kept = run(plan, xs)
    other = [x * 2 for x in xs]
    nested: list[list[np.ndarray]] = []
    observed = run(plan, xs, lambda i, v: nested.append(run(plan, other)) if i == 0 else None)
    for got in (first, kept, observed):
        for y, e in zip(got, expected, strict=True):
            np.testing.assert_allclose(y, e.numpy(), rtol=1e-4, atol=1e-4)
    again = run(plan, xs)  # earlier results are the caller's: later calls do not write into them
    for y, z in zip(kept, again, strict=True):
        np.testing.assert_array_equal(y, z)
    assert len(plan.step_pool) >= 2  # the nested call got kernels with buffers of their own


def test_cnn_reuses_slots() -> None:
    from benchmarks.models import SmallCNN

    program = compile_module(prepare(SmallCNN()), input_shapes={"forward": [(1, 3, 224, 224)]}).programs[0]
    values = len(program.inputs) + len(program.constants) + len(program.instructions)
    assert program.num_slots < values
    # two slots carry the whole chain of activations
    intermediate = {s for inst in program.instructions for s in inst.outputs}
    assert len(intermediate) == 2


SHAPE_CASES = [
    (OpCode.ADD, BinaryAttrs(), [(2, 1, 4), (3, 1)]),
    (OpCode.MUL, BinaryAttrs(scalar=2.0), [(-1, 5)]),
    (OpCode.MATMUL, None, [(4,), (2, 4, 3)]),
    (OpCode.MATMUL, None, [(-1, 2, 3, 4), (4,)]),
    (OpCode.MATMUL, None, [(5, 1, 3, 4), (2, 4, 6)]),
    (OpCode.LINEAR, FusedAttrs(), [(-1, 7, 16), (8, 16), (8,)]),
    (OpCode.CONV2D, Conv2dAttrs(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2),
     [(2, 4, 17, -1), (6, 2, 3, 3)]),
    (OpCode.CONV2D, Conv2dAttrs(), [(4, 9, 9), (3, 4, 2, 2)]),
    (OpCode.MAX_POOL2D, Pool2dAttrs(kernel=(3, 3), stride=(2, 2), padding=(1, 1), ceil_mode=True), [(1, 3, 10, 11)]),
    (OpCode.AVG_POOL2D, Pool2dAttrs(kernel=(2, 2), stride=(2, 2), ceil_mode=True), [(-1, 3, 7, 7)]),
    (OpCode.ADAPTIVE_AVG_POOL2D, ShapeAttrs(dims=(3, 5)), [(2, 3, 10, 11)]),
    (OpCode.TRANSPOSE, PermuteAttrs(perm=(2, 0, 1)), [(2, -1, 4)]),
    (OpCode.RESHAPE, ShapeAttrs(dims=(-1, 12)), [(-1, 3, 4)]),
    (OpCode.RESHAPE, ShapeAttrs(dims=(5, 7)), [(2, 3)]),  # invalid: unknown
    (OpCode.FLATTEN, FlattenAttrs(start_dim=1, end_dim=-1), [(2, 3, 4, 5)]),
    (OpCode.CAT, AxisAttrs(axis=-1), [(2, 3), (2, 5)]),
    (OpCode.SOFTMAX, AxisAttrs(axis=1), [(2, -1)]),
]


@pytest.mark.parametrize(("op", "attrs", "shapes"), SHAPE_CASES)
def test_python_shapes_match_torch_meta(op: OpCode, attrs: object, shapes: list[tuple[int, ...]]) -> None:
    """The plain-Python shape rules give what running the op on meta tensors gives."""
    ours = infer_shape(op, attrs, [Sym(s) for s in shapes])
    results = []
    for stand_in in (48, 96):
        metas = [torch.empty([stand_in if d < 0 else d for d in s], device="meta") for s in shapes]
        try:
            results.append(tuple(run_op(op, attrs, metas).shape))
        except (RuntimeError, ValueError, IndexError, TypeError):
            results.append(None)
    if None in results:
        assert ours is None
    else:
        assert ours == tuple(a if a == b else -1 for a, b in zip(*results, strict=True))
