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
  EMBEDDING = 37,  // rows of weight [N, D] at indices (any shape) -> [*indices.shape, D]; an index outside [0, N) is an error
  CAST = 38,  // x converted to another dtype as torch's Tensor.to (float -> int truncates toward zero; nonzero -> True)
  GATHER = 39,  // torch.gather: out[i][j] = x[index[i][j]][j] along axis; index may be smaller than x off the axis; negative or out-of-range indices are errors
  INDEX_SELECT = 40,  // torch.index_select: the entries at a 1-D index along axis; out-of-range indices are errors
  EQ = 41,  // a == b (broadcast), or a == scalar
  NE = 42,  // a != b
  LT = 43,  // a < b; reverse: b < a
  LE = 44,  // a <= b; reverse: b <= a
  GT = 45,  // a > b; reverse: b > a
  GE = 46,  // a >= b; reverse: b >= a
  BITWISE_NOT = 47,  // ~x (logical not for bool)
  BITWISE_AND = 48,  // a & b, broadcast (logical and for bool)
  BITWISE_OR = 49,  // a | b, broadcast (logical or for bool)
  WHERE = 50,  // a where condition else b, all three broadcast (masked_fill too)
  CUMSUM = 51,  // running sum along an axis; bool and int32 sum in int64, as torch
  SIN = 52,  // sin(x)
  COS = 53,  // cos(x)
  ARANGE_LIKE = 54,  // torch.arange(start, S + end_offset) in int64, where S is the size of the reference operand's axis (a sequence length known only at run time); the reference's values are not read
  RESIZE2D = 55,  // nearest or bilinear resizing of an NCHW tensor's last two dims to an output size, as torch's upsample_nearest2d / upsample_bilinear2d
  TRIU = 56,  // torch.triu: the elements on and above the diagonal of the last two dims, zero (False) elsewhere; at least 2 dims
  TRIL = 57,  // torch.tril: the elements on and below the diagonal of the last two dims, zero (False) elsewhere; at least 2 dims
  ARGMAX = 58,  // torch.argmax along an axis: the first index of the largest value (a NaN is the largest), in int64
  TOPK = 59,  // torch.topk's indices (sorted=True) in int64, the input's shape with k along the axis; the values are a GATHER of them; k larger than the axis is an error
  FLOOR_DIV = 60,  // floor(a / b) as torch.floor_divide and div(rounding_mode='floor'); integer division by zero is an error
  TRUNC_DIV = 61,  // a / b rounded toward zero, as torch.div(rounding_mode='trunc'); integer division by zero is an error
  REMAINDER = 62,  // a - floor(a / b) * b, the sign of b, as torch.remainder and Python's %; integer division by zero is an error
  FAKE_QUANTIZE = 63,  // x rounded to a per-tensor int8/uint8 grid and back to float32 (quantize then dequantize): the activations of quantized models
  ARGMIN = 64,  // torch.argmin along an axis: the first index of the smallest value (a NaN counts as the smallest, as torch's), in int64
  FULL = 65,  // torch.full(sizes, value): the one-element value operand repeated over sizes that may be the reference operand's sizes known only at run time (a causal mask of S x S); the reference's values are not read
  LOG1P = 66,  // log(1 + x), exact near 0; -inf at -1 and NaN below
  EXPM1 = 67,  // e ** x - 1, exact near 0
  FLOOR = 68,  // the largest whole number <= x
  CEIL = 69,  // the smallest whole number >= x
  TRUNC = 70,  // x rounded toward zero
  ROUND = 71,  // x rounded to the nearest whole number, halves to even (torch.round without decimals)
  SIGN = 72,  // -1, 0 or 1 by the sign of x; 0 for -0 and NaN, as torch
  ERF = 73,  // the error function erf(x)
  INDEX_COPY = 74,  // writes source's entries into the state operand in place, at the 1-D index's positions along axis (torch.index_copy_, a KV cache's write at cache_position); the result is that state; a position outside [0, size) is the caller's error and nothing is written
  STATE_WRITE = 75,  // sets the whole state operand to value (of its shape and dtype) in place (torch's copy_ into a buffer); the result is that state
  ATTENTION = 76,  // softmax(q k^T * scale + mask) v of q [B, H, S, D] and k, v [B, Hkv, L, D] with H a multiple of Hkv (grouped-query attention: head h reads kv head h // (H / Hkv)); the mask (True = attend, or added) broadcasts to [B, H, S, L]; key positions every query masks out are skipped (a decode step at position p of an L-position cache reads p + 1 keys); a query whose keys are all masked gives zeros
};

