# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/*.fbs
# ruff: noqa
# mypy: ignore-errors
"""flatc output, used only through the codec modules; demo_ops: the op set."""
