"""One step of benchmarks/llm.py, in a process of its own (peers in the peers' venv, our engines in
the project's), printing one JSON object on its last line:

    python -m benchmarks.llm_worker export ENGINE CONFIG OUT     the engine's file of the config's model
    python -m benchmarks.llm_worker run ENGINE FILE CONFIG THREADS
    python -m benchmarks.llm_worker hf-tokens CONFIG N           transformers' greedy tokens, the reference
    python -m benchmarks.llm_worker bandwidth THREADS            this machine's read bandwidth

``run`` loads the file (timed: the load), prefills the 64-token prompt in one call (the best of
PREFILL_REPEATS calls, each rewriting positions 0-63), then decodes 128 tokens greedily, one call
each, feeding every token back; it reports tok/s of both, the load time, the process's peak RSS
(and its RSS before the load: the interpreter and its imports) and the first greedy tokens.

ENGINES is the registry: an engine is an exporter (config -> file) and a loader (file, threads ->
a step function); every engine is timed by the same ``measure``, but the native core, whose own
generation loop runs in its host tool (``run_whole``: the same prompt, prefill in one call, the same
number of greedy decode calls).
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.llm_models import MAX_CACHE_LEN, NEW_TOKENS, SPECS, LlmSpec, prompt_ids

# (token ids [S] int64, position of the first) -> the last position's logits [vocab] float32. A step
# at a position below the previous call's end overwrites the cache from there on (a fresh prefill).
Step = Callable[[np.ndarray, int], np.ndarray]
Exporter = Callable[[LlmSpec, str], None]
Loader = Callable[[str, LlmSpec, int], Step]
PREFILL_REPEATS = 3
COMPARED_TOKENS = 16  # greedy tokens compared with transformers' (a check that it is the same model)


@dataclass(frozen=True)
class Engine:
    """A row of the benchmark. ``venv`` is "project" (/work/main/.venv: liteexport) or "peers"
    (.venv-peers: executorch, llama-cpp-python); ``suffix`` names its file; ``kv_bytes`` is the size of
    one cached key or value element (the bandwidth bound's KV part); ``export`` and ``load`` are None
    until the engine is implemented; ``modules`` are imported before the load is timed (the load is
    the model's, not the library's)."""

    name: str
    venv: str
    suffix: str
    kv_bytes: int
    export: Exporter | None
    load: Loader | None
    modules: tuple[str, ...] = ()
    # an engine that runs the whole measurement itself (its own generation loop in another process)
    run_whole: Callable[[str, LlmSpec, int], dict[str, Any]] | None = None


def export_executorch(spec: LlmSpec, out: str) -> None:
    """The recipe's ExportedProgram, lowered whole to XNNPACK as the issue measured it."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower

    from benchmarks.llm_models import build_model, export_program

    program = export_program(build_model(spec))
    lowered = to_edge_transform_and_lower(program, partitioner=[XnnpackPartitioner()]).to_executorch()
    Path(out).write_bytes(lowered.buffer)


def load_executorch(path: str, spec: LlmSpec, threads: int) -> Step:
    import torch
    from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
    from executorch.runtime import Runtime

    # ExecuTorch's one threadpool (pthreadpool, which the XNNPACK delegate runs on) is sized to the
    # cores at start-up; this resizes it. torch's own threads do no work here: set alike all the same.
    _unsafe_reset_threadpool(threads)
    torch.set_num_threads(threads)
    method = Runtime.get().load_program(path).load_method("forward")

    def step(ids: np.ndarray, position: int) -> np.ndarray:
        positions = torch.arange(position, position + len(ids), dtype=torch.long)
        logits = method.execute([torch.from_numpy(ids).reshape(1, -1), positions])[0]
        return np.asarray(logits[0, -1].numpy())

    return step


def export_gguf(spec: LlmSpec, out: str) -> None:
    """The model's weights as an all-float32 GGUF for llama.cpp's "llama" architecture, written with the
    gguf package as llama.cpp's convert_hf_to_gguf.py writes a LlamaForCausalLM: the same keys and
    tensor names, q_proj and k_proj rows permuted from transformers' rotate-half RoPE layout to
    llama.cpp's interleaved one, no output.weight (tied: llama.cpp reads token_embd). The model has no
    tokenizer: tokenizer.ggml.model "none" with the vocabulary size (llama.cpp then takes token ids only)."""
    import gguf

    from benchmarks.llm_models import LLAMA_COMMON, build_model

    def permute(w: np.ndarray, heads: int) -> np.ndarray:
        return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)

    names = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down", "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm"}
    writer = gguf.GGUFWriter(out, "llama")
    writer.add_name(spec.name)
    writer.add_context_length(LLAMA_COMMON["max_position_embeddings"])
    writer.add_embedding_length(spec.hidden)
    writer.add_block_count(spec.layers)
    writer.add_feed_forward_length(spec.intermediate)
    writer.add_head_count(spec.heads)
    writer.add_head_count_kv(spec.kv_heads)
    writer.add_rope_dimension_count(spec.head_dim)
    writer.add_rope_freq_base(LLAMA_COMMON["rope_theta"])
    writer.add_layer_norm_rms_eps(LLAMA_COMMON["rms_norm_eps"])
    writer.add_vocab_size(spec.vocab)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("none")
    state = {k: v.detach().numpy().astype(np.float32) for k, v in build_model(spec).state_dict().items()}
    writer.add_tensor("token_embd.weight", state["model.embed_tokens.weight"])
    for i in range(spec.layers):
        for hf, ours in names.items():
            w = state[f"model.layers.{i}.{hf}.weight"]
            if hf == "self_attn.q_proj":
                w = permute(w, spec.heads)
            elif hf == "self_attn.k_proj":
                w = permute(w, spec.kv_heads)
            writer.add_tensor(f"blk.{i}.{ours}.weight", np.ascontiguousarray(w))
    writer.add_tensor("output_norm.weight", state["model.norm.weight"])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def load_llama_cpp(path: str, spec: LlmSpec, threads: int) -> Step:
    import llama_cpp

    # n_threads for the one-token decode calls, n_threads_batch for the prompt; n_ctx as our static cache
    llm = llama_cpp.Llama(model_path=path, n_threads=threads, n_threads_batch=threads, n_ctx=MAX_CACHE_LEN,
                          n_batch=MAX_CACHE_LEN, verbose=False)

    def step(ids: np.ndarray, position: int) -> np.ndarray:
        llm.n_tokens = position  # eval drops the cache from n_tokens on, then appends
        llm.eval(ids.tolist())
        return np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(spec.vocab,)).copy()

    return step


