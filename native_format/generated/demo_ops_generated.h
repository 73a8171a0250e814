// GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_ops.toml
// The demo instruction set: the opcode enum (numbered as schema/demo_program.fbs's OpCode)
// and each opcode's operands, for the program decoder and the kernel tables of every executor.
#pragma once

#include <cstddef>
#include <cstdint>

namespace liteexport::demo_ops {

enum class Op : uint16_t {
  ADD = 0,  // a + alpha * b; one input: x OP scalar
  SUB = 1,  // a - alpha * b; reverse: b - alpha * a (rsub)
  MUL = 2,  // a * b
  DIV = 3,  // a / b, true division
  NEG = 4,  // -x
  RELU = 5,  // max(x, 0)
  SIGMOID = 6,  // 1 / (1 + exp(-x))
  TANH = 7,  // tanh(x)
  GELU = 8,  // erf or tanh GELU
  SOFTMAX = 9,  // stable softmax along an axis
  LOG_SOFTMAX = 10,  // stable log-softmax along an axis
  MATMUL = 11,  // torch.matmul (1-D and batched)
  LINEAR = 12,  // x @ W.T [+ b], then the fused activation
  CONV2D = 13,  // x, W[, b]; CHW or NCHW
  CHANNEL_AFFINE = 14,  // inference batch norm: x * scale + shift along dim 1
  LAYER_NORM = 15,  // x[, weight[, bias]]
  MAX_POOL2D = 16,  // max over windows
  AVG_POOL2D = 17,  // mean over windows
  ADAPTIVE_AVG_POOL2D = 18,  // mean pooling to an output size (2 dims)
  TRANSPOSE = 19,  // full permutation of the axes
  RESHAPE = 20,  // to a shape that may hold one -1
  FLATTEN = 21,  // merge dims start_dim..end_dim
  CAT = 22,  // concatenate the inputs along an axis
  CLAMP = 23,  // min(max(x, min), max), either bound optional; NaN stays NaN (clamp, hardtanh, relu6)
  HARDSIGMOID = 24,  // min(max(x + 3, 0), 6) / 6
  HARDSWISH = 25,  // x * min(max(x + 3, 0), 6) / 6
  SILU = 26,  // x / (1 + exp(-x))
  MEAN = 27,  // mean over axes (all when none), keepdim
  SUM = 28,  // sum over axes (all when none), keepdim
  SLICE = 29,  // start:end:step (step > 0) on one axis, bounds clamped as in Python
  EXPAND = 30,  // broadcast to a shape; -1 keeps a size, new leading dims allowed
  LOG = 31,  // natural log(x)
  SQRT = 32,  // sqrt(x)
  RSQRT = 33,  // 1 / sqrt(x)
  ABS = 34,  // |x|
  POW = 35,  // a ** b; one input: x ** scalar, reverse: scalar ** x
  EXP = 36,  // e ** x
};

constexpr size_t kNumOps = 37;
constexpr size_t kNumAttributeTypes = 13;  // union tags 1..kNumAttributeTypes
constexpr size_t kAnyNumber = SIZE_MAX;

struct OpInfo {
  const char* name;       // "LOG_SOFTMAX": how messages name the op
  size_t min_inputs;
  size_t max_inputs;      // kAnyNumber: any number
  uint8_t attrs;          // the Attributes union tag it carries, 0: none
  bool attrs_optional;    // every attribute field has a default: the instruction may omit them
  bool may_alias_input;   // the result may be a view of input 0
};

// indexed by opcode
constexpr OpInfo kOps[kNumOps] = {
    {"ADD", 1, 2, 1, true, false},
    {"SUB", 1, 2, 1, true, false},
    {"MUL", 1, 2, 1, true, false},
    {"DIV", 1, 2, 1, true, false},
    {"NEG", 1, 1, 0, false, false},
    {"RELU", 1, 1, 0, false, false},
    {"SIGMOID", 1, 1, 0, false, false},
    {"TANH", 1, 1, 0, false, false},
    {"GELU", 1, 1, 2, true, false},
    {"SOFTMAX", 1, 1, 3, false, false},
    {"LOG_SOFTMAX", 1, 1, 3, false, false},
    {"MATMUL", 2, 2, 0, false, false},
    {"LINEAR", 2, 3, 4, true, false},
    {"CONV2D", 2, 3, 5, true, false},
    {"CHANNEL_AFFINE", 3, 3, 0, false, false},
    {"LAYER_NORM", 1, 3, 6, false, false},
    {"MAX_POOL2D", 1, 1, 7, false, false},
    {"AVG_POOL2D", 1, 1, 7, false, false},
    {"ADAPTIVE_AVG_POOL2D", 1, 1, 8, false, false},
    {"TRANSPOSE", 1, 1, 9, false, true},
    {"RESHAPE", 1, 1, 8, false, true},
    {"FLATTEN", 1, 1, 10, false, true},
    {"CAT", 1, kAnyNumber, 3, false, false},
    {"CLAMP", 1, 1, 11, false, false},
    {"HARDSIGMOID", 1, 1, 0, false, false},
    {"HARDSWISH", 1, 1, 0, false, false},
    {"SILU", 1, 1, 0, false, false},
    {"MEAN", 1, 1, 12, false, false},
    {"SUM", 1, 1, 12, false, false},
    {"SLICE", 1, 1, 13, false, true},
    {"EXPAND", 1, 1, 8, false, false},
    {"LOG", 1, 1, 0, false, false},
    {"SQRT", 1, 1, 0, false, false},
    {"RSQRT", 1, 1, 0, false, false},
    {"ABS", 1, 1, 0, false, false},
    {"POW", 1, 2, 1, true, false},
    {"EXP", 1, 1, 0, false, false},
};

// runtime_py's attribute class names, indexed by union tag ("none" for 0)
constexpr const char* kAttributeNames[kNumAttributeTypes + 1] = {"none", "BinaryAttrs", "GeluAttrs", "AxisAttrs", "FusedAttrs", "Conv2dAttrs", "LayerNormAttrs", "Pool2dAttrs", "ShapeAttrs", "PermuteAttrs", "FlattenAttrs", "ClampAttrs", "ReduceAttrs", "SliceAttrs"};

// nullptr for a number outside the instruction set
inline const OpInfo* op_info(uint16_t op) { return op < kNumOps ? &kOps[op] : nullptr; }

}  // namespace liteexport::demo_ops
