// libFuzzer target: the input bytes are a PTMF bundle. Load it with Module::load_from_buffer
// and run every method on small zero inputs: the shapes the bundle's demo programs declare
// (ValueInfo, -1 -> 2, unknown rank -> a few fixed shapes), else a few fixed shapes.
// Only liteexport::Error may come out; anything else (crash, sanitizer report, another
// exception, timeout, OOM) is a finding.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bundle_verify.h"
#include "demo_program_generated.h"
#include "fb_read.h"
#include "fuzz_common.h"
#include "liteexport/runtime.h"

using liteexport::Tensor;
using liteexport_fuzz::fallback_shapes;
using liteexport_fuzz::zeros;
namespace ser = torch::jit::mobile::serialization;

namespace {

// input shapes (nullopt: unknown rank) per method, from the bundle's uint8 tensors that hold
// a verifiable demo Program. Only called on a bundle the loader accepted.
std::map<std::string, std::vector<std::optional<std::vector<int64_t>>>> program_inputs(const uint8_t* data, size_t size) {
  std::map<std::string, std::vector<std::optional<std::vector<int64_t>>>> out;
  const ser::Module* m = liteexport::verify_bundle(data, size, "fuzz");
  for (const ser::IValue* v : *m->ivalues()) {
    if (v->val_type() != ser::IValueUnion::TensorMetadata) continue;
    const ser::TensorMetadata* t = v->val_as_TensorMetadata();
    if (t->scalar_type() != 0) continue;
    const auto* storage = m->storage_data()->Get(t->storage_location_index())->data();
    if (storage == nullptr || static_cast<size_t>(t->storage_offset()) >= storage->size()) continue;
    std::vector<uint64_t> aligned((storage->size() - t->storage_offset() + 7) / 8);
    size_t n = storage->size() - static_cast<size_t>(t->storage_offset());
    std::memcpy(aligned.data(), storage->data() + t->storage_offset(), n);
    const auto* bytes = reinterpret_cast<const uint8_t*>(aligned.data());
    flatbuffers::Verifier verifier(bytes, n);
    if (n < 8 || !liteexport::demo::ProgramBufferHasIdentifier(bytes) || !liteexport::demo::VerifyProgramBuffer(verifier))
      continue;
    const auto* p = liteexport::demo::GetProgram(bytes);
    if (p->method() == nullptr) continue;
    auto& shapes = out[p->method()->str()];
    shapes.clear();
    if (p->inputs() != nullptr)
      for (const auto* info : *p->inputs()) {
        if (info->has_shape() && info->shape() != nullptr)
          shapes.emplace_back(liteexport::read_vector<int64_t>(info->shape()));
        else if (info->has_shape())
          shapes.emplace_back(std::vector<int64_t>{});
        else
          shapes.emplace_back(std::nullopt);
      }
  }
  return out;
}

void run(liteexport::Module& module, const std::string& method, const std::vector<Tensor>& inputs) {
  try {
    auto outputs = module.run_method(method, inputs);
    for (const auto& t : outputs) {
      volatile uint8_t sink = 0;
      if (!t) continue;
      // touch every byte of every output, whatever its dtype (ASan)
      const auto* bytes = static_cast<const uint8_t*>(t->bytes());
      for (size_t i = 0, n = t->size() * liteexport::dtype_size(t->dtype); i < n; ++i) sink = sink ^ bytes[i];
    }
  } catch (const liteexport::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::unique_ptr<liteexport::Module> module;
  // libFuzzer passes a heap copy of exactly `size` bytes: ASan sees any read past the end
  try {
    module = liteexport::Module::load_from_buffer(data, size);
  } catch (const liteexport::Error&) {
    return 0;
  }
  auto programs = program_inputs(data, size);
  for (const std::string& method : module->method_names()) {
    auto it = programs.find(method);
    if (it != programs.end()) {
      // declared shapes; unknown ranks take each fallback shape in turn
      for (size_t variant = 0; variant < 2; ++variant) {
        std::vector<Tensor> inputs;
        bool ok = true;
        for (const auto& shape : it->second) {
          auto t = zeros(shape ? *shape : fallback_shapes()[variant]);
          if (!t) { ok = false; break; }
          inputs.push_back(std::move(*t));
        }
        if (ok) run(*module, method, inputs);
      }
    }
    // fixed shapes: one and two inputs
    for (const auto& shape : fallback_shapes()) {
      run(*module, method, {*zeros(shape)});
      run(*module, method, {*zeros(shape), *zeros(shape)});
    }
    run(*module, method, {});
  }
  return 0;
}
