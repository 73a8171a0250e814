# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py from schema/demo_errors.toml
# ruff: noqa
"""The demo backend's error codes and their templates (schema/demo_errors.toml)."""

TEMPLATES: dict[str, str] = {
    # format
    'NOT_A_PROGRAM': 'not a liteexport demo program (no "LXDP" flatbuffer identifier; {size} bytes)',
    'CORRUPT_PROGRAM': 'the flatbuffer is corrupt (flatbuffers::Verifier rejected it)',
    'MISSING_FIELD': "required field '{field}' is missing",
    'UNSUPPORTED_VERSION': 'unsupported program format version {found} (this runtime reads version {supported})',
    'UNKNOWN_ENUM': 'unknown {enum} value {value}',
    'FIELD_WITHOUT_FLAG': '{field} given but {flag} is false',
    'OUTPUT_HANDLES': '{outputs} outputs but {handles} output debug handles',
    'ATTRIBUTES_WITHOUT_TYPE': 'attributes given without a type',
    'UNKNOWN_ATTRIBUTE_TYPE': 'unknown attribute type {tag}',
    'ATTRIBUTE_TYPE': '{op} takes {expected}, found {found}',
    'ATTRIBUTES_MISSING': 'attributes of type {table} are missing',
    'PAIR_LENGTH': '{field} must hold 2 values [h, w], found {found}',
    'OUTPUT_SIZE_LENGTH': '{op} output size must hold 2 dims, found {found}',
    'INVALID_ATTRIBUTES': 'invalid attributes: {problem}',
    'INPUTS_EXCEED_SLOTS': 'the inputs need {inputs} slots, num_slots is {num_slots}',
    'INPUT_DTYPE': 'input {index} is declared {dtype}, but its slot holds {expected} values',
    'CONSTANT_SLOT_RANGE': 'constant for slot {slot} (weight {weight}): slot is out of range (num_slots is {num_slots})',
    'CONSTANT_SLOT_TAKEN': 'constant for slot {slot} (weight {weight}): slot already holds an input or another constant',
    'WEIGHT_INDEX_RANGE': 'constant for slot {slot} (weight {weight}): weight index is out of range (there are {weights})',
    'WEIGHT_TYPE': 'constant for slot {slot} (weight {weight}): weight must be an array of a compiled dtype (float32, int64, int32, bool), got {got}',
    'WEIGHT_DTYPE': 'constant for slot {slot} (weight {weight}): the slot holds {expected} values, the weight is {got}',
    'SLOT_DTYPES_LENGTH': 'slot_dtypes has {found} entries for {num_slots} slots',
    'DIM_SYMBOLS_LENGTH': 'input {index}: {found} dim symbols for a shape of {rank} dims',
    'DIM_SYMBOL_RANGE': 'input {index}: dim {axis} names symbolic dim {symbol}, but the program has {count}',
    'DIM_SYMBOL_STATIC': 'input {index}: dim {axis} names symbolic dim {name} but has the static size {size}',
    'DIM_BOUNDS': 'symbolic dim {name}: bounds {lo}..{hi} must satisfy 0 <= lo <= hi (hi -1: no upper bound)',
    'OPERAND_DTYPE': 'operand {index} ({name}) is {got}, but {op} takes {allowed}',
    'DTYPE_NOT_SUPPORTED': "method '{method}': this executor holds float32 values only, but slot {slot} holds {dtype} values",
    'RESULT_DTYPE': 'its {result} result is written into slot {slot}, which holds {expected} values',
    'ARITY': 'takes {expected}, got {got}',
    'OUTPUT_COUNT': 'writes 1 output, got {got}',
    'SLOT_RANGE': 'slot {slot} is out of range (num_slots is {num_slots})',
    'READ_BEFORE_WRITE': 'reads slot {slot} before anything writes it',
    'OUTPUT_SLOT_RANGE': 'output {position}: slot {slot} is out of range',
    'OUTPUT_NEVER_WRITTEN': 'output {position}: slot {slot} is never written',
    'PROCESSED_MODULE': "expected a dict with keys 'programs' and 'weights', got {got}",
    'PROCESSED_TYPES': "'programs' must be a dict and 'weights' a list",
    'MISSING_PROGRAMS': 'no program for method(s) {methods}',
    'METHOD_MISMATCH': "program '{program}' is stored as method '{method}'",
    'STATE_DECLARATION': "state '{name}': {problem}",
    'STATE_MISMATCH': "state '{name}' is {got} in method '{method}' but {expected} in method '{other}': methods share a state by its name",
    # input
    'INPUT_COUNT': "method '{method}' expected {expected} inputs, got {got}",
    'INPUT_MISMATCH': '{instruction}: input {index}: expected {expected}, got {got}',
    'INPUT_DIM_RANGE': '{instruction}: input {index}: dim {axis} is {name} = {got}, outside {bounds} (the bounds it was exported with)',
    'INPUT_DIM_AGREE': '{instruction}: input {index}: dim {axis} is {name} = {got}, but input {first} has it = {expected}',
    'INPUT_UNFIT': '{instruction}: input {index} ({got}) does not fit the model: {reason}',
    'STATE_POSITION': "{instruction}: position {position} is outside the state '{state}', which holds {size} positions along axis {axis}; the state is unchanged",
    # execution
    'KERNEL_FAILED': '{instruction}: {reason}',
}

