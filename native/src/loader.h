// Turns a verified PTMF module into run-time values: tensors pointing into the mapped bytes,
// objects (CLASS_WITH_SETSTATE ones rebuilt by running their __setstate__), and functions
// ready for the interpreter. Also the interpreter's Runtime: method calls and object creation.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "bundle_verify.h"
#include "bytecode.h"
#include "interpreter.h"
#include "mapped_file.h"

namespace liteexport {

class LoadedBundle : public Runtime {
 public:
  // `m` must have passed verify_bundle; `bytes` keeps the buffer (and so the weights) alive.
  LoadedBundle(std::shared_ptr<Bytes> bytes, const ser::Module* m);
  ~LoadedBundle() override;

  const IValue& root() const { return root_; }
  // Functions listed in Module.methods, in order.
  const std::vector<const ser::Function*>& method_functions() const { return method_functions_; }

  IValue call_method(const IValue& obj, const std::string& name, std::vector<IValue>& args) override;
  IValue create_object(const std::string& type_name) override;

 private:
  const IValue& value(uint32_t index);  // built once, children first (iteratively)
  IValue build(uint32_t index);
  IValue build_tensor(const ser::TensorMetadata* t, const std::string& where);
  IValue build_object(const ser::Object* o, const std::string& where);
  void refuse_missing_operators() const;  // a bundle whose bytecode calls operators: refused at load

  std::shared_ptr<Bytes> bytes_;
  const ser::Module* m_;
  std::vector<std::optional<IValue>> values_;
  std::unordered_map<uint32_t, std::shared_ptr<Code>> codes_;        // by ivalue index
  std::unordered_map<std::string, std::shared_ptr<Code>> functions_;  // methods by qualified name
  std::vector<const ser::Function*> method_functions_;
  // every Object made for this bundle: bytecode can link them into cycles (SET_ATTR), which
  // the destructor breaks; expired entries are pruned as the list grows
  std::vector<std::weak_ptr<Object>> objects_;
  void track(const std::shared_ptr<Object>& obj);
  IValue root_;
};

}  // namespace liteexport
