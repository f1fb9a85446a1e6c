// Flags whose value is an unsigned integer (seeds, a column index): read with the library's
// sign-checked parse (hsdp::parse_unsigned), so `--seed -1` is an error naming --seed, never
// a seed of 2^64 - 1, and `--seed 18446744073709551616` is an error, never 2^64 - 1.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "field_names.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::cli {

/// Adds `flag(field)` to `app`, its value parsed into `target` (std::uint64_t or std::size_t,
/// or an optional of either). Returns the option (e.g. to show a default).
template <typename T>
CLI::Option* add_unsigned_flag(CLI::App& app, const std::string& field, T& target, const std::string& help) {
  auto* option = app.add_option_function<std::string>(
      flag(field), [&target, field](const std::string& text) { target = parse_unsigned(opt(field), text); }, help);
  option->type_name("UINT");
  return option;
}

}  // namespace hsdp::cli
