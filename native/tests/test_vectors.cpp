// Vector tests: bundles exported by liteexport run by the core must give runtime_py's outputs
// (within float32 tolerance), runtime_py's errors (kind, debug handle, message), and Format
// errors (never crashes) for malformed bundles. Cases come from tests/make_vectors.py.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include "liteexport/runtime.h"
#include "tensor_io.h"
#include "test_support.h"

using namespace liteexport;
using liteexport::testing::register_case;

namespace {

std::vector<std::vector<std::string>> cases(const std::string& dir, const std::string& kind) {
  std::ifstream in(dir + "/cases.txt");
  std::vector<std::vector<std::string>> out;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string s; words >> s;) w.push_back(s);
    if (!w.empty() && w[0] == kind) out.push_back(w);
  }
  return out;
}

std::vector<Tensor> read_tensors(const std::string& dir, const std::vector<std::string>& w, size_t& pos) {
  size_t n = std::stoul(w[pos++]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < n; ++i) out.push_back(tensor_io::read_file(dir + "/" + w[pos++]));
  return out;
}

// Expected outputs: a tensor file, or "none" for a None element of a returned tuple.
std::vector<std::optional<Tensor>> read_outputs(const std::string& dir, const std::vector<std::string>& w, size_t& pos) {
  size_t n = std::stoul(w[pos++]);
  std::vector<std::optional<Tensor>> out;
  for (size_t i = 0; i < n; ++i, ++pos)
    out.push_back(w[pos] == "none" ? std::nullopt : std::optional<Tensor>(tensor_io::read_file(dir + "/" + w[pos])));
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const char* kind_name(ErrorKind k) {
  return k == ErrorKind::Format ? "Format" : k == ErrorKind::Input ? "Input" : "Execution";
}

// The cases of `kind` in `dir`; none is a failure (a case named Cases), not a suite that passes empty.
std::vector<std::vector<std::string>> required_cases(const std::string& suite, const std::string& dir,
                                                      const std::string& kind) {
  auto out = cases(dir, kind);
  if (out.empty())
    register_case(suite, "Cases", [dir, kind] {
      ADD_FAILURE() << "no '" + kind + "' cases in " + dir + "/cases.txt (run tests/make_vectors.py)";
    });
  return out;
}

// The file name without its extension: "mlp_dynamic.err_dim.msg" -> "mlp_dynamic.err_dim".
std::string stem(const std::string& file) { return file.substr(0, file.rfind('.')); }

// thread counts outside 1..64 are refused, at load and later, with the option's name
void check_thread_counts_refused(const std::string& dir, const std::string& bundle) {
  for (int bad : {0, -1, 65}) {
    LoadOptions options;
    options.num_threads = bad;
    const std::string expected = "num_threads must be between 1 and 64, got " + std::to_string(bad);
    try {
      Module::load(dir + "/" + bundle, options);
      ADD_FAILURE() << "num_threads " + std::to_string(bad) + " was accepted at load";
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::Input && e.what() == expected) << std::string("load: ") + e.what();
    }
    auto module = Module::load(dir + "/" + bundle);
    try {
      module->set_num_threads(bad);
      ADD_FAILURE() << "set_num_threads(" + std::to_string(bad) + ") was accepted";
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::Input && e.what() == expected) << std::string("set_num_threads: ") + e.what();
    }
    EXPECT_TRUE(module->num_threads() == 1) << "a refused count changed the module's threads";
  }
}

// run <bundle> <method> <n_in> <in...> <n_out> <out...>: runtime_py's outputs within the tolerance
void check_parity(const std::string& dir, const std::vector<std::string>& w) {
  size_t pos = 3;
  auto inputs = read_tensors(dir, w, pos);
  auto expected = read_outputs(dir, w, pos);
  const std::string what = w[1] + " " + w[2];
  try {
    // both loaders: the file is mapped; the buffer path gets a misaligned copy on purpose
    auto module = Module::load(dir + "/" + w[1]);
    std::string bytes = " " + slurp(dir + "/" + w[1]);
    auto from_buffer = Module::load_from_buffer(reinterpret_cast<const uint8_t*>(bytes.data()) + 1, bytes.size() - 1);
    // and on 2 threads: XNNPACK splits the work, the results stay within the tolerance.
    // LITEEXPORT_TEST_THREADS=0 (the ARM builds under qemu-user, CMakeLists.txt) leaves it out.
    std::unique_ptr<Module> threaded;
    const char* threads_env = std::getenv("LITEEXPORT_TEST_THREADS");
    if (threads_env == nullptr || std::string(threads_env) != "0") {
      LoadOptions two_threads;
      two_threads.num_threads = 2;
      threaded = Module::load(dir + "/" + w[1], two_threads);
    }
    for (auto* m : {module.get(), from_buffer.get(), threaded.get()}) {
      if (m == nullptr) continue;
      auto got = m->run_method(w[2], inputs);
      EXPECT_TRUE(got.size() == expected.size()) << what + ": output count";
      for (size_t k = 0; k < got.size() && k < expected.size(); ++k) {
        std::string why;
        const std::string output = what + " output " + std::to_string(k);
        EXPECT_TRUE(got[k].has_value() == expected[k].has_value())
            << output + (got[k] ? ": a Tensor, runtime_py: None" : ": None");
        if (got[k] && expected[k]) {
          EXPECT_TRUE(tensor_io::allclose(*got[k], *expected[k], 1e-5, 1e-4, &why)) << output + ": " + why;
        }
      }
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << what + ": " + e.what();
  }
}

// <stem>.code of make_vectors.py: the code on the first line, then "name<TAB>value" per field.
std::pair<std::string, Error::Fields> read_code(const std::string& path) {
  std::istringstream in(slurp(path));
  std::string code, line;
  std::getline(in, code);
  Error::Fields fields;
  while (std::getline(in, line)) {
    const size_t tab = line.find('\t');
    fields.emplace_back(line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1));
  }
  return {code, fields};
}

