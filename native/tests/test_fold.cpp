// sole_reader (demo/plan.h): which ReLU/clamp may fold into the step before it. Per value, as
// the compiler reuses slots: mobilenet_v2 writes every convolution into one of two slots.
#include <gtest/gtest.h>

#include "demo/plan.h"

using namespace liteexport;
using namespace liteexport::demo_backend;

namespace {

// steps given as (reads, write)
MethodPlan plan_of(const std::vector<std::pair<std::vector<uint32_t>, uint32_t>>& steps, std::vector<uint32_t> outputs) {
  MethodPlan plan;
  for (const auto& [reads, write] : steps) {
    Step step{};
    step.reads = reads;
    step.write = write;
    plan.steps.push_back(std::move(step));
  }
  plan.outputs = std::move(outputs);
  return plan;
}

std::string text(std::optional<size_t> v) { return v ? std::to_string(*v) : "none"; }

const std::vector<bool> kNoneRemoved(4, false);

}  // namespace

// conv 69 -> 68, clamp 68 -> 69, conv 69 -> 68, clamp 68 -> 69 (output): slot 68 is read
// twice in the program, each of its values once
TEST(Fold, ReusedSlotEachValueHasItsOwnReader) {
  MethodPlan reused = plan_of({{{0}, 68}, {{68}, 69}, {{69}, 68}, {{68}, 69}}, {69});
  EXPECT_TRUE(sole_reader(reused, kNoneRemoved, 0) == 1u) << text(sole_reader(reused, kNoneRemoved, 0));
  EXPECT_TRUE(sole_reader(reused, kNoneRemoved, 2) == 3u) << text(sole_reader(reused, kNoneRemoved, 2));
  EXPECT_TRUE(!sole_reader(reused, kNoneRemoved, 3)) << "the output's value has no reader";
}

// the clamp two steps later; a step between that reads or writes the clamp's slot blocks it
TEST(Fold, ReaderTwoStepsLaterUnlessAStepBetweenTouchesItsSlot) {
  MethodPlan later = plan_of({{{0}, 5}, {{1}, 6}, {{5}, 7}, {{6, 7}, 8}}, {8});
  EXPECT_TRUE(sole_reader(later, kNoneRemoved, 0) == 2u) << text(sole_reader(later, kNoneRemoved, 0));
  MethodPlan reads_target = plan_of({{{0}, 5}, {{7}, 6}, {{5}, 7}, {{6, 7}, 8}}, {8});
  EXPECT_TRUE(!sole_reader(reads_target, kNoneRemoved, 0)) << "a step between reads the clamp's slot";
  MethodPlan writes_target = plan_of({{{0}, 5}, {{1}, 7}, {{5}, 7}, {{7}, 8}}, {8});
  EXPECT_TRUE(!sole_reader(writes_target, kNoneRemoved, 0)) << "a step between writes the clamp's slot";
}

// two readers, a reader reading it twice, an output value read by a step
TEST(Fold, NoSoleReaderForTwoReadersADoubleReadOrAnOutput) {
  MethodPlan two = plan_of({{{0}, 5}, {{5}, 6}, {{5}, 7}, {{6, 7}, 8}}, {8});
  EXPECT_TRUE(!sole_reader(two, kNoneRemoved, 0)) << "two readers";
  MethodPlan twice = plan_of({{{0}, 5}, {{5, 5}, 6}}, {6});
  EXPECT_TRUE(!sole_reader(twice, kNoneRemoved, 0)) << "read twice by one step";
  MethodPlan output = plan_of({{{0}, 5}, {{5}, 6}}, {5, 6});
  EXPECT_TRUE(!sole_reader(output, kNoneRemoved, 0)) << "an output";
}

// a removed step (folded already) does not count as a reader
TEST(Fold, RemovedStepIsNoReader) {
  std::vector<bool> removed = {false, true, false, false};
  MethodPlan folded = plan_of({{{0}, 5}, {{5}, 9}, {{5}, 6}, {{6}, 7}}, {7});
  EXPECT_TRUE(sole_reader(folded, removed, 0) == 2u) << text(sole_reader(folded, removed, 0));
}