def export_liteexport(spec: LlmSpec, out: str) -> None:
    """The recipe's ExportedProgram as a liteexport bundle (the self-check is the benchmark's own
    comparison with transformers, tokens and logits)."""
    import liteexport
    from benchmarks.llm_models import MAX_CHUNK, build_model, export_program

    liteexport.export(export_program(build_model(spec)), out, input_shapes={"forward": ["1xS:int64", "S:int64"]},
                      dims={"S": (1, MAX_CHUNK)}, check=False)


def load_runtime_py(path: str, spec: LlmSpec, threads: int) -> Step:
    """runtime_py (numpy: its BLAS's threads are set by the harness's environment)."""
    import runtime_py

    module = runtime_py.load(path)

    def step(ids: np.ndarray, position: int) -> np.ndarray:
        positions = np.arange(position, position + len(ids), dtype=np.int64)
        logits: np.ndarray = np.asarray(module.forward(ids.reshape(1, -1), positions))
        return np.asarray(logits[0, -1], dtype=np.float32)

    return step


def run_native(path: str, spec: LlmSpec, threads: int) -> dict[str, Any]:
    """The native core's own generation loop (liteexport::Generator, through its host tool): the
    prompt in one prefill call, then NEW_TOKENS greedy decode calls, the fastest of PREFILL_REPEATS
    generations; its logits for the compared prefix from one plain run of the tool on the prompt."""
    import subprocess
    import tempfile

    from liteexport.generation_engines import generate_native
    from liteexport.native_tool import native_tool
    from runtime_py.sampling import SamplingConfig

    prompt = prompt_ids(spec)
    tool = str(native_tool())
    # the best of PREFILL_REPEATS generations, as measure() keeps the best prefill; no load time: the
    # tool's wall time holds its start and several generations, not the load alone
    result = generate_native(path, prompt.tolist(), NEW_TOKENS + 1, SamplingConfig(), stop_ids=(), threads=threads,
                             repeat=PREFILL_REPEATS - 1)
    with tempfile.TemporaryDirectory() as folder:
        ids, positions = Path(folder) / "ids.npy", Path(folder) / "positions.npy"
        np.save(ids, prompt.reshape(1, -1))
        np.save(positions, np.arange(len(prompt), dtype=np.int64))
        out = Path(folder) / "out.npz"
        subprocess.run([tool, path, str(ids), str(positions), "--output", str(out)], capture_output=True, check=True)
        logits = np.load(out)["arr_0"][0, -1]
    return {"prefill_tok_s": result.prefill_tokens_per_second, "decode_tok_s": result.decode_tokens_per_second,
            "tokens": result.tokens[:COMPARED_TOKENS], "logits": [float(v) for v in logits[:COMPARED_TOKENS]],
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}


