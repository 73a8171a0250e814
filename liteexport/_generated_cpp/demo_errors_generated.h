// GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_errors.toml
// The demo backend's error codes and their templates; liteexport/cpp/demo_error.h renders them.
#pragma once

#include <cstddef>

namespace liteexport::demo_errors {

enum class Code {
  NOT_A_PROGRAM,
  CORRUPT_PROGRAM,
  MISSING_FIELD,
  UNSUPPORTED_VERSION,
  UNKNOWN_ENUM,
  FIELD_WITHOUT_FLAG,
  OUTPUT_HANDLES,
  ATTRIBUTES_WITHOUT_TYPE,
  UNKNOWN_ATTRIBUTE_TYPE,
  ATTRIBUTE_TYPE,
  ATTRIBUTES_MISSING,
  PAIR_LENGTH,
  OUTPUT_SIZE_LENGTH,
  INVALID_ATTRIBUTES,
  INPUTS_EXCEED_SLOTS,
  INPUT_DTYPE,
  CONSTANT_SLOT_RANGE,
  CONSTANT_SLOT_TAKEN,
  WEIGHT_INDEX_RANGE,
  WEIGHT_TYPE,
  ARITY,
  OUTPUT_COUNT,
  SLOT_RANGE,
  READ_BEFORE_WRITE,
  OUTPUT_SLOT_RANGE,
  OUTPUT_NEVER_WRITTEN,
  METHOD_MISMATCH,
  INPUT_COUNT,
  INPUT_MISMATCH,
  KERNEL_FAILED,
};

constexpr size_t kNumCodes = 30;

// indexed by Code
constexpr const char* kCodeNames[kNumCodes] = {
    "NOT_A_PROGRAM",
    "CORRUPT_PROGRAM",
    "MISSING_FIELD",
    "UNSUPPORTED_VERSION",
    "UNKNOWN_ENUM",
    "FIELD_WITHOUT_FLAG",
    "OUTPUT_HANDLES",
    "ATTRIBUTES_WITHOUT_TYPE",
    "UNKNOWN_ATTRIBUTE_TYPE",
    "ATTRIBUTE_TYPE",
    "ATTRIBUTES_MISSING",
    "PAIR_LENGTH",
    "OUTPUT_SIZE_LENGTH",
    "INVALID_ATTRIBUTES",
    "INPUTS_EXCEED_SLOTS",
    "INPUT_DTYPE",
    "CONSTANT_SLOT_RANGE",
    "CONSTANT_SLOT_TAKEN",
    "WEIGHT_INDEX_RANGE",
    "WEIGHT_TYPE",
    "ARITY",
    "OUTPUT_COUNT",
    "SLOT_RANGE",
    "READ_BEFORE_WRITE",
    "OUTPUT_SLOT_RANGE",
    "OUTPUT_NEVER_WRITTEN",
    "METHOD_MISMATCH",
    "INPUT_COUNT",
    "INPUT_MISMATCH",
    "KERNEL_FAILED",
};

// indexed by Code; {field} marks where a field's value goes
constexpr const char* kTemplates[kNumCodes] = {
    "not a liteexport demo program (no \"LXDP\" flatbuffer identifier; {size} bytes)",
    "the flatbuffer is corrupt (flatbuffers::Verifier rejected it)",
    "required field '{field}' is missing",
    "unsupported program format version {found} (this runtime reads version {supported})",
    "unknown {enum} value {value}",
    "{field} given but {flag} is false",
    "{outputs} outputs but {handles} output debug handles",
    "attributes given without a type",
    "unknown attribute type {tag}",
    "{op} takes {expected}, found {found}",
    "attributes of type {table} are missing",
    "{field} must hold 2 values [h, w], found {found}",
    "{op} output size must hold 2 dims, found {found}",
    "invalid attributes: {problem}",
    "the inputs need {inputs} slots, num_slots is {num_slots}",
    "input {index} has dtype {dtype}, not float32",
    "constant for slot {slot} (weight {weight}): slot is out of range (num_slots is {num_slots})",
    "constant for slot {slot} (weight {weight}): slot already holds an input or another constant",
    "constant for slot {slot} (weight {weight}): weight index is out of range (there are {weights})",
    "constant for slot {slot} (weight {weight}): weight must be a float32 array, got {got}",
    "takes {expected}, got {got}",
    "writes 1 output, got {got}",
    "slot {slot} is out of range (num_slots is {num_slots})",
    "reads slot {slot} before anything writes it",
    "output {position}: slot {slot} is out of range",
    "output {position}: slot {slot} is never written",
    "program '{program}' is stored as method '{method}'",
    "method '{method}' expected {expected} inputs, got {got}",
    "{instruction}: input {index}: expected {expected}, got {got}",
    "{instruction}: {reason}",
};

}  // namespace liteexport::demo_errors
