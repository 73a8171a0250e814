// Program state (issue 34): the tensors a loaded module keeps across calls (a KV cache), and the
// two instructions that write them in place (INDEX_COPY, STATE_WRITE). runtime_py's
// runtime_py/backends/demo/state.py is the reference; this follows it.
//
// One ModuleState per loaded module (the backend's `compile`, once per load), shared by all of its
// methods' plans by name: a `prefill` and a `decode` work on one copy; another load of the same
// bundle has its own. Each state is one buffer allocated at load, outside the Module's result pool
// (buffer_pool.h), so no result is ever written into it: only INDEX_COPY and STATE_WRITE write it,
// in place, and never copy a whole state.
//
// A call's writes are journaled (StateJournal): each saves what it overwrites (the rows it touches,
// or the whole state for STATE_WRITE), and a call that fails restores them, last first, so a failed
// call leaves the state exactly as it was before it. A write at a position outside the state is
// refused before it writes (StatePositionError -> STATE_POSITION, an Input error).
//
// Thread safety: a Module serializes its calls and reset_state with a mutex (module.cpp), so
// one call at a time reads and writes a state.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "../array.h"
#include "../ivalue.h"
#include "demo_program.h"

namespace liteexport::demo_backend {

// A write into a state at a position outside it: the caller's input (run_plan renders it as
// STATE_POSITION with the state's name and the instruction).
struct StatePositionError : std::runtime_error {
  StatePositionError(int64_t position, int64_t size, int64_t axis)
      : std::runtime_error("position " + std::to_string(position) + " is outside the state's " + std::to_string(size) +
                           " positions along axis " + std::to_string(axis)),
        position(position), size(size), axis(axis) {}
  int64_t position, size, axis;
};

// One state tensor: its declaration and its buffer (an Array whose data the in-place kernels write).
struct StateTensor {
  demo_program::StateDecl decl;  // as the first method declaring it gave it
  std::string method;            // that method
  Array value;                   // the buffer, of decl.shape and dtype
  std::optional<Array> initial;  // the weight it starts as; nullopt: zeros
  size_t bytes = 0;
};

class ModuleState {
 public:
  // Checks `program`'s states against the weights and the earlier methods' declarations of the
  // same names (STATE_DECLARATION, STATE_MISMATCH: Format errors), allocates the new ones, and
  // returns (dense slot, its state's Array) per state of the program.
  std::vector<std::pair<uint32_t, Array>> declare(const std::string& method,
                                                  const std::vector<demo_program::StateDecl>& states,
                                                  const std::vector<IValue>& weights);
  // Every state back to its initial value, in place.
  void reset();
  const std::vector<std::shared_ptr<StateTensor>>& tensors() const { return tensors_; }

 private:
  std::vector<std::shared_ptr<StateTensor>> tensors_;  // in order of declaration
};

// The writes of one plan run (run_plan installs it for the calling thread): undone, last first,
// unless commit() was called.
class StateJournal {
 public:
  StateJournal();
  ~StateJournal();  // rolls back unless committed
  StateJournal(const StateJournal&) = delete;
  StateJournal& operator=(const StateJournal&) = delete;
  void commit() { committed_ = true; }

  // Saves `bytes` bytes at `at` (a part of a state about to be overwritten).
  void save(uint8_t* at, size_t bytes);

 private:
  struct Saved {
    uint8_t* at;
    std::vector<uint8_t> bytes;
  };
  std::vector<Saved> saved_;
  StateJournal* previous_;
  bool committed_ = false;
};

// The calling thread's journal (null outside a plan run with state: a kernel test).
StateJournal* current_journal();

// Collects the ModuleStates made while a module loads (the backend's compile runs during the
// load's __setstate__ and has no other way back to its Module): LoadedModule installs one around
// its load, and lists and resets their states.
class StateCollector {
 public:
  StateCollector();
  ~StateCollector();
  StateCollector(const StateCollector&) = delete;
  StateCollector& operator=(const StateCollector&) = delete;
  std::vector<std::shared_ptr<ModuleState>> states;

 private:
  StateCollector* previous_;
};

// A new ModuleState, registered with the calling thread's collector (if any).
std::shared_ptr<ModuleState> new_module_state();

}  // namespace liteexport::demo_backend
