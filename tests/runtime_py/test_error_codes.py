"""The demo backend's structured errors (bundle_format/error_codes.py, schema/demo_errors.toml)."""

from __future__ import annotations

from string import Formatter

import pytest

from bundle_format._generated.demo_errors import KINDS, TEMPLATES
from bundle_format.error_codes import execution_error, format_error, input_error, parse, render


@pytest.mark.parametrize("code", sorted(TEMPLATES))
def test_every_template_renders_and_parses_back(code: str) -> None:
    names = [name for _, name, _, _ in Formatter().parse(TEMPLATES[code]) if name]
    fields = {name: f"<field {i}>" for i, name in enumerate(names)}
    text = render(code, fields)
    assert all(value in text for value in fields.values())
    assert parse(code, text) == fields


def test_errors_carry_code_fields_and_the_rendered_text() -> None:
    error = format_error("ARITY", where="demo program of method 'f'", expected="1 input", got=2)
    assert (error.code, dict(error.fields)) == ("ARITY", {"expected": "1 input", "got": "2"})
    assert str(error) == "takes 1 input, got 2 (at demo program of method 'f')"
    error = input_error("INPUT_COUNT", method="forward", expected=2, got=1)
    assert str(error) == "method 'forward' expected 2 inputs, got 1"
    assert error.debug_handle == -1 and KINDS["INPUT_COUNT"] == "input" and error.exit_code == 6
    error = execution_error("KERNEL_FAILED", instruction="instruction #0 ADD", reason="boom", debug_handle=3)
    assert str(error) == "instruction #0 ADD: boom" and error.debug_handle == 3
    assert KINDS["KERNEL_FAILED"] == "execution"


def test_text_of_another_template_does_not_parse() -> None:
    assert parse("ARITY", "reads slot 4 before anything writes it") is None
    assert parse("NO_SUCH_CODE", "anything") is None
