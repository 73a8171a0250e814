// The recycled result buffers (buffer_pool.h): reuse across results, the bound on what is kept,
// zeros() still zeroing a recycled buffer, and the memory budget counting live results only.
#include <cstring>

#include <gtest/gtest.h>

#include "array.h"
#include "buffer_pool.h"
#include "run_limits.h"

using namespace liteexport;

TEST(Buffers, FreedBufferIsReusedWithinTwiceThePeak) {
  BufferPool pool;
  size_t cap_a = 0, cap_b = 0;
  auto a = pool.take(100, &cap_a);
  uint64_t* address = a.get();
  pool.give(std::move(a), cap_a);
  auto b = pool.take(40, &cap_b);  // the kept 100-word buffer serves a smaller result
  EXPECT_TRUE(b.get() == address && cap_b == 100) << "a freed buffer is reused";
  size_t cap_c = 0;
  auto c = pool.take(100, &cap_c);  // none kept now: a new one
  EXPECT_TRUE(c.get() != address && cap_c == 100) << "a new buffer when none is kept";
  pool.give(std::move(b), cap_b);
  pool.give(std::move(c), cap_c);
  EXPECT_TRUE(pool.kept_bytes() == 1600 && pool.peak_bytes() == 1600) << std::to_string(pool.kept_bytes());
  // a larger result than any kept: new; when given back, what is kept stays within twice the peak
  size_t cap_d = 0;
  auto d = pool.take(1000, &cap_d);
  pool.give(std::move(d), cap_d);
  EXPECT_TRUE(pool.kept_bytes() <= 2 * pool.peak_bytes()) << std::to_string(pool.kept_bytes());
}

TEST(Buffers, RunBudgetCountsLiveResultsAndZerosRecycledBuffers) {
  // within a run with a pool: a recycled buffer is zeroed for zeros(), the budget counts only
  // live results, and a result freed after its pool's owner still returns safely
  auto run = std::make_shared<RunState>();
  run->pool = std::make_shared<BufferPool>();
  run->max_memory = 64;
  RunScope scope(run);
  float* y;
  Array first = Array::uninitialized<float>({16}, &y);
  for (int i = 0; i < 16; ++i) y[i] = 7.0f;
  EXPECT_TRUE(run->live == 64) << std::to_string(run->live.load());
  first = Array{};
  EXPECT_TRUE(run->live == 0) << "a freed result leaves the budget";
  Array again = Array::zeros<float>({16}, &y);
  bool zero = true;
  for (int i = 0; i < 16; ++i) zero = zero && y[i] == 0.0f;
  EXPECT_TRUE(zero) << "zeros() on a recycled buffer";
  bool refused = false;
  try {
    Array::zeros<float>({1}, &y);  // 64 bytes live already
  } catch (const RunLimitError&) {
    refused = true;
  }
  EXPECT_TRUE(refused) << "the budget still counts live results";
  run->pool.reset();  // without a pool, `again` is simply freed when it goes
}
