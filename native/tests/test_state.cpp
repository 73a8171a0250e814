// Program state (issue 34) in the native core: the state a loaded module keeps across calls,
// shared by its methods, separate per load, restored by reset_state, and unchanged by a call that
// fails (before or part-way through its writes). Bundles: tests/make_vectors.py state_bundles
// (RowCache and TwoCaches of tests/generation/stateful_models.py; RowCache's program as two
// methods, forward and again; and those two declaring the state "calls" differently).
// tests/generation/test_native_state.py compares the values with runtime_py's.
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "liteexport/runtime.h"
#include "test_support.h"

using namespace liteexport;

namespace {

std::unique_ptr<Module> load_vector(const std::string& name) {
  return Module::load(liteexport::testing::vectors_dir() + "/" + name);
}

// x [1, n, width] of `value`, positions as int64 [n]
std::vector<Tensor> rows(const std::vector<int64_t>& positions, int64_t width, float value) {
  const auto n = static_cast<int64_t>(positions.size());
  return {Tensor({1, n, width}, std::vector<float>(static_cast<size_t>(n * width), value)),
          Tensor({n}, std::vector<int64_t>(positions))};
}

Tensor state_of(Module& m, const std::string& name) {
  auto t = m.state(name);
  EXPECT_TRUE(t.has_value()) << name;
  return t ? *t : Tensor();
}

int64_t calls_of(Module& m) { return state_of(m, "calls").int64_data.at(0); }

// The float rows of RowCache's cache [1, 8, 4] that are not all zero.
std::vector<int64_t> written_rows(Module& m) {
  const Tensor cache = state_of(m, "cache");
  std::vector<int64_t> out;
  for (int64_t r = 0; r < 8; ++r) {
    bool any = false;
    for (int64_t c = 0; c < 4; ++c) any = any || cache.data.at(static_cast<size_t>(r * 4 + c)) != 0.0f;
    if (any) out.push_back(r);
  }
  return out;
}

}  // namespace

TEST(State, ListedWithShapeDtypeAndBytesAndStartingAsTheirInitialValues) {
  auto m = load_vector("state_row_cache.ptl");
  const std::vector<StateInfo> states = m->states();
  ASSERT_EQ(states.size(), 2u);
  EXPECT_EQ(states[0].name, "cache");
  EXPECT_EQ(states[0].dtype, DType::Float32);
  EXPECT_EQ(states[0].shape, (std::vector<int64_t>{1, 8, 4}));
  EXPECT_EQ(states[0].bytes, 128u);
  EXPECT_EQ(states[1].name, "calls");
  EXPECT_EQ(states[1].dtype, DType::Int64);
  EXPECT_TRUE(states[1].shape.empty());
  EXPECT_EQ(states[1].bytes, 8u);
  EXPECT_EQ(calls_of(*m), 0);
  EXPECT_TRUE(written_rows(*m).empty());
  EXPECT_FALSE(m->state("nothing").has_value());
  // TwoCaches' short cache starts as its weight (torch.full 0.5), not zeros
  auto two = load_vector("state_two_caches.ptl");
  const Tensor short_cache = state_of(*two, "short_cache");
  EXPECT_EQ(short_cache.data, std::vector<float>(8, 0.5f));
}

TEST(State, PersistsAcrossCallsAndOutputsDoNotAliasIt) {
  auto m = load_vector("state_row_cache.ptl");
  const auto first = m->forward(rows({0, 1}, 4, 1.0f));
  EXPECT_EQ(calls_of(*m), 1);
  EXPECT_EQ(written_rows(*m), (std::vector<int64_t>{0, 1}));
  const auto second = m->forward(rows({5}, 4, 1.0f));
  EXPECT_EQ(calls_of(*m), 2);
  EXPECT_EQ(written_rows(*m), (std::vector<int64_t>{0, 1, 5}));
  // output = cache.sum(1) * calls: three equal rows twice vs two rows once
  ASSERT_TRUE(first[0] && second[0]);
  for (size_t c = 0; c < 4; ++c) EXPECT_FLOAT_EQ(second[0]->data[c], first[0]->data[c] * 3.0f);
}

