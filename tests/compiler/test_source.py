"""Source ranges: what the compiler stores is TorchScript's own text, re-formatted by the
one formatter (bundle_format.source_range) from the span parsed out of it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import torch

from bundle_format.source_range import format_source_range
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


_SOURCE = "def f(x):\n    a = x + 1\n\n    b = (a *\n         2)\n    return b\n"


@pytest.mark.parametrize(("start", "end", "options", "expected"), [
    (18, 23, {}, '  File "m.py", line 2\ndef f(x):\n    a = x + 1\n        ~~~~~ <--- HERE\n\n    b = (a *'),
    (33, 49, {}, '  File "m.py", line 4\n    a = x + 1\n\n    b = (a *\n        ~~~~\n         2)\n'
                 '         ~~ <--- HERE\n    return b'),
    (33, 49, {"context": 1}, '  File "m.py", line 4\n    b = (a *\n        ~~~~\n         2)\n         ~~ <--- HERE'),
    (33, 49, {"context": 0}, '  File "m.py", line 4\n    b = (a *\n        ~~~~\n         2)\n         ~~ <--- HERE'),
    # a range ending in blank lines: no HERE on its last underlined line
    (14, 29, {}, '  File "m.py", line 2\ndef f(x):\n    a = x + 1\n    ~~~~~~~~~\n\n    b = (a *\n         2)\n'
                 '    return b'),
    (0, 3, {"line_offset": 10, "function": "f"},
     '  File "m.py", line 11, in f\ndef f(x):\n~~~ <--- HERE\n    a = x + 1'),
    (54, 63, {}, '  File "m.py", line 6\n    b = (a *\n         2)\n    return b\n    ~~~~~~~~ <--- HERE'),
    # the whole source: printed as it is, without a header (torch's print_with_context; a traced
    # node's source is the Python stack it was traced at)
    (0, 63, {}, _SOURCE[:-1]),
])
def test_format_source_range_layout(start: int, end: int, options: dict[str, Any], expected: str) -> None:
    """The formatter's context lines and underlines, pinned (the output runtime errors print)."""
    assert format_source_range("m.py", _SOURCE, start, end, **options) == expected
