#include "windows.h"

#include "../checked.h"
#include "../errors.h"

namespace liteexport::demo_backend {

std::string pair_text(const Pair& p) { return "(" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ")"; }

int64_t window_output_size(int64_t size, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                           bool ceil_mode) {
  // attributes are int32 but `size` is any dim of a (possibly empty) array, up to INT64_MAX
  const int64_t reach = checked_mul(dilation, kernel - 1, "window extent");
  const int64_t span = checked_add(checked_add(size, 2 * padding, "padded size"), -reach - 1, "window span");
  auto floor_div = [](int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); };
  if (!ceil_mode) return floor_div(span, stride) + 1;
  int64_t out = -floor_div(-span, stride) + 1;
  if ((out - 1) * stride >= size + padding) --out;
  return out;
}

Nchw as_batched(const Array& x, const char* op) {
  if (x.dim() == 4) return {x.shape[0], x.shape[1], x.shape[2], x.shape[3], false};
  if (x.dim() == 3) return {1, x.shape[0], x.shape[1], x.shape[2], true};
  throw KernelError(std::string(op) + " expects a 3-D (CHW) or 4-D (NCHW) input, got shape " + py_shape(x.shape));
}

void check_output_size(const char* op, int64_t h, int64_t w, int64_t oh, int64_t ow) {
  if (oh < 1 || ow < 1)
    throw KernelError(std::string(op) + " input of spatial size " + pair_text({h, w}) +
                      " is too small: output size would be " + pair_text({oh, ow}));
}

}  // namespace liteexport::demo_backend
