"""Coverage-guided fuzzing of runtime_py's loaders with atheris (``pip install atheris``).

    cd /work/main && /work/venv/bin/python fuzz/fuzz_loader.py fuzz/corpus -max_total_time=180 \
        -timeout=5 -rss_limit_mb=3072 -artifact_prefix=fuzz/crashers/

The first input byte picks the entry point (PTMF/zip bundle load + describe + forward,
compiled program, debug table); the rest is the file. ``fuzz/run.sh`` seeds fuzz/corpus from
tests/fuzz/seeds and runs for a fixed time. A crash is any exception that is not a
LiteExportError (or is an InternalError); atheris saves the input under fuzz/crashers/.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

with atheris.instrument_imports():
    import harness  # noqa: E402

KINDS = ("ptmf", "program", "debug")  # zip files are told apart by their magic, like ptmf


def test_one_input(data: bytes) -> None:
    if not data:
        return
    kind = KINDS[data[0] % len(KINDS)]
    harness.exercise(data[1:], kind, None, describe=False)


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
