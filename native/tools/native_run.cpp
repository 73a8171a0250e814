// liteexport_native_run: run a bundle with the native core.
//   liteexport_native_run [--method NAME] [--repeat N] [--threads N] [--copy] [--max-memory BYTES]
//                         [--timeout SECONDS] <bundle> <input.npy|input.bin>... [--output OUT.npz]
//                         [--expect <output.npy|output.bin>...] [--profile OUT.json]
// --threads N (default 1, up to 64) is LoadOptions::num_threads: the threads a call computes on.
// --copy reads the bundle into memory instead of mapping it; --max-memory (default 1 GiB, 0 = no
// budget) and --timeout (default 0 = none) are the run limits of LoadOptions (runtime.h).
// --repeat N runs the method N more times after the first and prints their median time
// (benchmarks/ uses it to compare the native core with torch).
// --profile OUT.json runs Module::profile (--warmup N runs, default 2, then --repeat N runs or 20) and writes
// the per-instruction times, mapped through the debug table, as JSON (profile_json.h):
// `liteexport profile --engine native` reads it.
// Inputs are numpy .npy files (float32, int64, int32 or bool; tools/npy_io.h) or, for any other
// name, float32 LXT1 tensor files (tools/tensor_io.h); a bad .npy is an input error (exit 6).
// --output OUT.npz writes the outputs into one .npz (arr_0, arr_1, ... as np.savez names them; a
// None output has no member); nothing is written unless asked. Each output's shape, dtype and
// first values are printed, as liteexport run prints them.
// Expected outputs (--expect) are .npy files or LXT1 files like the inputs; int64, int32 and bool
// outputs must equal them exactly, float32 ones within atol 1e-5, rtol 1e-4. An expected None
// output is the word "none" (googlenet returns (logits, None, None)). Prints load and
// run times. --calls FILE runs a sequence of calls on one loaded module (program state carries
// over; run_calls.h) and writes their outputs to --output and a JSON report to --report (stdout
// without it). --prompt-ids 1,2,3 runs the generation loop (liteexport/generation.h;
// run_generate.h) and prints its result as one JSON line. Exit codes: 0 ok, 1 usage/IO, 2 mismatch, and 5/6/7 for Format/Input/Execution
// errors (runtime_py's CLI exit codes).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <iostream>

#include "liteexport/generation.h"
#include "liteexport/runtime.h"
#include "profile_json.h"
#include "run_calls.h"
#include "run_generate.h"
#include "tensor_io.h"

using namespace liteexport;

static double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

static const char kUsage[] =
    "usage: liteexport_native_run [--method NAME] [--repeat N] [--threads N] [--copy] [--max-memory BYTES]\n"
    "                             [--timeout SECONDS] BUNDLE INPUT... [--output OUT.npz] [--expect OUTPUT...]\n"
    "                             [--profile OUT.json [--warmup N]]\n"
    "       liteexport_native_run BUNDLE --calls FILE [--output OUT.npz] [--report OUT.json]\n"
    "       liteexport_native_run BUNDLE --prompt-ids 1,2,3 [--max-new-tokens N] [--temperature T] [--top-k K]\n"
    "                             [--top-p P] [--seed S] [--stop-ids 2,3]\n"
    "\n"
    "Runs a method of BUNDLE with the native core on INPUT files (numpy .npy: float32, int64, int32 or\n"
    "bool; or float32 LXT1 .bin) and prints each output's shape, dtype and first values.\n"
    "\n"
    "  --method NAME        method to run (default forward)\n"
    "  --output OUT.npz     also write the outputs into OUT.npz (arr_0, arr_1, ...)\n"
    "  --expect OUTPUT...   compare with expected outputs (.npy or .bin; 'none' for a None output):\n"
    "                       integers and bools exactly, float32 within atol 1e-5, rtol 1e-4 (exit 2)\n"
    "  --threads N          threads a call computes on (1..64, default 1)\n"
    "  --repeat N           run N more times and print the median time\n"
    "  --profile OUT.json   time each compiled instruction over 20 runs (or --repeat N) after 2 warm-ups\n"
    "                       (or --warmup N)\n"
    "                       and write them, with their source lines, as JSON (liteexport profile reads it)\n"
    "  --calls FILE         run the calls listed in FILE on one loaded module (lines 'METHOD INPUT...',\n"
    "                       'reset', 'state'): state carries from call to call (run_calls.h)\n"
    "  --report OUT.json    with --calls: where the JSON report goes (default stdout)\n"
    "  --prompt-ids IDS     generate after these token ids (a generatable bundle: liteexport/generation.h)\n"
    "                       with --max-new-tokens (default 32), --temperature (0: greedy), --top-k (0: off),\n"
    "                       --top-p (1: off), --seed, --stop-ids (default: the bundle's); prints one JSON line;\n"
    "                       with --repeat N, N more generations and the fastest prefill and decode\n"
    "  --copy               read the bundle into memory instead of mapping it\n"
    "  --max-memory BYTES   memory budget of a call (default 1 GiB, 0: none)\n"
    "  --timeout SECONDS    time budget of a call (default 0: none)\n"
    "  -h, --help           show this message\n"
    "\n"
    "Exit codes: 0 ok, 1 usage or I/O, 2 mismatch, 5 bad bundle, 6 bad input, 7 run-time failure.\n";