ENGINES: dict[str, Engine] = {engine.name: engine for engine in (
    Engine("liteexport runtime_py", "project", ".ptl", 4, export_liteexport, load_runtime_py, ("runtime_py",)),
    Engine("liteexport native", "project", ".ptl", 4, export_liteexport, None, (), run_native),
    Engine("executorch", "peers", ".pte", 4, export_executorch, load_executorch,
           ("torch", "executorch.runtime", "executorch.extension.pybindings.portable_lib")),
    # llama.cpp keeps its KV cache in float16 by default
    Engine("llama.cpp", "peers", ".gguf", 2, export_gguf, load_llama_cpp, ("llama_cpp",)),
)}


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def measure(step: Step, spec: LlmSpec, new_tokens: int = NEW_TOKENS) -> dict[str, Any]:
    """Prefill tok/s (best of PREFILL_REPEATS one-call prefills of the prompt), then decode tok/s over
    new_tokens greedy steps, the first COMPARED_TOKENS greedy tokens and the prefill's first
    COMPARED_TOKENS logits of the last position (random weights make near-constant greedy tokens: the
    logits are the sharper check that an engine runs the same model). The *_cpu_tok_s figures divide by
    the process's CPU time instead of wall time: with one thread, the engine's work without the time
    this shared VM's other processes take from it (with more threads they add up: ``run`` drops them)."""
    prompt = prompt_ids(spec)
    best, best_cpu, logits = float("inf"), float("inf"), np.zeros(0, dtype=np.float32)
    for _ in range(PREFILL_REPEATS):
        t0, c0 = time.perf_counter(), time.process_time()
        logits = step(prompt, 0)
        best, best_cpu = min(best, time.perf_counter() - t0), min(best_cpu, time.process_time() - c0)
    tokens = [int(np.argmax(logits))]
    t0, c0 = time.perf_counter(), time.process_time()
    for i in range(new_tokens):
        tokens.append(int(np.argmax(step(np.array(tokens[-1:], dtype=np.int64), len(prompt) + i))))
    decode, decode_cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"prefill_tok_s": len(prompt) / best, "decode_tok_s": new_tokens / decode,
            "prefill_cpu_tok_s": len(prompt) / best_cpu, "decode_cpu_tok_s": new_tokens / decode_cpu,
            "tokens": tokens[:COMPARED_TOKENS], "logits": [float(v) for v in logits[:COMPARED_TOKENS]]}


