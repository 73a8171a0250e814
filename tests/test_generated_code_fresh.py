"""The flatc output in bundle_format/_generated/ matches schema/*.fbs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_generated_code_is_fresh() -> None:
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "generate_schema_code.py"), "--check"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr
