// liteexport_native_run BUNDLE --prompt-ids 1,2,3 [--max-new-tokens N] [--temperature T] [--top-k K]
//   [--top-p P] [--seed S] [--stop-ids 2,3]: the generation loop (liteexport/generation.h) on a
// generatable bundle; prints the result as one JSON line (tokens, stop_reason, prompt_tokens,
// prefill and decode seconds and tokens/second), which tests compare with runtime_py's generator.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "liteexport/generation.h"
#include "profile_json.h"

namespace run_generate {

// "1,2,3" -> {1, 2, 3}; false for anything else.
inline bool parse_ids(const std::string& text, std::vector<int64_t>* ids) {
  ids->clear();
  size_t at = 0;
  while (at < text.size()) {
    const size_t comma = text.find(',', at);
    const std::string part = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0') return false;
    ids->push_back(v);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return true;
}

// `repeat` more generations after the first (each from the initial state, the same tokens): the
// fastest prefill and decode are reported, as a benchmark keeps its best round (the first
// generation also pays for the one-time packing of the weights for XNNPACK).
inline int run(liteexport::Module& module, const std::string& name, const std::vector<int64_t>& prompt,
               const liteexport::GenerationConfig& config, int repeat = 0) {
  using profile_json::number;
  liteexport::Generator generator(module, name);
  liteexport::GenerationResult r = generator.generate(prompt, config);
  for (int i = 0; i < repeat; ++i) {
    const liteexport::GenerationResult again = generator.generate(prompt, config);
    r.prefill_seconds = std::min(r.prefill_seconds, again.prefill_seconds);
    r.decode_seconds = std::min(r.decode_seconds, again.decode_seconds);
  }
  std::string tokens;
  for (int64_t t : r.tokens) tokens += (tokens.empty() ? "" : ", ") + std::to_string(t);
  std::printf("{\"tokens\": [%s], \"stop_reason\": \"%s\", \"prompt_tokens\": %lld, \"prefill_seconds\": %s, "
              "\"decode_seconds\": %s, \"prefill_tokens_per_second\": %s, \"decode_tokens_per_second\": %s}\n",
              tokens.c_str(), r.stop_reason.c_str(), static_cast<long long>(r.prompt_tokens),
              number(r.prefill_seconds).c_str(), number(r.decode_seconds).c_str(),
              number(r.prefill_tokens_per_second()).c_str(), number(r.decode_tokens_per_second()).c_str());
  return 0;
}

}  // namespace run_generate
