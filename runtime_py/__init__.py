"""runtime_py: liteexport's reference runtime for PTMF bundles. numpy only, never torch."""
