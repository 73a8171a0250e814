// Attribute values each op accepts, and the text of values in messages: one loop over the
// constraint rows of schema/demo_ops.toml (bundle_format/attribute_rules.py loops over the same
// rows). Part of the program decoder (demo_program.h), shared by the Android native core and the
// torch extension.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "demo_attrs_generated.h"
#include "demo_error.h"
#include "demo_ops_generated.h"

namespace liteexport::demo_program {

using demo_errors::Code;
using demo_errors::fail;
using demo_errors::list_text;
using demo_errors::tuple_text;
using demo_ops::Op;
using demo_ops::OpInfo;

// ---------------------------------------------------------------------------------------------
// Decoded attributes: the structs, field tables and constraint tables generated from
// schema/demo_ops.toml (demo_attrs_generated.h). The variant's index is the fbs union tag.

using namespace demo_attrs;  // NOLINT: BinaryAttrs ... SliceAttrs, Attrs, Activation, Pair
static_assert(std::variant_size_v<Attrs> == demo_ops::kNumAttributeTypes + 1,
              "one Attrs alternative per Attributes union member (schema/demo_ops.toml [attributes])");

// ---------------------------------------------------------------------------------------------
// Text of values in messages, as Python prints them

// Python's repr of a float: the shortest text that reads back the same value, "2.0" not "2".
inline std::string float_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

// "1 input", "2 inputs"
inline std::string count_text(size_t n) { return std::to_string(n) + (n == 1 ? " input" : " inputs"); }

// "instruction #7 LINEAR (slots [3, 4, 5] -> [6])": how errors name an instruction
inline std::string instruction_label(size_t index, const std::string& op_name, const std::vector<int64_t>& inputs,
                                     const std::vector<int64_t>& outputs) {
  return "instruction #" + std::to_string(index) + " " + op_name + " (slots " + list_text(inputs) + " -> " +
         list_text(outputs) + ")";
}

// ---------------------------------------------------------------------------------------------
// Attribute values each op accepts: one loop over the constraint rows of schema/demo_ops.toml
// (bundle_format/attribute_rules.py loops over the same rows)

namespace detail {

// A field's value as the rules see it: its elements, whether it is present, its text as Python prints it.
struct FieldValue {
  std::vector<double> items;
  bool present = true;
  std::string text;
};

template <typename S>
FieldValue value_of(const S& attrs, const FieldOf<S>& field) {
  FieldValue out;
  std::visit(
      [&](auto member) {
        const auto& v = attrs.*member;
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, Pair> || std::is_same_v<T, std::vector<int64_t>>) {
          out.items.assign(v.begin(), v.end());
          out.text = tuple_text(v);
        } else if constexpr (std::is_same_v<T, std::optional<double>> || std::is_same_v<T, std::optional<int64_t>>) {
          out.present = v.has_value();
          if (v) out.items = {static_cast<double>(*v)};
          if (v) out.text = std::is_same_v<T, std::optional<double>> ? float_text(static_cast<double>(*v))
                                                                     : std::to_string(static_cast<int64_t>(*v));
        } else if constexpr (std::is_same_v<T, double>) {
          out.items = {v};
          out.text = float_text(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          out.items = {v ? 1.0 : 0.0};
          out.text = v ? "True" : "False";
        } else {  // int64_t, Activation
          out.items = {static_cast<double>(v)};
          out.text = std::to_string(static_cast<int64_t>(v));
        }
      },
      field.member);
  return out;
}

// The named rules of schema/demo_ops.toml: the placeholders of the rule's text when broken.
template <typename S>
std::optional<demo_errors::Fields> named_rule(NamedRule rule, const S& a, size_t n_inputs) {
  if constexpr (std::is_same_v<S, Pool2dAttrs>) {  // torch's rule, on the undilated kernel
    if (rule == NamedRule::PaddingAtMostHalfKernel &&
        (a.padding[0] > a.kernel[0] / 2 || a.padding[1] > a.kernel[1] / 2))
      return demo_errors::Fields{{"padding", tuple_text(a.padding)}, {"kernel", tuple_text(a.kernel)}};
  } else if constexpr (std::is_same_v<S, BinaryAttrs>) {
    if (rule == NamedRule::ScalarIffOneInput && (n_inputs == 1) != a.scalar.has_value()) return demo_errors::Fields{};
  } else if constexpr (std::is_same_v<S, PermuteAttrs>) {
    std::vector<int64_t> sorted = a.perm;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; rule == NamedRule::Permutation && i < sorted.size(); ++i)
      if (sorted[i] != static_cast<int64_t>(i))
        return demo_errors::Fields{{"got", tuple_text(a.perm)},
                                   {"last", std::to_string(static_cast<int64_t>(a.perm.size()) - 1)}};
  } else if constexpr (std::is_same_v<S, CastAttrs>) {
    if (rule == NamedRule::KnownDtype && demo_ops::dtype_name(static_cast<int>(a.dtype)) == nullptr)
      return demo_errors::Fields{{"got", std::to_string(a.dtype)}};
  } else if constexpr (std::is_same_v<S, QuantizeAttrs>) {
    if (rule == NamedRule::QuantizeRange &&
        !(std::isfinite(a.scale) && a.scale > 0 && a.quant_min <= a.zero_point && a.zero_point <= a.quant_max))
      return demo_errors::Fields{{"scale", float_text(a.scale)}, {"zero_point", std::to_string(a.zero_point)},
                                 {"quant_min", std::to_string(a.quant_min)}, {"quant_max", std::to_string(a.quant_max)}};
  } else if constexpr (std::is_same_v<S, FillAttrs>) {
    bool broken = rule == NamedRule::FillSizes && a.dims.size() != a.axes.size();
    for (size_t i = 0; rule == NamedRule::FillSizes && !broken && i < a.dims.size(); ++i)
      broken = a.axes[i] == -1 && a.dims[i] < 0;
    if (broken) return demo_errors::Fields{{"dims", tuple_text(a.dims)}, {"axes", tuple_text(a.axes)}};
  }
  return std::nullopt;
}

// The first rule of S's table that `a` breaks on `op` (coded: the decoder's rules, else the
// plan's), with its text's placeholders.
template <typename S>
std::optional<std::pair<const Rule*, demo_errors::Fields>> first_broken(Op op, const S& a, size_t n_inputs,
                                                                       bool coded) {
  const auto& fields = Table<S>::fields;
  for (const Rule& rule : Table<S>::rules) {
    if ((rule.code != kNoCode) != coded || !rule.applies(static_cast<uint16_t>(op))) continue;
    if (rule.check == Check::Rule) {
      auto broken = named_rule(rule.rule, a, n_inputs);
      if (broken) return std::make_pair(&rule, *broken);
      continue;
    }
    if (rule.check == Check::AnyPresent) {
      if (!value_of(a, fields[rule.field]).present && !value_of(a, fields[rule.field2]).present)
        return std::make_pair(&rule, demo_errors::Fields{});
      continue;
    }
    const FieldValue v = value_of(a, fields[rule.field]);
    const auto& x = v.items;
    std::vector<double> sorted = x;
    std::sort(sorted.begin(), sorted.end());
    const auto other = static_cast<double>(rule.other);
    bool broken = false;
    switch (rule.check) {
      case Check::Min:
        broken = std::any_of(x.begin(), x.end(), [&](double e) { return e < rule.value && !(rule.has_other && e == other); });
        break;
      case Check::Equals: broken = std::any_of(x.begin(), x.end(), [&](double e) { return e != rule.value; }); break;
      case Check::Length: broken = static_cast<double>(x.size()) != rule.value; break;
      case Check::MaxCount: broken = static_cast<double>(std::count(x.begin(), x.end(), other)) > rule.value; break;
      case Check::Distinct: broken = std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end(); break;
      case Check::AnyPresent:
      case Check::Rule: break;  // checked above
    }
    if (v.present && broken)
      return std::make_pair(&rule, demo_errors::Fields{{"field", fields[rule.field].name}, {"got", v.text},
                                                       {"found", std::to_string(x.size())}});
  }
  return std::nullopt;
}

}  // namespace detail

// Why `op` cannot run with these attributes and `n_inputs` operands ("" when it can).
inline std::string attribute_problem(Op op, const Attrs& attrs, size_t n_inputs) {
  return std::visit(
      [&](const auto& a) -> std::string {
        using S = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<S, std::monostate>) {
          return "";
        } else {
          auto broken = detail::first_broken(op, a, n_inputs, false);
          return broken ? demo_errors::render_text(broken->first->text, broken->second) : "";
        }
      },
      attrs);
}

}  // namespace liteexport::demo_program