TEST(State, SharedByTheMethodsOfOneModuleSeparatePerLoad) {
  auto m = load_vector("state_two_methods.ptl");
  auto other = load_vector("state_two_methods.ptl");
  EXPECT_EQ(m->states().size(), 2u);  // one copy of each, though both methods declare them
  m->forward(rows({0}, 4, 1.0f));
  m->run_method("again", rows({3}, 4, 1.0f));
  EXPECT_EQ(calls_of(*m), 2);  // again saw forward's write
  EXPECT_EQ(written_rows(*m), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(calls_of(*other), 0);  // the other load did not
  EXPECT_TRUE(written_rows(*other).empty());
  other->run_method("again", rows({1}, 4, 1.0f));
  EXPECT_EQ(calls_of(*m), 2);
  EXPECT_EQ(written_rows(*other), (std::vector<int64_t>{1}));
}

TEST(State, ResetRestoresTheInitialValues) {
  auto m = load_vector("state_row_cache.ptl");
  const auto fresh = m->forward(rows({2, 3}, 4, 0.5f));
  m->forward(rows({4}, 4, 2.0f));
  m->reset_state();
  EXPECT_EQ(calls_of(*m), 0);
  EXPECT_TRUE(written_rows(*m).empty());
  const auto again = m->forward(rows({2, 3}, 4, 0.5f));
  EXPECT_EQ(again[0]->data, fresh[0]->data);
  auto two = load_vector("state_two_caches.ptl");
  two->forward(rows({0, 1}, 2, 3.0f));
  EXPECT_NE(state_of(*two, "short_cache").data, std::vector<float>(8, 0.5f));
  two->reset_state();
  EXPECT_EQ(state_of(*two, "short_cache").data, std::vector<float>(8, 0.5f));  // its weight again
  EXPECT_EQ(state_of(*two, "long_cache").data, std::vector<float>(16, 0.0f));
}

TEST(State, PositionOutsideTheCacheIsAnInputErrorAndChangesNothing) {
  auto m = load_vector("state_row_cache.ptl");
  m->forward(rows({0, 1}, 4, 1.0f));
  const Tensor cache = state_of(*m, "cache");
  for (int64_t bad : {8, -1}) {
    try {
      m->forward(rows({2, bad}, 4, 9.0f));
      FAIL() << "position " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input);
      EXPECT_EQ(e.code(), "STATE_POSITION");
      const Error::Fields expected{{"instruction", e.fields().at(0).second},
                                   {"position", std::to_string(bad)},
                                   {"state", "cache"},
                                   {"size", "8"},
                                   {"axis", "1"}};
      EXPECT_EQ(e.fields(), expected);
      EXPECT_NE(std::string(e.what()).find("the state is unchanged"), std::string::npos) << e.what();
    }
    EXPECT_EQ(state_of(*m, "cache").data, cache.data);  // row 2, before the bad one, not written
    EXPECT_EQ(calls_of(*m), 1);
  }
}

TEST(State, CallFailingPartWayIsUndone) {
  // position 5 fits the long cache (8) but not the short one (4): the long cache's write, done
  // first, is undone
  auto m = load_vector("state_two_caches.ptl");
  m->forward(rows({0, 1}, 2, 1.0f));
  const Tensor long_cache = state_of(*m, "long_cache"), short_cache = state_of(*m, "short_cache");
  EXPECT_THROW(m->forward(rows({2, 5}, 2, 7.0f)), Error);
  EXPECT_EQ(state_of(*m, "long_cache").data, long_cache.data);
  EXPECT_EQ(state_of(*m, "short_cache").data, short_cache.data);
  // and the module goes on from there
  m->forward(rows({3}, 2, 1.0f));
  EXPECT_NE(state_of(*m, "long_cache").data, long_cache.data);
}

TEST(State, MethodsDeclaringOneStateDifferentlyAreAFormatError) {
  try {
    load_vector("state_mismatch.ptl");
    FAIL() << "loaded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    EXPECT_EQ(e.code(), "STATE_MISMATCH");
    EXPECT_EQ(std::string(e.what()),
              "state 'calls' is int64 1 starting as zeros in method 'again' but int64 a scalar starting as zeros in "
              "method 'forward': methods share a state by its name (at demo program of method 'again')");
  }
}
