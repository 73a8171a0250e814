"""Every command's --help is complete: a description, an Examples section, every option."""

from __future__ import annotations

import pytest

from liteexport import __version__
from liteexport.cli import cli

from .conftest import invoke

COMMANDS = {
    None: ["--version", "--debug", "--help", "export", "inspect", "run", "verify", "profile", "generate", "Exit codes"],
    "export": ["MODEL", "-o, --output", "--method", "--input-shape", "--example-inputs", "-q, --quiet",
               "torch.jit.save", "file.py:Name", "--extra-file", "--strip-debug"],
    "profile": ["BUNDLE", "--method", "--random", "--engine", "--runs", "--json", "--chart", "module hierarchy"],
    "inspect": ["BUNDLE", "--json", "size breakdown"],
    "run": ["BUNDLE", "--method", "-i, --input", "-r, --random", "--seed", "-o, --output", ".npz"],
    "verify": ["BUNDLE", "--engine", "--atol", "--rtol", "runtime_py", "torch", "debug handle"],
    "generate": ["BUNDLE", "--prompt-ids", "--prompt", "--max-new-tokens", "--temperature", "--top-k", "--top-p",
                 "--seed", "--stop-ids", "--engine", "tokens per second"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_is_complete(command: str | None) -> None:
    result = invoke(([command] if command else []) + ["--help"])
    assert result.exit_code == 0
    assert result.stderr == ""
    assert "Usage: liteexport" in result.stdout
    assert "\n  Examples:\n    liteexport " in result.stdout  # \b kept the example lines apart
    for word in COMMANDS[command]:
        assert word in result.stdout, word


def test_every_command_and_option_is_covered() -> None:
    assert set(cli.commands) == {c for c in COMMANDS if c}
    for name, command in cli.commands.items():
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("--"):
                    assert opt in invoke([name, "--help"]).stdout


def test_version() -> None:
    result = invoke(["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"liteexport, version {__version__}\n"


def test_usage_error_keeps_click_exit_code() -> None:
    result = invoke(["run"])
    assert result.exit_code == 2
    assert "Error: Missing argument 'BUNDLE'." in result.stderr


@pytest.mark.parametrize("args, message", [
    (["run", "x.ptl", "--random", "1xbad"], "'1xbad' is not a shape"),
    (["run", "x.ptl", "--random", "2x2:complex7"], "unknown dtype 'complex7'"),
    (["export", "m.py:M", "-o", "o.ptl", "--input-shape", "forward:1x"], "'1x': size '' is neither a number nor"),
    (["export", "m.py:M", "-o", "o.ptl", "--input-shape", "forward:1x8:int8"], "dtype 'int8' is not one of"),
    (["export", "m.py:M", "-o", "o.ptl", "--dim", "S=5"], "expected NAME=LO..HI"),
    (["export", "m.py:M", "-o", "o.ptl", "--input-shape", "for-ward:1x2"], "'for-ward' is not a method name"),
])
def test_bad_option_values_are_usage_errors(args: list[str], message: str) -> None:
    result = invoke(args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.output