def run(engine_name: str, path: str, config: str, threads: str) -> dict[str, Any]:
    engine, spec = ENGINES[engine_name], SPECS[config]
    if engine.run_whole is not None:
        return engine.run_whole(path, spec, int(threads))
    if engine.load is None:
        raise SystemExit(f"{engine_name}: not implemented yet")
    for module in engine.modules:
        importlib.import_module(module)
    before = _rss_mb()
    t0 = time.perf_counter()
    step = engine.load(path, spec, int(threads))
    load = time.perf_counter() - t0
    result = measure(step, spec)
    if int(threads) != 1:
        del result["prefill_cpu_tok_s"], result["decode_cpu_tok_s"]
    return {**result, "load_s": load, "rss_before_load_mb": before,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def export(engine_name: str, config: str, out: str) -> dict[str, Any]:
    engine = ENGINES[engine_name]
    if engine.export is None:
        raise SystemExit(f"{engine_name}: not implemented yet")
    t0 = time.perf_counter()
    engine.export(SPECS[config], out)
    return {"seconds": time.perf_counter() - t0, "file_mb": os.path.getsize(out) / 2**20}


def hf_tokens(config: str, n: str) -> dict[str, Any]:
    """transformers' own greedy generation on the same weights and prompt, and the prompt's last
    logits: the reference."""
    import torch

    from benchmarks.llm_models import build_model

    spec = SPECS[config]
    prompt = torch.from_numpy(prompt_ids(spec)).reshape(1, -1)
    model = build_model(spec)
    with torch.no_grad():
        logits = model(prompt).logits[0, -1, :int(n)]
        out = model.generate(prompt, attention_mask=torch.ones_like(prompt), do_sample=False,
                             max_new_tokens=int(n), min_new_tokens=int(n))
    return {"tokens": [int(t) for t in out[0, prompt.shape[1]:]], "logits": [float(v) for v in logits]}


BANDWIDTH_BYTES = 512 * 2**20
BANDWIDTH_PASSES = 10


def _read_passes(size: int, start: Any, end: Any) -> None:
    """One reader of bandwidth(): its own buffer, read whole once per pass between the two barriers."""
    buffer = np.random.default_rng(0).random(size // 4, dtype=np.float32)
    start.wait()  # allocated and paged in
    for _ in range(BANDWIDTH_PASSES):
        start.wait()
        np.dot(buffer, buffer)
        end.wait()


def bandwidth(threads: str) -> dict[str, Any]:
    """A STREAM-like read pass: float32 dot products of 512 MiB, each of ``threads`` processes reading
    its share from a buffer of its own (processes: no GIL between the readers; BLAS's own threads are
    pinned to 1 by the caller's OPENBLAS_NUM_THREADS/OMP_NUM_THREADS), started and stopped together
    by barriers; the best of BANDWIDTH_PASSES passes. Each pass reads every byte once."""
    import multiprocessing

    n = int(threads)
    size = BANDWIDTH_BYTES // n
    context = multiprocessing.get_context("fork")
    start, end = context.Barrier(n + 1), context.Barrier(n + 1)
    readers = [context.Process(target=_read_passes, args=(size, start, end)) for _ in range(n)]
    for reader in readers:
        reader.start()
    start.wait()
    best = float("inf")
    for _ in range(BANDWIDTH_PASSES):
        start.wait()
        t0 = time.perf_counter()
        end.wait()
        best = min(best, time.perf_counter() - t0)
    for reader in readers:
        reader.join()
    return {"bytes_per_s": size * n / best, "buffer_bytes": size * n, "readers": n, "passes": BANDWIDTH_PASSES}


COMMANDS: dict[str, Callable[..., dict[str, Any]]] = {
    "export": export, "run": run, "hf-tokens": hf_tokens, "bandwidth": bandwidth,
}

if __name__ == "__main__":
    print(json.dumps(COMMANDS[sys.argv[1]](*sys.argv[2:])))
