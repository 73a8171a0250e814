"""``h[:, 0]`` and ``h[:, -1]`` on a named dim (issue 33): BERT's pooler reads the first token,
a decoder LM's head the last one. An index every size the dim's bounds allow has compiles as a
slice from that end, on both front ends; one some allowed size lacks is refused naming the
bounds. Parity with eager torch at the bounds and between them, on runtime_py and the native core."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

import liteexport
import runtime_py
from liteexport.errors import UnsupportedNodesError
from tests.text_models.typed import run_native

pytestmark = pytest.mark.torch_oracle


class Ends(torch.nn.Module):
    """A pooler over the first token, a head over the last two (the batch is a named dim too)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.pool, self.head = torch.nn.Linear(8, 4), torch.nn.Linear(8, 4)

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return torch.tanh(self.pool(h[:, 0])), self.head(h[:, -1]) - self.head(h.select(1, -2))


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
def test_select_at_either_end_of_a_named_dim_matches_torch(frontend: str, tmp_path: Path) -> None:
    model, path = Ends().eval(), tmp_path / "ends.ptl"
    liteexport.export(model, path, input_shapes=["BxSx8"], dims={"B": (1, 4), "S": (2, 64)}, frontend=frontend)
    bundle = runtime_py.load(path)
    for batch, length in ((1, 2), (3, 17), (4, 64)):
        h = torch.randn(batch, length, 8, generator=torch.Generator().manual_seed(length))
        with torch.no_grad():
            expected = [t.numpy() for t in model(h)]
        for engine, got in (("runtime_py", list(bundle.forward(h.numpy()))),
                            ("native", run_native(path, [h.numpy()]))):
            assert len(got) == 2, engine
            for g, e in zip(got, expected, strict=True):
                np.testing.assert_allclose(g, e, atol=1e-5, rtol=1e-5, err_msg=f"{engine} at {batch}x{length}")


@pytest.mark.parametrize("frontend", ["torchscript", "export"])
def test_an_index_some_allowed_size_lacks_is_refused_naming_the_bounds(frontend: str, tmp_path: Path) -> None:
    with pytest.raises(UnsupportedNodesError, match=r"index -2 of dim 1 \(of size S, at least 1\) is out of range "
                                                    r"for some sizes the dim's bounds allow"):
        liteexport.export(Ends().eval(), tmp_path / "ends.ptl", input_shapes=["BxSx8"],
                          dims={"B": (1, 4), "S": (1, 64)}, frontend=frontend)
    assert not (tmp_path / "ends.ptl").exists()
