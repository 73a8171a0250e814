"""Oracle tests: compiled programs, run by the test evaluator, against eager PyTorch."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from torch import nn

from liteexport.compiler import compile_module

from .conftest import prepare
from .models import added_ops, zoo
from .reference import run_method

Case = tuple[Callable[[], nn.Module], str, list[tuple[int, ...]], bool]

CASES: dict[str, Case] = {
    # name: (factory, method, input shapes, pass input_shapes to the compiler)
    "mlp": (zoo.MLP, "forward", [(3, 8)], False),
    "cnn": (zoo.TinyCNN, "forward", [(2, 3, 8, 8)], True),
    "residual": (zoo.Residual, "forward", [(2, 4, 5, 5)], False),
    "two_methods.forward": (zoo.TwoMethods, "forward", [(3, 6)], False),
    "two_methods.embed": (zoo.TwoMethods, "embed", [(3, 6), (3, 6)], False),
    "tuple_out": (zoo.TupleOut, "forward", [(2, 4), (2, 3)], False),
    "layer_norm_gelu": (zoo.LayerNormGelu, "forward", [(2, 5, 8)], False),
    "linear_algebra": (zoo.LinearAlgebra, "forward", [(3, 4), (3, 2)], True),
    "cat_reshape": (zoo.CatReshape, "forward", [(2, 4), (2, 8)], True),
    "scalar_arith": (zoo.ScalarArith, "forward", [(2, 3), (2, 3)], True),
    "softmaxes": (zoo.Softmaxes, "forward", [(2, 5)], False),
    "dead_code": (zoo.DeadCode, "forward", [(2, 4)], False),
    "activations": (added_ops.Activations, "forward", [(2, 3, 5)], False),
    "reductions": (added_ops.Reductions, "forward", [(2, 3, 4, 5)], True),
    "reductions_dynamic": (added_ops.Reductions, "forward", [(2, 3, 4, 5)], False),
    "slicing": (added_ops.Slicing, "forward", [(2, 4, 5, 6)], True),
    "sequences": (added_ops.Sequences, "forward", [(2, 7, 6)], True),
    "attention": (added_ops.Attention, "forward", [(2, 5, 8)], True),
}


@pytest.mark.torch_oracle
@pytest.mark.parametrize("name", list(CASES))
def test_compiled_matches_eager(name: str) -> None:
    factory, method, shapes, give_shapes = CASES[name]
    scripted = prepare(factory())
    torch.manual_seed(1)
    inputs = [torch.randn(s) for s in shapes]
    input_shapes = {method: [list(s) for s in shapes]} if give_shapes else None
    compiled = compile_module(scripted, methods=[method], input_shapes=input_shapes)
    expected = getattr(scripted, method)(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = run_method(compiled, method, *inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, atol=1e-5, rtol=1e-4)
