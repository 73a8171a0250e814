"""The demo compiler backend ("preprocess"): a model's methods -> compiled programs, one
:class:`~bundle_format.program.Program` per method, the weights they load and a debug table.

Two entries share every stage after the graph walk (op lowerings, optimization, emission,
assembly): ``scripted.compile_module`` for TorchScript modules and ``exported.compile_exported``
for torch.export programs. The package exports the first under its historic name.
"""

from __future__ import annotations

from liteexport.compiler.scripted import compile_module

__all__ = ["compile_module"]
