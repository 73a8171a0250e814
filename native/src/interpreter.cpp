#include "interpreter.h"

#include <memory>
#include <utility>

#include "errors.h"

namespace liteexport {

namespace {

const char* const kOpcodeNames[NUM_OPCODES] = {
    "OP", "OPN", "LOAD", "MOVE", "STOREN", "STORE", "DROP", "DROPR", "LOADC", "JF", "JMP", "LOOP", "RET",
    "WAIT", "CALL", "GUARD", "TYPECHECK", "FAIL_GUARD", "PROFILE_OP", "TAIL_CALL", "INTERFACE_CALL",
    "GET_ATTR", "SET_ATTR", "LIST_UNPACK", "TUPLE_CONSTRUCT", "NAMED_TUPLE_CONSTRUCT", "LIST_CONSTRUCT",
    "DICT_CONSTRUCT", "CREATE_OBJECT", "ISINSTANCE", "TUPLE_SLICE", "TUPLE_INDEX", "RAISE_EXCEPTION",
    "DICT_INDEX", "UNCHECKED_CAST", "IS", "UN_INITIALIZED", "ISNOT", "FORMAT", "DEVICE", "DTYPE", "DIM", "NOT",
    "TO_LIST", "NUM_TO_TENSOR", "IS_CUDA", "FORK", "WARN", "ENTER", "EXIT", "AWAITABLE"};

// Bounds that keep a malformed bundle from hanging, exhausting memory or the native stack:
// runtime_py would loop forever on `JMP 0` and hit Python's recursion limit instead.
// Lowered modules run a few dozen wrapper instructions per call (the work is in the backend),
// so the step budget is shared by a top-level call and everything it calls.
constexpr long kMaxSteps = 1L << 14;
constexpr int kMaxCallDepth = 64;
constexpr size_t kMaxStack = 1 << 12;   // operand stack values per frame
constexpr int64_t kMaxSlots = 1 << 16;  // attribute slots per object
thread_local int call_depth = 0;
thread_local long steps_left = 0;

// An instruction that cannot do its work (wrong value kinds, a missing key...): wrapped
// into runtime_py's "<OP> x n at pc P of function F failed: reason".
struct Failed {
  std::string reason;
};

struct Frame {
  const Code& code;
  std::vector<IValue> registers;
  std::vector<IValue> stack;
  Runtime& runtime;

