// What the kernel test suites share: a kernel's error message on given inputs.
#pragma once

#include <string>

#include "demo/kernels.h"

namespace liteexport::testing {

// The KernelError text `k` throws on `in`, or "" when it runs.
inline std::string error_of(const demo_backend::Kernel& k, const demo_backend::Inputs& in) {
  try {
    k(in);
  } catch (const demo_backend::KernelError& e) {
    return e.what();
  }
  return "";
}

}  // namespace liteexport::testing