// Element types of compiled values ([dtypes]), numbered as c10::ScalarType.
enum class DType : uint8_t {
  Int32 = 3,
  Int64 = 4,
  Float32 = 6,
  Bool = 11,
};

// "float32", ..., or nullptr for a number that is not a compiled dtype
inline const char* dtype_name(int code) {
  switch (code) {
    case 3: return "int32";
    case 4: return "int64";
    case 6: return "float32";
    case 11: return "bool";
    default: return nullptr;
  }
}

// How an instruction's result dtype follows from its operands' (the spec's `result`).
enum class ResultRule : uint8_t {
  kSame,      // T: the dtype the shared operands have
  kFixed,     // OpInfo::result_dtype
  kAttr,      // the instruction's Cast.dtype
  kWidenInt,  // T, but bool and int32 become int64
};

constexpr size_t kMaxNamedOperands = 4;

constexpr size_t kNumOps = 77;
constexpr size_t kNumAttributeTypes = 22;  // union tags 1..kNumAttributeTypes
constexpr size_t kAnyNumber = SIZE_MAX;

struct OpInfo {
  const char* name;       // "LOG_SOFTMAX": how messages name the op
  size_t min_inputs;
  size_t max_inputs;      // kAnyNumber: any number
  uint8_t attrs;          // the Attributes union tag it carries, 0: none
  bool attrs_optional;    // every attribute field has a default: the instruction may omit them
  bool may_alias_input;   // the result may be a view of input 0
  ResultRule result;
  uint8_t result_dtype;   // kFixed: the DType
  size_t num_named;       // operands named in the spec; operand i >= num_named is the last named one
  uint16_t operand_dtypes[kMaxNamedOperands];  // per named operand: allowed dtypes, bit (1 << DType)
  bool shared[kMaxNamedOperands];              // per named operand: it has the op's dtype T
};

