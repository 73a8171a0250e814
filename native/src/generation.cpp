// The generation loop (liteexport/generation.h), runtime_py/generation.py's.
#include "liteexport/generation.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <set>

#include "errors.h"
#include "sampling.h"

namespace liteexport {

namespace {

// The little JSON the generation record is (json.dumps of an object of strings, integers and a
// list of integers): a value of it, and a reader that throws std::runtime_error on anything else.
struct Json {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  std::string text;     // String; Number: its digits
  std::vector<Json> items;  // Array
  std::vector<std::pair<std::string, Json>> members;  // Object
};

class JsonReader {
 public:
  explicit JsonReader(const std::string& s) : s_(s) {}

  Json document() {
    Json v = value(0);
    space();
    if (at_ < s_.size()) fail("extra data after the value");
    return v;
  }

 private:
  const std::string& s_;
  size_t at_ = 0;

  [[noreturn]] void fail(const std::string& why) const {
    throw std::runtime_error(why + " at character " + std::to_string(at_));
  }
  void space() {
    while (at_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[at_]))) ++at_;
  }
  bool take(char c) {
    space();
    if (at_ < s_.size() && s_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  std::string string() {
    if (!take('"')) fail("expected a string");
    std::string out;
    while (at_ < s_.size() && s_[at_] != '"') {
      char c = s_[at_++];
      if (c == '\\') {
        if (at_ >= s_.size()) break;
        const char e = s_[at_++];
        if (e == 'u') {  // kept as is: the record's keys and method names are ASCII
          out += "\\u";
          continue;
        }
        c = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
      }
      out += c;
    }
    if (!take('"')) fail("unterminated string");
    return out;
  }
  Json value(int depth) {
    if (depth > 16) fail("nested too deeply");
    space();
    Json v;
    if (at_ >= s_.size()) fail("expected a value");
    const char c = s_[at_];
    if (c == '{') {
      ++at_;
      v.kind = Json::Object;
      if (take('}')) return v;
      do {
        std::string key = string();
        if (!take(':')) fail("expected ':'");
        v.members.emplace_back(std::move(key), value(depth + 1));
      } while (take(','));
      if (!take('}')) fail("expected ',' or '}'");
    } else if (c == '[') {
      ++at_;
      v.kind = Json::Array;
      if (take(']')) return v;
      do v.items.push_back(value(depth + 1));
      while (take(','));
      if (!take(']')) fail("expected ',' or ']'");
    } else if (c == '"') {
      v.kind = Json::String;
      v.text = string();
    } else if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) {
      v.kind = Json::Number;
      const size_t start = at_++;
      while (at_ < s_.size() && std::strchr("0123456789.eE+-", s_[at_]) != nullptr) ++at_;
      v.text = s_.substr(start, at_ - start);
    } else {
      for (const char* word : {"true", "false", "null"})
        if (s_.compare(at_, std::strlen(word), word) == 0) {
          at_ += std::strlen(word);
          v.kind = word[0] == 'n' ? Json::Null : Json::Bool;
          v.text = word;
          return v;
        }
      fail("unexpected character");
    }
    return v;
  }
};

const Json* member(const Json& object, const std::string& key) {
  for (const auto& [k, v] : object.members)
    if (k == key) return &v;
  return nullptr;
}

int64_t integer(const Json& v, const std::string& what) {
  char* end = nullptr;
  errno = 0;
  const long long n = v.kind == Json::Number ? std::strtoll(v.text.c_str(), &end, 10) : 0;
  if (v.kind != Json::Number || end == v.text.c_str() || *end != '\0' || errno == ERANGE)
    throw std::runtime_error(what + " is not an integer");
  return n;
}

}  // namespace

GenerationSpec GenerationSpec::from_json(const std::string& json) {
  const std::string where = std::string("extra file ") + kGenerationExtraFile;
  GenerationSpec spec;
  try {
    const Json record = JsonReader(json).document();
    if (record.kind != Json::Object) throw std::runtime_error("not a JSON object");
    for (const char* key : {"method", "max_chunk", "max_length"})
      if (member(record, key) == nullptr) throw std::runtime_error(std::string("no '") + key + "'");
    const Json& method = *member(record, "method");
    if (method.kind != Json::String) throw std::runtime_error("method is not a string");
    spec.method = method.text;
    spec.max_chunk = integer(*member(record, "max_chunk"), "max_chunk");
    spec.max_length = integer(*member(record, "max_length"), "max_length");
    if (const Json* stops = member(record, "stop_ids")) {
      if (stops->kind != Json::Array) throw std::runtime_error("stop_ids is not a list");
      for (const Json& id : stops->items) spec.stop_ids.push_back(integer(id, "a stop id"));
    }
  } catch (const std::runtime_error& e) {
    throw_format(std::string("not a generation record: ") + e.what(), where);
  }
  if (spec.max_chunk < 1 || spec.max_length < 1)
    throw_format("max_chunk " + std::to_string(spec.max_chunk) + " and max_length " + std::to_string(spec.max_length) +
                     " must be positive",
                 where);
  return spec;
}

