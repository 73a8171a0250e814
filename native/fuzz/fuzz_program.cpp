// libFuzzer target: the input bytes are a demo Program (schema/demo_program.fbs, "LXDP"),
// decoded and checked by build_plan against a fixed weight list, then run by run_plan on zero
// inputs of its declared shapes. Only liteexport::Error may come out.
#include <cstdint>
#include <optional>
#include <vector>

#include "demo/plan.h"
#include "fuzz_common.h"
#include "liteexport/runtime.h"

using namespace liteexport;

namespace {

const std::vector<IValue>& weights() {
  static const std::vector<IValue> w = [] {
    std::vector<IValue> out;
    for (Shape s : {Shape{20}, Shape{20, 20}, Shape{4, 3, 3, 3}, Shape{4}, Shape{}, Shape{3, 4}, Shape{2, 2, 2}}) {
      std::vector<float> v(static_cast<size_t>(numel(s)));
      for (size_t i = 0; i < v.size(); ++i) v[i] = 0.01f * static_cast<float>(i);
      out.emplace_back(Array::from_vector(s, std::move(v)));
    }
    static const uint8_t bytes[4] = {1, 2, 3, 4};
    out.emplace_back(ByteTensor{bytes, sizeof bytes, nullptr});
    out.emplace_back(int64_t{7});
    return out;
  }();
  return w;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<const demo_backend::MethodPlan> plan;
  try {
    plan = demo_backend::build_plan(ByteTensor{data, size, nullptr}, weights());
  } catch (const Error&) {
    return 0;
  }
  for (size_t variant = 0; variant < 2; ++variant) {
    std::vector<IValue> inputs;
    bool ok = true;
    for (const auto& check : plan->input_checks) {
      auto t = liteexport_fuzz::zeros(check.shape ? *check.shape : liteexport_fuzz::fallback_shapes()[variant]);
      if (!t) { ok = false; break; }
      inputs.emplace_back(Array::from_vector(t->shape, t->data));
    }
    if (!ok) break;
    try {
      for (const Array& a : demo_backend::run_plan(*plan, inputs)) {
        volatile float sink = 0;
        for (int64_t i = 0; i < a.size(); ++i) sink = sink + a.ptr()[i];
      }
    } catch (const Error&) {
    }
  }
  return 0;
}