// indexed by opcode
constexpr OpInfo kOps[kNumOps] = {
    {"ADD", 1, 2, 1, true, false, ResultRule::kSame, 0, 2, {0x0058, 0x0058}, {true, true}},
    {"SUB", 1, 2, 1, true, false, ResultRule::kSame, 0, 2, {0x0058, 0x0058}, {true, true}},
    {"MUL", 1, 2, 1, true, false, ResultRule::kSame, 0, 2, {0x0058, 0x0058}, {true, true}},
    {"DIV", 1, 2, 1, true, false, ResultRule::kSame, 0, 2, {0x0040, 0x0040}, {true, true}},
    {"NEG", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0058}, {true}},
    {"RELU", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"SIGMOID", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"TANH", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"GELU", 1, 1, 2, true, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"SOFTMAX", 1, 1, 3, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"LOG_SOFTMAX", 1, 1, 3, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"MATMUL", 2, 2, 0, false, false, ResultRule::kSame, 0, 2, {0x0040, 0x0040}, {true, true}},
    {"LINEAR", 2, 3, 4, true, false, ResultRule::kSame, 0, 3, {0x0040, 0x0040, 0x0040}, {true, true, true}},
    {"CONV2D", 2, 3, 5, true, false, ResultRule::kSame, 0, 3, {0x0040, 0x0040, 0x0040}, {true, true, true}},
    {"CHANNEL_AFFINE", 3, 3, 0, false, false, ResultRule::kSame, 0, 3, {0x0040, 0x0040, 0x0040}, {true, true, true}},
    {"LAYER_NORM", 1, 3, 6, false, false, ResultRule::kSame, 0, 3, {0x0040, 0x0040, 0x0040}, {true, true, true}},
    {"MAX_POOL2D", 1, 1, 7, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"AVG_POOL2D", 1, 1, 7, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"ADAPTIVE_AVG_POOL2D", 1, 1, 8, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"TRANSPOSE", 1, 1, 9, false, true, ResultRule::kSame, 0, 1, {0x0858}, {true}},
    {"RESHAPE", 1, 1, 8, false, true, ResultRule::kSame, 0, 1, {0x0858}, {true}},
    {"FLATTEN", 1, 1, 10, false, true, ResultRule::kSame, 0, 1, {0x0858}, {true}},
    {"CAT", 1, kAnyNumber, 3, false, false, ResultRule::kSame, 0, 1, {0x0858}, {true}},
    {"CLAMP", 1, 1, 11, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"HARDSIGMOID", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"HARDSWISH", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"SILU", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"MEAN", 1, 1, 12, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"SUM", 1, 1, 12, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"SLICE", 1, 1, 13, false, true, ResultRule::kSame, 0, 1, {0x0858}, {true}},
    {"EXPAND", 1, 1, 8, false, false, ResultRule::kSame, 0, 1, {0x0858}, {true}},
    {"LOG", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"SQRT", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"RSQRT", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"ABS", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"POW", 1, 2, 1, true, false, ResultRule::kSame, 0, 2, {0x0040, 0x0040}, {true, true}},
    {"EXP", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"EMBEDDING", 2, 2, 0, false, false, ResultRule::kSame, 0, 2, {0x0040, 0x0018}, {true, false}},
    {"CAST", 1, 1, 14, false, false, ResultRule::kAttr, 0, 1, {0x0858}, {true}},
    {"GATHER", 2, 2, 3, false, false, ResultRule::kSame, 0, 2, {0x0858, 0x0018}, {true, false}},
    {"INDEX_SELECT", 2, 2, 3, false, false, ResultRule::kSame, 0, 2, {0x0858, 0x0018}, {true, false}},
    {"EQ", 1, 2, 1, true, false, ResultRule::kFixed, 11, 2, {0x0858, 0x0858}, {true, true}},
    {"NE", 1, 2, 1, true, false, ResultRule::kFixed, 11, 2, {0x0858, 0x0858}, {true, true}},
    {"LT", 1, 2, 1, true, false, ResultRule::kFixed, 11, 2, {0x0858, 0x0858}, {true, true}},
    {"LE", 1, 2, 1, true, false, ResultRule::kFixed, 11, 2, {0x0858, 0x0858}, {true, true}},
    {"GT", 1, 2, 1, true, false, ResultRule::kFixed, 11, 2, {0x0858, 0x0858}, {true, true}},
    {"GE", 1, 2, 1, true, false, ResultRule::kFixed, 11, 2, {0x0858, 0x0858}, {true, true}},
    {"BITWISE_NOT", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0818}, {true}},
    {"BITWISE_AND", 2, 2, 0, false, false, ResultRule::kSame, 0, 2, {0x0818, 0x0818}, {true, true}},
    {"BITWISE_OR", 2, 2, 0, false, false, ResultRule::kSame, 0, 2, {0x0818, 0x0818}, {true, true}},
    {"WHERE", 3, 3, 0, false, false, ResultRule::kSame, 0, 3, {0x0800, 0x0858, 0x0858}, {false, true, true}},
    {"CUMSUM", 1, 1, 3, false, false, ResultRule::kWidenInt, 0, 1, {0x0858}, {true}},
    {"SIN", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"COS", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"ARANGE_LIKE", 1, 1, 15, false, false, ResultRule::kFixed, 4, 1, {0x0858}, {true}},
    {"RESIZE2D", 1, 1, 16, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"TRIU", 1, 1, 17, true, false, ResultRule::kSame, 0, 1, {0x0858}, {true}},
    {"TRIL", 1, 1, 17, true, false, ResultRule::kSame, 0, 1, {0x0858}, {true}},
    {"ARGMAX", 1, 1, 18, false, false, ResultRule::kFixed, 4, 1, {0x0058}, {true}},
    {"TOPK", 1, 1, 19, false, false, ResultRule::kFixed, 4, 1, {0x0058}, {true}},
    {"FLOOR_DIV", 1, 2, 1, true, false, ResultRule::kSame, 0, 2, {0x0058, 0x0058}, {true, true}},
    {"TRUNC_DIV", 1, 2, 1, true, false, ResultRule::kSame, 0, 2, {0x0058, 0x0058}, {true, true}},
    {"REMAINDER", 1, 2, 1, true, false, ResultRule::kSame, 0, 2, {0x0058, 0x0058}, {true, true}},
    {"FAKE_QUANTIZE", 1, 1, 20, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"ARGMIN", 1, 1, 18, false, false, ResultRule::kFixed, 4, 1, {0x0058}, {true}},
    {"FULL", 2, 2, 21, false, false, ResultRule::kSame, 0, 2, {0x0858, 0x0858}, {true, false}},
    {"LOG1P", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"EXPM1", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"FLOOR", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"CEIL", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"TRUNC", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"ROUND", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"SIGN", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"ERF", 1, 1, 0, false, false, ResultRule::kSame, 0, 1, {0x0040}, {true}},
    {"INDEX_COPY", 3, 3, 3, false, false, ResultRule::kSame, 0, 3, {0x0858, 0x0018, 0x0858}, {true, false, true}},
    {"STATE_WRITE", 2, 2, 0, false, false, ResultRule::kSame, 0, 2, {0x0858, 0x0858}, {true, true}},
    {"ATTENTION", 3, 4, 22, false, false, ResultRule::kSame, 0, 4, {0x0040, 0x0040, 0x0040, 0x0840}, {true, true, true, false}},
};

