// How the command line spells the library's field names: one table, field -> flag
// (docs/architecture.md, "Layers": the library never names a flag; an error carries the field).
// Header-only: the Python module includes it too, for Run.cli_args(), the "same report"
// command line and the text of results, which read as the command's.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "hsdp/errors.hpp"
#include "hsdp/run.hpp"

namespace hsdp::cli {

/// The flag of a library field: "batch_size" -> "--batch-size", "alphas" -> "--alpha".
inline std::string flag(std::string_view field);

/// The library field of a flag (the inverse of flag()): "--batch-size" -> "batch_size",
/// "--alpha" -> "alphas".
inline std::string field_of_flag(std::string_view flag_name);

/// The command line's spelling: fields as flags, a field with a value as "--flag value",
/// library parameters (a Run being validated) as the library names them.
inline FieldNames flag_names();

/// "hsdp <command> --flag value ..." for a request stated field by field.
inline std::string command_line(std::string_view command, const FieldValues& request);

namespace detail {

// Fields whose flag is not "--" followed by the field name with '-' for '_'. Every other
// field (n, batch_size, noise_std, noise_multiplier, strong_convexity, record_norm, ...) is
// spelled by that rule.
inline constexpr std::array<std::pair<std::string_view, std::string_view>, 2> kIrregular{{
    {"alphas", "--alpha"},       // repeatable: one order per flag
    {"analyses", "--analysis"},  // repeatable: one analysis per flag
}};

}  // namespace detail

inline std::string flag(std::string_view field) {
  for (const auto& [name, spelled] : detail::kIrregular)
    if (name == field) return std::string(spelled);
  std::string out = "--";
  out += field;
  std::replace(out.begin() + 2, out.end(), '_', '-');
  return out;
}

inline std::string field_of_flag(std::string_view flag_name) {
  for (const auto& [name, spelled] : detail::kIrregular)
    if (spelled == flag_name) return std::string(name);
  std::string out(flag_name.substr(flag_name.starts_with("--") ? 2 : 0));
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

inline FieldNames flag_names() {
  FieldNames f;
  f.option = [](std::string_view field) { return flag(field); };
  f.option_value = [](std::string_view field, std::string_view value) {
    return value.empty() ? flag(field) : fmt::format("{} {}", flag(field), value);
  };
  f.parameter = [](std::string_view name) { return std::string(name); };
  return f;
}

inline std::string command_line(std::string_view command, const FieldValues& request) {
  std::string out = fmt::format("hsdp {}", command);
  for (const auto& [field, value] : request)
    out += value.empty() ? " " + flag(field) : fmt::format(" {} {}", flag(field), value);
  return out;
}

}  // namespace hsdp::cli
