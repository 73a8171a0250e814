"""liteexport profile: per-op and per-instruction time of a compiled program, each instruction mapped
through the debug table to its source line and module hierarchy, most expensive first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from liteexport.profile import TORCHSCRIPT_ROW

from .conftest import invoke

pytestmark = pytest.mark.torch_oracle


def test_profile_names_every_instruction_with_its_source_line(tiny_bundle: Path) -> None:
    result = invoke(["profile", str(tiny_bundle), "--random", "1x3x32x32", "--runs", "3", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    import runtime_py
    from liteexport.inspect_bundle import delegate_contents

    contents = delegate_contents(runtime_py.load(tiny_bundle).ptmf)
    assert contents is not None
    program = contents[0]["forward"]
    # every instruction of the program, once, with what the debug table says of it
    assert sorted(i["index"] for i in report["instructions"]) == list(range(len(program.instructions)))
    assert all(i["calls"] == 3 for i in report["instructions"])
    conv = [i for i in report["instructions"] if i["op"] == "CONV2D"]
    assert len(conv) == 2 and all(i["node"] == "aten::conv2d" for i in conv)
    assert all(i["location"].endswith("examples/tiny_cnn.py:47") for i in conv), conv
    assert conv[0]["module_hierarchy"].startswith("top(TinyCNN).features(Sequential).")
    # most expensive first, shares of the whole call that add up with the TorchScript row
    seconds = [i["seconds"] for i in report["instructions"]]
    assert seconds == sorted(seconds, reverse=True)
    total = sum(o["share"] for o in report["ops"]) + report["other_share"]
    assert 0.98 < total < 1.02, total
    assert {o["op"] for o in report["ops"]} == {i["op"] for i in report["instructions"]}


def test_profile_text_and_chart(tiny_bundle: Path, tmp_path: Path) -> None:
    chart = tmp_path / "profile.png"
    result = invoke(["profile", str(tiny_bundle), "--random", "1x3x32x32", "--runs", "2", "--top", "3",
                     "--chart", str(chart)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{tiny_bundle}: forward on runtime_py, 2 runs, ")
    assert "By op:" in lines and TORCHSCRIPT_ROW in result.stdout
    listed = lines[lines.index("Most expensive instructions (of 6):") + 2:]
    assert len(listed) == 4 and listed[-1] == f"Wrote {chart}"  # --top 3, then the chart
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(("args", "code", "message"), [
    (["--random", "1x3x32x32", "--method", "nope"], 6, "nope"),
    ([], 6, "needs 1 input(s)"),
    (["--random", "1x4x32x32"], 6, "CONV2D"),  # a wrong shape: exit 6 on every path
])
def test_profile_refuses_what_it_cannot_run(tiny_bundle: Path, args: list[str], code: int, message: str) -> None:
    result = invoke(["profile", str(tiny_bundle), *args, "--runs", "1", "--warmup", "0"])
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("Error: ") and message in result.stderr, result.stderr
