"""Fixtures for the CLI tests: a runner, a hand-built bundle (no compiler or torch
needed) and the shipped TinyCNN example exported once per session."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from liteexport.bundle import write_bundle
from liteexport.cli import cli
from liteexport.lowered import CompiledModule

REPO = Path(__file__).resolve().parents[2]
TINY_CNN = REPO / "examples" / "tiny_cnn.py"


def invoke(args: Sequence[str]) -> Result:
    """Run ``liteexport ARGS`` in-process; stdout and stderr are kept apart."""
    return CliRunner().invoke(cli, list(args), prog_name="liteexport")


@pytest.fixture
def hand_bundle(tmp_path: Path, linear_relu_module: CompiledModule) -> Path:
    """forward(x[?, 4]) -> (relu(x @ W.T + b), x), packed by liteexport.bundle."""
    path = tmp_path / "hand.ptl"
    write_bundle(linear_relu_module, path)
    return path


@pytest.fixture(scope="session")
def tiny_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/tiny_cnn.py:TinyCNN exported through the CLI."""
    path = tmp_path_factory.mktemp("tiny") / "tiny.ptl"
    result = invoke(["export", f"{TINY_CNN}:TinyCNN", "-o", str(path), "--quiet"])
    assert result.exit_code == 0, result.output
    return path
