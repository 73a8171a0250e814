"""The docs cannot drift: every code block of README.md and docs/reference.md marked runnable is
run, in order, in one temporary folder per document (holding a copy of ``examples/``), and what it
prints is compared with the output block the document shows after it.

Markers, each an HTML comment on the line before a fence (GitHub shows none of them):

- ``<!-- runnable -->`` before a ```` ```bash ```` or ```` ```python ```` block: run it (bash with
  ``set -e``, where ``liteexport`` and ``python`` are this interpreter's; python as a script in the
  folder). ``<!-- runnable: exit N -->``: the bash block must end with exit code N.
- ``<!-- file: NAME -->`` before a block: it is written to NAME in the folder (a model the document
  defines, used by the blocks after it).
- ``<!-- output -->`` before a ```` ```text ```` block: what the runnable block before it prints
  (stdout and stderr as they come, unbuffered).

The comparison rule: every non-empty line of the output block must match a line of what ran, in
order (lines not shown, such as the export's progress, may come between); a line ending in ``...``
matches any line that starts with the text before it. Before comparing, both sides are masked:

- sizes: a number before ``bytes``/``KB``/``MB`` (``15,224 bytes``) becomes ``N``;
- timings: a number before ``ms``/``s`` (``0.424 ms``, ``[  7.1s]``) becomes ``T``;
- float noise: a number with a decimal point or an exponent (``1.8e-07``, ``-0.55058295``) becomes
  ``F``; integers (shapes, counts, line numbers, exit codes) must be exact.

``python tests/docs/test_docs_runnable.py README.md`` prints what each runnable block prints
today, to refresh an output block.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch_oracle

REPO = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs/reference.md")

_MARKER = re.compile(r"^<!-- (runnable(?:: exit (\d+))?|file: (\S+)|output) -->$")
_FENCE = re.compile(r"^\s*```(\w*)\s*$")
_SIZE = re.compile(r"\d[\d,]*(?:\.\d+)?(?= ?(?:bytes|KB|MB)\b)")
_TIME = re.compile(r"\d+(?:\.\d+)?(?= ?(?:ms|s)\b)")
_FLOAT = re.compile(r"-?(?:\d+\.\d+(?:e[-+]?\d+)?|\d+e[-+]?\d+)")


@dataclass(frozen=True)
class Block:
    line: int  # of the fence, 1-based
    kind: str  # "run", "file", "output"
    language: str
    text: str
    exit_code: int = 0
    name: str = ""  # kind "file": where it is written


def blocks(doc: str) -> list[Block]:
    """The marked blocks of ``doc``, in order."""
    lines = (REPO / doc).read_text().splitlines()
    found = []
    for i, line in enumerate(lines[:-1]):
        marker, fence = _MARKER.match(line.strip()), _FENCE.match(lines[i + 1])
        if marker is None:
            continue
        assert fence is not None, f"{doc}:{i + 1}: a marker must be followed by a fence"
        end = next(j for j in range(i + 2, len(lines)) if lines[j].strip().startswith("```"))
        text = textwrap.dedent("\n".join(lines[i + 2:end])) + "\n"  # a block in a list item is indented
        what = marker.group(1)
        kind = "run" if what.startswith("runnable") else "file" if what.startswith("file") else "output"
        found.append(Block(i + 2, kind, fence.group(1), text, int(marker.group(2) or 0), marker.group(3) or ""))
    return found


def mask(text: str) -> str:
    """``text`` with sizes, timings and floats masked (see the module's doc)."""
    return _FLOAT.sub("F", _TIME.sub("T", _SIZE.sub("N", text)))


def unmatched(expected: str, actual: str) -> str | None:
    """The first line of ``expected`` that does not match ``actual`` in order, or None."""
    got = [mask(line).rstrip() for line in actual.splitlines()]
    position = 0
    for line in (mask(e).rstrip() for e in expected.splitlines() if e.strip()):
        prefix = line[:-3] if line.endswith("...") else None
        while position < len(got) and not (got[position].startswith(prefix) if prefix is not None
                                           else got[position] == line):
            position += 1
        if position == len(got):
            return line
        position += 1
    return None


def _run(block: Block, folder: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{REPO}{os.pathsep}{folder}", "PYTHONUNBUFFERED": "1",
           "PYTHON": sys.executable, "PYTHONWARNINGS": "ignore"}
    if block.language == "python":
        (folder / "_block.py").write_text(block.text)
        command = [sys.executable, "_block.py"]
    else:
        assert block.language == "bash", f"line {block.line}: runnable blocks are bash or python"
        preamble = 'liteexport() { "$PYTHON" -m liteexport "$@"; }\npython() { "$PYTHON" "$@"; }\n'
        command = ["bash", "-c", preamble + ("set -e\n" if block.exit_code == 0 else "") + block.text]
    return subprocess.run(command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, text=True, timeout=300, check=False)


def run_doc(doc: str, folder: Path) -> list[tuple[Block, subprocess.CompletedProcess[str] | None]]:
    """Every marked block of ``doc`` done in ``folder`` (files written, runnable blocks run), each
    output block paired with the run it shows."""
    shutil.copytree(REPO / "examples", folder / "examples")
    done: list[tuple[Block, subprocess.CompletedProcess[str] | None]] = []
    ran: subprocess.CompletedProcess[str] | None = None
    for block in blocks(doc):
        if block.kind == "file":
            (folder / block.name).write_text(block.text)
        elif block.kind == "run":
            ran = _run(block, folder)
            ran.stdout = ran.stdout.replace(f"{folder}/", "")
        done.append((block, ran if block.kind != "file" else None))
    return done


@pytest.mark.parametrize("doc", DOCS)
def test_runnable_blocks_print_what_the_doc_shows(doc: str, tmp_path: Path) -> None:
    done = run_doc(doc, tmp_path)
    assert sum(block.kind == "run" for block, _ in done) >= 3, f"{doc}: no runnable blocks found"
    failures = []
    for block, ran in done:
        if block.kind == "run":
            assert ran is not None
            if ran.returncode != block.exit_code:
                failures.append(f"{doc}:{block.line}: exit {ran.returncode}, expected {block.exit_code}:\n{ran.stdout}")
        elif block.kind == "output":
            assert ran is not None, f"{doc}:{block.line}: an output block follows no runnable block"
            missing = unmatched(block.text, ran.stdout)
            if missing is not None:
                failures.append(f"{doc}:{block.line}: the doc shows\n  {missing}\nwhich did not run in order; it "
                                f"printed:\n{ran.stdout}")
    assert not failures, "\n\n".join(failures)


def test_the_masking_rule() -> None:
    assert mask("Wrote tiny.ptl: 15,224 bytes; 6 instructions") == "Wrote tiny.ptl: N bytes; 6 instructions"
    assert mask("[  7.1s] packing; 0.424 ms a run") == "[  Ts] packing; T ms a run"
    assert mask("max abs error 1.8e-07 on shape (1, 10): -0.55") == "max abs error F on shape (1, 10): F"
    assert unmatched("a 1.0\nc ...", "a 2.5\nb\nc d e") is None
    assert unmatched("c\na", "a\nc") == "a"  # order counts
    assert unmatched("shape (1, 10)", "shape (1, 11)") == "shape (1, 10)"  # integers are exact


if __name__ == "__main__":  # python tests/docs/test_docs_runnable.py README.md: what each block prints now
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        for block, ran in run_doc(sys.argv[1], Path(scratch)):
            if block.kind == "run" and ran is not None:
                print(f"--- line {block.line}, exit {ran.returncode}\n{ran.stdout}")
