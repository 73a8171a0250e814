"""benchmarks/llm.py's own arithmetic and output, without the peers (their venv is not in CI): the
bytes a decode step reads, the bandwidth bound, the generation timing protocol on a fake engine,
the best-of-rounds rule and the table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from benchmarks.llm import NOT_IMPLEMENTED, best, max_abs_diff, render_table, write_results
from benchmarks.llm_models import (
    NEW_TOKENS,
    PROMPT_LEN,
    SPECS,
    average_attended_positions,
    bandwidth_fraction,
    bound_tokens_per_second,
    bytes_per_token,
    prompt_ids,
    weight_elements_per_token,
)
from benchmarks.llm_worker import COMPARED_TOKENS, ENGINES, measure


def test_weights_read_per_token_are_smollm2_135m_parameters_plus_an_embedding_row() -> None:
    # SmolLM2-135M has 134,515,008 parameters (tied LM head); a decode step reads them all once
    # (the LM head is the embedding, read whole) and one more embedding row for its token
    assert weight_elements_per_token(SPECS["smollm2-135m"]) == 134_515_008 + 576


@pytest.mark.torch_oracle
def test_weights_read_per_token_match_the_built_model() -> None:
    from benchmarks.llm_models import build_model

    spec = SPECS["tiny"]
    parameters = sum(p.numel() for p in build_model(spec).parameters())
    assert weight_elements_per_token(spec) == parameters + spec.hidden


def test_bytes_per_token_add_the_filled_cache_at_the_average_position() -> None:
    spec = SPECS["tiny"]  # 2 layers, 2 KV heads of 16
    assert average_attended_positions() == PROMPT_LEN + (NEW_TOKENS + 1) / 2 == 128.5
    weights = weight_elements_per_token(spec) * 4
    assert bytes_per_token(spec) == weights + 2 * 2 * 2 * 16 * 128.5 * 4
    assert bytes_per_token(spec, kv_bytes=2, attended=10) == weights + 2 * 2 * 2 * 16 * 10 * 2
    assert bytes_per_token(spec, weight_bytes=1, attended=0) == weights / 4


def test_bandwidth_bound_and_fraction() -> None:
    assert bound_tokens_per_second(20e9, 0.5e9) == pytest.approx(40.0)
    assert bandwidth_fraction(30.0, 20e9, 0.5e9) == pytest.approx(0.75)
    # the figure: 72.6 tok/s over ~0.17 GB a token at ~20 GB/s is ~0.6 of the bound
    assert bandwidth_fraction(72.6, 20e9, 0.17e9) == pytest.approx(0.617, abs=1e-3)


def test_measure_prefills_once_per_repeat_and_decodes_one_token_per_call() -> None:
    spec = SPECS["tiny"]
    calls: list[tuple[int, int]] = []

    def step(ids: np.ndarray, position: int) -> np.ndarray:
        """A fake engine whose greedy next token is the last token + 1."""
        calls.append((len(ids), position))
        logits = np.zeros(spec.vocab, dtype=np.float32)
        logits[(int(ids[-1]) + 1) % spec.vocab] = 1.0
        return logits

    result = measure(step, spec, new_tokens=5)
    first = (int(prompt_ids(spec)[-1]) + 1) % spec.vocab
    assert result["tokens"] == [(first + i) % spec.vocab for i in range(6)]
    assert calls[-5:] == [(1, PROMPT_LEN + i) for i in range(5)]
    assert all(call == (PROMPT_LEN, 0) for call in calls[:-5])
    assert min(result["prefill_tok_s"], result["decode_tok_s"], result["prefill_cpu_tok_s"],
               result["decode_cpu_tok_s"]) > 0
    assert len(result["logits"]) == COMPARED_TOKENS


def test_best_keeps_the_fastest_figures_and_the_smallest_costs() -> None:
    rounds: list[dict[str, Any]] = [
        {"prefill_tok_s": 100.0, "decode_tok_s": 10.0, "load_s": 0.5, "peak_rss_mb": 300.0, "tokens": [1]},
        {"error": "killed"},
        {"prefill_tok_s": 90.0, "decode_tok_s": 12.0, "load_s": 0.7, "peak_rss_mb": 290.0, "tokens": [2]}]
    kept = best(rounds)
    assert kept == {"prefill_tok_s": 100.0, "decode_tok_s": 12.0, "load_s": 0.5, "peak_rss_mb": 290.0, "tokens": [2]}
    assert best([{"error": "a"}, {"error": "b"}]) == {"error": "b"}
    assert max_abs_diff([1.0, 2.0], [1.5, 1.0]) == 1.0


def test_table_has_a_line_per_row_with_the_figures_or_the_reason() -> None:
    rows = [{"engine": "executorch", "config": "smollm2-135m", "threads": 1, "prefill_tok_s": 709.04,
             "decode_tok_s": 72.64, "of_bound": 0.6123, "prefill_cpu_tok_s": 750.0, "decode_cpu_tok_s": 80.04,
             "of_bound_cpu": 0.67, "load_s": 0.25, "peak_rss_mb": 812.4,
             "rss_before_load_mb": 301.2, "file_mb": 540.2, "tokens_equal_hf": 16, "logits_max_diff_hf": 2e-6},
            {"engine": "liteexport native", "config": "smollm2-135m", "threads": 2, "error": NOT_IMPLEMENTED}]
    lines = render_table(rows).splitlines()
    assert lines[0].split()[:3] == ["engine", "config", "thr"]
    assert lines[2].split() == ["executorch", "smollm2-135m", "1", "709.0", "72.6", "0.61", "750.0", "80.0", "0.67",
                                "0.250", "812", "301", "540", f"16/{COMPARED_TOKENS}", "2.0e-06"]
    assert lines[3].split() == ["liteexport", "native", "smollm2-135m", "2", "not", "implemented", "yet"]


def test_our_engines_are_registered_and_not_faked() -> None:
    for name in ("liteexport runtime_py", "liteexport native"):
        assert ENGINES[name].venv == "project"
    assert ENGINES["executorch"].load is not None and ENGINES["llama.cpp"].export is not None


def test_results_file_keeps_other_configs_and_bounds_every_row_by_the_best_bandwidth(tmp_path: Path) -> None:
    out = tmp_path / "llm.json"
    earlier = {"engine": "executorch", "config": "smollm2-135m", "threads": 1, "decode_tok_s": 20.0,
               "bytes_per_token": 0.5e9, "bandwidth_bytes_per_s": 20e9}
    out.write_text(json.dumps({"rows": [earlier]}))
    now = {"engine": "executorch", "config": "smollm2-360m", "threads": 1, "decode_tok_s": 5.0,
           "bytes_per_token": 1e9}
    write_results(out, [now], {1: 10e9}, rounds=2, complete=True)
    saved = json.loads(out.read_text())
    assert [r["config"] for r in saved["rows"]] == ["smollm2-135m", "smollm2-360m"]
    assert saved["bandwidth_bytes_per_s"] == {"1": 20e9}
    assert [r["of_bound"] for r in saved["rows"]] == [pytest.approx(0.5), pytest.approx(0.25)]
