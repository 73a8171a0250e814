"""benchmarks' and tests' name for liteexport.torchvision_compat (one copy of the shim)."""

from liteexport.torchvision_compat import import_torchvision

__all__ = ["import_torchvision"]
