"""The demo backend's structured errors: a code (schema/demo_errors.toml) and named fields.

Errors of demo programs - malformed programs, inputs that do not fit, failing instructions -
carry ``error.code`` (e.g. ``"INPUT_MISMATCH"``) and ``error.fields`` (field name -> value as
text), the same in runtime_py, the Android native core and the torch extension. Their text is
rendered here, and only here, from the templates every language shares; tests across
languages compare codes and fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from string import Formatter

from bundle_format._generated.demo_errors import TEMPLATES
from bundle_format.errors import ExecutionError, FormatError, InputError


def render(code: str, fields: Mapping[str, object]) -> str:
    """The text of error ``code`` with ``fields`` in its template."""
    return str(TEMPLATES[code].format_map(_as_text(fields)))


def _as_text(fields: Mapping[str, object]) -> dict[str, str]:
    return {name: str(value) for name, value in fields.items()}


def format_error(code: str, *, where: str = "", **fields: object) -> FormatError:
    """The FormatError of ``code``; ``where`` names the program, instruction or table."""
    text = _as_text(fields)
    error = FormatError(render(code, text), where=where)
    error.code, error.fields = code, text
    return error


def input_error(code: str, *, debug_handle: int = -1, **fields: object) -> InputError:
    """The InputError of ``code``: the call's inputs do not fit the program (exit 6);
    ``debug_handle``: the instruction that reads the input first (its module is named after the
    message), -1 for none."""
    text = _as_text(fields)
    error = InputError(render(code, text))
    error.code, error.fields, error.debug_handle = code, text, debug_handle
    return error


def execution_error(code: str, *, debug_handle: int = -1, **fields: object) -> ExecutionError:
    """The ExecutionError of ``code``, attributed to the instruction with ``debug_handle``."""
    text = _as_text(fields)
    error = ExecutionError(render(code, text), debug_handle=debug_handle)
    error.code, error.fields = code, text
    return error


def parse(code: str, text: str) -> dict[str, str] | None:
    """The fields ``render(code, fields)`` made ``text`` from, or None if it did not: for an
    engine that passes errors on only as text (torch)."""
    template = TEMPLATES.get(code)
    if template is None:
        return None
    pattern = ""
    for literal, name, _, _ in Formatter().parse(template):
        pattern += re.escape(literal) + (f"(?P<{name}>.*?)" if name else "")
    match = re.fullmatch(pattern, text, re.DOTALL)
    return None if match is None else match.groupdict()
