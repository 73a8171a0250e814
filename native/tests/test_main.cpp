// liteexport_tests: the native core's GoogleTest suites. One case runs by name:
//   liteexport_tests --gtest_filter=Kernels.PoolingWindows      (--gtest_list_tests lists them)
// The data-driven suites get one case per input: Parity.*, Errors.*, Malformed.* per vector of
// tests/make_vectors.py (--vectors=DIR), Regressions.* per fuzzer finding (--regressions=DIR).
// Not a test: `liteexport_tests outputs DIR` prints each vector's output values (cross_tests.sh
// and tests/android compare them between ABIs).
#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "test_support.h"

namespace liteexport::testing {

namespace {

std::string& vectors() {
  static std::string dir = LITEEXPORT_TEST_VECTORS_DIR;
  return dir;
}

std::string& regressions() {
  static std::string dir = LITEEXPORT_TEST_REGRESSIONS_DIR;
  return dir;
}

class FunctionCase : public ::testing::Test {
 public:
  explicit FunctionCase(std::function<void()> body) : body_(std::move(body)) {}
  void TestBody() override { body_(); }

 private:
  std::function<void()> body_;
};

}  // namespace

const std::string& vectors_dir() { return vectors(); }
const std::string& regressions_dir() { return regressions(); }

void register_case(const std::string& suite, const std::string& name, std::function<void()> body) {
  static std::map<std::string, std::set<std::string>> taken;
  std::string base;
  for (char ch : name) base += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  std::string unique = base;
  for (int k = 2; !taken[suite].insert(unique).second; ++k) unique = base + "_" + std::to_string(k);
  ::testing::RegisterTest(suite.c_str(), unique.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [body = std::move(body)]() -> ::testing::Test* { return new FunctionCase(body); });
}

}  // namespace liteexport::testing

int main(int argc, char** argv) {
  using namespace liteexport::testing;
  if (argc >= 2 && std::string(argv[1]) == "outputs") return print_outputs(argc > 2 ? argv[2] : vectors_dir());
  ::testing::InitGoogleTest(&argc, argv);  // takes the --gtest_* flags out of argv
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--vectors=", 0) == 0) {
      vectors() = arg.substr(10);
    } else if (arg.rfind("--regressions=", 0) == 0) {
      regressions() = arg.substr(14);
    } else {
      std::fprintf(stderr, "unknown argument %s (usage: liteexport_tests [--gtest_*] [--vectors=DIR] "
                           "[--regressions=DIR] | outputs [DIR])\n", arg.c_str());
      return 2;
    }
  }
  register_vector_cases();
  register_regression_cases();
  return RUN_ALL_TESTS();
}
