// Text generation with a bundle that keeps its KV cache as program state (issue 34): the loop of
// runtime_py/generation.py (the reference), over a loaded liteexport::Module.
//
// A bundle is generatable when its method (forward) takes (input_ids int64 [1, S],
// cache_position int64 [S]) and returns logits float32 [1, S, V], as transformers' on-device recipe
// (TorchExportableModuleForDecoderOnlyLM) exports a decoder LM; `liteexport export` records that
// in the bundle (liteexport/generation.json: the method, the longest chunk one call takes, the
// cache length and the stop tokens).
//
// Generator::generate:
//  - resets the module's state (a new conversation);
//  - prefill: the prompt in chunks of at most max_chunk tokens at positions start..start+len-1;
//    the last chunk's last row of logits is kept;
//  - decode: for n = 0, 1, ...: token n = the sampler's pick (src/sampling.h: the same ids as
//    runtime_py's and Java's for a seed), reported to the callback; it stops with "stop_token" when
//    the token is a stop token, "max_new_tokens" after that many, "stopped" when the callback
//    returned false or stop() was called, "cache_full" when the next token would need a position
//    past the cache; otherwise the token is run at the next position.
// An empty prompt, a prompt longer than the cache, max_new_tokens < 1 or a bad sampling config is
// an Input error before anything runs.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "liteexport/runtime.h"

namespace liteexport {

// The extra file liteexport writes at export for a generatable bundle.
constexpr const char* kGenerationExtraFile = "liteexport/generation.json";

// How a bundle generates (liteexport/generation.json).
struct GenerationSpec {
  std::string method = "forward";
  int64_t max_chunk = 1;   // the longest prompt chunk one call takes (the upper bound of S)
  int64_t max_length = 1;  // the cache's positions, 0..max_length-1
  std::vector<int64_t> stop_ids;

  // Parses the record's JSON; a Format error (at extra file liteexport/generation.json) otherwise.
  static GenerationSpec from_json(const std::string& json);
};

struct GenerationConfig {
  int64_t max_new_tokens = 32;  // >= 1
  // The sampler's (src/sampling.h): temperature 0 is greedy; top_k 0 and top_p 1 are off.
  double temperature = 0;
  int64_t top_k = 0;
  double top_p = 1;
  uint64_t seed = 0;
  std::optional<std::vector<int64_t>> stop_ids;  // replaces the bundle's stop tokens when set
};

struct GenerationResult {
  std::vector<int64_t> tokens;  // the generated ids (the prompt's not included)
  std::string stop_reason;      // "stop_token", "max_new_tokens", "cache_full" or "stopped"
  int64_t prompt_tokens = 0;
  double prefill_seconds = 0;
  double decode_seconds = 0;  // the calls that produced tokens 1.. (token 0 comes from the prefill)
  double prefill_tokens_per_second() const;
  double decode_tokens_per_second() const;
};

class Generator {
 public:
  // Sees each token as it comes; returning false stops the generation ("stopped").
  using TokenCallback = std::function<bool(int64_t token)>;

  // The module's recorded spec; an Input error naming `name` when the bundle has none.
  explicit Generator(Module& module, const std::string& name = "the bundle");
  Generator(Module& module, GenerationSpec spec);

  const GenerationSpec& spec() const { return spec_; }

  // Generates after `prompt_ids` (see above). The module's calls are serialized by the Module;
  // one generate at a time per Generator.
  GenerationResult generate(const std::vector<int64_t>& prompt_ids, const GenerationConfig& config,
                            const TokenCallback& on_token = nullptr);

  // Asks a running generate (on another thread) to stop after its current token, with reason
  // "stopped". A generate started later is not affected.
  void stop() { stop_requested_ = true; }

 private:
  Module& module_;
  GenerationSpec spec_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace liteexport
