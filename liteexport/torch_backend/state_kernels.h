// The two instructions that write program state in place (INDEX_COPY, STATE_WRITE) in the torch
// extension, and the call's journal (part of backend.cpp's one translation unit; ModuleState is in
// program_plan.h). runtime_py/backends/demo/state.py is the reference: the same checks and texts,
// and a call that fails leaves the state as it was (each write saves what it overwrites in the
// call's journal, restored in reverse order).
#pragma once

#include <string>
#include <vector>

namespace {

// A write at a position outside the state: the caller's input (run_plan reports STATE_POSITION).
struct StatePosition {
  int64_t position, size, axis;
};

// What one write overwrote: the rows at `positions` along `axis`, or the whole state (undefined positions).
struct Undo {
  at::Tensor state, positions, saved;
  int64_t axis = 0;
};

thread_local std::vector<Undo>* current_journal = nullptr;

// The call's journal: installed for the call, undone unless the call completes.
class Journal {
 public:
  Journal() : previous_(current_journal) { current_journal = &entries_; }
  ~Journal() {
    current_journal = previous_;
    if (done_) return;
    at::NoGradGuard no_grad;
    for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
      if (it->positions.defined()) {
        it->state.index_copy_(it->axis, it->positions, it->saved);
      } else {
        it->state.copy_(it->saved);
      }
    }
  }
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  void done() { done_ = true; }

 private:
  std::vector<Undo> entries_;
  std::vector<Undo>* previous_;
  bool done_ = false;
};

at::Tensor index_copy(const Step& s, const Tensors& x) {
  const at::Tensor& state = x[0];
  if (state.dim() == 0) kernel_error("INDEX_COPY writes positions along an axis, but the state is 0-d");
  const int64_t axis = checked_axis(attrs_of<dp::AxisAttrs>(s).axis, state);
  if (x[1].dim() > 1) kernel_error("INDEX_COPY takes a 1-D index, got shape " + shape_str(x[1].sizes()));
  at::Tensor positions = x[1].reshape({-1}).to(at::kLong);
  std::vector<int64_t> expected(state.sizes().begin(), state.sizes().end());
  expected[static_cast<size_t>(axis)] = positions.numel();
  if (x[2].sizes().vec() != expected)
    kernel_error("INDEX_COPY: the source has shape " + shape_str(x[2].sizes()) + ", but writing " +
                 std::to_string(positions.numel()) + " positions along axis " + std::to_string(axis) +
                 " of a state of shape " + shape_str(state.sizes()) + " takes " + shape_str(expected));
  const int64_t size = state.size(axis);
  const int64_t* p = positions.data_ptr<int64_t>();
  for (int64_t i = 0; i < positions.numel(); ++i)
    if (p[i] < 0 || p[i] >= size) throw StatePosition{p[i], size, axis};
  if (current_journal != nullptr)
    current_journal->push_back({state, positions, state.index_select(axis, positions), axis});
  // one position after another, as runtime_py's numpy assignment: a duplicate's last write wins
  for (int64_t i = 0; i < positions.numel(); ++i) state.select(axis, p[i]).copy_(x[2].select(axis, i));
  return state;
}

at::Tensor state_write(const Tensors& x) {
  const at::Tensor& state = x[0];
  if (x[1].sizes() != state.sizes())
    kernel_error("STATE_WRITE: the value has shape " + shape_str(x[1].sizes()) + ", the state " +
                 shape_str(state.sizes()));
  if (current_journal != nullptr) current_journal->push_back({state, at::Tensor(), state.clone(), 0});
  state.copy_(x[1]);
  return state;
}

}  // namespace
