// Errors and the shared argument checks (DESIGN.md, "Errors and results").
//
// Every public boundary validates its input with these helpers so that every message
// reads the same: "<parameter> = <value>: must be <range>".
#pragma once

#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace hsdp {

/// Invalid input at a public boundary. The message names the parameter, the value and
/// the allowed range. The CLI prints it and exits with status 2; Python sees ValueError.
class InvalidArgument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// Formats a double the way every message shows it (shortest round-trip form).
std::string show(double value);

[[noreturn]] void fail(std::string_view parameter, double value, std::string_view range);
[[noreturn]] void fail(std::string_view parameter, std::string_view value,
                       std::string_view range);

/// Not NaN and not +-inf.
double require_finite(std::string_view parameter, double value);
/// Finite and > 0.
double require_positive(std::string_view parameter, double value);
/// Finite and >= 0.
double require_nonnegative(std::string_view parameter, double value);
/// > 0, and either finite or +inf (e.g. a diameter: inf means unconstrained).
double require_positive_or_inf(std::string_view parameter, double value);
/// Finite and in the open interval (lo, hi).
double require_open(std::string_view parameter, double value, double lo, double hi);
/// Finite and in the closed interval [lo, hi].
double require_closed(std::string_view parameter, double value, double lo, double hi);
/// Integer in [lo, hi].
std::int64_t require_range(std::string_view parameter, std::int64_t value, std::int64_t lo,
                           std::int64_t hi);

/// The value named `text` among `options`; otherwise InvalidArgument listing the names
/// ("<parameter> = <text>: must be one of a, b, c").
template <typename E>
E pick_choice(std::string_view parameter, std::string_view text,
              std::initializer_list<std::pair<const char*, E>> options) {
  std::string names;
  for (const auto& [name, value] : options) {
    if (text == name) return value;
    names += names.empty() ? "" : ", ";
    names += name;
  }
  fail(parameter, text, "one of " + names);
}

}  // namespace hsdp
