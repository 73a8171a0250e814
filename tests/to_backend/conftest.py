"""The to_backend tests' fixture: liteexport's torch backend loaded (built on first use)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import liteexport.torch_backend as tb  # noqa: E402


@pytest.fixture(scope="session")
def backend() -> None:
    if not tb.torch_backend_available():
        pytest.skip("no C++ compiler (or ninja): liteexport's torch backend needs one to build "
                    "(apt-get install g++ ninja-build)")
    tb.load_torch_backend()
