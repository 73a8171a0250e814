#include "bundle_verify.h"

#include <algorithm>
#include <cstring>

#include "errors.h"
#include "narrow_weights.h"

namespace liteexport {

namespace {

using flatbuffers::Vector;

template <typename T>
size_t len(const Vector<T>* v) {
  return v == nullptr ? 0 : v->size();
}

constexpr int32_t kMaxRegisters = 1 << 16;
// Values nested deeper than this are refused: releasing them would recurse that deep.
constexpr uint32_t kMaxNesting = 1000;

void check_index(int64_t value, size_t limit, const std::string& what, const std::string& where) {
  if (value >= 0 && static_cast<uint64_t>(value) < limit) return;
  if (limit == 0) throw_format(what + " " + std::to_string(value) + " refers into an empty table", where);
  throw_format(what + " " + std::to_string(value) + " out of range (0.." + std::to_string(limit - 1) + ")", where);
}


void check_function(const ser::Function* f, const ser::Module* m, const std::string& where) {
  size_t n_ivalues = len(m->ivalues());
  for (size_t i = 0; i < len(f->constants()); ++i)
    check_index(f->constants()->Get(i), n_ivalues, "constant ivalue index", where + ".constants[" + std::to_string(i) + "]");
  if (f->register_size() < 0) throw_format("negative register_size " + std::to_string(f->register_size()), where);
  // each register is allocated per call: bound it like the interpreter's operand stack
  if (f->register_size() > kMaxRegisters)
    throw_format("register_size " + std::to_string(f->register_size()) + " exceeds the limit of " +
                 std::to_string(kMaxRegisters), where);
  size_t n_ins = len(f->instructions());
  if (f->debug_info() != nullptr && len(f->debug_info()->debug_handle()) != n_ins)
    throw_format(std::to_string(len(f->debug_info()->debug_handle())) + " debug handles for " +
                 std::to_string(n_ins) + " instructions", where);
  size_t regs = static_cast<size_t>(f->register_size()) + 1;
  for (size_t pc = 0; pc < n_ins; ++pc) {
    auto ins = f->instructions()->Get(pc);
    std::string at = where + ".instructions[" + std::to_string(pc) + "]";
    int64_t x = ins->x(), n = ins->n();
    switch (ins->op()) {
      case 0: case 1: check_index(x, len(f->operators()), "operator index", at); break;  // OP, OPN
      case 8: case 20: check_index(x, len(f->constants()), "constant index", at); break;  // LOADC, INTERFACE_CALL
      case 2: case 3: case 5: case 7: check_index(x, regs, "register", at); break;  // LOAD MOVE STORE DROPR
      case 4: check_index(x + n - 1, regs, "register", at); break;                 // STOREN
      case 9: case 10: check_index(static_cast<int64_t>(pc) + x, n_ins, "jump target", at); break;  // JF JMP
      case 28: case 26: case 27: check_index(x, len(f->type_annotations()), "type index", at); break;
      case 29: check_index(x + (n > 1 ? n : 1) - 1, len(f->type_annotations()), "type index", at); break;
      default: break;
    }
  }
}

void check_acyclic(const ser::Module* m) {
  // iterative DFS: 0 unvisited, 1 on the current path, 2 done
  size_t n = len(m->ivalues());
  std::vector<uint8_t> state(n, 0);
  std::vector<uint32_t> height(n, 0);  // longest chain of children below a finished value
  struct Item {
    uint32_t node;
    std::vector<uint32_t> children;
    size_t next;
  };
  for (uint32_t root = 0; root < n; ++root) {
    if (state[root]) continue;
    std::vector<Item> stack;
    stack.push_back({root, ivalue_children(m->ivalues()->Get(root)), 0});
    state[root] = 1;
    while (!stack.empty()) {
      Item& top = stack.back();
      if (top.next == top.children.size()) {
        state[top.node] = 2;
        uint32_t h = 0;
        for (uint32_t child : top.children) h = std::max(h, height[child] + 1);
        if (h > kMaxNesting)
          throw_format("ivalues nested deeper than " + std::to_string(kMaxNesting), "Module.ivalues[" +
                       std::to_string(top.node) + "]");
        height[top.node] = h;
        stack.pop_back();
        continue;
      }
      uint32_t child = top.children[top.next++];
      if (state[child] == 1)
        throw_format("ivalue " + std::to_string(child) + " contains itself",
                     "Module.ivalues[" + std::to_string(top.node) + "]");
      if (state[child] == 0) {
        state[child] = 1;
        stack.push_back({child, ivalue_children(m->ivalues()->Get(child)), 0});
      }
    }
  }
}

void check_indexes(const ser::Module* m) {
  if (m->bytecode_version() != kBytecodeVersion)
    throw_format("unsupported bytecode version " + std::to_string(m->bytecode_version()) +
                 ": flatbuffer bundles must be version " + std::to_string(kBytecodeVersion), "Module.bytecode_version");
  size_t n = len(m->ivalues());
  if (n == 0) throw_format("the module has no ivalues", "Module.ivalues");
  check_index(m->state_obj(), n, "state_obj ivalue index", "Module.state_obj");
  if (m->ivalues()->Get(m->state_obj())->val_type() != ser::IValueUnion::Object)
    throw_format("state_obj is not an Object", "Module.state_obj");
  for (size_t i = 0; i < len(m->methods()); ++i) {
    std::string where = "Module.methods[" + std::to_string(i) + "]";
    check_index(m->methods()->Get(i), n, "method ivalue index", where);
    if (m->ivalues()->Get(m->methods()->Get(i))->val_type() != ser::IValueUnion::Function)
      throw_format("method " + std::to_string(i) + " is not a Function", where);
  }
  size_t n_types = len(m->object_types());
  for (size_t i = 0; i < n; ++i) {
    std::string where = "Module.ivalues[" + std::to_string(i) + "]";
    const ser::IValue* value = m->ivalues()->Get(i);
    if (value->val_type() != ser::IValueUnion::NONE && value->val() == nullptr)
      throw_format("IValue with union tag " + std::to_string(static_cast<int>(value->val_type())) + " has no value",
                   where);
    if (static_cast<int>(value->val_type()) > static_cast<int>(ser::IValueUnion::MAX))
      throw_format("unknown IValue union tag " + std::to_string(static_cast<int>(value->val_type())), where);
    for (uint32_t child : ivalue_children(value)) check_index(child, n, "ivalue index", where);
    switch (value->val_type()) {
      case ser::IValueUnion::TensorMetadata: check_tensor(value->val_as_TensorMetadata(), m, where); break;
      case ser::IValueUnion::Function: {
        auto f = value->val_as_Function();
        check_function(f, m, where);
        check_index(f->class_type(), n_types > 0 ? n_types : 1, "class type", where);
        break;
      }
      case ser::IValueUnion::Object: {
        auto o = value->val_as_Object();
        check_index(o->type_index(), n_types, "object type index", where);
        if (m->object_types()->Get(o->type_index())->type() == ser::TypeType::CLASS_WITH_SETSTATE &&
            m->ivalues()->Get(o->setstate_func())->val_type() != ser::IValueUnion::Function)
          throw_format("setstate_func is not a Function", where);
        break;
      }
      case ser::IValueUnion::Dict: {
        auto d = value->val_as_Dict();
        if (len(d->keys()) != len(d->values()))
          throw_format("dict has " + std::to_string(len(d->keys())) + " keys but " + std::to_string(len(d->values())) +
                       " values", where);
        break;
      }
      default: break;
    }
  }
  check_acyclic(m);
}

}  // namespace

void check_tensor_extent(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where) {
  check_index(t->storage_location_index(), len(m->storage_data()), "storage index", where);
  size_t itemsize = scalar_type_size(t->scalar_type());
  if (itemsize == 0) throw_format("unsupported tensor scalar type " + std::to_string(t->scalar_type()), where);
  size_t nsizes = len(t->sizes()), nstrides = len(t->strides());
  if (nsizes != nstrides)
    throw_format("tensor has " + std::to_string(nsizes) + " sizes but " + std::to_string(nstrides) + " strides",
                 where);
  bool negative = t->storage_offset() < 0, empty = false;
  for (size_t i = 0; i < nsizes; ++i) {
    negative = negative || t->sizes()->Get(i) < 0 || t->strides()->Get(i) < 0;
    empty = empty || t->sizes()->Get(i) == 0;
  }
  if (negative) throw_format("tensor has a negative size, stride or storage offset", where);
  auto storage = m->storage_data()->Get(t->storage_location_index());
  int64_t elems = static_cast<int64_t>(len(storage->data()) / itemsize);
  if (empty) return;
  // no more elements than the storage holds (a zero stride could otherwise make a tiny storage
  // into a huge tensor that the loader gathers into a copy): loading stays within the file size
  int64_t count = 1;
  for (size_t i = 0; i < nsizes; ++i)
    if (__builtin_mul_overflow(count, int64_t{t->sizes()->Get(i)}, &count)) count = INT64_MAX;
  if (count > elems)
    throw_format("tensor has " + (count == INT64_MAX ? std::string("too many") : std::to_string(count)) +
                 " elements, more than its storage's " + std::to_string(elems), where);
  // sizes/strides are int32, so each term fits int64; the sum is checked for overflow
  int64_t last = t->storage_offset();
  for (size_t i = 0; i < nsizes; ++i) {
    int64_t term = int64_t{t->sizes()->Get(i) - 1} * t->strides()->Get(i);
    if (__builtin_add_overflow(last, term, &last)) last = INT64_MAX;
  }
  if (last >= elems)
    throw_format("tensor reaches element " + std::to_string(last) + " of a storage of " + std::to_string(elems) +
                 " elements", where);
}

void check_tensor(const ser::TensorMetadata* t, const ser::Module* m, const std::string& where) {
  check_tensor_extent(t, m, where);
  if (t->quantized_schema() != nullptr) check_quantized(t, m, where);
}

size_t scalar_type_size(int scalar_type) {
  switch (scalar_type) {
    case 0: case 1: case 11: return 1;  // Byte, Char, Bool
    case 12: case 13: return 1;         // QInt8, QUInt8 (their integers)
    case 14: return 4;                  // QInt32
    case 2: case 5: return 2;           // Short, Half
    case 3: case 6: return 4;           // Int, Float
    case 4: case 7: return 8;           // Long, Double
    default: return 0;
  }
}

std::vector<uint32_t> ivalue_children(const ser::IValue* value) {
  std::vector<uint32_t> out;
  auto add = [&out](const Vector<uint32_t>* v) {
    if (v != nullptr) out.insert(out.end(), v->begin(), v->end());
  };
  switch (value->val_type()) {
    case ser::IValueUnion::List: add(value->val_as_List()->items()); break;
    case ser::IValueUnion::Tuple: add(value->val_as_Tuple()->items()); break;
    case ser::IValueUnion::Dict: add(value->val_as_Dict()->keys()); add(value->val_as_Dict()->values()); break;
    case ser::IValueUnion::Object: {
      auto o = value->val_as_Object();
      out.push_back(o->state());
      add(o->attrs());
      // the loader builds __setstate__ (and its constants) before the object: an edge too
      out.push_back(o->setstate_func());
      break;
    }
    case ser::IValueUnion::EnumValue: out.push_back(value->val_as_EnumValue()->value()); break;
    case ser::IValueUnion::Function: add(value->val_as_Function()->constants()); break;
    default: break;
  }
  return out;
}

const ser::Module* verify_bundle(const uint8_t* data, size_t size, const std::string& name) {
  if (size < 8) throw_format(name + " is too short (" + std::to_string(size) + " bytes) to be a PTMF bundle");
  if (std::memcmp(data, "PK\x03\x04", 4) == 0)
    throw_format(name + " is a zip-format (pickle) lite-interpreter model; the native runtime reads the "
                        "flatbuffer format (PTMF, bytecode version 9)");
  if (std::memcmp(data + 4, "PTMF", 4) != 0) {
    std::string got;
    for (int i = 4; i < 8; ++i) {
      char buf[8];
      unsigned char c = data[i];
      if (c >= 32 && c < 127 && c != '\'' && c != '\\') got += static_cast<char>(c);
      else { std::snprintf(buf, sizeof buf, "\\x%02x", c); got += buf; }
    }
    throw_format(name + " is not a PTMF bundle: file identifier is b'" + got + "', expected b'PTMF'", "bytes 4..7");
  }
  flatbuffers::Verifier::Options options;
  options.max_tables = 10'000'000;  // a bundle has a few tables per ivalue; weights are vectors
  flatbuffers::Verifier verifier(data, size, options);
  if (!ser::VerifyModuleBuffer(verifier))
    throw_format("malformed PTMF bundle: flatbuffers verification failed (an offset, length or union tag "
                 "points outside the buffer or is misaligned)");
  const ser::Module* m = ser::GetModule(data);
  // the root's vectors of indexes are checked here; the object_types' own validity is the verifier's
  if (m->object_types() != nullptr)
    for (size_t i = 0; i < m->object_types()->size(); ++i)
      if (m->object_types()->Get(i) == nullptr) throw_format("null object type", "Module.object_types");
  check_indexes(m);
  return m;
}

}  // namespace liteexport