KINDS: dict[str, str] = {'NOT_A_PROGRAM': 'format', 'CORRUPT_PROGRAM': 'format', 'MISSING_FIELD': 'format', 'UNSUPPORTED_VERSION': 'format', 'UNKNOWN_ENUM': 'format', 'FIELD_WITHOUT_FLAG': 'format', 'OUTPUT_HANDLES': 'format', 'ATTRIBUTES_WITHOUT_TYPE': 'format', 'UNKNOWN_ATTRIBUTE_TYPE': 'format', 'ATTRIBUTE_TYPE': 'format', 'ATTRIBUTES_MISSING': 'format', 'PAIR_LENGTH': 'format', 'OUTPUT_SIZE_LENGTH': 'format', 'INVALID_ATTRIBUTES': 'format', 'INPUTS_EXCEED_SLOTS': 'format', 'INPUT_DTYPE': 'format', 'CONSTANT_SLOT_RANGE': 'format', 'CONSTANT_SLOT_TAKEN': 'format', 'WEIGHT_INDEX_RANGE': 'format', 'WEIGHT_TYPE': 'format', 'WEIGHT_DTYPE': 'format', 'SLOT_DTYPES_LENGTH': 'format', 'DIM_SYMBOLS_LENGTH': 'format', 'DIM_SYMBOL_RANGE': 'format', 'DIM_SYMBOL_STATIC': 'format', 'DIM_BOUNDS': 'format', 'OPERAND_DTYPE': 'format', 'DTYPE_NOT_SUPPORTED': 'format', 'RESULT_DTYPE': 'format', 'ARITY': 'format', 'OUTPUT_COUNT': 'format', 'SLOT_RANGE': 'format', 'READ_BEFORE_WRITE': 'format', 'OUTPUT_SLOT_RANGE': 'format', 'OUTPUT_NEVER_WRITTEN': 'format', 'PROCESSED_MODULE': 'format', 'PROCESSED_TYPES': 'format', 'MISSING_PROGRAMS': 'format', 'METHOD_MISMATCH': 'format', 'STATE_DECLARATION': 'format', 'STATE_MISMATCH': 'format', 'INPUT_COUNT': 'input', 'INPUT_MISMATCH': 'input', 'INPUT_DIM_RANGE': 'input', 'INPUT_DIM_AGREE': 'input', 'INPUT_UNFIT': 'input', 'STATE_POSITION': 'input', 'KERNEL_FAILED': 'execution'}
