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

// A dense, contiguous float32 tensor (row-major).
struct Tensor {
  std::vector<int64_t> shape;
  std::vector<float> data;  // product(shape) elements
};

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

class Module {
 public:
  // Memory-maps the file (weights are used in place), verifies it, runs __setstate__.
  static std::unique_ptr<Module> load(const std::string& path);
  // Same from a caller-owned buffer; it must outlive the Module.
  static std::unique_ptr<Module> load_from_buffer(const uint8_t* data, size_t size);
  virtual ~Module() = default;

  // User-callable methods (forward, @torch.jit.export methods), without __setstate__/__getstate__.
  virtual std::vector<std::string> method_names() const = 0;
  // Runs a method; a Tensor-returning method gives one output, a tuple-returning one one per
  // element. An element that is None (googlenet's auxiliary outputs in eval mode: it returns
  // (logits, None, None)) is std::nullopt; an element of another kind (an int, bool or float
  // constant) is an Execution error: the core returns Tensors only.
  virtual std::vector<std::optional<Tensor>> run_method(const std::string& name, const std::vector<Tensor>& inputs) = 0;
  std::vector<std::optional<Tensor>> forward(const std::vector<Tensor>& inputs) { return run_method("forward", inputs); }
};

}  // namespace liteexport
