// liteexport_tests <suite> [dir]: kernels | parity | errors | malformed (vectors dir) | regressions
// (tests/regressions: fuzzer findings) | outputs (vectors dir: prints each case's output values).
#include <chrono>
#include <cstdio>
#include <string>

#include "check.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: liteexport_tests kernels|parity|errors|malformed|regressions|outputs [dir]\n");
    return 2;
  }
  const std::string suite = argv[1], dir = argc > 2 ? argv[2] : ".";
  auto start = std::chrono::steady_clock::now();
  int cases = suite == "kernels"     ? run_kernel_tests()
              : suite == "parity"    ? run_parity_tests(dir)
              : suite == "errors"    ? run_error_tests(dir)
              : suite == "malformed" ? run_malformed_tests(dir)
              : suite == "loading"   ? run_loading_tests(dir)  // vectors dir: descriptors, copies, extra files
              : suite == "regressions" ? run_regression_tests(dir)
              : suite == "outputs"   ? run_outputs(dir)
                                     : -1;
  if (cases < 0) {
    std::fprintf(stderr, "unknown suite %s\n", suite.c_str());
    return 2;
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  int failed = liteexport::testing::failures();
  std::printf("%s: %d case(s), %d failure(s), %.1f ms\n", suite.c_str(), cases, failed, ms);
  return failed == 0 && cases > 0 ? 0 : 1;
}