// runtime_py's attribute class names, indexed by union tag ("none" for 0)
constexpr const char* kAttributeNames[kNumAttributeTypes + 1] = {"none", "BinaryAttrs", "GeluAttrs", "AxisAttrs", "FusedAttrs", "Conv2dAttrs", "LayerNormAttrs", "Pool2dAttrs", "ShapeAttrs", "PermuteAttrs", "FlattenAttrs", "ClampAttrs", "ReduceAttrs", "SliceAttrs", "CastAttrs", "ArangeLikeAttrs", "ResizeAttrs", "DiagonalAttrs", "ArgReduceAttrs", "TopKAttrs", "QuantizeAttrs", "FillAttrs", "AttentionAttrs"};

// nullptr for a number outside the instruction set
inline const OpInfo* op_info(uint16_t op) { return op < kNumOps ? &kOps[op] : nullptr; }

// indexed by opcode: the operands' names in the spec (messages name operands with them)
constexpr const char* kOperandNames[kNumOps][kMaxNamedOperands] = {
    {"a", "b"},
    {"a", "b"},
    {"a", "b"},
    {"a", "b"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"a", "b"},
    {"x", "weight", "bias"},
    {"x", "weight", "bias"},
    {"x", "scale", "shift"},
    {"x", "weight", "bias"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"tensors"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"a", "b"},
    {"x"},
    {"weight", "indices"},
    {"x"},
    {"x", "index"},
    {"x", "index"},
    {"a", "b"},
    {"a", "b"},
    {"a", "b"},
    {"a", "b"},
    {"a", "b"},
    {"a", "b"},
    {"x"},
    {"a", "b"},
    {"a", "b"},
    {"condition", "a", "b"},
    {"x"},
    {"x"},
    {"x"},
    {"reference"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"a", "b"},
    {"a", "b"},
    {"a", "b"},
    {"x"},
    {"x"},
    {"value", "reference"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"x"},
    {"state", "index", "source"},
    {"state", "value"},
    {"q", "k", "v", "mask"},
};

// The name of operand `index` of `op` (the last named one repeats for "any number").
inline const char* operand_name(Op op, size_t index) {
  const OpInfo& info = kOps[static_cast<size_t>(op)];
  return kOperandNames[static_cast<size_t>(op)][index < info.num_named ? index : info.num_named - 1];
}

}  // namespace liteexport::demo_ops
