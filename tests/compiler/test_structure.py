"""What the compiler emits: fusion, folding, dead code, signatures, weights, debug table."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from bundle_format.program import Activation, Conv2dAttrs, FusedAttrs, OpCode, Program
from liteexport.compiler import compile_module
from liteexport.compiler.source import display_path
from liteexport.errors import ModelError, UnsupportedNodesError
from liteexport.lowered import CompiledModule

from .conftest import prepare
from .models import zoo

ZOO_FILE = display_path(str(Path(zoo.__file__).resolve()))


def ops(program: Program) -> list[OpCode]:
    return [ins.op for ins in program.instructions]


def line_of(text: str, obj: object) -> int:
    """1-based file line of the first source line of ``obj`` containing ``text``."""
    lines, first = inspect.getsourcelines(obj)  # type: ignore[arg-type]
    return first + next(i for i, line in enumerate(lines) if text in line)


def test_linear_relu_fuses_and_dropout_disappears() -> None:
    program = compile_module(prepare(zoo.MLP())).programs[0]
    assert ops(program) == [OpCode.LINEAR] * 3
    acts = [ins.attributes.activation for ins in program.instructions]  # type: ignore[union-attr]
    assert acts == [Activation.RELU, Activation.RELU, Activation.NONE]


def test_conv_batch_norm_folds_into_conv_weights() -> None:
    model = zoo.ConvBN(3)
    scripted = prepare(model)
    compiled = compile_module(scripted)
    (program,) = compiled.programs
    assert ops(program) == [OpCode.CONV2D]
    (conv,) = program.instructions
    assert isinstance(conv.attributes, Conv2dAttrs) and conv.attributes.padding == (1, 1)
    fused = torch.nn.utils.fusion.fuse_conv_bn_eval(model.conv, model.bn)
    weights = {c.slot: compiled.weights[c.weight] for c in program.constants}
    np.testing.assert_allclose(weights[conv.inputs[1]], fused.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(weights[conv.inputs[2]], fused.bias.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_conv_bn_relu_and_residual_add() -> None:
    program = compile_module(prepare(zoo.Residual())).programs[0]
    assert ops(program) == [OpCode.CONV2D, OpCode.CONV2D, OpCode.ADD, OpCode.RELU]
    first, second = program.instructions[:2]
    assert first.attributes == Conv2dAttrs(padding=(1, 1), activation=Activation.RELU)
    # The second conv's output feeds the residual add, so its ReLU cannot be fused.
    assert second.attributes == Conv2dAttrs(padding=(1, 1))


def test_batch_norm_stays_when_its_input_has_other_uses() -> None:
    class Shared(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(2, 2, 1)
            self.bn = nn.BatchNorm2d(2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = self.conv(x)
            return self.bn(y) + y

    program = compile_module(prepare(Shared())).programs[0]
    assert ops(program) == [OpCode.CONV2D, OpCode.CHANNEL_AFFINE, OpCode.ADD]


def test_dead_code_produces_no_instructions_and_no_weights() -> None:
    compiled = compile_module(prepare(zoo.DeadCode()))
    assert ops(compiled.programs[0]) == [OpCode.LINEAR]
    assert [w.shape for w in compiled.weights] == [(4, 4), (4,)]


def test_weights_are_float32_contiguous_and_shared_between_methods() -> None:
    compiled = compile_module(prepare(zoo.TwoMethods()))
    assert len(compiled.weights) == 4  # encoder.proj (used by both methods) + head
    for w in compiled.weights:
        assert w.dtype == np.float32 and w.flags["C_CONTIGUOUS"]
    for program in compiled.programs:
        slots = [c.slot for c in program.constants]
        assert len(slots) == len(set(slots))
        assert all(len(program.inputs) <= s < program.num_slots for s in slots)


def test_default_methods_are_forward_and_exported() -> None:
    progress: list[str] = []
    compiled = compile_module(prepare(zoo.TwoMethods()), progress=progress.append)
    assert [m.name for m in compiled.methods] == ["forward", "embed"]
    assert [p.method for p in compiled.programs] == ["forward", "embed"]
    assert compiled.methods[1].arg_names == ("x", "y")
    assert compiled.qualname.endswith("TwoMethods")
    assert len(progress) == 2 and progress[0].startswith("walked forward: ")


def test_unknown_method_names_the_available_ones() -> None:
    with pytest.raises(ModelError, match=r"no compiled method 'predict'; available: forward, embed"):
        compile_module(prepare(zoo.TwoMethods()), methods=["predict"])


def test_non_tensor_argument_is_a_model_error() -> None:
    class IntArg(nn.Module):
        def forward(self, x: torch.Tensor, k: int) -> torch.Tensor:
            return x * k

    with pytest.raises(ModelError, match=r"argument 'k' is int"):
        compile_module(torch.jit.script(IntArg()))


def test_tuple_outputs_signature_and_output_handles() -> None:
    compiled = compile_module(prepare(zoo.TupleOut()))
    (sig,), (program,) = compiled.methods, compiled.programs
    assert (sig.returns_tuple, sig.num_outputs, sig.return_type) == (True, 3, "Tuple[Tensor, Tensor, Tensor]")
    assert program.outputs[2] == 0  # `x` returned as it is
    assert program.output_debug_handles[2] == -1
    kinds = [compiled.debug_table.lookup(h).node_kind for h in program.output_debug_handles[:2]]  # type: ignore[union-attr]
    assert kinds == ["aten::linear", "aten::mul"]


def test_static_shapes_propagate_and_size_folds() -> None:
    shapes = {"forward": [[-1, 3, 8, 8]]}
    program = compile_module(prepare(zoo.TinyCNN()), input_shapes=shapes).programs[0]
    assert program.inputs[0].shape == (-1, 3, 8, 8)
    static = {"forward": [[2, 3, 4]]}
    program = compile_module(torch.jit.script(zoo.DynamicView()), input_shapes=static).programs[0]
    assert ops(program) == [OpCode.RESHAPE]
    assert program.instructions[0].attributes.dims == (2, -1)  # type: ignore[union-attr]


def test_non_tensor_output_is_reported() -> None:
    class ReturnsInt(nn.Module):
        def forward(self, x: torch.Tensor) -> int:
            return x.dim()

    with pytest.raises(UnsupportedNodesError, match=r"must return a Tensor \(float32, int64, int32, bool\)"):
        compile_module(torch.jit.script(ReturnsInt()), input_shapes={"forward": [[2]]})


def cnn() -> CompiledModule:
    return compile_module(prepare(zoo.TinyCNN()), input_shapes={"forward": [[1, 3, 8, 8]]})


def test_every_handle_is_in_the_debug_table_once() -> None:
    compiled = compile_module(prepare(zoo.TwoMethods()))
    handles = [i.debug_handle for p in compiled.programs for i in p.instructions]
    assert len(handles) == len(set(handles))
    for program in compiled.programs:
        for handle in [i.debug_handle for i in program.instructions] + list(program.output_debug_handles):
            entry = compiled.debug_table.lookup(handle)
            assert entry is not None and entry.method == program.method
    assert [e.handle for e in compiled.debug_table.entries] == sorted(handles)


def test_debug_entries_name_kind_hierarchy_and_user_source() -> None:
    compiled = cnn()
    first = compiled.programs[0].instructions[0]
    entry = compiled.debug_table.lookup(first.debug_handle)
    assert entry is not None
    assert entry.node_kind == "aten::conv2d"  # fused conv+bn+relu keeps the producer's kind
    assert entry.module_hierarchy == "top(TinyCNN).features(Sequential).0(Conv2d)"
    outer = entry.frames[0]
    assert (outer.function, outer.file) == ("forward", ZOO_FILE)
    assert outer.line == line_of("y = self.pool(self.features(x))", zoo.TinyCNN)
    assert outer.snippet.startswith(f'  File "{ZOO_FILE}", line {outer.line}\n')
    assert "~~~~~~~~~~~~~ <--- HERE\n" in outer.snippet
    # The last frame is the node itself, inside torch's Conv2d.
    assert entry.frames[-1].function == "_conv_forward"
    linear = compiled.debug_table.lookup(compiled.programs[0].instructions[-1].debug_handle)
    assert linear is not None and linear.module_hierarchy == "top(TinyCNN).classifier(Linear)"


def test_fused_linear_keeps_linear_kind() -> None:
    compiled = compile_module(prepare(zoo.MLP()))
    entry = compiled.debug_table.lookup(compiled.programs[0].instructions[0].debug_handle)
    assert entry is not None
    assert (entry.node_kind, entry.module_hierarchy) == ("aten::linear", "top(MLP).fc1(Linear)")
    assert isinstance(compiled.programs[0].instructions[0].attributes, FusedAttrs)


@pytest.mark.parametrize(("shapes", "expected"), [
    ({"forward": [[-1, 3]]}, [OpCode.LINEAR]),
    (None, [OpCode.LINEAR, OpCode.CHANNEL_AFFINE]),  # rank unknown: dim 1 may not be the features
])
def test_batch_norm_1d_folds_into_linear_when_rank_is_2(
        shapes: dict[str, list[list[int]]] | None, expected: list[OpCode]) -> None:
    model = prepare(nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)))
    assert ops(compile_module(model, input_shapes=shapes).programs[0]) == expected
