// A tiny in-house test harness: CHECK records a failure and keeps going; each suite returns
// the number of failures.
#pragma once

#include <cstdio>
#include <string>

namespace liteexport::testing {

inline int& failures() {
  static int count = 0;
  return count;
}

}  // namespace liteexport::testing

#define CHECK(cond, ...)                                                               \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      ++liteexport::testing::failures();                                               \
      std::fprintf(stderr, "%s:%d: CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, \
                   std::string(__VA_ARGS__).c_str());                                  \
    }                                                                                  \
  } while (0)

int run_kernel_tests();
int run_numerics_tests();  // part of the kernels suite
int run_buffer_tests();    // part of the kernels suite
int run_fold_tests();      // part of the kernels suite
int run_selection_tests();  // part of the kernels suite
int run_int8_tests();       // part of the kernels suite
int run_parity_tests(const std::string& dir);
int run_error_tests(const std::string& dir);
int run_malformed_tests(const std::string& dir);
int run_loading_tests(const std::string& dir);  // Module::load_from_fd / load_from_copy, extra files
int run_regression_tests(const std::string& dir);
int run_outputs(const std::string& dir);  // not a check: prints the outputs' values
