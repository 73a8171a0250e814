// Sliding 2-D windows over NCHW arrays, shared by convolution and pooling (torch's rules,
// as runtime_py's windows.py).
#pragma once

#include <string>

#include "kernels.h"

namespace liteexport::demo_backend {

// Torch's output length of a sliding window. With ceil_mode a last, partial window is kept
// only if it starts inside the input or the left padding.
int64_t window_output_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                           bool ceil_mode);

// NCHW dims of x (a CHW input counts as N = 1); KernelError for another rank.
struct Nchw {
  int64_t n, c, h, w;
  bool unbatched;
};
Nchw as_batched(const Array& x, const char* op);

// KernelError when the window does not fit the input at all.
void check_output_size(const char* op, int64_t h, int64_t w, int64_t oh, int64_t ow);

// Python tuple text of a pair: "(1, 2)".
std::string pair_text(const Pair& p);

}  // namespace liteexport::demo_backend
