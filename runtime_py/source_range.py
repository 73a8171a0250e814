"""TorchScript-style formatting of a source range: the one place it is done."""

from __future__ import annotations

CONTEXT_LINES = 3


def format_source_range(file: str, source: str, start: int, end: int, *,
                        line_offset: int = 0, context: int = CONTEXT_LINES) -> str:
    """Format ``source[start:end]`` the way TorchScript prints a source range::

          File "model.py", line 3
            def forward(self, x, h):
                return x * h
                       ~~~~~ <--- HERE

    ``source`` is the text TorchScript compiled (often one function), ``start``/``end``
    are character offsets into it, and ``line_offset`` is the file line of its first
    line minus one. Up to ``context`` lines before and after the range are shown.
    """
    start = max(0, min(start, len(source)))
    end = max(start, min(end, len(source)))
    lines = source.splitlines() or [""]
    first = source.count("\n", 0, start)
    last = source.count("\n", 0, max(start, end - 1))
    out = [f'  File "{file}", line {first + 1 + line_offset}']
    line_starts = [0]
    for text in lines:
        line_starts.append(line_starts[-1] + len(text) + 1)
    for idx in range(max(0, first - context), min(len(lines), last + 1)):
        text = lines[idx]
        out.append("    " + text)
        if first <= idx <= last:
            col_start = start - line_starts[idx] if idx == first else len(text) - len(text.lstrip())
            col_end = end - line_starts[idx] if idx == last else len(text)
            col_end = max(col_start + 1, min(col_end, len(text)))
            marker = " " * col_start + "~" * (col_end - col_start)
            out.append("    " + marker + (" <--- HERE" if idx == last else ""))
    for idx in range(last + 1, min(len(lines), last + 1 + context)):
        if lines[idx].strip():
            out.append("    " + lines[idx])
    return "\n".join(out)
