// liteexport native runtime core: loads PTMF bundles written by liteexport and runs their
// lowered methods (wrapper bytecode + backend_with_compiler_demo programs). C++17, no libtorch.
// This header is the contract between the core and its users (JNI bridge, host tests, tools).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace liteexport {

// The element types of compiled values, numbered as c10::ScalarType (schema/demo_ops.toml's
// [dtypes]), so a value converts to and from torch's without a table.
enum class DType : uint8_t { Int32 = 3, Int64 = 4, Float32 = 6, Bool = 11 };

// "float32", "int64", "int32", "bool": numpy's names, which the error messages use.
const char* dtype_name(DType dtype);

// A dense, contiguous tensor (row-major) of one of the four dtypes. Its values are in the vector
// of its dtype (product(shape) elements); the others stay empty. float32, the common case, keeps
// `data`, so float-only callers read it as before.
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;          // DType::Float32
  DType dtype = DType::Float32;
  std::vector<int64_t> int64_data;  // DType::Int64
  std::vector<int32_t> int32_data;  // DType::Int32
  std::vector<uint8_t> bool_data;   // DType::Bool: one byte per value, nonzero is true

  Tensor() = default;
  Tensor(std::vector<int64_t> shape, std::vector<float> values) : shape(std::move(shape)), data(std::move(values)) {}
  Tensor(std::vector<int64_t> shape, std::vector<int64_t> values)
      : shape(std::move(shape)), dtype(DType::Int64), int64_data(std::move(values)) {}
  Tensor(std::vector<int64_t> shape, std::vector<int32_t> values)
      : shape(std::move(shape)), dtype(DType::Int32), int32_data(std::move(values)) {}
  // bool values (a std::vector<bool> has no contiguous bytes to hand over)
  static Tensor bools(std::vector<int64_t> shape, std::vector<uint8_t> values) {
    Tensor t;
    t.shape = std::move(shape);
    t.dtype = DType::Bool;
    t.bool_data = std::move(values);
    return t;
  }
  // Values held in the vector of `dtype`.
  size_t size() const;
  // That vector's bytes (size() elements of dtype_size(dtype) bytes each).
  const void* bytes() const;
};

// Bytes per element: 4, 8, 4, 1.
size_t dtype_size(DType dtype);

// Kinds of failure, matching runtime_py's error hierarchy.
enum class ErrorKind {
  Format,     // malformed or unsupported bundle (runtime_py FormatError)
  Input,      // unknown method, wrong number of inputs (runtime_py InputError)
  Execution,  // failure while running, e.g. wrong input shape (runtime_py ExecutionError)
};

// Every error the core raises. For Execution errors inside a compiled program,
// debug_handle() is the failing instruction's handle and what() holds the message
// mapped through the bundle's debug table (module hierarchy + TorchScript-style traceback),
// formatted like runtime_py's.
//
// Errors of the demo backend also carry their structured form (schema/demo_errors.toml): a
// code such as "INPUT_MISMATCH" and named fields, the same as runtime_py's error.code and
// error.fields; code() is empty for other errors.
class Error : public std::runtime_error {
 public:
  using Fields = std::vector<std::pair<std::string, std::string>>;
  Error(ErrorKind kind, const std::string& message, int64_t debug_handle = -1, std::string code = "",
        Fields fields = {})
      : std::runtime_error(message),
        kind_(kind),
        debug_handle_(debug_handle),
        code_(std::move(code)),
        fields_(std::move(fields)) {}
  ErrorKind kind() const { return kind_; }
  int64_t debug_handle() const { return debug_handle_; }
  const std::string& code() const { return code_; }
  const Fields& fields() const { return fields_; }

 private:
  ErrorKind kind_;
  int64_t debug_handle_;
  std::string code_;
  Fields fields_;
};

// How a bundle is loaded and what each run_method call may use.
struct LoadOptions {
  // false: the file is memory-mapped and its weights used in place, so it must stay unchanged
  // while the Module lives (truncating it makes a run fault with SIGBUS, rewriting it changes
  // the outputs), as with every mmap-based runtime. true: the file is read into memory once
  // (a bounded read of its size at open) and verified there; later changes to it do not matter.
  bool copy = false;
  // Bytes of kernel results alive at once during a call, checked from each result's shape
  // before it is allocated; 0 = no budget. The default, 1 GiB, is the single-array cap and far
  // above what real models need (every model of the parity suite runs within 8 MiB): it stops
  // a hostile broadcast or chain of large results before an app is killed for memory.
  uint64_t max_memory = uint64_t{1} << 30;
  // Wall-clock seconds a call may run; checked between instructions and within the long kernels
  // (matmul/linear/conv products, broadcasts) about every 2^20-2^28 operations. 0 = none.
  double timeout_seconds = 0;
  // Threads a call computes on (XNNPACK's convolutions, linear layers, pooling and elementwise
  // ops split their work; the other kernels use the calling thread), 1 to 64. The default, 1, is
  // PyTorch Android's and ExecuTorch's: an app chooses how many cores a model takes.
  // Module::set_num_threads changes it later. Outside 1..64: an Input error.
  int num_threads = 1;
};

// Where a method's time goes (Module::profile), one row per compiled instruction, mapped through
// the bundle's debug table as runtime_py's `liteexport profile` maps it.
struct InstructionProfile {
  std::string method;            // the compiled program's method
  int64_t index = 0;             // the instruction's position in that program
  std::string op;                // the demo opcode, e.g. "CONV2D" (a step XNNPACK fused keeps the first op's)
  std::string node;              // the TorchScript node it was compiled from, e.g. "aten::conv2d"; "" without a table
  std::string location;          // "file:line" of the model's own code; "" without a table (--strip-debug)
  std::string module_hierarchy;  // e.g. "top(TinyCNN).features(Sequential).0(Conv2d)"
  double seconds = 0;            // over all profiled runs
  int64_t calls = 0;
  bool int8 = false;             // it computed on int8 values (a quantized program's int8 path, issue 22)
};

