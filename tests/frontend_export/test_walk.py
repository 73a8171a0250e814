"""The FX walk itself: the decomposition keeps the ops with fused lowerings, and the debug table
names each instruction's module instance and source line as the TorchScript walk does."""

from __future__ import annotations

import torch

from liteexport.compiler.exported import compile_exported, core_aten
from liteexport.compiler.fx_forms import kind_of
from tests.frontend_export import models
from tests.frontend_export.cases import CASES


def test_core_aten_keeps_the_ops_with_fused_lowerings() -> None:
    program = torch.export.export(models.Block().eval(), (torch.randn(1, 8, 64),))
    kinds = {kind_of(n.target) for n in core_aten(program).graph.nodes
             if n.op == "call_function" and isinstance(n.target, torch._ops.OpOverload)}
    assert {"aten::linear", "aten::layer_norm", "aten::gelu", "aten::scaled_dot_product_attention"} <= kinds
    assert "aten::addmm" not in kinds and "aten::native_layer_norm" not in kinds


def test_the_debug_table_names_the_module_instance_and_the_users_line() -> None:
    model = next(c for c in CASES if c.name == "tiny_cnn").build().eval()
    compiled = compile_exported(torch.export.export(model, (torch.randn(1, 3, 32, 32),)))
    conv = next(e for e in compiled.debug_table.entries if e.node_kind == "aten::conv2d")
    assert conv.module_hierarchy == "top(TinyCNN).features(Sequential).0(Conv2d)"
    frame = conv.user_frame()
    assert frame is not None and (frame.file, frame.line, frame.function) == ("examples/tiny_cnn.py", 47, "forward")
    assert "x = self.features(x)\n        ~~~~" in frame.snippet
    assert conv.frames[-1].file == "torch/nn/modules/conv.py"  # torch's own frames follow, as in TorchScript
    assert compiled.qualname == "__torch__.tiny_cnn.TinyCNN"


class _PermutedTable(torch.nn.Module):
    """A buffer permuted, made contiguous and viewed at run time (swin's relative position index)."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("table", torch.arange(12.0).reshape(3, 4))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.table.permute(1, 0).contiguous().view(-1)


def test_constants_fold_with_torch_layouts() -> None:
    from runtime_py.backends.demo import executor
    from runtime_py.backends.demo.plan import build_plan

    model = _PermutedTable().eval()
    compiled = compile_exported(torch.export.export(model, (torch.randn(2, 12),)))
    x = torch.randn(2, 12)
    (got,) = executor.run(build_plan(compiled.programs[0], compiled.weights), [x.numpy()])
    torch.testing.assert_close(torch.from_numpy(got), model(x))
