"""The ``backend_with_compiler_demo`` delegate backend: runs demo programs with numpy."""
