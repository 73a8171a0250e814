"""Program state from TorchScript: a scripted module that writes a registered buffer in place
(``index_copy_``, ``copy_``) gets the same state as a torch.export program, shared by its
methods (an encode that fills a memory its forward reads)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

import liteexport
import runtime_py
from tests.generation.stateful_models import EncodeDecode, RowCache


def test_a_scripted_cache_is_state(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model = RowCache().eval()
    path = tmp_path / "row_cache.ptl"
    liteexport.export(torch.jit.script(model), path, input_shapes={"forward": ["1xSx4", "S:int64"]},
                      dims={"S": (1, 4)})
    module = runtime_py.load(path)
    assert set(module.state) == {"cache", "calls"}
    reference = torch.jit.script(RowCache().eval())
    reference.load_state_dict(model.state_dict())
    rng = np.random.default_rng(2)
    for positions in ([0, 1], [5], [2, 3, 4]):
        x = rng.standard_normal((1, len(positions), 4)).astype(np.float32)
        index = np.array(positions, dtype=np.int64)
        with torch.no_grad():
            expected = reference(torch.from_numpy(x), torch.from_numpy(index)).numpy()
        np.testing.assert_allclose(module.forward(x, index), expected, rtol=1e-5, atol=1e-6)


def test_two_methods_share_one_state(tmp_path: Path) -> None:
    """encode writes the memory, forward reads it and counts: one copy per loaded module, in
    runtime_py and in torch's lite interpreter with our backend."""
    import torch.jit.mobile

    from liteexport.torch_backend import load_torch_backend

    torch.manual_seed(0)
    model = EncodeDecode().eval()
    path = tmp_path / "encdec.ptl"
    liteexport.export(torch.jit.script(model), path, methods=["forward", "encode"],
                      input_shapes={"forward": [(1, 2, 4)], "encode": [(1, 6, 4)]})
    reference = torch.jit.script(EncodeDecode().eval())
    reference.load_state_dict(model.state_dict())
    load_torch_backend()
    ours, lite = runtime_py.load(path), torch.jit.mobile._load_for_lite_interpreter(str(path))
    rng = np.random.default_rng(3)
    source, queries = rng.standard_normal((1, 6, 4)).astype(np.float32), rng.standard_normal((3, 1, 2, 4))
    with torch.no_grad():
        expected = [reference.encode(torch.from_numpy(source)).numpy()]
        expected += [reference(torch.from_numpy(q.astype(np.float32))).numpy() for q in queries]
    got = [ours.encode(source)] + [ours.forward(q.astype(np.float32)) for q in queries]
    on_lite = [lite.run_method("encode", torch.from_numpy(source)).numpy()]
    on_lite += [lite.forward(torch.from_numpy(q.astype(np.float32))).numpy() for q in queries]
    for mine, theirs, torchs in zip(got, on_lite, expected, strict=True):
        np.testing.assert_allclose(mine, torchs, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(theirs, torchs, rtol=1e-5, atol=1e-6)
    assert int(ours.state["steps"]) == 3
    ours.reset_state()
    assert not ours.state["memory"].any() and int(ours.state["steps"]) == 0
