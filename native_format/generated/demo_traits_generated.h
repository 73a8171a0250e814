// GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_ops.toml
// The op traits of schema/demo_ops.toml for C++: each kernel family's members as an X-macro
// (X(OP) or, for math, X(OP, kernel)), so the kernel tables (native/src/demo/kernels.cpp,
// liteexport/torch_backend/aten_kernels.h) and the family switches list the spec's ops.
#pragma once

#include "demo_ops_generated.h"

#define LITEEXPORT_DEMO_BINARY_OPS(X) X(ADD) X(SUB) X(MUL) X(DIV) X(POW)
#define LITEEXPORT_DEMO_UNARY_OPS(X) X(NEG) X(RELU) X(SIGMOID) X(TANH)
#define LITEEXPORT_DEMO_MATH_OPS(X) X(LOG, log) X(SQRT, sqrt) X(RSQRT, rsqrt) X(ABS, abs) X(EXP, exp) X(SIN, sin) X(COS, cos) X(LOG1P, log1p) X(EXPM1, expm1) X(FLOOR, floor) X(CEIL, ceil) X(TRUNC, trunc) X(ROUND, round) X(SIGN, sign) X(ERF, erf)
#define LITEEXPORT_DEMO_COMPARE_OPS(X) X(EQ) X(NE) X(LT) X(LE) X(GT) X(GE)
#define LITEEXPORT_DEMO_BITWISE_OPS(X) X(BITWISE_NOT) X(BITWISE_AND) X(BITWISE_OR)
#define LITEEXPORT_DEMO_ROUNDING_OPS(X) X(FLOOR_DIV) X(TRUNC_DIV) X(REMAINDER)

// the unary and math ops whose torch backend kernel is at::NAME(x): X(OP, NAME)
#define LITEEXPORT_DEMO_TORCH_UNARY_OPS(X) X(NEG, neg) X(RELU, relu) X(SIGMOID, sigmoid) X(TANH, tanh) X(LOG, log) X(SQRT, sqrt) X(RSQRT, rsqrt) X(ABS, abs) X(EXP, exp) X(SIN, sin) X(COS, cos) X(LOG1P, log1p) X(EXPM1, expm1) X(FLOOR, floor) X(CEIL, ceil) X(TRUNC, trunc) X(ROUND, round) X(SIGN, sign) X(ERF, erf)

namespace liteexport::demo_ops {

// indexed by opcode: a float step of the op runs as an XNNPACK UnaryStep on its input's layout
// (xnnpack = "unary"; an NHWC value stays NHWC)
constexpr bool kXnnpackUnaryStep[kNumOps] = {
    false,  // ADD
    false,  // SUB
    false,  // MUL
    false,  // DIV
    true,  // NEG
    true,  // RELU
    true,  // SIGMOID
    true,  // TANH
    true,  // GELU
    false,  // SOFTMAX
    false,  // LOG_SOFTMAX
    false,  // MATMUL
    false,  // LINEAR
    false,  // CONV2D
    false,  // CHANNEL_AFFINE
    false,  // LAYER_NORM
    false,  // MAX_POOL2D
    false,  // AVG_POOL2D
    false,  // ADAPTIVE_AVG_POOL2D
    false,  // TRANSPOSE
    false,  // RESHAPE
    false,  // FLATTEN
    false,  // CAT
    true,  // CLAMP
    true,  // HARDSIGMOID
    true,  // HARDSWISH
    true,  // SILU
    false,  // MEAN
    false,  // SUM
    false,  // SLICE
    false,  // EXPAND
    true,  // LOG
    true,  // SQRT
    true,  // RSQRT
    true,  // ABS
    false,  // POW
    true,  // EXP
    false,  // EMBEDDING
    false,  // CAST
    false,  // GATHER
    false,  // INDEX_SELECT
    false,  // EQ
    false,  // NE
    false,  // LT
    false,  // LE
    false,  // GT
    false,  // GE
    false,  // BITWISE_NOT
    false,  // BITWISE_AND
    false,  // BITWISE_OR
    false,  // WHERE
    false,  // CUMSUM
    false,  // SIN
    false,  // COS
    false,  // ARANGE_LIKE
    false,  // RESIZE2D
    false,  // TRIU
    false,  // TRIL
    false,  // ARGMAX
    false,  // TOPK
    false,  // FLOOR_DIV
    false,  // TRUNC_DIV
    false,  // REMAINDER
    true,  // FAKE_QUANTIZE
    false,  // ARGMIN
    false,  // FULL
    true,  // LOG1P
    true,  // EXPM1
    true,  // FLOOR
    true,  // CEIL
    true,  // TRUNC
    true,  // ROUND
    true,  // SIGN
    true,  // ERF
    false,  // INDEX_COPY
    false,  // STATE_WRITE
    false,  // ATTENTION
};

}  // namespace liteexport::demo_ops
