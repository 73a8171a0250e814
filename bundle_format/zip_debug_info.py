"""Debug info of a zip lite model (``_save_mobile_debug_info=True``) as our DebugTable.

Torch stores it in three kinds of records (torch/csrc/jit/mobile/debug_info.cpp,
serialization/callstack_debug_info_serialization.cpp, source_range_serialization.cpp):

- ``code/**.debug_pkl``: ``('FORMAT_WITH_STRING_TABLE', strings, ((byte_offset, range,
  tag), ...))`` with ``range = ((text_string_indexes, file_string_index, first_line),
  start, end)``; the source text is the concatenation of the indexed strings. Older files
  hold ``((text, file, first_line), start, end)`` directly, without a string table
  (``first_line``: torch's ``starting_line_no``, the file line of the text's first line; a range
  on the text's line ``i`` (0-based) is on file line ``first_line + i``).
- ``callstack_debug_map.pkl``: ``((handle, source_tag, node_kind, callstack), ...)`` with
  ``callstack = ((class_name, instance_name) | None, call_site_tag, callee | None,
  function_name)``: one level per inlined method call, outermost first.
- ``mobile_debug_handles.pkl``: the handle of each instruction (read by zip_bytecode).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bundle_format.debug_table import DebugEntry, DebugTable, SourceFrame
from bundle_format.source_range import format_source_range

STRING_TABLE_FORMAT = "FORMAT_WITH_STRING_TABLE"
ROOT_FUNCTION = "<unknown>"  # how torch names the root method in module hierarchies and tracebacks


@dataclass(frozen=True)
class _Range:
    file: str
    text: str
    start: int
    end: int
    first_line: int  # file line of the text's first line (torch's starting_line_no)

    def frame(self, function: str) -> SourceFrame:
        line = self.text.count("\n", 0, max(0, min(self.start, len(self.text)))) + self.first_line
        return SourceFrame(function, self.file, line,
                           format_source_range(self.file, self.text, self.start, self.end,
                                               line_offset=self.first_line - 1))


def _source(raw: Any, strings: tuple[str, ...] | None) -> tuple[str, str, int] | None:
    if not isinstance(raw, tuple) or len(raw) != 3 or not isinstance(raw[2], int):
        return None
    text, file, line_offset = raw
    if strings is not None:
        if not isinstance(text, list) or not isinstance(file, int) or not 0 <= file < len(strings):
            return None
        if not all(isinstance(i, int) and 0 <= i < len(strings) for i in text):
            return None
        return "".join(strings[i] for i in text), strings[file], line_offset
    if isinstance(text, str) and isinstance(file, str):
        return text, file, line_offset
    return None


def source_ranges(debug_pkls: Iterable[Any]) -> dict[int, _Range]:
    """Source range tag -> range, from every ``.debug_pkl`` record (unusable entries are skipped:
    debug info only improves messages, it must never stop a model from loading)."""
    ranges: dict[int, _Range] = {}
    for payload in debug_pkls:
        strings: tuple[str, ...] | None = None
        entries = payload
        if (isinstance(payload, tuple) and len(payload) == 3 and payload[0] == STRING_TABLE_FORMAT
                and isinstance(payload[1], tuple) and all(isinstance(s, str) for s in payload[1])):
            strings, entries = payload[1], payload[2]
        if not isinstance(entries, tuple):
            continue
        for entry in entries:
            if not isinstance(entry, tuple) or len(entry) != 3 or not isinstance(entry[2], int):
                continue
            raw_range = entry[1]
            if not isinstance(raw_range, tuple) or len(raw_range) != 3:
                continue
            source = _source(raw_range[0], strings)
            start, end = raw_range[1], raw_range[2]
            if source is None or not isinstance(start, int) or not isinstance(end, int) or not source[0]:
                continue
            ranges[entry[2]] = _Range(source[1], source[0], start, end, source[2])
    return ranges


def _short(type_name: str) -> str:
    return type_name.rsplit(".", 1)[-1]


def _entry(raw: Any, ranges: dict[int, _Range], root_type: str) -> DebugEntry | None:
    if not isinstance(raw, tuple) or len(raw) < 2 or not isinstance(raw[0], int) or not isinstance(raw[1], int):
        return None
    handle, tag = raw[0], raw[1]
    node_kind = raw[2] if len(raw) > 2 and isinstance(raw[2], str) else ""
    callstack = raw[3] if len(raw) > 3 else None
    hierarchy = f"top({_short(root_type)})"
    function = ROOT_FUNCTION
    frames: list[SourceFrame] = []
    depth = 0
    while isinstance(callstack, tuple) and len(callstack) >= 3 and depth < 1000:
        module_info, call_tag, callee = callstack[0], callstack[1], callstack[2]
        callee_name = callstack[3] if len(callstack) > 3 and isinstance(callstack[3], str) else "forward"
        if isinstance(call_tag, int) and call_tag in ranges:
            frames.append(ranges[call_tag].frame(function))
        if isinstance(module_info, tuple) and len(module_info) == 2:
            hierarchy += f"::{function}.{module_info[1]}({_short(str(module_info[0]))})"
        function = callee_name
        callstack = callee
        depth += 1
    if tag in ranges:
        frames.append(ranges[tag].frame(function))
    return DebugEntry(handle, function, node_kind, hierarchy, tuple(frames))


def debug_table(callstack_map: Any, debug_pkls: Iterable[Any], root_type: str) -> DebugTable | None:
    """The DebugTable of a zip model, or None when its debug records are unusable."""
    if not isinstance(callstack_map, tuple):
        return None
    ranges = source_ranges(debug_pkls)
    entries: dict[int, DebugEntry] = {}
    for raw in callstack_map:
        entry = _entry(raw, ranges, root_type)
        if entry is not None:
            entries[entry.handle] = entry
    return DebugTable(tuple(entries[h] for h in sorted(entries))) if entries else None
