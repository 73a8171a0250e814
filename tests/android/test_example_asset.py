"""The app's committed asset is byte for byte what android_sample/scripts/export_example.sh
writes today: it cannot drift from the exporter (regenerate it with that script)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch_oracle

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "android_sample" / "scripts" / "export_example.sh"
ASSET = REPO / "android_sample" / "app" / "app" / "src" / "main" / "assets" / "tiny_cnn.ptl"


def test_committed_asset_is_the_exporters_output(tmp_path: Path) -> None:
    out = tmp_path / "tiny_cnn.ptl"
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(REPO)}
    done = subprocess.run(["bash", str(SCRIPT), str(out)], capture_output=True, text=True, env=env, check=False,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    fresh = out.read_bytes()
    assert fresh[4:8] == b"PTMF"  # the flatbuffer program format, the one written today
    assert ASSET.read_bytes() == fresh, (
        f"{ASSET.relative_to(REPO)} ({ASSET.stat().st_size:,} bytes) is not what {SCRIPT.relative_to(REPO)} writes "
        f"({len(fresh):,} bytes): run the script and commit the asset")
