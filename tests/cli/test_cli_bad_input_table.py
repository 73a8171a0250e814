"""More rows of the bad-input table (issue 5): every command given a directory, wrong
identifier, unsupported version, a full torch.jit.save archive where a lite model is needed,
a bundle where a model is needed, a wrong input dtype, hostile bundles of the fuzz corpus.
Same bar as test_cli_errors: documented exit code, one ``Error:`` paragraph, no traceback."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from bundle_format.bundle_file import read_bundle_bytes
from bundle_format.ptmf_writer import encode_module

from .conftest import invoke
from .test_cli_errors import Case

SEEDS = Path(__file__).parents[1] / "fuzz" / "seeds"
CRASHERS = Path(__file__).parents[1] / "fuzz" / "crashers"


def _bundle(d: Path, data: bytes) -> None:
    (d / "b.ptl").write_bytes(data)


def _old_version(d: Path) -> None:
    module = read_bundle_bytes((d / "hand.ptl").read_bytes())
    _bundle(d, encode_module(replace(module, bytecode_version=7)))


def _on_bundle(command: str, *extra: str) -> list[str]:
    return [command, "{d}/b.ptl", *extra]


COMMANDS = {"run": ("--random", "1x4"), "inspect": (), "verify": ()}
CASES: list[Case] = []
for cmd, extra in COMMANDS.items():
    def args(d: Path, cmd: str = cmd, extra: tuple[str, ...] = extra) -> list[str]:
        return [a.format(d=d) for a in _on_bundle(cmd, *extra)]

    def on_dir(d: Path, cmd: str = cmd, extra: tuple[str, ...] = extra) -> list[str]:
        return [cmd, str(d), *extra]

    CASES += [
        Case(f"{cmd}: directory", on_dir, 5, "is a directory"),
        Case(f"{cmd}: wrong identifier", args, 5, "not a PTMF bundle: file identifier is b'XXXX'",
             lambda d: _bundle(d, bytes(4) + b"XXXX" + bytes(100))),
        Case(f"{cmd}: unsupported version", args, 5,
             "unsupported bytecode version 7: flatbuffer bundles must be version 9", _old_version),
        Case(f"{cmd}: full torch.jit.save archive", args, 5, "without bytecode.pkl",
             lambda d: _bundle(d, (SEEDS / "torch_full_jit_save.zip.bin").read_bytes())),
        Case(f"{cmd}: zip bomb", args, 5, "zip bomb",
             lambda d: _bundle(d, (CRASHERS / "zip_bomb.zip.bin").read_bytes())),
    ]
    if cmd != "inspect":  # inspect reads the structure only; it runs no load-time code
        CASES.append(Case(f"{cmd}: load-time endless loop", args, 5, "exceeded the instruction budget",
                          lambda d: _bundle(d, (CRASHERS / "setstate_jmp_loop.ptmf.bin").read_bytes())))
CASES += [
    # a zip-format lite model has its TorchScript code and torch.jit.load reads it: only flatbuffers fail
    Case("export: a flatbuffer bundle given as MODEL",
         lambda d: ["export", str(d / "b.ptl"), "-o", str(d / "o.ptl"), "-q"], 3, "",
         lambda d: _bundle(d, (d / "hand.ptl").read_bytes()), "torch"),
    # two flipped bits make the wrapper bytecode pass a dict to execute as the method handle
    Case("run: corrupted wrapper passes a foreign handle", lambda d: ["run", str(d / "b.ptl"), "--random", "3x6"], 5,
         "execute was given a dict as the method handle",
         lambda d: _bundle(d, (CRASHERS / "two_bit_flip_execute_handle.ptmf.bin").read_bytes())),
    Case("run: wrong input dtype", lambda d: ["run", str(d / "b.ptl"), "--input", str(d / "x.npy")], 6, "",
         lambda d: (_bundle(d, (d / "hand.ptl").read_bytes()), np.save(d / "x.npy", np.zeros((1, 4), np.complex64)))),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_table(case: Case, tmp_path: Path, hand_bundle: Path) -> None:
    if case.needs:
        pytest.importorskip("torch")
    case.setup(tmp_path)
    before = {p.name for p in tmp_path.rglob("*")}
    result = invoke(case.args(tmp_path))
    assert result.exit_code in ((6, 7) if case.exit_code in (6, 7) else (case.exit_code,)), result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Error: "), result.stderr
    assert "Traceback (most recent call last)" not in result.output
    assert "internal error" not in result.stderr
    assert case.message in result.stderr
    assert {p.name for p in tmp_path.rglob("*")} == before
