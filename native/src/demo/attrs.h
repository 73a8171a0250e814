// Decoded instruction attributes of demo programs: the shared decoder's types
// (native_format/decoder/demo_program.h), named in the core's namespace.
#pragma once

#include "demo_program.h"

namespace liteexport::demo_backend {

// BinaryAttrs ... SliceAttrs, Attrs, Activation, Pair: generated from schema/demo_ops.toml
using namespace demo_attrs;  // NOLINT

}  // namespace liteexport::demo_backend
