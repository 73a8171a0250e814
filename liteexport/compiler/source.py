"""Source locations of TorchScript nodes, re-formatted by the one source-range formatter.

Torch's Python bindings expose a node's source range only as the text TorchScript prints
(``Node.sourceRange()``): a ``File "...", line N`` header, the lines of the compiled source
around the range and ``~~~~`` underlines. That text holds everything the range is made of
for display: the file, the start line, the shown lines of source and the underlined
columns. ``parse_torch_range`` recovers those pieces as a :class:`SourceSpan`, and
``SourceSpan.format`` prints it again through ``bundle_format.source_range`` so every snippet we
store comes out of one formatter.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache

import torch

from bundle_format.debug_table import SourceFrame
from bundle_format.source_range import format_source_range

_HEADER = re.compile(r'^  File "(?P<file>.*)", line (?P<line>\d+)(?:, in .*)?$')
# An underline: blanks, tildes, and on the last line of the range the HERE arrow.
_MARKER = re.compile(r"^ *~+(?: <--- HERE|\.\.\.  <--- HERE)?$")


@dataclass(frozen=True)
class SourceSpan:
    """A range of source text: ``source[start:end]`` in ``file``, whose first line is
    file line ``line_offset + 1``."""

    file: str
    source: str
    start: int
    end: int
    line_offset: int

    @property
    def line(self) -> int:
        """1-based file line where the range starts."""
        return self.line_offset + 1 + self.source.count("\n", 0, self.start)

    def format(self) -> str:
        return format_source_range(self.file, self.source, self.start, self.end,
                                   line_offset=self.line_offset)

    def frame(self, function: str) -> SourceFrame:
        return SourceFrame(function=function, file=self.file, line=self.line, snippet=self.format())


@lru_cache(maxsize=4096)
def parse_torch_range(text: str) -> SourceSpan | None:
    """Recover the span printed by TorchScript's ``SourceRange`` text; None when the node
    has no source range (or the text is not a highlighted range)."""
    lines = text.rstrip("\n").split("\n")
    header = _HEADER.match(lines[0]) if lines else None
    if header is None:
        return None
    code: list[str] = []
    underlined: list[tuple[int, int, int]] = []  # (code line index, first col, end col)
    for line in lines[1:]:
        if code and "~" in line and _MARKER.match(line):  # most lines are code: skip the regex
            body = line.split(" <--- HERE")[0].rstrip(".")
            tildes = body.lstrip(" ")
            underlined.append((len(code) - 1, len(body) - len(tildes), len(body)))
        else:
            code.append(line)
    if not underlined:
        return None
    first_idx, first_col, _ = underlined[0]
    last_idx, _, last_col = underlined[-1]
    offsets = [0]
    for line in code:
        offsets.append(offsets[-1] + len(line) + 1)
    # The trailing newline keeps a range that spans every shown line from reading as
    # "the whole source", which TorchScript prints without underlines.
    source = "\n".join(code) + "\n"
    start = offsets[first_idx] + first_col
    end = offsets[last_idx] + last_col
    line_offset = int(header.group("line")) - 1 - first_idx
    return SourceSpan(display_path(header.group("file")), source, start, end, line_offset)


_TORCH_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(torch.__file__)))


def display_path(file: str) -> str:
    """How a source file is named in reports and bundles, never absolute: torch's own files
    relative to torch's installation (``torch/nn/modules/conv.py``), files in the working
    directory relative to it (``examples/tiny_cnn.py``), installed packages' relative to their
    import root (``transformers/models/bert/modeling_bert.py``), any other relative to the working
    directory (``../models/net.py``). Bundles then hold no machine's install or checkout paths,
    and two exports of one model are byte-identical."""
    return _display_path(file, os.getcwd(), tuple(p for p in sys.path if os.path.isabs(p)))


@lru_cache(maxsize=1024)
def _display_path(file: str, cwd: str, import_roots: tuple[str, ...]) -> str:
    if not os.path.isabs(file):
        return file
    for root in (_TORCH_ROOT, cwd, *sorted(import_roots, key=len, reverse=True)):
        relative = os.path.relpath(file, root)
        if not relative.startswith(".."):
            return relative
    return os.path.relpath(file, cwd)
