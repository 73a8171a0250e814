// Named dims with bounds (--dim S=1..128), as runtime_py/backends/demo/dims.py checks them: the
// program's SymbolicDims, validated when the program is decoded (format errors), and the check
// on every call (input errors): each input dim naming a symbol is within its bounds, and every
// dim naming the same symbol has the same size. Shared by the Android native core and the torch
// extension.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "demo_error.h"

namespace liteexport::demo_program {

struct SymbolicDim {
  std::string name;
  int64_t lo = 0;
  int64_t hi = -1;  // -1: no upper bound

  // "S=1..128", "S=1.." as Python's SymbolicDim.__str__
  std::string text() const { return name + "=" + std::to_string(lo) + ".." + (hi < 0 ? "" : std::to_string(hi)); }
};

// Input `index`'s dim `axis` is symbol `symbol`.
struct DimCheck {
  size_t index = 0;
  size_t axis = 0;
  uint32_t symbol = 0;
};

struct NamedDims {
  std::vector<SymbolicDim> dims;
  std::vector<DimCheck> checks;  // in input order
};

// Validates one input's dim symbols (`symbols` empty: none) against its shape and the dims.
inline void add_dim_checks(NamedDims& named, size_t index, const std::optional<std::vector<int64_t>>& shape,
                           const std::vector<int64_t>& symbols, const std::string& where) {
  using demo_errors::Code;
  using demo_errors::fail;
  if (symbols.empty()) return;
  if (!shape || shape->size() != symbols.size())
    fail(Code::DIM_SYMBOLS_LENGTH,
         {{"index", std::to_string(index)}, {"found", std::to_string(symbols.size())},
          {"rank", shape ? std::to_string(shape->size()) : "unknown"}},
         where);
  for (size_t axis = 0; axis < symbols.size(); ++axis) {
    const int64_t symbol = symbols[axis];
    if (symbol == -1) continue;
    if (symbol < 0 || symbol >= static_cast<int64_t>(named.dims.size()))
      fail(Code::DIM_SYMBOL_RANGE,
           {{"index", std::to_string(index)}, {"axis", std::to_string(axis)}, {"symbol", std::to_string(symbol)},
            {"count", std::to_string(named.dims.size())}},
           where);
    const SymbolicDim& dim = named.dims[static_cast<size_t>(symbol)];
    if ((*shape)[axis] != -1)
      fail(Code::DIM_SYMBOL_STATIC,
           {{"index", std::to_string(index)}, {"axis", std::to_string(axis)}, {"name", dim.name},
            {"size", std::to_string((*shape)[axis])}},
           where);
    named.checks.push_back({index, axis, static_cast<uint32_t>(symbol)});
  }
}

inline void check_dim_bounds(const SymbolicDim& dim, const std::string& where) {
  if (dim.lo < 0 || !(dim.hi == -1 || dim.lo <= dim.hi))
    demo_errors::fail(demo_errors::Code::DIM_BOUNDS,
                      {{"name", dim.name}, {"lo", std::to_string(dim.lo)}, {"hi", std::to_string(dim.hi)}}, where);
}

// A call's named dim that breaks its bounds or disagrees with an earlier one: the code, its fields
// (without "instruction": the caller adds whom to blame) and the input to blame.
struct DimProblem {
  demo_errors::Code code;
  demo_errors::Fields fields;
  size_t index;
};

// `size_of(index, axis)`: the size of the call's input `index` at `axis` (ranks already checked).
template <typename SizeOf>
std::optional<DimProblem> dim_problem(const NamedDims& named, SizeOf size_of) {
  using demo_errors::Code;
  std::vector<std::pair<int64_t, size_t>> seen(named.dims.size(), {-1, 0});  // symbol -> (size, first input)
  for (const DimCheck& check : named.checks) {
    const int64_t size = size_of(check.index, check.axis);
    const SymbolicDim& dim = named.dims[check.symbol];
    demo_errors::Fields fields{{"index", std::to_string(check.index)}, {"axis", std::to_string(check.axis)},
                               {"name", dim.name}, {"got", std::to_string(size)}};
    if (size < dim.lo || (dim.hi >= 0 && size > dim.hi)) {
      fields.emplace_back("bounds", dim.text());
      return DimProblem{Code::INPUT_DIM_RANGE, std::move(fields), check.index};
    }
    auto& first = seen[check.symbol];
    if (first.first < 0) first = {size, check.index};
    if (first.first != size) {
      fields.emplace_back("first", std::to_string(first.second));
      fields.emplace_back("expected", std::to_string(first.first));
      return DimProblem{Code::INPUT_DIM_AGREE, std::move(fields), check.index};
    }
  }
  return std::nullopt;
}

}  // namespace liteexport::demo_program
