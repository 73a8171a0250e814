// Program state (state.h): ModuleState, the call journal, and the INDEX_COPY / STATE_WRITE kernels.
#include "state.h"

#include <cstring>

#include "../errors.h"
#include "../narrow_weights.h"
#include "kernels.h"

namespace liteexport::demo_backend {

namespace {

thread_local StateJournal* t_journal = nullptr;
thread_local StateCollector* t_collector = nullptr;

// runtime_py's _describe: "float32 1x2x8x4 starting as zeros" (as STATE_MISMATCH shows it)
std::string describe(const demo_program::StateDecl& s) {
  std::string shape;
  for (size_t i = 0; i < s.shape.size(); ++i) shape += (i ? "x" : "") + std::to_string(s.shape[i]);
  if (shape.empty()) shape = "a scalar";
  const char* dtype = demo_ops::dtype_name(s.dtype);
  return std::string(dtype ? dtype : std::to_string(s.dtype).c_str()) + " " + shape + " starting as " +
         (s.initial < 0 ? std::string("zeros") : "weight " + std::to_string(s.initial));
}

// A state's buffer: its own allocation (never the result pool's), zeroed, with the read slack
// XNNPACK's kernels may read past a float input.
Array allocate_state(const demo_program::StateDecl& s, size_t* bytes) {
  const DType dtype = static_cast<DType>(s.dtype);
  const int64_t n = numel(s.shape);
  if (n > kMaxElements)
    throw_format("state '" + s.name + "' of shape " + py_shape(s.shape) + " exceeds the limit of " +
                 std::to_string(kMaxElements) + " elements");
  *bytes = static_cast<size_t>(n) * dtype_size(dtype);
  const size_t words = (*bytes + 16 + 7) / 8;
  std::shared_ptr<uint64_t> buffer(new uint64_t[words](), std::default_delete<uint64_t[]>());
  return Array{s.shape, std::shared_ptr<const void>(buffer, buffer.get()), dtype};
}

// The state's values, writable: only the in-place kernels and ModuleState write through it.
uint8_t* writable(const Array& a) { return static_cast<uint8_t*>(const_cast<void*>(a.data.get())); }

void save(uint8_t* at, size_t bytes) {
  if (StateJournal* journal = current_journal()) journal->save(at, bytes);
}

}  // namespace

std::vector<std::pair<uint32_t, Array>> ModuleState::declare(const std::string& method,
                                                             const std::vector<demo_program::StateDecl>& states,
                                                             const std::vector<IValue>& weights) {
  const std::string where = "demo program of method '" + method + "'";
  std::vector<std::pair<uint32_t, Array>> slots;
  for (const demo_program::StateDecl& s : states) {
    std::shared_ptr<StateTensor> found;
    for (const auto& t : tensors_)
      if (t->decl.name == s.name) found = t;
    if (found) {
      const std::string mine = describe(s), theirs = describe(found->decl);
      if (mine != theirs)
        throw_coded(ErrorKind::Format,
                    demo_errors::ProgramError(demo_errors::Code::STATE_MISMATCH,
                                              {{"name", s.name}, {"got", mine}, {"method", method},
                                               {"expected", theirs}, {"other", found->method}},
                                              where));
      slots.emplace_back(s.slot, found->value);
      continue;
    }
    auto t = std::make_shared<StateTensor>();
    t->decl = s;
    t->method = method;
    if (s.initial >= 0) {  // the decoder checked the index against the weights' count
      const IValue& w = weights[static_cast<size_t>(s.initial)];
      std::string dtype;
      Shape shape;
      if (const Array* a = w.get_if<Array>()) {
        t->initial = float_values(*a);  // a float16 or qint8 weight: its float32 values
        dtype = dtype_name(t->initial->dtype);
        shape = t->initial->shape;
      } else if (const ByteTensor* b = w.get_if<ByteTensor>()) {
        dtype = "uint8";
        shape = {static_cast<int64_t>(b->size)};
      } else {
        dtype = w.kind();
      }
      const std::string problem = demo_program::state_initial_problem(s, dtype, shape);
      if (!problem.empty())
        throw_coded(ErrorKind::Format, demo_errors::ProgramError(demo_errors::Code::STATE_DECLARATION,
                                                                 {{"name", s.name}, {"problem", problem}}, where));
    }
    t->value = allocate_state(s, &t->bytes);
    if (t->initial) std::memcpy(writable(t->value), t->initial->data.get(), t->bytes);
    tensors_.push_back(t);
    slots.emplace_back(s.slot, t->value);
  }
  return slots;
}

void ModuleState::reset() {
  for (const auto& t : tensors_) {
    if (t->initial)
      std::memcpy(writable(t->value), t->initial->data.get(), t->bytes);
    else
      std::memset(writable(t->value), 0, t->bytes);
  }
}

StateJournal::StateJournal() : previous_(t_journal) { t_journal = this; }

StateJournal::~StateJournal() {
  t_journal = previous_;
  if (committed_) return;
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) std::memcpy(it->at, it->bytes.data(), it->bytes.size());
}

