"""load_scripted: the ways of naming a model, and sibling imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from liteexport.errors import ModelError

torch = pytest.importorskip("torch")

from liteexport.model_loading import load_scripted  # noqa: E402

SIBLING = "import torch\n\nclass Block(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n"
MAIN = ("import torch\nfrom blocks_sibling import Block\n\n"
        "class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.b = Block()\n        self.d = torch.nn.Dropout(0.5)\n\n"
        "    def forward(self, x):\n        return self.d(self.b(x))\n\n"
        "def build():\n    return Net()\n\ninstance = Net()\n\n"
        "def scripted():\n    return torch.jit.script(Net())\n")


@pytest.mark.parametrize("name", ["Net", "build", "instance", "scripted"])
def test_ways_to_name_a_model(tmp_path: Path, name: str) -> None:
    (tmp_path / "blocks_sibling.py").write_text(SIBLING)
    (tmp_path / "net.py").write_text(MAIN)
    module = load_scripted(f"{tmp_path}/net.py:{name}")
    assert isinstance(module, torch.jit.ScriptModule)
    assert not module.training  # eval mode: dropout is the identity
    assert torch.equal(module(torch.zeros(4)), torch.ones(4))


def test_py_without_name(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="name the model inside the file"):
        load_scripted(f"{tmp_path}/net.py")


def test_function_returning_something_else(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("def build():\n    return 3\n")
    with pytest.raises(ModelError, match=r"build\(\) returned a int, not an nn.Module"):
        load_scripted(f"{tmp_path}/f.py:build")


def test_constructor_error_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "c.py").write_text("import torch\n\nclass Net(torch.nn.Module):\n    def __init__(self):\n"
                                   "        raise ValueError('boom')\n")
    expected = r"building .*c.py:Net failed: ValueError: boom \(File .*c.py\", line 5\)"
    with pytest.raises(ModelError, match=expected):
        load_scripted(f"{tmp_path}/c.py:Net")
