// backend_with_compiler_demo: the delegate backend object the wrapper bytecode creates and
// calls (`__init__`, `is_available`, `compile`, `execute`), like runtime_py's DemoBackend.
#pragma once

#include <memory>

#include "../ivalue.h"

namespace liteexport::demo_backend {

constexpr const char* kBackendName = "backend_with_compiler_demo";

std::shared_ptr<CustomObject> make_backend();

}  // namespace liteexport::demo_backend