void StateJournal::save(uint8_t* at, size_t bytes) { saved_.push_back({at, std::vector<uint8_t>(at, at + bytes)}); }

StateJournal* current_journal() { return t_journal; }

StateCollector::StateCollector() : previous_(t_collector) { t_collector = this; }
StateCollector::~StateCollector() { t_collector = previous_; }

std::shared_ptr<ModuleState> new_module_state() {
  auto state = std::make_shared<ModuleState>();
  if (t_collector != nullptr) t_collector->states.push_back(state);
  return state;
}

// INDEX_COPY(state, index, source; axis): source's slices written into the state in place at the
// index's positions along axis; every position is checked before anything is written.
Kernel make_index_copy(const AxisAttrs& a) {
  const int64_t attr_axis = a.axis;
  return [attr_axis](const Inputs& in) {
    const Array &state = *in[0], &index = *in[1], &source = *in[2];
    if (state.dim() == 0) throw KernelError("INDEX_COPY writes positions along an axis, but the state is 0-d");
    if (source.dtype != state.dtype)
      throw KernelError(std::string("INDEX_COPY: the source is ") + dtype_name(source.dtype) + ", the state " +
                        dtype_name(state.dtype));
    const int64_t axis = typed_axis(attr_axis, state);
    if (index.dim() > 1) throw KernelError("INDEX_COPY takes a 1-D index, got shape " + py_shape(index.shape));
    const int64_t n = index.size();
    std::vector<int64_t> positions(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k)
      positions[static_cast<size_t>(k)] = index.dtype == DType::Int32 ? int64_t{index.data_as<int32_t>()[k]}
                                                                     : index.data_as<int64_t>()[k];
    Shape expected = state.shape;
    expected[static_cast<size_t>(axis)] = n;
    if (source.shape != expected)
      throw KernelError("INDEX_COPY: the source has shape " + py_shape(source.shape) + ", but writing " +
                        std::to_string(n) + " positions along axis " + std::to_string(axis) + " of a state of shape " +
                        py_shape(state.shape) + " takes " + py_shape(expected));
    const int64_t size = state.shape[static_cast<size_t>(axis)];
    for (int64_t p : positions)
      if (p < 0 || p >= size) throw StatePositionError(p, size, axis);
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= state.shape[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < state.dim(); ++d) inner *= state.shape[static_cast<size_t>(d)];
    const size_t row = static_cast<size_t>(inner) * dtype_size(state.dtype);
    uint8_t* dst = writable(state);
    const auto* src = static_cast<const uint8_t*>(source.data.get());
    // the rows about to be overwritten, all saved before the first write (duplicates included:
    // restored last first, the earliest saving, the original, is restored last)
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t p : positions) save(dst + static_cast<size_t>(o * size + p) * row, row);
    // duplicates: the last one wins, as torch's CPU loop
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t k = 0; k < n; ++k)
        std::memmove(dst + static_cast<size_t>(o * size + positions[static_cast<size_t>(k)]) * row,
                     src + static_cast<size_t>(o * n + k) * row, row);
    return state;
  };
}

// STATE_WRITE(state, value): the whole state set to value in place.
Kernel make_state_write() {
  return [](const Inputs& in) {
    const Array &state = *in[0], &value = *in[1];
    if (value.shape != state.shape || value.dtype != state.dtype)
      throw KernelError("STATE_WRITE: the value has shape " + py_shape(value.shape) + ", the state " +
                        py_shape(state.shape));
    const size_t bytes = static_cast<size_t>(state.size()) * dtype_size(state.dtype);
    uint8_t* dst = writable(state);
    save(dst, bytes);
    std::memmove(dst, value.data.get(), bytes);  // memmove: the value may be a view of the state itself
    return state;
  };
}

}  // namespace liteexport::demo_backend
