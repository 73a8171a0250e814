"""The torch extension's build key hashes every header it compiles, so an edit to any of them
rebuilds it (a header missing from the lists would leave a stale extension in the cache)."""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import liteexport.torch_backend as backend

_INCLUDE = re.compile(r'^#include "([^"]+)"', re.MULTILINE)


def test_every_header_the_extension_includes_is_in_its_build_key() -> None:
    listed = {p.name for p in backend.SOURCE_HEADERS} | set(backend._GENERATED_HEADERS)
    folders = (backend.SOURCE_PATH.parent, backend.SHARED_DIR, backend.GENERATED_DIR)
    seen: set[str] = set()
    todo = [backend.SOURCE_PATH]
    while todo:  # follow the project's own #include "..." lines from backend.cpp
        for name in _INCLUDE.findall(todo.pop().read_text()):
            found = [folder / name for folder in folders if (folder / name).is_file()]
            if found and name not in seen:
                seen.add(name)
                todo.append(found[0])
    assert seen <= listed, sorted(seen - listed)
    assert {"demo_attrs_generated.h", "demo_attr_rows.h"} <= seen


def test_the_extension_builds_with_werror_switch_and_its_key_holds_the_flags(monkeypatch: pytest.MonkeyPatch,
                                                                              tmp_path: Path) -> None:
    """-Werror=switch reaches load_inline (a switch over the opcode enum that misses a member does
    not compile), and the flags are part of the build folder's name: an extension built with
    other flags is never reused."""
    import torch.utils.cpp_extension as cpp

    if backend._compiler() is None or not cpp.is_ninja_available() or backend.flatbuffers_include_dir() is None:
        pytest.skip("needs a C++ compiler, ninja and the flatbuffers headers to reach the build step")
    seen: dict[str, Any] = {}

    def load_inline(name: str, **kwargs: Any) -> ModuleType:
        seen.update(kwargs)
        return ModuleType(name)

    monkeypatch.setattr(cpp, "load_inline", load_inline)
    monkeypatch.setattr(backend, "_build_folder", lambda name: tmp_path)  # not torch's cache
    backend._build_and_import()
    assert "-Werror=switch" in seen["extra_cflags"]
    name = backend.extension_name()
    monkeypatch.setattr(backend, "EXTRA_CFLAGS", ())
    assert backend.extension_name() != name
