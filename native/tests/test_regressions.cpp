// Regression inputs found by fuzzing (fuzz/README.md): every file in tests/regressions/ once
// crashed, hung, leaked or ran out of memory. Each must now end in liteexport::Error or run
// cleanly; nothing else may escape (run under ASan/UBSan by run_tests.sh's sanitize build).
//   *.ptl   a bundle: Module::load, then every method on zero inputs of a few shapes; the
//           bundle is malformed, so at least one liteexport::Error is expected.
//   *.lxdp  a demo Program: build_plan + run_plan on zero inputs of its declared shapes
//           (some are valid programs once the bug is fixed, e.g. a misaligned [long] vector).
#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "demo/plan.h"
#include "liteexport/runtime.h"
#include "test_support.h"

using namespace liteexport;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const std::vector<Shape> kShapes = {{4, 20}, {1, 3, 8, 8}, {2, 3}, {}};

Tensor zeros(const Shape& shape) { return Tensor{shape, std::vector<float>(static_cast<size_t>(numel(shape)), 0.0f)}; }

// true if a liteexport::Error was raised
bool run_bundle(const std::string& path) {
  std::unique_ptr<Module> module;
  try {
    module = Module::load(path);
  } catch (const Error&) {
    return true;
  }
  bool raised = false;
  for (const std::string& method : module->method_names())
    for (const Shape& s : kShapes)
      for (size_t n = 0; n <= 2; ++n) {
        try {
          module->run_method(method, std::vector<Tensor>(n, zeros(s)));
        } catch (const Error&) {
          raised = true;
        }
      }
  return raised;
}

void run_program(const std::string& path) {
  std::string bytes = slurp(path);
  std::vector<IValue> weights;
  for (Shape s : {Shape{20}, Shape{20, 20}, Shape{4, 3, 3, 3}, Shape{4}})
    weights.emplace_back(Array::from_vector(s, std::vector<float>(static_cast<size_t>(numel(s)), 0.5f)));
  try {
    auto plan = demo_backend::build_plan(
        ByteTensor{reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), nullptr}, weights);
    std::vector<IValue> inputs;
    for (const auto& check : plan->input_checks) {
      Shape s = check.shape ? *check.shape : Shape{2, 3};
      for (auto& d : s) d = d == -1 ? 2 : d;
      if (numel(s) > (1 << 16)) return;
      inputs.emplace_back(Array::from_vector(s, std::vector<float>(static_cast<size_t>(numel(s)), 0.0f)));
    }
    demo_backend::run_plan(*plan, inputs);
  } catch (const Error&) {
  }
}

}  // namespace

namespace liteexport::testing {

// Regressions.<file> (its name with '.' as '_') per *.ptl and *.lxdp in regressions_dir().
void register_regression_cases() {
  const std::string dir = regressions_dir();
  std::vector<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) names.emplace_back(e->d_name);
    closedir(d);
  }
  std::sort(names.begin(), names.end());
  int n = 0;
  for (const std::string& name : names) {
    const std::string path = dir + "/" + name;
    auto ends = [&name](const char* ext) {
      std::string e = ext;
      return name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0;
    };
    if (!ends(".ptl") && !ends(".lxdp")) continue;
    register_case("Regressions", name, [name, path, bundle = ends(".ptl")] {
      try {
        if (bundle) {
          EXPECT_TRUE(run_bundle(path)) << name + ": loaded and ran every method without a liteexport::Error";
        } else {
          run_program(path);
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << name + ": escaped as " + e.what();
      }
    });
    ++n;
  }
  if (n == 0) register_case("Regressions", "Inputs", [dir] { ADD_FAILURE() << "no regression inputs in " + dir; });
}

}  // namespace liteexport::testing
