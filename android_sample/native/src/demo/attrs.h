// Decoded instruction attributes of demo programs: the shared decoder's types
// (native_format/decoder/demo_program.h), named in the core's namespace.
#pragma once

#include "demo_program.h"

namespace liteexport::demo_backend {

using demo_program::Attrs;
using demo_program::AxisAttrs;
using demo_program::BinaryAttrs;
using demo_program::ClampAttrs;
using demo_program::Conv2dAttrs;
using demo_program::FlattenAttrs;
using demo_program::FusedAttrs;
using demo_program::GeluAttrs;
using demo_program::LayerNormAttrs;
using demo_program::Pair;
using demo_program::PermuteAttrs;
using demo_program::Pool2dAttrs;
using demo_program::ReduceAttrs;
using demo_program::ShapeAttrs;
using demo_program::SliceAttrs;

}  // namespace liteexport::demo_backend
