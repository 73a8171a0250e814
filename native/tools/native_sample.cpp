// liteexport_native_sample: the native core's token sampler (src/sampling.h) on rows of logits, so
// that tests compare it with runtime_py's and Java's (tests/generation/test_sampler_engines.py).
//   liteexport_native_sample [--temperature T] [--top-k K] [--top-p P] [--seed S] [--first-step N] LOGITS.npy
//       LOGITS.npy: float32 of shape (rows, vocab); prints one token id per row, row r sampled at
//       step N + r (N default 0).
//   liteexport_native_sample --exp X.npy
//       X.npy: int64, the bits of float64 values; prints the bits of sampling_exp of each, one a line.
// Exit codes: 0 ok, 1 usage, 6 a bad config or bad logits (the core's input error, as runtime_py's CLI).
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "liteexport/runtime.h"
#include "npy_io.h"
#include "sampling.h"

using namespace liteexport;

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "%s\nusage: liteexport_native_sample [--temperature T] [--top-k K] [--top-p P] [--seed S] "
               "[--first-step N] LOGITS.npy | --exp X.npy\n",
               why);
  return 1;
}

// A whole unsigned decimal number (strtoull alone would take "-1" as 2^64 - 1, and "12x" as 12).
bool parse_u64(const char* text, uint64_t& out) {
  if (*text < '0' || *text > '9') return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtoull(text, &end, 10);
  return errno == 0 && *end == '\0';
}

bool parse_double(const char* text, double& out) {
  char* end = nullptr;
  out = std::strtod(text, &end);
  return end != text && *end == '\0';
}

}  // namespace

int main(int argc, char** argv) {
  SamplingConfig config;
  uint64_t first_step = 0;
  std::string logits_path, exp_path;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--exp" && has_value) {
      exp_path = argv[++i];
    } else if (arg == "--temperature" && has_value) {
      if (!parse_double(argv[++i], config.temperature)) return usage("--temperature takes a number");
    } else if (arg == "--top-p" && has_value) {
      if (!parse_double(argv[++i], config.top_p)) return usage("--top-p takes a number");
    } else if (arg == "--top-k" && has_value) {
      const char* text = argv[++i];
      const bool negative = *text == '-';
      uint64_t magnitude = 0;
      if (!parse_u64(negative ? text + 1 : text, magnitude) || magnitude > INT64_MAX) return usage("--top-k takes an integer");
      config.top_k = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    } else if (arg == "--seed" && has_value) {
      if (!parse_u64(argv[++i], config.seed)) return usage("--seed takes an integer in [0, 2^64)");
    } else if (arg == "--first-step" && has_value) {
      if (!parse_u64(argv[++i], first_step)) return usage("--first-step takes an integer in [0, 2^64)");
    } else if (arg.rfind("--", 0) == 0 || !logits_path.empty()) {
      return usage(("unexpected argument " + arg).c_str());
    } else {
      logits_path = arg;
    }
  }
  if (logits_path.empty() == exp_path.empty()) return usage("give either LOGITS.npy or --exp X.npy");
  try {
    if (!exp_path.empty()) {
      const Tensor x = npy_io::read_npy(exp_path);
      if (x.dtype != DType::Int64) throw Error(ErrorKind::Input, exp_path + ": --exp takes int64 bit patterns");
      for (int64_t bits : x.int64_data) {
        double value, result;
        std::memcpy(&value, &bits, sizeof value);
        result = sampling_exp(value);
        int64_t out;
        std::memcpy(&out, &result, sizeof out);
        std::printf("%lld\n", static_cast<long long>(out));
      }
      return 0;
    }
    validate(config);
    const Tensor logits = npy_io::read_npy(logits_path);
    if (logits.dtype != DType::Float32 || logits.shape.size() != 2) {
      throw Error(ErrorKind::Input, logits_path + ": expected float32 logits of shape (rows, vocab)");
    }
    const auto rows = static_cast<size_t>(logits.shape[0]), vocab = static_cast<size_t>(logits.shape[1]);
    for (size_t r = 0; r < rows; ++r) {
      std::printf("%lld\n", static_cast<long long>(sample(logits.data.data() + r * vocab, vocab, config, first_step + r)));
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return e.kind() == ErrorKind::Input ? 6 : e.kind() == ErrorKind::Format ? 5 : 7;
  }
  return 0;
}