// "shape [2, 3] float32: 0.1 0.2 ..." with the first values of an output
static void print_values(const Tensor& t) {
  const size_t n = std::min<size_t>(8, t.size());
  for (size_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case DType::Float32: std::printf(" %g", static_cast<double>(t.data[i])); break;
      case DType::Int64: std::printf(" %lld", static_cast<long long>(t.int64_data[i])); break;
      case DType::Int32: std::printf(" %d", t.int32_data[i]); break;
      default: std::printf(" %s", t.bool_data[i] ? "True" : "False"); break;
    }
  }
  std::printf("%s\n", t.size() > n ? " ..." : "");
}

int main(int argc, char** argv) {
  std::string method = "forward", bundle, output, profile, calls, report;
  bool generate = false;
  std::vector<int64_t> prompt_ids;
  GenerationConfig generation;
  auto ids = [](const char* flag, const char* text, std::vector<int64_t>* out) {
    if (!run_generate::parse_ids(text, out)) {
      std::fprintf(stderr, "%s needs comma-separated integers, got '%s'\n", flag, text);
      std::exit(1);
    }
  };
  std::vector<std::string> inputs, expects;
  bool in_expect = false;
  int repeat = 0, warmup = 2;
  LoadOptions options;
  auto number = [](const char* flag, const char* text) {
    char* end = nullptr;
    const double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || !(v >= 0)) {
      std::fprintf(stderr, "%s needs a number >= 0, got '%s'\n", flag, text);
      std::exit(1);
    }
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "--method" && i + 1 < argc) method = argv[++i];
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(0, std::atoi(argv[++i]));
    else if (a == "--warmup" && i + 1 < argc) warmup = std::max(0, std::atoi(argv[++i]));
    else if (a == "--threads" && i + 1 < argc) {
      const double n = number("--threads", argv[++i]);
      // checked again by Module::load (1..64), whose error names the option
      options.num_threads = n == std::floor(n) && n <= 1e6 ? static_cast<int>(n) : -1;
    }
    else if (a == "--copy") options.copy = true;
    else if (a == "--output" && i + 1 < argc) output = argv[++i];
    else if (a == "--profile" && i + 1 < argc) profile = argv[++i];
    else if (a == "--calls" && i + 1 < argc) calls = argv[++i];
    else if (a == "--prompt-ids" && i + 1 < argc) {
      generate = true;
      ids("--prompt-ids", argv[++i], &prompt_ids);
    }
    else if (a == "--stop-ids" && i + 1 < argc) {
      generation.stop_ids.emplace();
      ids("--stop-ids", argv[++i], &*generation.stop_ids);
    }
    else if (a == "--max-new-tokens" && i + 1 < argc) generation.max_new_tokens = std::atoll(argv[++i]);
    else if (a == "--temperature" && i + 1 < argc) generation.temperature = std::strtod(argv[++i], nullptr);
    else if (a == "--top-k" && i + 1 < argc) generation.top_k = std::atoll(argv[++i]);
    else if (a == "--top-p" && i + 1 < argc) generation.top_p = std::strtod(argv[++i], nullptr);
    else if (a == "--seed" && i + 1 < argc) generation.seed = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--report" && i + 1 < argc) report = argv[++i];
    else if (a == "--max-memory" && i + 1 < argc) options.max_memory = static_cast<uint64_t>(number("--max-memory", argv[++i]));
    else if (a == "--timeout" && i + 1 < argc) options.timeout_seconds = number("--timeout", argv[++i]);
    else if (a == "--check") continue;  // accepted for symmetry with --expect
    else if (a == "--expect") in_expect = true;
    else if (a.size() > 1 && a[0] == '-' && a != "-") {  // an unknown option (or one without its value)
      std::fprintf(stderr, "unknown option or missing value: %s\n%s", a.c_str(), kUsage);
      return 1;
    }
    else if (bundle.empty()) bundle = a;
    else (in_expect ? expects : inputs).push_back(a);
  }
  if (bundle.empty()) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  try {
    auto t0 = std::chrono::steady_clock::now();
    auto module = Module::load(bundle, options);
    auto t1 = std::chrono::steady_clock::now();
    if (!calls.empty()) return run_calls::run(*module, calls, output, report);
    if (generate) return run_generate::run(*module, bundle, prompt_ids, generation, repeat);
    std::vector<Tensor> in;
    for (const auto& p : inputs) in.push_back(tensor_io::read_file(p));
    auto t2 = std::chrono::steady_clock::now();
    auto out = module->run_method(method, in);
    auto t3 = std::chrono::steady_clock::now();
    auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
    std::printf("load %.3f ms, %s %.3f ms\n", ms(t0, t1), method.c_str(), ms(t2, t3));
    if (!profile.empty()) {
      const MethodProfile result = module->profile(method, in, repeat > 0 ? repeat : 20, warmup);
      profile_json::write(profile, result);
      std::printf("profile of %d runs: %.3f ms a run -> %s\n", result.runs, result.total_seconds * 1e3 / result.runs,
                  profile.c_str());
    } else if (repeat > 0) {
      // wall time, and the calling thread's CPU time: with one thread that is the run's work, without
      // the time other processes take from it on a shared machine (benchmarks/ compare with it)
      std::vector<double> times, cpu_times;
      for (int r = 0; r < repeat; ++r) {
        const double c0 = thread_cpu_ms();
        auto a = std::chrono::steady_clock::now();
        module->run_method(method, in);
        times.push_back(ms(a, std::chrono::steady_clock::now()));
        cpu_times.push_back(thread_cpu_ms() - c0);
      }
      std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
      std::nth_element(cpu_times.begin(), cpu_times.begin() + cpu_times.size() / 2, cpu_times.end());
      std::printf("median of %d runs: %.6f ms, thread cpu %.6f ms\n", repeat, times[times.size() / 2],
                  cpu_times[cpu_times.size() / 2]);
    }
    if (!expects.empty()) {
      if (expects.size() != out.size()) {
        std::fprintf(stderr, "expected %zu outputs, got %zu\n", expects.size(), out.size());
        return 2;
      }
      for (size_t k = 0; k < out.size(); ++k) {
        std::string why;
        if (!out[k] || expects[k] == "none") {  // a None output is expected as the word "none"
          if (out[k].has_value() != (expects[k] != "none")) {
            std::fprintf(stderr, "output %zu differs: %s\n", k, out[k] ? "a Tensor, expected None" : "None");
            return 2;
          }
          continue;
        }
        if (!tensor_io::allclose(*out[k], tensor_io::read_file(expects[k]), 1e-5, 1e-4, &why)) {
          std::fprintf(stderr, "output %zu differs: %s\n", k, why.c_str());
          return 2;
        }
      }
      std::printf("%zu output(s) match\n", out.size());
      return 0;
    }
    if (!output.empty()) {
      std::vector<std::pair<std::string, Tensor>> members;
      for (size_t k = 0; k < out.size(); ++k)
        if (out[k]) members.emplace_back("arr_" + std::to_string(k), *out[k]);
      npy_io::write_npz(output, members);
    }
    for (size_t k = 0; k < out.size(); ++k) {
      if (!out[k]) {
        std::printf("output %zu: None\n", k);
        continue;
      }
      std::printf("output %zu: shape [", k);
      for (size_t d = 0; d < out[k]->shape.size(); ++d) std::printf("%s%lld", d ? ", " : "", static_cast<long long>(out[k]->shape[d]));
      std::printf("] %s%s:", dtype_name(out[k]->dtype), output.empty() ? "" : (" -> " + output + ":arr_" + std::to_string(k)).c_str());
      print_values(*out[k]);
    }
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return e.kind() == ErrorKind::Format ? 5 : e.kind() == ErrorKind::Input ? 6 : 7;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "Error: %s\n", e.what());
    return 1;
  }
}