struct MethodProfile {
  std::string method;
  int runs = 0;
  double total_seconds = 0;  // the method's wall time over the profiled runs
  double other_seconds = 0;  // outside compiled programs: the wrapper bytecode around them
  std::vector<InstructionProfile> instructions;  // most expensive first
};

// A tensor a loaded module keeps across calls (program state, issue 34: a KV cache), as
// Module::states lists it.
struct StateInfo {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
};

class Module {
 public:
  // Memory-maps (or with options.copy, reads) the file, verifies it, runs __setstate__.
  // Anything but a regular file (a FIFO, a device, a directory) is a Format error, refused
  // before any blocking read.
  static std::unique_ptr<Module> load(const std::string& path, const LoadOptions& options = {});
  // Same from a caller-owned buffer; it must outlive the Module (options.copy is ignored).
  static std::unique_ptr<Module> load_from_buffer(const uint8_t* data, size_t size, const LoadOptions& options = {});
  // Same from `length` bytes at `offset` of the open file `fd`: a bundle stored inside a larger
  // file, such as an uncompressed asset of an APK (Android's AssetManager.openFd gives the APK's
  // descriptor and the asset's offset and length). The descriptor stays the caller's: it may be
  // closed once this returns. The range is memory-mapped in place (the file must then stay
  // unchanged, as for load) unless options.copy is set or the range does not start 16-byte
  // aligned (the alignment the format needs; an APK aligns uncompressed assets to 4 bytes):
  // then it is read into memory. A range outside the file is a Format error.
  static std::unique_ptr<Module> load_from_fd(int fd, int64_t offset, int64_t length, const LoadOptions& options = {});
  // Same from a copy of the caller's `size` bytes: they may be freed or changed once this returns
  // (an asset that had to be read through a stream, for instance).
  static std::unique_ptr<Module> load_from_copy(const uint8_t* data, size_t size, const LoadOptions& options = {});
  virtual ~Module() = default;

  // User-callable methods (forward, @torch.jit.export methods), without __setstate__/__getstate__.
  virtual std::vector<std::string> method_names() const = 0;
  // The keys of a method that returns a dict of tensors (Dict[str, Tensor], as torchvision's
  // segmentation models return {"out": ...}), in the order run_method returns its values; empty
  // for a method returning a Tensor or a tuple. An unknown method is an Input error.
  virtual std::vector<std::string> output_names(const std::string& method) const = 0;
  // The files the exporter stored with the bundle (liteexport export --extra-file NAME=PATH, or
  // extra_files=: labels, normalization constants...), as runtime_py's Module.extra_files: names
  // in the bundle's order, without liteexport's own files (named liteexport/...: the debug table).
  virtual std::vector<std::string> extra_file_names() const = 0;
  // The content of the extra file `name`, or nullopt if the bundle has none of that name (or it
  // is one of liteexport's own).
  virtual std::optional<std::string> extra_file(const std::string& name) const = 0;
  // The content of liteexport's own extra file `name` (named liteexport/..., e.g.
  // liteexport/generation.json, which Generator reads: generation.h), or nullopt.
  virtual std::optional<std::string> liteexport_file(const std::string& name) const = 0;
  // Runs a method; a Tensor-returning method gives one output, a tuple-returning one one per
  // element. An element that is None (googlenet's auxiliary outputs in eval mode: it returns
  // (logits, None, None)) is std::nullopt; an element of another kind (an int, bool or float
  // constant) is an Execution error: the core returns Tensors only.
  // One call at a time per Module: a Module serializes its calls (and reset_state) with a mutex,
  // as it reuses its result buffers and XNNPACK operators, and its state, from call to call;
  // separate Modules, even of the same bundle, run in parallel freely.
  // A bundle with program state (a KV cache): the state persists across calls and is shared by
  // all the methods; a call that fails (an Input error STATE_POSITION for a cache position outside
  // the cache, a failed kernel, a timeout) leaves the state as it was before the call.
  virtual std::vector<std::optional<Tensor>> run_method(const std::string& name, const std::vector<Tensor>& inputs) = 0;
  std::vector<std::optional<Tensor>> forward(const std::vector<Tensor>& inputs) { return run_method("forward", inputs); }
  // Runs `method` `warmup` times unmeasured, then `runs` times timing each compiled instruction
  // (a clock read per step). The inputs and errors are run_method's; `runs` >= 1, `warmup` >= 0,
  // else an Input error.
  virtual MethodProfile profile(const std::string& method, const std::vector<Tensor>& inputs, int runs = 20,
                                int warmup = 2) = 0;
  // The program state of the bundle (issue 34): name, dtype, shape and bytes of each tensor the
  // module keeps across calls, in the order the methods declare them; empty without state. Each
  // loaded Module has its own, allocated at load.
  virtual std::vector<StateInfo> states() const = 0;
  // A copy of the state tensor `name`'s values now, or nullopt if the bundle has no state of that name.
  virtual std::optional<Tensor> state(const std::string& name) = 0;
  // Every state tensor back to its initial value (the start of a new conversation).
  virtual void reset_state() = 0;
  // The threads later calls compute on (LoadOptions::num_threads); an Input error outside 1..64.
  // Not to be called while a call of this Module runs on another thread.
  virtual void set_num_threads(int num_threads) = 0;
  virtual int num_threads() const = 0;
};

}  // namespace liteexport
