from __future__ import annotations

import warnings

import pytest

pytest.importorskip("torch", reason="the conformance suite compares with torch's lite interpreter")
warnings.filterwarnings("ignore", message="Lite Interpreter is deprecated")
