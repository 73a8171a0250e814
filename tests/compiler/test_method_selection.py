"""Which methods are compiled: forward and the exported ones, skipping (with a note)
helpers whose arguments are not all Tensors, unless the user names them."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from liteexport.compiler import compile_module
from liteexport.errors import ModelError
from liteexport.model_loading import load_model

from .models import zoo


def test_exported_method_with_a_float_argument_is_skipped_with_a_note() -> None:
    compiled = compile_module(torch.jit.script(zoo.WithHelpers()))
    assert [m.name for m in compiled.methods] == ["forward"]
    (note,) = compiled.notes
    assert note.startswith("method 'scaled' not compiled: argument 'scale' is float")


def test_archive_helpers_are_skipped_with_notes(tmp_path: Path) -> None:
    # Loaded from a file there is no Python class saying what was exported: every public
    # method is a candidate, forward_head(x, pre_logits: bool) included.
    torch.jit.script(zoo.WithHelpers()).save(str(tmp_path / "m.pt"))
    scripted, functions, _ = load_model(str(tmp_path / "m.pt"))
    compiled = compile_module(scripted, functions=functions)
    assert [m.name for m in compiled.methods] == ["forward"]
    assert sorted(n.split("'")[1] for n in compiled.notes) == ["forward_head", "scaled"]
    assert any("argument 'pre_logits' is bool" in n for n in compiled.notes)


def test_a_named_method_with_non_tensor_arguments_is_an_error() -> None:
    with pytest.raises(ModelError, match="method 'scaled': argument 'scale' is float, but every input"):
        compile_module(torch.jit.script(zoo.WithHelpers()), methods=["scaled"])
