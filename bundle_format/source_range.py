"""TorchScript-style formatting of a source range: the one place it is done."""

from __future__ import annotations

# TorchScript's SourceRange::CONTEXT. Its loops stop counting at the CONTEXT-th newline,
# so CONTEXT - 1 lines are shown before and after the highlighted lines.
CONTEXT_LINES = 3


def format_source_range(file: str, source: str, start: int, end: int, *,
                        line_offset: int = 0, context: int = CONTEXT_LINES,
                        function: str = "") -> str:
    """Format ``source[start:end]`` exactly the way TorchScript prints a source range
    (``SourceRange::print_with_context`` in torch/csrc/jit/frontend/source_range.cpp)::

          File "model.py", line 3
            def forward(self, x, h):
                return x * h
                       ~~~~~ <--- HERE

    ``source`` is the text TorchScript compiled (one function, with its original
    indentation: lines are printed as they are), ``start``/``end`` are character offsets
    into it, and ``line_offset`` is the file line of its first line minus one. Every line of
    the range is underlined (from its first non-blank character), ``<--- HERE`` marks the
    last one, and ``context - 1`` lines are shown before and after. ``function``, when
    given, is appended as ``, in <function>`` (TorchScript's traceback frames). The result
    has no trailing newline.
    """
    text = source
    size = len(text)
    start = max(0, min(start, size))
    range_end = max(start, min(end, size))
    first_line = text.count("\n", 0, start)
    if range_end - start == size:
        # TorchScript prints a range covering the whole source as it is, without a header: the
        # Python stack a traced node records as its source (SourceRange::print_with_context).
        return _drop_final_newline(text)
    header = f'  File "{file}", line {first_line + 1 + line_offset}'
    if function:
        header += f", in {function}"
    out = [header + "\n"]

    begin_line = text.rfind("\n", 0, start) + 1
    end_line = text.find("\n", range_end)
    end_line = size if end_line < 0 else end_line

    # Context: back to just after the `context`-th newline before the range's first line,
    # forward to the `context`-th newline after its last one (torch's loops, done by str
    # searches: walking a character at a time was most of a cold export's formatting time).
    begin_context, end_context = begin_line, end_line
    if context > 0:
        for _ in range(context):
            begin_context = text.rfind("\n", 0, begin_context)
            if begin_context < 0:
                break
        begin_context += 1
        end_context -= 1
        for _ in range(context):
            end_context = text.find("\n", end_context + 1)
            if end_context < 0:
                end_context = size
                break

    out.append(text[begin_context:start])
    line_start = start
    line_end = start
    while line_start < range_end:
        line_end = text.find("\n", line_end)
        line_end = size if line_end < 0 else line_end
        actual = text[line_start:line_end + 1]
        out.append(actual if actual.endswith("\n") else actual + "\n")
        hl_begin = text.rfind("\n", 0, line_start) + 1
        hl_end = min(line_end, range_end)
        # The underline starts at the range's start, or later at the line's first non-blank.
        lead = min(max(hl_begin, start), hl_end)
        rest = text[lead:hl_end]
        empty = lead - hl_begin + len(rest) - len(rest.lstrip(" "))
        width = hl_end - hl_begin - empty
        if width > 0:
            # Trailing blank lines inside the range get neither a marker nor the HERE.
            more = text[line_end:min(range_end + 1, size)].strip("\n ") != ""
            tail = "\n" if more and line_end != range_end else " <--- HERE\n"
            out.append(" " * empty + "~" * width + tail)
        line_end += 1
        line_start = line_end
    if line_end <= size:
        out.append(text[line_end:end_context])
    return _drop_final_newline("".join(out))


def _drop_final_newline(text: str) -> str:
    """TorchScript ends every range with one newline; callers join lines themselves."""
    return text[:-1] if text.endswith("\n") else text


def format_frame(function: str, snippet: str) -> str:
    """A traceback frame: ``snippet`` (from format_source_range) with ``, in <function>``
    added to its ``File ..., line N`` header, as TorchScript tracebacks print it (a snippet
    without a header, a traced node's Python stack, is printed as it is)."""
    if not snippet.startswith('  File "'):
        return snippet
    header, _, body = snippet.partition("\n")
    return f"{header}, in {function}" + (f"\n{body}" if body else "")
