"""The model-zoo table: model, lowered (or its blockers), max error against eager torch,
export time. Run from the repository root:

    .venv/bin/python tests/compiler/models/zoo_report.py            # every model
    .venv/bin/python tests/compiler/models/zoo_report.py resnet18 nn.LSTM

Each model is evaluated in a fresh process (the largest hold gigabytes of weights).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))


def _one(name: str) -> dict[str, object]:
    from tests.compiler.models.model_zoo import NN_CASES, evaluate, torchvision_case

    nn_cases = {c.name: c for c in NN_CASES}
    result = evaluate(nn_cases[name] if name in nn_cases else torchvision_case(name))
    return {"name": result.name, "lowered": result.lowered, "blockers": result.blockers,
            "max_abs_error": result.max_abs_error, "matches": result.matches,
            "export_seconds": result.export_seconds}


def _row(r: dict[str, object]) -> str:
    if "failed" in r:
        return f"| {r['name']} | error: {r['failed']} | | |"
    blockers = r["blockers"]
    assert isinstance(blockers, dict)
    lowered = "yes" if r["lowered"] else "no: " + ", ".join(f"{k.split('::')[-1]} x{n}" for k, n in blockers.items())
    if r["lowered"] and not r["matches"]:
        lowered += " (MISMATCH)"
    error = "" if not r["lowered"] else f"{r['max_abs_error']:.2g}"
    return f"| {r['name']} | {lowered} | {error} | {r['export_seconds']:.2f} s |"


def main(names: list[str]) -> None:
    if not names:
        from tests.compiler.models.model_zoo import NN_CASES, torchvision_names

        names = torchvision_names() + [c.name for c in NN_CASES]
    print("| model | lowered | max abs error | export time |")
    print("|---|---|---|---|")
    lowered = 0
    for name in names:
        done = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True)
        lines = done.stdout.strip().splitlines()
        try:
            row = json.loads(lines[-1])
        except (IndexError, json.JSONDecodeError):
            row = {"name": name, "failed": (done.stderr.strip().splitlines() or ["no output"])[-1][:80]}
        lowered += bool(row.get("lowered")) and bool(row.get("matches"))
        print(_row(row), flush=True)
    print(f"\n{lowered} of {len(names)} lower and match eager torch")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        import warnings

        warnings.filterwarnings("ignore")
        print(json.dumps(_one(sys.argv[2])))
    else:
        main(sys.argv[1:])
