"""Bad inputs of every kind: the right exit code, one `Error:` message, no traceback,
and nothing written."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from .conftest import invoke

MISSING_CLASS = "import torch\n\nclass Net(torch.nn.Module):\n    pass\n\ndef build():\n    return Net()\n"
BAD_IMPORT = "import torch\n\nx = undefined_name + 1\n"
NOT_A_MODULE = "Net = 42\n"
NEEDS_ARGS = ("import torch\n\nclass Net(torch.nn.Module):\n    def __init__(self, width):\n"
              "        super().__init__()\n")
NOT_SCRIPTABLE = ("import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
                  "        return x.numpy()\n")
UNSUPPORTED = ("import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n"
               "        y = torch.atan(x)\n        return torch.asin(x) + y\n")


@dataclass(frozen=True)
class Case:
    name: str
    args: Callable[[Path], list[str]]  # given the test's folder
    exit_code: int
    message: str  # must appear in the error text
    setup: Callable[[Path], object] = lambda d: None
    needs: str = ""  # "torch": needs torch; "compiler": needs liteexport.compiler


def _write(name: str, text: str) -> Callable[[Path], object]:
    return lambda d: (d / name).write_text(text)


def _export(model: str) -> Callable[[Path], list[str]]:
    return lambda d: ["export", model.format(d=d), "-o", str(d / "out.ptl"), "--quiet"]


def _run(*extra: str) -> Callable[[Path], list[str]]:
    return lambda d: ["run", str(d / "b.ptl"), *(e.format(d=d) for e in extra)]


def _hand_bundle(d: Path) -> None:
    """Copy of the hand-built bundle (forward(x[?, 4])) into the case folder."""
    (d / "b.ptl").write_bytes((d / "hand.ptl").read_bytes())


CASES = [
    Case("missing model", _export("{d}/nope.py:Net"), 3, "model file not found"),
    Case("model is a directory", lambda d: ["export", str(d), "-o", str(d / "out.ptl"), "-q"], 3,
         "is a directory"),
    Case("missing archive", _export("{d}/model.pt"), 3, "model file not found"),
    Case("not an archive", _export("{d}/m.pt"), 3, "cannot load", _write("m.pt", "junk"), "torch"),
    Case("import fails", _export("{d}/m.py:Net"), 3, "NameError: name 'undefined_name' is not defined",
         _write("m.py", BAD_IMPORT), "torch"),
    Case("syntax error", _export("{d}/m.py:Net"), 3, "SyntaxError", _write("m.py", "def (:\n"), "torch"),
    Case("missing name", _export("{d}/m.py:Nett"), 3, "it defines: Net (nn.Module class), build (function)",
         _write("m.py", MISSING_CLASS), "torch"),
    Case("not a module", _export("{d}/m.py:Net"), 3, "is a int, not an nn.Module class",
         _write("m.py", NOT_A_MODULE), "torch"),
    Case("needs arguments", _export("{d}/m.py:Net"), 3, "cannot be built without arguments",
         _write("m.py", NEEDS_ARGS), "torch"),
    Case("fails to script", _export("{d}/m.py:Net"), 3, "<--- HERE", _write("m.py", NOT_SCRIPTABLE), "torch"),
    Case("unsupported nodes", _export("{d}/m.py:Net"), 4,
         "The node of aten::atan is not supported in this compiler. Source code:",
         _write("m.py", UNSUPPORTED), "compiler"),
    Case("export to missing folder", lambda d: ["export", "x.py:M", "-o", str(d / "no" / "out.ptl")], 8,
         "does not exist"),
    Case("export onto a directory", lambda d: ["export", "x.py:M", "-o", str(d)], 8, "is a directory"),
    Case("missing bundle", _run(), 5, "No such file"),
    Case("inspect missing bundle", lambda d: ["inspect", str(d / "b.ptl")], 5, "No such file"),
    Case("empty bundle", _run(), 5, "is empty", _write("b.ptl", "")),
    Case("random bytes", _run(), 5, "not a PTMF bundle",
         lambda d: (d / "b.ptl").write_bytes(np.random.default_rng(0).bytes(300))),
    Case("inspect random bytes", lambda d: ["inspect", str(d / "b.ptl")], 5, "not a PTMF bundle",
         lambda d: (d / "b.ptl").write_bytes(np.random.default_rng(0).bytes(300))),
    Case("truncated bundle", _run(), 5, "",
         lambda d: (d / "b.ptl").write_bytes((d / "hand.ptl").read_bytes()[:2000])),
    Case("inspect truncated bundle", lambda d: ["inspect", str(d / "b.ptl")], 5, "",
         lambda d: (d / "b.ptl").write_bytes((d / "hand.ptl").read_bytes()[:2000])),
    Case("unknown method", _run("--method", "nope", "--random", "1x4"), 6, "no method 'nope'", _hand_bundle),
    Case("no inputs", _run(), 6, "needs 1 input(s): give them with --input FILE or --random SHAPE",
         _hand_bundle),
    Case("too many inputs", _run("--random", "1x4", "--random", "1x4"), 6, "takes 1 input(s), got 2",
         _hand_bundle),
    Case("missing input file", _run("--input", "{d}/x.npy"), 6, "cannot read input file", _hand_bundle),
    Case("input not npy", _run("--input", "{d}/x.npy"), 6, "is not a .npy/.npz",
         lambda d: (_hand_bundle(d), (d / "x.npy").write_text("hello"))),
    Case("pickled input", _run("--input", "{d}/x.npy"), 6, "x.npy",
         lambda d: (_hand_bundle(d), np.save(d / "x.npy", np.array([None]), allow_pickle=True))),
    Case("wrong input shape", _run("--random", "2x5", "-o", "{d}/out.npz"), 7, "", _hand_bundle),
    Case("output folder missing", _run("--random", "1x4", "-o", "{d}/no/out.npz"), 8, "does not exist",
         _hand_bundle),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case: Case, tmp_path: Path, hand_bundle: Path) -> None:
    if case.needs:
        pytest.importorskip("torch")
    assert hand_bundle.parent == tmp_path
    case.setup(tmp_path)
    before = {p.name for p in tmp_path.rglob("*")}
    result = invoke(case.args(tmp_path))
    assert result.exit_code in ((6, 7) if case.exit_code == 7 else (case.exit_code,)), result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Error: "), result.stderr
    assert "Traceback (most recent call last)" not in result.output  # TorchScript-style tracebacks are fine
    assert "internal error" not in result.stderr
    assert case.message in result.stderr
    assert {p.name for p in tmp_path.rglob("*")} == before  # no output, no temp file left behind


def test_unsupported_nodes_lists_every_node(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    (tmp_path / "m.py").write_text(UNSUPPORTED)
    result = invoke(["export", f"{tmp_path}/m.py:Net", "-o", str(tmp_path / "out.ptl"), "--quiet"])
    assert result.exit_code == 4, result.output
    for op, line in (("atan", 5), ("asin", 6)):
        assert f"The node of aten::{op} is not supported in this compiler. Source code:" in result.stderr
        assert f'line {line}' in result.stderr
    assert result.stderr.count("<--- HERE") >= 2
    assert not (tmp_path / "out.ptl").exists()


def test_debug_shows_traceback(tmp_path: Path) -> None:
    result = invoke(["--debug", "run", str(tmp_path / "missing.ptl")])
    assert result.exit_code == 5
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("Error: cannot read")


def test_internal_errors_exit_70(monkeypatch: pytest.MonkeyPatch, hand_bundle: Path) -> None:
    import liteexport.inspect_bundle as inspect_bundle

    def broken(path: object) -> dict[str, object]:
        raise KeyError("oops")

    monkeypatch.setattr(inspect_bundle, "describe", broken)
    result = invoke(["inspect", str(hand_bundle)])
    assert result.exit_code == 70
    assert result.stderr == ("Error: internal error (a bug in liteexport, please report it): "
                             "KeyError: 'oops' (rerun with --debug for the traceback)\n")