  IValue pop() {
    if (stack.empty()) throw Failed{"pop from empty list"};
    IValue v = std::move(stack.back());
    stack.pop_back();
    return v;
  }
  std::vector<IValue> pop_n(size_t n) {
    if (stack.size() < n) throw Failed{"stack holds " + std::to_string(stack.size()) + " values, needs " +
                                       std::to_string(n)};
    std::vector<IValue> out(std::make_move_iterator(stack.end() - static_cast<ptrdiff_t>(n)),
                            std::make_move_iterator(stack.end()));
    stack.resize(stack.size() - n);
    return out;
  }
  // after a push: a loop of LOADs must not grow the stack without bound
  void check_stack() const {
    if (stack.size() > kMaxStack) throw Failed{"operand stack exceeds " + std::to_string(kMaxStack) + " values"};
  }
  IValue& reg(int64_t x) {
    // verify_bundle checked register operands; this guards what it cannot see (e.g. STOREN's start)
    if (x < 0 || static_cast<size_t>(x) >= registers.size()) throw Failed{"register index out of range"};
    return registers[static_cast<size_t>(x)];
  }
  template <typename T>
  const T& item(const std::vector<T>& table, int64_t x, const char* what) {
    if (x < 0 || static_cast<size_t>(x) >= table.size()) throw Failed{std::string(what) + " index out of range"};
    return table[static_cast<size_t>(x)];
  }
};

bool is_instance(const IValue& value, const std::string& type) {
  if (type == "Tensor") return value.is<Array>() || value.is<ByteTensor>();
  if (type == "int") return value.is<int64_t>();
  if (type == "float") return value.is<double>();
  if (type == "bool") return value.is<bool>();
  if (type == "str") return value.is<std::string>();
  if (type == "NoneType") return value.is_none();
  if (type == "Any") return true;
  if (type.rfind("List[", 0) == 0) return value.is<std::shared_ptr<List>>();
  if (type.rfind("Tuple[", 0) == 0) return value.is<std::shared_ptr<Tuple>>();
  if (type.rfind("Dict[", 0) == 0) return value.is<std::shared_ptr<Dict>>();
  auto obj = value.get_if<std::shared_ptr<Object>>();
  return obj != nullptr && (*obj)->type_name == type;
}

// Python `is`: identity for shared values, None is None.
bool same(const IValue& a, const IValue& b) {
  if (a.v.index() != b.v.index()) return false;
  if (a.is_none()) return true;
  if (auto p = a.get_if<std::shared_ptr<Object>>()) return *p == *b.get_if<std::shared_ptr<Object>>();
  if (auto p = a.get_if<std::shared_ptr<List>>()) return *p == *b.get_if<std::shared_ptr<List>>();
  if (auto p = a.get_if<std::shared_ptr<Tuple>>()) return *p == *b.get_if<std::shared_ptr<Tuple>>();
  if (auto p = a.get_if<std::shared_ptr<Dict>>()) return *p == *b.get_if<std::shared_ptr<Dict>>();
  if (auto p = a.get_if<std::shared_ptr<CustomObject>>()) return *p == *b.get_if<std::shared_ptr<CustomObject>>();
  return a.key_equals(b);
}

const std::vector<IValue>& sequence(const IValue& v) {
  if (auto l = v.get_if<std::shared_ptr<List>>()) return **l;
  if (auto t = v.get_if<std::shared_ptr<Tuple>>()) return **t;
  throw Failed{"expected a list or tuple, got " + v.kind()};
}

Object& object(const IValue& v) {
  auto o = v.get_if<std::shared_ptr<Object>>();
  if (o == nullptr) throw Failed{"'" + v.kind() + "' object has no attribute slots"};
  return **o;
}

// Executes one instruction; returns the relative jump (1 = next instruction).
int64_t step(Frame& f, const Instr& ins) {
  const int32_t x = ins.x;
  const uint16_t n = ins.n;
  switch (ins.op) {
    case OP:
    case OPN: {
      const std::string& name = f.item(f.code.operators, x, "operator");
      if (ins.op == OPN) f.stack.emplace_back(int64_t{n});
      if (name != "prim::unchecked_cast")  // a type refinement after isinstance: no run-time work
        throw_execution("operator " + name + " used by " + f.code.qn +
                        " is not implemented in the liteexport native runtime");
      return 1;
    }
    case LOAD: f.stack.push_back(f.reg(x)); return 1;
    case MOVE: f.stack.push_back(std::move(f.reg(x))); f.reg(x) = IValue(); return 1;
    case STOREN:
      for (int i = n - 1; i >= 0; --i) f.reg(int64_t{x} + i) = f.pop();
      return 1;
    case STORE: f.reg(x) = f.pop(); return 1;
    case DROP: f.pop(); return 1;
    case DROPR: f.reg(x) = IValue(); return 1;
    case LOADC: f.stack.push_back(f.item(f.code.constants, x, "constant")); return 1;
    case JF: return f.pop().truthy() ? 1 : x;
    case JMP: return x;
    case INTERFACE_CALL: {
      auto name = f.item(f.code.constants, x, "constant").get_if<std::string>();
      if (name == nullptr) throw Failed{"method name constant is not a string"};
      if (n == 0) throw Failed{"INTERFACE_CALL needs the object as its first input"};
      std::vector<IValue> args = f.pop_n(n);
      IValue obj = std::move(args.front());
      args.erase(args.begin());
      f.stack.push_back(f.runtime.call_method(obj, *name, args));
      return 1;
    }
    case GET_ATTR: {
      Object& o = object(f.pop());
      if (x < 0 || static_cast<size_t>(x) >= o.slots.size())
        throw Failed{"object of type " + o.type_name + " has no attribute slot " + std::to_string(x)};
      f.stack.push_back(o.slots[static_cast<size_t>(x)]);
      return 1;
    }
    case SET_ATTR: {
      IValue value = f.pop();
      Object& o = object(f.pop());
      if (x < 0) throw Failed{"negative attribute slot"};
      if (x >= kMaxSlots) throw Failed{"attribute slot " + std::to_string(x) + " out of range (at most " +
                                       std::to_string(kMaxSlots) + " slots)"};
      // like c10::ivalue::Object::setSlot: objects rebuilt by __setstate__ grow their slots
      if (static_cast<size_t>(x) >= o.slots.size()) o.slots.resize(static_cast<size_t>(x) + 1);
      o.slots[static_cast<size_t>(x)] = std::move(value);
      return 1;
    }
    case LIST_UNPACK: {
      IValue v = f.pop();
      const auto& items = sequence(v);
      if (static_cast<int64_t>(items.size()) != x)
        throw_execution("expected a list of " + std::to_string(x) + " elements to unpack, got " +
                        std::to_string(items.size()));
      if (f.stack.size() + items.size() > kMaxStack)
        throw Failed{"operand stack exceeds " + std::to_string(kMaxStack) + " values"};
      f.stack.insert(f.stack.end(), items.begin(), items.end());
      return 1;
    }
    case TUPLE_CONSTRUCT:
      if (x < 0) throw Failed{"negative tuple size"};
      f.stack.push_back(std::make_shared<Tuple>(f.pop_n(static_cast<size_t>(x))));
      return 1;
    case LIST_CONSTRUCT: f.stack.push_back(std::make_shared<List>(f.pop_n(n))); return 1;
    case DICT_CONSTRUCT: {
      std::vector<IValue> items = f.pop_n(size_t{n});  // N counts keys and values, as torch's dictConstruct
      auto d = std::make_shared<Dict>();
      for (size_t i = 0; i < items.size(); i += 2) {
        if (!items[i].is_hashable()) throw Failed{"unhashable type: '" + items[i].kind() + "'"};
        d->emplace_back(std::move(items[i]), std::move(items[i + 1]));
      }
      f.stack.push_back(std::move(d));
      return 1;
    }
    case CREATE_OBJECT: f.stack.push_back(f.runtime.create_object(f.item(f.code.types, x, "type"))); return 1;
    case ISINSTANCE: {
      IValue v = f.pop();
      bool any = false;
      for (int64_t i = x; i < int64_t{x} + n; ++i) any = any || is_instance(v, f.item(f.code.types, i, "type"));
      f.stack.emplace_back(any);
      return 1;
    }
    case TUPLE_INDEX: {
      IValue index = f.pop();
      IValue tuple = f.pop();
      auto i = index.get_if<int64_t>();
      if (i == nullptr) throw Failed{"tuple indices must be integers, not " + index.kind()};
      const auto& items = sequence(tuple);
      int64_t k = *i < 0 ? *i + static_cast<int64_t>(items.size()) : *i;
      if (k < 0 || k >= static_cast<int64_t>(items.size())) throw Failed{"tuple index out of range"};
      f.stack.push_back(items[static_cast<size_t>(k)]);
      return 1;
    }
    case DICT_INDEX: {
      IValue key = f.pop();
      IValue dict = f.pop();
      auto d = dict.get_if<std::shared_ptr<Dict>>();
      if (d == nullptr) throw Failed{"'" + dict.kind() + "' object is not subscriptable"};
      for (const auto& [k, v] : **d)
        if (k.key_equals(key)) {
          f.stack.push_back(v);
          return 1;
        }
      throw Failed{key.is<std::string>() ? "'" + key.str() + "'" : key.str()};  // Python's KeyError text
    }
    case RAISE_EXCEPTION: {
      IValue class_name = f.pop();
      IValue message = f.pop();
      bool named = !class_name.is_none() && !(class_name.is<std::string>() && class_name.str().empty());
      throw_execution(named ? class_name.str() + ": " + message.str() : message.str());
    }
    case UN_INITIALIZED: f.stack.emplace_back(Uninitialized{}); return 1;
    case IS:
    case ISNOT: {
      IValue b = f.pop();
      IValue a = f.pop();
      f.stack.emplace_back(same(a, b) == (ins.op == IS));
      return 1;
    }
    case NOT: f.stack.emplace_back(!f.pop().truthy()); return 1;
    default:
      throw Failed{"unsupported instruction"};  // unreachable: run_code filters unknown opcodes
  }
}

struct DepthGuard {
  DepthGuard() {
    if (call_depth == 0) steps_left = kMaxSteps;  // a top-level call: a fresh budget
    if (++call_depth > kMaxCallDepth) {
      --call_depth;
      throw_execution("method calls nested deeper than " + std::to_string(kMaxCallDepth));
    }
  }
  ~DepthGuard() { --call_depth; }
};

}  // namespace

std::string opcode_name(int op) {
  return op >= 0 && op < NUM_OPCODES ? kOpcodeNames[op] : "opcode " + std::to_string(op);
}

IValue run_code(const Code& code, std::vector<IValue> args, Runtime& runtime) {
  DepthGuard depth;
  Frame f{code, std::vector<IValue>(static_cast<size_t>(code.register_size) + 1), std::move(args), runtime};
  const auto& ins = code.instructions;
  int64_t pc = 0;
  while (pc >= 0 && pc < static_cast<int64_t>(ins.size())) {
    const Instr& i = ins[static_cast<size_t>(pc)];
    if (--steps_left < 0)
      throw_execution("function " + code.qn + " ran more than " + std::to_string(kMaxSteps) +
                      " instructions (with the methods it called)");
    if (i.op == RET) {
      if (f.stack.empty()) throw_execution("RET at pc " + std::to_string(pc) + " of function " + code.qn +
                                           " failed: pop from empty list");
      return f.pop();
    }
    bool known = (i.op >= OP && i.op <= NOT && i.op != LOOP && i.op != WAIT && i.op != CALL && i.op != GUARD &&
                  i.op != TYPECHECK && i.op != FAIL_GUARD && i.op != PROFILE_OP && i.op != TAIL_CALL &&
                  i.op != NAMED_TUPLE_CONSTRUCT && i.op != TUPLE_SLICE && i.op != UNCHECKED_CAST &&
                  i.op != FORMAT && i.op != DEVICE && i.op != DTYPE && i.op != DIM);
    if (!known)
      throw_format("unsupported instruction " + opcode_name(i.op) + " at pc " + std::to_string(pc) +
                   " of function " + code.qn);
    try {
      pc += step(f, i);
      f.check_stack();
    } catch (const Failed& failed) {
      throw_execution(opcode_name(i.op) + " " + std::to_string(i.x) + " " + std::to_string(i.n) + " at pc " +
                      std::to_string(pc) + " of function " + code.qn + " failed: " + failed.reason);
    }
  }
  throw_format("function " + code.qn + " ran past its last instruction without RET");
}

}  // namespace liteexport
