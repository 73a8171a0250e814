"""``liteexport generate``: ids or text in, tokens streamed out, the stop reason and speed on
stderr; bad prompts are clear errors (exit 6) with no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from liteexport.cli import cli
from tests.generation.hf_models import export_bundle, export_recipe, hf_greedy, tiny_model

PROMPT = [5, 17, 42, 8]


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    model = tiny_model("llama")
    return model, export_bundle(model, tmp_path_factory.mktemp("cli") / "llama.ptl")


def _tokenizer_file(folder: Path) -> Path:
    """A word-level tokenizer over the tiny model's 256 ids, built in code (no downloads)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {f"w{i}": i for i in range(256)}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="w0"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    path = folder / "tokenizer.json"
    tokenizer.save(str(path))
    return path


@pytest.mark.parametrize("engine", ["runtime_py", "torch", "native"])
def test_generate_streams_transformers_tokens(llama: tuple[object, Path], engine: str) -> None:
    model, path = llama
    result = CliRunner().invoke(cli, ["generate", str(path), "--prompt-ids", ",".join(map(str, PROMPT)),
                                      "--max-new-tokens", "12", "--engine", engine, "--stop-ids", ""])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert [int(t) for t in lines[0].split()] == hf_greedy(model, PROMPT, 12)[:12]
    assert "[max_new_tokens] 4 prompt tokens at" in result.stderr and "12 new tokens at" in result.stderr


def test_generate_text_with_the_stored_tokenizer(tmp_path: Path) -> None:
    model = tiny_model("llama")
    bundle = tmp_path / "lm.ptl"
    tokenizer = _tokenizer_file(tmp_path)
    runner = CliRunner()
    from liteexport.api import export

    export(export_recipe(model), bundle, input_shapes={"forward": ["1xS:int64", "S:int64"]}, dims={"S": (1, 16)},
           tokenizer=tokenizer)
    result = runner.invoke(cli, ["generate", str(bundle), "--prompt", "w5 w17 w42 w8", "--max-new-tokens", "6",
                                 "--stop-ids", ""])
    assert result.exit_code == 0, result.output
    expected = " ".join(f"w{t}" for t in hf_greedy(model, PROMPT, 6)[:6])
    assert result.stdout.strip() == expected


@pytest.mark.parametrize("args, message", [
    (["--prompt-ids", ""], "the prompt is empty"),
    (["--prompt-ids", ",".join(["1"] * 65)], "the prompt has 65 tokens, more than the 64 positions"),
    (["--prompt", "hello"], "has no tokenizer"),
    ([], "give the prompt either as --prompt-ids"),
])
def test_bad_prompts_are_clear_errors(llama: tuple[object, Path], args: list[str], message: str) -> None:
    _, path = llama
    result = CliRunner().invoke(cli, ["generate", str(path), *args])
    assert result.exit_code == 6, result.output
    assert message in result.stderr and "Traceback" not in result.output


def test_a_bundle_without_a_cache_cannot_generate(tmp_path: Path) -> None:
    import liteexport

    path = tmp_path / "tiny.ptl"
    liteexport.export("examples/tiny_cnn.py:TinyCNN", path, input_shapes={"forward": [(1, 3, 32, 32)]})
    result = CliRunner().invoke(cli, ["generate", str(path), "--prompt-ids", "1,2"])
    assert result.exit_code == 6 and "cannot generate" in result.stderr
