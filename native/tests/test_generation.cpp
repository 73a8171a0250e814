// The generation loop's pieces that need no language model (liteexport/generation.h): the
// generation record's parsing and its errors, and the refusals before anything runs.
// tests/generation/test_native_generation.py compares whole generations with runtime_py's.
#include <string>

#include <gtest/gtest.h>

#include "liteexport/generation.h"
#include "test_support.h"

using namespace liteexport;

namespace {

std::string format_error(const std::string& json) {
  try {
    GenerationSpec::from_json(json);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format);
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST(Generation, RecordAsLiteexportWritesIt) {
  const GenerationSpec spec =
      GenerationSpec::from_json(R"({"max_chunk": 16, "max_length": 64, "method": "forward", "stop_ids": [2, 128001]})");
  EXPECT_EQ(spec.method, "forward");
  EXPECT_EQ(spec.max_chunk, 16);
  EXPECT_EQ(spec.max_length, 64);
  EXPECT_EQ(spec.stop_ids, (std::vector<int64_t>{2, 128001}));
  EXPECT_TRUE(GenerationSpec::from_json(R"({"method": "decode", "max_chunk": 1, "max_length": 8})").stop_ids.empty());
}

TEST(Generation, MalformedRecordsAreFormatErrors) {
  const std::string at = " (at extra file liteexport/generation.json)";
  EXPECT_EQ(format_error(R"({"max_chunk": 16, "max_length": 64})"), "not a generation record: no 'method'" + at);
  EXPECT_EQ(format_error(R"({"method": "forward", "max_chunk": "16", "max_length": 64})"),
            "not a generation record: max_chunk is not an integer" + at);
  EXPECT_EQ(format_error(R"({"method": "forward", "max_chunk": 0, "max_length": 64})"),
            "max_chunk 0 and max_length 64 must be positive" + at);
  EXPECT_EQ(format_error(R"({"method": "forward", "max_chunk": 4, "max_length": 8, "stop_ids": 2})"),
            "not a generation record: stop_ids is not a list" + at);
  EXPECT_NE(format_error("[1, 2").find("not a generation record"), std::string::npos);
  EXPECT_NE(format_error("").find("not a generation record"), std::string::npos);
  EXPECT_NE(format_error(std::string(100, '[')).find("nested too deeply"), std::string::npos);
}

TEST(Generation, RefusedBeforeAnythingRuns) {
  auto m = Module::load(liteexport::testing::vectors_dir() + "/state_row_cache.ptl");
  try {
    Generator generator(*m, "row_cache.ptl");
    FAIL() << "a bundle without a generation record generates";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_EQ(std::string(e.what()).rfind("row_cache.ptl cannot generate: it has no liteexport/generation.json", 0), 0u)
        << e.what();
  }
  // given a spec, the prompt and the config are checked first: the state is not touched
  Generator generator(*m, GenerationSpec{"forward", 4, 8, {}});
  m->forward({Tensor({1, 1, 4}, std::vector<float>(4, 1.0f)), Tensor({1}, std::vector<int64_t>{0})});
  const auto expect_input = [&](const std::vector<int64_t>& prompt, const GenerationConfig& config,
                                const std::string& message) {
    try {
      generator.generate(prompt, config);
      FAIL() << "accepted: " << message;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Input);
      EXPECT_EQ(std::string(e.what()), message);
    }
  };
  GenerationConfig config;
  expect_input({}, config, "the prompt is empty: generation needs at least one token");
  expect_input(std::vector<int64_t>(9, 1), config,
               "the prompt has 9 tokens, more than the 8 positions of the cache the bundle was exported with");
  config.max_new_tokens = 0;
  expect_input({1}, config, "max_new_tokens must be at least 1, got 0");
  config.max_new_tokens = 4;
  config.top_p = 0;
  expect_input({1}, config, "top_p must be in (0, 1] (1: off), got 0.0");
  EXPECT_EQ(m->state("calls")->int64_data.at(0), 1);
}
