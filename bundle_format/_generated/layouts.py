# GENERATED CODE, DO NOT EDIT: made by scripts/generate_schema_code.py (scripts/fb_layouts_codegen.py)
# from flatc's reflection of schema/*.fbs

"""Field layouts of every table and union of schema/*.fbs, by schema; read through
bundle_format.fb_reader.spec (never restated by hand)."""

from __future__ import annotations

# (field name, kind, size, type) in field id order; kind: scalar (size: bytes; structs too),
# string, vector (size: element bytes), string_vector, table (union values too), table_vector,
# deprecated; type: the table (or union, or struct) the field holds, '' for the others
TABLES: dict[str, dict[str, tuple[tuple[str, str, int, str], ...]]] = {
    'mobile_bytecode': {
        'Arg': (
            ('name', 'string', 4, ''),
            ('type', 'string', 4, ''),
            ('default_value', 'scalar', 4, ''),
        ),
        'BoolList': (
            ('items', 'vector', 1, ''),
        ),
        'DebugInfo': (
            ('debug_handle', 'vector', 8, ''),
        ),
        'Device': (
            ('str', 'string', 4, ''),
        ),
        'Dict': (
            ('keys', 'vector', 4, ''),
            ('values', 'vector', 4, ''),
            ('annotation_str', 'string', 4, ''),
        ),
        'DoubleList': (
            ('items', 'vector', 8, ''),
        ),
        'EnumValue': (
            ('type_name', 'string', 4, ''),
            ('value', 'scalar', 4, ''),
        ),
        'ExtraFile': (
            ('name', 'string', 4, ''),
            ('content', 'string', 4, ''),
        ),
        'Function': (
            ('qn', 'string', 4, ''),
            ('instructions', 'vector', 8, ''),
            ('operators', 'table_vector', 4, 'Operator'),
            ('constants', 'vector', 4, ''),
            ('type_annotations', 'string_vector', 4, ''),
            ('register_size', 'scalar', 4, ''),
            ('schema', 'table', 4, 'Schema'),
            ('debug_info', 'table', 4, 'DebugInfo'),
            ('class_type', 'scalar', 4, ''),
        ),
        'IValue': (
            ('val_type', 'scalar', 1, ''),
            ('val', 'table', 4, 'IValueUnion'),
        ),
        'IntList': (
            ('items', 'vector', 8, ''),
        ),
        'List': (
            ('items', 'vector', 4, ''),
            ('annotation_str', 'string', 4, ''),
        ),
        'Module': (
            ('bytecode_version', 'scalar', 4, ''),
            ('extra_files', 'table_vector', 4, 'ExtraFile'),
            ('methods', 'vector', 4, ''),
            ('state_obj', 'scalar', 4, ''),
            ('ivalues', 'table_vector', 4, 'IValue'),
            ('storage_data_size', 'scalar', 4, ''),
            ('storage_data', 'table_vector', 4, 'StorageData'),
            ('object_types', 'table_vector', 4, 'ObjectType'),
            ('jit_sources', 'table_vector', 4, 'ExtraFile'),
            ('jit_constants', 'vector', 4, ''),
            ('operator_version', 'scalar', 4, ''),
            ('mobile_ivalue_size', 'scalar', 4, ''),
        ),
        'Object': (
            ('type_index', 'scalar', 4, ''),
            ('state', 'scalar', 4, ''),
            ('attrs', 'vector', 4, ''),
            ('setstate_func', 'scalar', 4, ''),
        ),
        'ObjectType': (
            ('type_name', 'string', 4, ''),
            ('type', 'scalar', 1, ''),
            ('attr_names', 'string_vector', 4, ''),
        ),
        'Operator': (
            ('name', 'string', 4, ''),
            ('overload_name', 'string', 4, ''),
            ('num_args_serialized', 'scalar', 4, ''),
        ),
        'QuantizedSchema': (
            ('qscheme', 'scalar', 1, ''),
            ('scale', 'scalar', 8, ''),
            ('zero_point', 'scalar', 4, ''),
            ('scales', 'table', 4, 'TensorMetadata'),
            ('zero_points', 'table', 4, 'TensorMetadata'),
            ('axis', 'scalar', 4, ''),
        ),
        'Schema': (
            ('arguments', 'table_vector', 4, 'Arg'),
            ('returns', 'table_vector', 4, 'Arg'),
        ),
        'StorageData': (
            ('data', 'vector', 1, ''),
        ),
        'String': (
            ('data', 'string', 4, ''),
        ),
        'TensorMetadata': (
            ('storage_location_index', 'scalar', 4, ''),
            ('scalar_type', 'scalar', 1, ''),
            ('storage_offset', 'scalar', 4, ''),
            ('sizes', 'vector', 4, ''),
            ('strides', 'vector', 4, ''),
            ('requires_grad', 'scalar', 1, ''),
            ('quantized_schema', 'table', 4, 'QuantizedSchema'),
        ),
        'Tuple': (
            ('items', 'vector', 4, ''),
        ),
    },
    'demo_program': {
        'ArangeLike': (
            ('axis', 'scalar', 4, ''),
            ('start', 'scalar', 8, ''),
            ('end_offset', 'scalar', 8, ''),
        ),
        'ArgReduce': (
            ('axis', 'scalar', 4, ''),
            ('keepdim', 'scalar', 1, ''),
        ),
        'Attention': (
            ('scale', 'scalar', 8, ''),
        ),
        'Axis': (
            ('axis', 'scalar', 4, ''),
        ),
        'Binary': (
            ('alpha', 'scalar', 8, ''),
            ('scalar', 'scalar', 8, ''),
            ('has_scalar', 'scalar', 1, ''),
            ('reverse', 'scalar', 1, ''),
        ),
        'Cast': (
            ('dtype', 'scalar', 4, ''),
        ),
        'Clamp': (
            ('min', 'scalar', 8, ''),
            ('max', 'scalar', 8, ''),
            ('has_min', 'scalar', 1, ''),
            ('has_max', 'scalar', 1, ''),
        ),
        'Constant': (
            ('slot', 'scalar', 4, ''),
            ('weight', 'scalar', 4, ''),
        ),
        'Conv2d': (
            ('stride', 'vector', 4, ''),
            ('padding', 'vector', 4, ''),
            ('dilation', 'vector', 4, ''),
            ('groups', 'scalar', 4, ''),
            ('activation', 'scalar', 1, ''),
        ),
        'Diagonal': (
            ('diagonal', 'scalar', 8, ''),
        ),
        'Fill': (
            ('dims', 'vector', 8, ''),
            ('axes', 'vector', 4, ''),
        ),
        'Flatten': (
            ('start_dim', 'scalar', 4, ''),
            ('end_dim', 'scalar', 4, ''),
        ),
        'Fused': (
            ('activation', 'scalar', 1, ''),
        ),
        'Gelu': (
            ('tanh_approximation', 'scalar', 1, ''),
        ),
        'Instruction': (
            ('op', 'scalar', 2, ''),
            ('inputs', 'vector', 4, ''),
            ('outputs', 'vector', 4, ''),
            ('attributes_type', 'scalar', 1, ''),
            ('attributes', 'table', 4, 'Attributes'),
            ('debug_handle', 'scalar', 8, ''),
        ),
        'LayerNorm': (
            ('normalized_ndim', 'scalar', 4, ''),
            ('eps', 'scalar', 8, ''),
        ),
        'Permute': (
            ('perm', 'vector', 4, ''),
        ),
        'Pool2d': (
            ('kernel', 'vector', 4, ''),
            ('stride', 'vector', 4, ''),
            ('padding', 'vector', 4, ''),
            ('dilation', 'vector', 4, ''),
            ('ceil_mode', 'scalar', 1, ''),
            ('count_include_pad', 'scalar', 1, ''),
            ('divisor_override', 'scalar', 4, ''),
        ),
        'Program': (
            ('format_version', 'scalar', 4, ''),
            ('method', 'string', 4, ''),
            ('num_slots', 'scalar', 4, ''),
            ('inputs', 'table_vector', 4, 'ValueInfo'),
            ('constants', 'table_vector', 4, 'Constant'),
            ('instructions', 'table_vector', 4, 'Instruction'),
            ('outputs', 'vector', 4, ''),
            ('output_debug_handles', 'vector', 8, ''),
            ('slot_dtypes', 'vector', 1, ''),
            ('symbolic_dims', 'table_vector', 4, 'SymbolicDim'),
            ('working_memory', 'scalar', 8, ''),
            ('states', 'table_vector', 4, 'State'),
        ),
        'Quantize': (
            ('scale', 'scalar', 8, ''),
            ('zero_point', 'scalar', 8, ''),
            ('quant_min', 'scalar', 8, ''),
            ('quant_max', 'scalar', 8, ''),
        ),
        'Reduce': (
            ('axes', 'vector', 4, ''),
            ('keepdim', 'scalar', 1, ''),
        ),
        'Resize': (
            ('bilinear', 'scalar', 1, ''),
            ('size', 'vector', 4, ''),
            ('align_corners', 'scalar', 1, ''),
            ('scale_h', 'scalar', 8, ''),
            ('has_scale_h', 'scalar', 1, ''),
            ('scale_w', 'scalar', 8, ''),
            ('has_scale_w', 'scalar', 1, ''),
        ),
        'Shape': (
            ('dims', 'vector', 8, ''),
        ),
        'Slice': (
            ('axis', 'scalar', 4, ''),
            ('start', 'scalar', 8, ''),
            ('end', 'scalar', 8, ''),
            ('step', 'scalar', 8, ''),
        ),
        'State': (
            ('name', 'string', 4, ''),
            ('slot', 'scalar', 4, ''),
            ('dtype', 'scalar', 1, ''),
            ('shape', 'vector', 8, ''),
            ('initial', 'scalar', 4, ''),
        ),
        'SymbolicDim': (
            ('name', 'string', 4, ''),
            ('min', 'scalar', 8, ''),
            ('max', 'scalar', 8, ''),
        ),
        'TopK': (
            ('k', 'scalar', 8, ''),
            ('axis', 'scalar', 4, ''),
            ('largest', 'scalar', 1, ''),
        ),
        'ValueInfo': (
            ('dtype', 'scalar', 1, ''),
            ('shape', 'vector', 8, ''),
            ('has_shape', 'scalar', 1, ''),
            ('dim_symbols', 'vector', 4, ''),
        ),
    },
    'debug_table': {
        'DebugEntry': (
            ('handle', 'scalar', 8, ''),
            ('method', 'string', 4, ''),
            ('node_kind', 'string', 4, ''),
            ('module_hierarchy', 'string', 4, ''),
            ('frames', 'table_vector', 4, 'SourceFrame'),
        ),
        'DebugTable': (
            ('format_version', 'scalar', 4, ''),
            ('entries', 'table_vector', 4, 'DebugEntry'),
        ),
        'SourceFrame': (
            ('function', 'string', 4, ''),
            ('file', 'string', 4, ''),
            ('line', 'scalar', 4, ''),
            ('snippet', 'string', 4, ''),
        ),
    },
}

