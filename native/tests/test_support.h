// What the test files share beyond GoogleTest: the directories the data-driven suites read, and
// the registration of one named case per vector or input file (those are known only at run time,
// so they cannot be TEST()s).
#pragma once

#include <functional>
#include <string>

namespace liteexport::testing {

// tests/make_vectors.py's output: --vectors=DIR, else the build's LITEEXPORT_VECTORS_DIR.
const std::string& vectors_dir();
// The fuzzer's findings: --regressions=DIR, else native/tests/regressions.
const std::string& regressions_dir();

// Registers the case `suite`.`name` (made a valid, unique GoogleTest name: letters, digits and
// '_'; a repeated name gets _2, _3, ...) that runs `body`.
void register_case(const std::string& suite, const std::string& name, std::function<void()> body);

void register_vector_cases();      // test_vectors.cpp: Parity.*, Errors.*, Malformed.*
void register_regression_cases();  // test_regressions.cpp: Regressions.*

// Not a test: prints each 'run' case's output values (see test_vectors.cpp); the exit status.
int print_outputs(const std::string& dir);

}  // namespace liteexport::testing
