"""The --quantize int8 table of issue 22: model, float size, int8 size (ratio), max/mean error
against the float model and top-1 agreement on the calibration and held-out inputs (the export's
own cost notes), export times. Run from the repository root:

    .venv/bin/python tests/compiler/models/int8_report.py [resnet18] [mobilenet_v2]
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

_COST = re.compile(r"max abs error (\S+), mean (\S+) against the float model on \d+ (.+?), top-1 agreement (\d+/\d+) "
                   r"\((\S+) x the output's range")


def main(names: list[str]) -> None:
    from tests.compiler.models.int8_models import export_both, float_model

    print("| model | float | int8 (ratio) | calibration: max / mean error, top-1 | held-out: max / mean error, "
          "top-1 | export float / int8 |")
    print("|---|---|---|---|---|---|")
    for name in names:
        with tempfile.TemporaryDirectory() as folder:
            plain, int8, plain_seconds, int8_seconds = export_both(float_model(name), Path(folder))
        costs = [m.groups() for m in map(_COST.search, int8.notes) if m]
        cells = [f"{c[0]} / {c[1]} ({float(c[4]):.1%} of the range), {c[3]}" for c in costs]
        print(f"| {name} | {plain.size / 1e6:.1f} MB | {int8.size / 1e6:.2f} MB ({int8.size / plain.size:.3f}x) | "
              f"{' | '.join(cells)} | {plain_seconds:.1f} s / {int8_seconds:.1f} s |")


if __name__ == "__main__":
    main(sys.argv[1:] or ["resnet18", "mobilenet_v2"])
