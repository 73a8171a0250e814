"""Source ranges: what the compiler stores is TorchScript's own text, re-formatted by the
one formatter (runtime_py.source_range) from the span parsed out of it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import torch

from liteexport.compiler.source import parse_torch_range

from .conftest import prepare
from .models import layout, zoo


def all_nodes(block: torch._C.Block | torch._C.Graph) -> Iterator[torch._C.Node]:
    for node in block.nodes():
        yield node
        for sub in node.blocks():
            yield from all_nodes(sub)


def graphs() -> Iterator[torch._C.Graph]:
    yield torch.jit.script(layout.Layout()).graph
    yield torch.jit.script(layout.free_function).graph
    for factory in (zoo.TinyCNN, zoo.LayerNormGelu, zoo.TwoMethods):
        module = prepare(factory())
        graph = module._c._get_method("forward").graph.copy()
        torch._C._jit_pass_inline(graph)  # reaches torch's own sources too
        yield graph


@pytest.mark.torch_oracle
def test_reformatted_ranges_equal_torchscript_text() -> None:
    checked = 0
    for graph in graphs():
        for node in all_nodes(graph):
            text = node.sourceRange()
            span = parse_torch_range(text)
            if span is None:
                assert not text.strip()
                continue
            # same text, but the file named relative to the working directory
            header, _, body = text.partition("\n")
            expected = header.replace(header.split('"')[1], span.file) + "\n" + body
            assert span.format() + "\n" == expected
            checked += 1
    assert checked > 50


def test_span_line_and_frame() -> None:
    graph = torch.jit.script(layout.Layout()).graph
    sigmoid = next(n for n in graph.nodes() if n.kind() == "aten::sigmoid")
    span = parse_torch_range(sigmoid.sourceRange())
    assert span is not None
    frame = span.frame("forward")
    assert frame.file.endswith("layout.py") and frame.function == "forward"
    assert frame.line == 14
    assert frame.snippet.splitlines()[1:] == [
        "        y = x + 1",
        "    ",  # TorchScript keeps blank lines indented
        "        z = torch.sigmoid(",
        "            ~~~~~~~~~~~~~ <--- HERE",
        "            x) * (h",
        "                  + 2)",
    ]
