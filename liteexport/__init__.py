"""liteexport: lower PyTorch models through the demo compiler backend into PTMF bundles."""

__version__ = "0.1.0"
