"""A loaded bundle's methods are attributes: ``m.embed(x)`` runs as ``m.run_method("embed", x)``,
``dir(m)`` lists them, and a name that is not one says which there are."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import runtime_py

pytestmark = pytest.mark.torch_oracle


@pytest.fixture(scope="module")
def two_methods(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    import liteexport
    from tests.parity.parity_models import TwoMethods

    model = TwoMethods().eval()
    path = tmp_path_factory.mktemp("attrs") / "enc.ptl"
    liteexport.export(model, path, input_shapes={"forward": [(2, 6)], "embed": [(2, 6), (2, 6)]})
    return path, model


def test_methods_are_attributes_with_torchs_results(two_methods: tuple[Path, object]) -> None:
    import torch

    path, model = two_methods
    m = runtime_py.load(path)
    x, y = np.random.default_rng(1).standard_normal((2, 2, 6)).astype(np.float32)
    got = m.embed(x, y)
    np.testing.assert_array_equal(got, m.run_method("embed", x, y))
    with torch.no_grad():
        expected = model.embed(torch.from_numpy(x), torch.from_numpy(y)).numpy()  # type: ignore[attr-defined]
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=1e-4)
    assert m.embed.__name__ == "embed"
    assert {"embed", "forward", "run_method"} <= set(dir(m))


def test_run_limits_pass_through_the_attribute(two_methods: tuple[Path, object]) -> None:
    m = runtime_py.load(two_methods[0])
    x = np.zeros((2, 6), np.float32)
    with pytest.raises(ValueError, match="max_instructions"):
        m.embed(x, x, max_instructions=0)


def test_an_unknown_attribute_lists_the_methods(two_methods: tuple[Path, object]) -> None:
    m = runtime_py.load(two_methods[0])
    with pytest.raises(AttributeError, match=r"has no attribute 'encode'; its bundle's methods: forward, embed"):
        m.encode  # noqa: B018
    assert not hasattr(m, "__array__")  # numpy's probes get a plain AttributeError
