"""The exporter's errors live in liteexport and keep the common base and exit codes."""

from __future__ import annotations

import pytest

import liteexport
import runtime_py.errors
from liteexport import ModelError, OutputError, UnsupportedNodesError, VerificationError
from runtime_py.errors import LiteExportError, UserError


@pytest.mark.parametrize(("error", "exit_code"), [(ModelError, 3), (UnsupportedNodesError, 4),
                                                  (OutputError, 8), (VerificationError, 9)])
def test_export_errors_are_user_errors_of_liteexport(error: type[LiteExportError], exit_code: int) -> None:
    assert issubclass(error, UserError) and issubclass(error, LiteExportError)
    assert error.exit_code == exit_code
    assert error.__module__ == "liteexport.errors"
    assert error.__name__ in liteexport.__all__
    # runtime_py (the loader and interpreter) does not define or need them
    assert not hasattr(runtime_py.errors, error.__name__)


def test_unsupported_nodes_error_lists_every_report() -> None:
    error = UnsupportedNodesError(["a", "b"], summary="2 nodes", counts={"aten::x": 2})
    assert str(error) == "2 nodes\n\na\n\nb" and error.counts == {"aten::x": 2}