// error <bundle> <method> <kind> <handle> <message-file> <n_in> <in...>: runtime_py's error
void check_error(const std::string& dir, const std::vector<std::string>& w) {
  size_t pos = 6;
  auto inputs = read_tensors(dir, w, pos);
  const std::string what = w[1] + " " + w[2] + " (" + w[5] + ")";
  const std::string expected_message = slurp(dir + "/" + w[5]);
  try {
    auto module = Module::load(dir + "/" + w[1]);
    module->run_method(w[2], inputs);
    ADD_FAILURE() << what + ": no error";
  } catch (const Error& e) {
    EXPECT_TRUE(kind_name(e.kind()) == w[3])
        << what + ": kind " + kind_name(e.kind()) + ", expected " + w[3] + ": " + e.what();
    EXPECT_TRUE(e.debug_handle() == std::stoll(w[4]))
        << what + ": handle " + std::to_string(e.debug_handle()) + ", expected " + w[4];
    // errors of the demo backend: the same code and fields as runtime_py's (the text is
    // rendered from the same templates; the Java host tests compare whole messages)
    const auto [code, fields] = read_code(dir + "/" + w[5].substr(0, w[5].size() - 4) + ".code");
    EXPECT_TRUE(e.code() == code) << what + ": code " + e.code() + ", expected " + code + ": " + e.what();
    EXPECT_TRUE(e.fields() == fields) << what + ": fields differ from runtime_py's: " + e.what();
    if (code.empty()) {  // another error (e.g. an unknown method): its text is the contract
      // the module's name in messages is its path: compare with the bundle's file name
      std::string message = e.what();
      for (size_t at; (at = message.find(dir + "/" + w[1])) != std::string::npos;)
        message.replace(at, dir.size() + 1 + w[1].size(), w[1]);
      EXPECT_TRUE(message == expected_message)
          << what + ": message\n--- got\n" + message + "\n--- expected\n" + expected_message;
    }
  }
}

// malformed <bundle> <strict>: a Format error (strict) or at least no crash
void check_malformed(const std::string& dir, const std::vector<std::string>& w) {
  Tensor x{{4, 20}, std::vector<float>(80, 0.5f)};
  const bool strict = w[2] == "1";
  try {
    auto module = Module::load(dir + "/" + w[1]);
    module->forward({x});
    EXPECT_TRUE(!strict) << w[1] + ": loaded and ran";
  } catch (const Error& e) {
    EXPECT_TRUE(!strict || e.kind() == ErrorKind::Format)
        << w[1] + ": " + kind_name(e.kind()) + " error, expected Format: " + e.what();
  }
}

}  // namespace

namespace liteexport::testing {

// Parity.<bundle>_<method> (_2, _3, ... for its further cases), Errors.<message file>,
// Malformed.<bundle>, each run on the vectors of vectors_dir(); and Parity.NumThreadsOutside1To64Refused.
void register_vector_cases() {
  const std::string dir = vectors_dir();
  const auto runs = required_cases("Parity", dir, "run");
  if (!runs.empty())
    register_case("Parity", "NumThreadsOutside1To64Refused",
                  [dir, bundle = runs[0][1]] { check_thread_counts_refused(dir, bundle); });
  for (const auto& w : runs) register_case("Parity", stem(w[1]) + "_" + w[2], [dir, w] { check_parity(dir, w); });
  for (const auto& w : required_cases("Errors", dir, "error"))
    register_case("Errors", stem(w[5]), [dir, w] { check_error(dir, w); });
  for (const auto& w : required_cases("Malformed", dir, "malformed"))
    register_case("Malformed", stem(w[1]), [dir, w] { check_malformed(dir, w); });
}

// Prints one line per 'run' case, "outputs <case#> <bundle> <method> <value>...": its outputs'
// values (%.9g: each float exactly; integers and bools in decimal). XNNPACK's kernels differ between ABIs in their vector widths
// and FMA use, so tests/android and cross_tests.sh compare these lines between x86-64 and
// aarch64/armv7 under qemu within the parity tolerance (rtol 1e-4, atol 1e-5), not bit for bit.
// Exit status 1 when a case fails to run or there is none.
int print_outputs(const std::string& dir) {
  int n = 0, failed = 0;
  for (const auto& w : cases(dir, "run")) {
    size_t pos = 3;
    auto inputs = read_tensors(dir, w, pos);
    std::string values;
    char text[32];
    try {
      for (const auto& out : Module::load(dir + "/" + w[1])->run_method(w[2], inputs)) {
        if (!out) continue;
        for (float v : out->data) {
          std::snprintf(text, sizeof text, " %.9g", static_cast<double>(v));
          values += text;
        }
        // int64, int32 and bool outputs in decimal (their vector is the one that holds values)
        for (int64_t v : out->int64_data) values += " " + std::to_string(v);
        for (int32_t v : out->int32_data) values += " " + std::to_string(v);
        for (uint8_t v : out->bool_data) values += " " + std::to_string(v);
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s %s: %s\n", w[1].c_str(), w[2].c_str(), e.what());
      ++failed;
    }
    std::printf("outputs %d %s %s%s\n", n++, w[1].c_str(), w[2].c_str(), values.c_str());
  }
  if (n == 0) std::fprintf(stderr, "no 'run' cases in %s/cases.txt (run tests/make_vectors.py)\n", dir.c_str());
  std::printf("outputs: %d case(s), %d failure(s)\n", n, failed);
  return failed == 0 && n > 0 ? 0 : 1;
}

}  // namespace liteexport::testing
