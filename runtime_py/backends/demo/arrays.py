"""Type aliases shared by the demo backend's kernels."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

# Every value the demo backend handles is a float32 ndarray; numpy's stubs type most
# float32 arithmetic as floating[Any], so the alias stays loose on the scalar type.
Array = npt.NDArray[Any]

# A kernel with its attributes already bound: input arrays in, one fresh array out.
Kernel = Callable[..., Array]

F32 = np.float32
ZERO = np.float32(0.0)
ONE = np.float32(1.0)
