#include "field_names.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

namespace hsdp::cli {

namespace {

// Fields whose flag is not "--" followed by the field name with '-' for '_'. Every other
// field (n, batch_size, noise_std, noise_multiplier, strong_convexity, record_norm, ...) is
// spelled by that rule.
constexpr std::array<std::pair<std::string_view, std::string_view>, 2> kIrregular{{
    {"alphas", "--alpha"},       // repeatable: one order per flag
    {"analyses", "--analysis"},  // repeatable: one analysis per flag
}};

}  // namespace

std::string flag(std::string_view field) {
  for (const auto& [name, spelled] : kIrregular)
    if (name == field) return std::string(spelled);
  std::string out = "--";
  out += field;
  std::replace(out.begin() + 2, out.end(), '_', '-');
  return out;
}

FieldNames flag_names() {
  FieldNames f;
  f.option = [](std::string_view field) { return flag(field); };
  f.option_value = [](std::string_view field, std::string_view value) {
    return value.empty() ? flag(field) : fmt::format("{} {}", flag(field), value);
  };
  f.parameter = [](std::string_view name) { return std::string(name); };
  return f;
}

std::string command_line(std::string_view command, const FieldValues& request) {
  std::string out = fmt::format("hsdp {}", command);
  for (const auto& [field, value] : request)
    out += value.empty() ? " " + flag(field) : fmt::format(" {} {}", flag(field), value);
  return out;
}

}  // namespace hsdp::cli
