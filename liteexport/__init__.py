"""liteexport: lower PyTorch models through the demo compiler backend into PTMF bundles."""

__version__ = "0.1.0"

from liteexport.api import Exported, export, lower  # noqa: E402  (after __version__: the CLI imports it)
from liteexport.errors import ModelError, OutputError, UnsupportedNodesError, VerificationError  # noqa: E402

__all__ = ["Exported", "ModelError", "OutputError", "UnsupportedNodesError", "VerificationError", "__version__",
           "export", "lower"]