double GenerationResult::prefill_tokens_per_second() const {
  return prefill_seconds > 0 ? static_cast<double>(prompt_tokens) / prefill_seconds : 0.0;
}

double GenerationResult::decode_tokens_per_second() const {
  const auto calls = static_cast<double>(tokens.empty() ? 0 : tokens.size() - 1);
  return decode_seconds > 0 ? calls / decode_seconds : 0.0;
}

namespace {

GenerationSpec recorded_spec(const Module& module, const std::string& name) {
  const std::optional<std::string> record = module.liteexport_file(kGenerationExtraFile);
  if (!record)
    throw_input(name + " cannot generate: it has no " + kGenerationExtraFile +
                ". Export a decoder LM whose forward takes (input_ids, cache_position) and keeps its KV cache in "
                "buffers, as transformers' TorchExportableModuleForDecoderOnlyLM does");
  return GenerationSpec::from_json(*record);
}

}  // namespace

Generator::Generator(Module& module, const std::string& name) : module_(module), spec_(recorded_spec(module, name)) {}

Generator::Generator(Module& module, GenerationSpec spec) : module_(module), spec_(std::move(spec)) {}

GenerationResult Generator::generate(const std::vector<int64_t>& prompt, const GenerationConfig& config,
                                     const TokenCallback& on_token) {
  if (prompt.empty()) throw_input("the prompt is empty: generation needs at least one token");
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  if (n_prompt > spec_.max_length)
    throw_input("the prompt has " + std::to_string(n_prompt) + " tokens, more than the " +
                std::to_string(spec_.max_length) + " positions of the cache the bundle was exported with");
  if (config.max_new_tokens < 1)
    throw_input("max_new_tokens must be at least 1, got " + std::to_string(config.max_new_tokens));
  SamplingConfig sampling;
  sampling.temperature = config.temperature;
  sampling.top_k = config.top_k;
  sampling.top_p = config.top_p;
  sampling.seed = config.seed;
  validate(sampling);  // before anything runs (runtime_py's sampler raises the same at the first token)
  const std::vector<int64_t>& stop_list = config.stop_ids ? *config.stop_ids : spec_.stop_ids;
  const std::set<int64_t> stops(stop_list.begin(), stop_list.end());
  stop_requested_ = false;

  // one call of the method: the last row of its logits [1, S, V]
  std::vector<float> logits;
  auto step = [&](std::vector<int64_t> ids, std::vector<int64_t> positions) {
    const auto n = static_cast<int64_t>(ids.size());
    std::vector<std::optional<Tensor>> out =
        module_.run_method(spec_.method, {Tensor({1, n}, std::move(ids)), Tensor({n}, std::move(positions))});
    if (out.empty() || !out[0] || out[0]->dtype != DType::Float32 || out[0]->shape.size() != 3 ||
        out[0]->shape[0] != 1 || out[0]->shape[1] != n || out[0]->shape[2] < 1)
      throw_execution(spec_.method + " did not return logits float32 [1, " + std::to_string(n) +
                      ", V]: the bundle cannot generate");
    const auto vocab = static_cast<size_t>(out[0]->shape[2]);
    logits.assign(out[0]->data.end() - static_cast<std::ptrdiff_t>(vocab), out[0]->data.end());
  };

  GenerationResult result;
  result.prompt_tokens = n_prompt;
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
  module_.reset_state();
  Clock::time_point started = Clock::now();
  for (int64_t start = 0; start < n_prompt; start += spec_.max_chunk) {
    const int64_t end = std::min(n_prompt, start + spec_.max_chunk);
    std::vector<int64_t> positions(static_cast<size_t>(end - start));
    for (int64_t p = start; p < end; ++p) positions[static_cast<size_t>(p - start)] = p;
    step(std::vector<int64_t>(prompt.begin() + start, prompt.begin() + end), std::move(positions));
  }
  result.prefill_seconds = seconds_since(started);
  int64_t position = n_prompt;
  started = Clock::now();
  for (int64_t n = 0; n < config.max_new_tokens; ++n) {
    const int64_t token = sample(logits.data(), logits.size(), sampling, static_cast<uint64_t>(n));
    result.tokens.push_back(token);
    const bool keep_going = on_token ? on_token(token) : true;
    const char* reason = stops.count(token) ? "stop_token"
                         : n + 1 == config.max_new_tokens ? "max_new_tokens"
                         : !keep_going || stop_requested_ ? "stopped"
                         : position >= spec_.max_length ? "cache_full"
                                                          : "";
    if (*reason != '\0') {
      result.stop_reason = reason;
      break;
    }
    step({token}, {position});
    ++position;
  }
  result.decode_seconds = seconds_since(started);
  return result;
}

}  // namespace liteexport
