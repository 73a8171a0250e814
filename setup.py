"""The one build step pyproject.toml cannot say: the shared C++ (top-level ``native_format/``,
which the native core, native/, builds from too) ships in the wheel as the package data
``liteexport/_native_format``, mapped there at build time rather than copied in the tree; the
torch extension builds from it (liteexport.torch_backend.native_format_dir)."""

from __future__ import annotations

from setuptools import find_namespace_packages, setup

setup(
    packages=[*find_namespace_packages(include=["liteexport*", "runtime_py*", "bundle_format*"]),
              # its two folders are packages of their own, so setuptools ships their headers as package data
              "liteexport._native_format", "liteexport._native_format.decoder", "liteexport._native_format.generated"],
    package_dir={"liteexport._native_format": "native_format"},
)
