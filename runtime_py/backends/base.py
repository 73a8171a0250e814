"""The interface every delegate backend implements.

It mirrors torch's ``PyTorchBackendInterface`` (``torch/csrc/jit/backends/backend_interface.h``):
a lowered module carries a ``processed`` blob produced ahead of time by the backend's
preprocess step; at load time the runtime hands that blob to ``compile`` (once), and every
call of a lowered method goes through ``execute`` with the handle ``compile`` returned for it.
"""

from __future__ import annotations

import abc


class Backend(abc.ABC):
    """A delegate backend: compiles a processed module once, then executes its methods."""

    @abc.abstractmethod
    def is_available(self) -> bool:
        """Whether this backend can run on this machine."""

    @abc.abstractmethod
    def compile(self, processed: object, method_compile_spec: dict[str, object]) -> dict[str, object]:
        """Prepare ``processed`` for execution.

        ``method_compile_spec`` maps each lowered method's name to its (backend-specific)
        compile spec. Returns one opaque handle per method, keyed by method name.
        Raises ``FormatError`` when ``processed`` is malformed.
        """

    @abc.abstractmethod
    def execute(self, handle: object, inputs: list[object]) -> list[object]:
        """Run the method behind ``handle`` (from ``compile``) on ``inputs``; return its outputs.

        Raises ``ExecutionError`` when the inputs do not fit or the computation fails.
        """
