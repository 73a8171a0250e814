"""The torch extension's build key hashes every header it compiles, so an edit to any of them
rebuilds it (a header missing from the lists would leave a stale extension in the cache)."""

from __future__ import annotations

import re

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