# (tag, member, 'table' or 'struct', struct bytes) by union
UNIONS: dict[str, dict[str, tuple[tuple[int, str, str, int], ...]]] = {
    'mobile_bytecode': {
        'IValueUnion': (
            (1, 'Int', 'struct', 8),
            (2, 'Bool', 'struct', 1),
            (3, 'Double', 'struct', 8),
            (4, 'ComplexDouble', 'struct', 16),
            (5, 'TensorMetadata', 'table', 0),
            (6, 'String', 'table', 0),
            (7, 'List', 'table', 0),
            (8, 'Tuple', 'table', 0),
            (9, 'Dict', 'table', 0),
            (10, 'Object', 'table', 0),
            (11, 'IntList', 'table', 0),
            (12, 'DoubleList', 'table', 0),
            (13, 'BoolList', 'table', 0),
            (14, 'Device', 'table', 0),
            (15, 'EnumValue', 'table', 0),
            (16, 'Function', 'table', 0),
        ),
    },
    'demo_program': {
        'Attributes': (
            (1, 'Binary', 'table', 0),
            (2, 'Gelu', 'table', 0),
            (3, 'Axis', 'table', 0),
            (4, 'Fused', 'table', 0),
            (5, 'Conv2d', 'table', 0),
            (6, 'LayerNorm', 'table', 0),
            (7, 'Pool2d', 'table', 0),
            (8, 'Shape', 'table', 0),
            (9, 'Permute', 'table', 0),
            (10, 'Flatten', 'table', 0),
            (11, 'Clamp', 'table', 0),
            (12, 'Reduce', 'table', 0),
            (13, 'Slice', 'table', 0),
            (14, 'Cast', 'table', 0),
            (15, 'ArangeLike', 'table', 0),
            (16, 'Resize', 'table', 0),
            (17, 'Diagonal', 'table', 0),
            (18, 'ArgReduce', 'table', 0),
            (19, 'TopK', 'table', 0),
            (20, 'Quantize', 'table', 0),
            (21, 'Fill', 'table', 0),
            (22, 'Attention', 'table', 0),
        ),
    },
    'debug_table': {
    },
}
