// Errors and the shared argument checks (docs/architecture.md, "Errors and results").
//
// Every public boundary validates its input with these helpers so that every message
// reads the same: "<parameter> = <value>: must be <range>".
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace hsdp {

/// How the front end in use names a field of a request. The library names a field by its
/// library name ("n", "batch_size", "noise_multiplier") and never by a command-line flag;
/// the CLI spells it as its flag (`--batch-size`), Python as its keyword (`batch_size`).
struct FieldNames {
  /// A field the user states: `--batch-size` (CLI), `batch_size` (Python).
  std::function<std::string(std::string_view field)> option;
  /// A field with the value to give it, as the user would write it: `--noise laplace`.
  /// An empty value is a switch (`--non-convex`).
  std::function<std::string(std::string_view field, std::string_view value)> option_value;
  /// A parameter named in the library's own terms (a Run being validated, "X[3, 1]").
  std::function<std::string(std::string_view name)> parameter;

  /// The library's own names: "batch_size", "noise = laplace", the parameter as given.
  static FieldNames library();
};

/// Installs the front end's spelling, once at start-up (before any other thread runs):
/// `errors` for the messages of InvalidArgument, `reports` for the text of results (an
/// analysis's "not applicable" reason, notes), which the CLI and Python print alike.
void use_field_names(FieldNames errors, FieldNames reports);

/// While alive, the text of results on this thread is spelled as errors are: for a result
/// whose reason becomes an error message (Python's Analysis.get_epsilon raises ValueError
/// with the reason an analysis does not apply, which must name keywords, not flags).
class ReportsSpelledAsErrors {
 public:
  ReportsSpelledAsErrors();
  ~ReportsSpelledAsErrors();
  ReportsSpelledAsErrors(const ReportsSpelledAsErrors&) = delete;
  ReportsSpelledAsErrors& operator=(const ReportsSpelledAsErrors&) = delete;

 private:
  bool previous_;
};

/// A field in the text of a result, spelled by the front end: "needs Laplace noise ({})"
/// with report_field("noise", "laplace") reads "(--noise laplace)" on the command line.
std::string report_field(std::string_view field);
std::string report_field(std::string_view field, std::string_view value);
/// The same in the text of an error message ("absent when {} is given").
std::string error_field(std::string_view field);
std::string error_field(std::string_view field, std::string_view value);

/// What an error is about: an option the user stated (`opt("batch_size")`, spelled by the
/// front end), or a parameter named in the library's terms (a plain string: "batch-size" of
/// a Run being validated, "X[3, 1]").
class Param {
 public:
  Param(const char* name) : name_(name) {}  // NOLINT: a plain name reads as one
  Param(std::string_view name) : name_(name) {}  // NOLINT
  Param(std::string name) : name_(std::move(name)) {}  // NOLINT
  static Param option(std::string_view field) {
    Param p{field};
    p.option_ = true;
    return p;
  }
  const std::string& name() const { return name_; }
  bool is_option() const { return option_; }
  /// The name the front end prints.
  std::string spelled() const;
  /// The library name of the field ("batch-size" -> "batch_size").
  std::string field() const;

 private:
  std::string name_;
  bool option_ = false;
};

/// An option of the request, by its library name (see Param).
inline Param opt(std::string_view field) { return Param::option(field); }

/// Invalid input at a public boundary. The message names the parameter, the value and
/// the allowed range ("<parameter> = <value>: must be <range>"), the parameter spelled by the
/// front end; field(), value() and range() give the parts. The CLI prints it and exits with
/// status 2; Python sees ValueError.
class InvalidArgument : public std::invalid_argument {
 public:
  /// A message that is not about one field (a malformed file: "<name>:<line>: <what>"). Every
  /// message is kept with its control characters escaped (escape_controls).
  explicit InvalidArgument(const std::string& what);
  explicit InvalidArgument(const char* what) : InvalidArgument(std::string(what)) {}
  InvalidArgument(const Param& parameter, std::string value, std::string range);

  /// The library name of the field ("batch_size"); empty when the message names none.
  const std::string& field() const { return field_; }
  const std::string& value() const { return value_; }
  const std::string& range() const { return range_; }

 private:
  std::string field_, value_, range_;
};

/// Formats a double the way every message shows it (shortest round-trip form).
std::string show(double value);

[[noreturn]] void fail(const Param& parameter, double value, std::string_view range);
[[noreturn]] void fail(const Param& parameter, std::string_view value, std::string_view range);

/// Not NaN and not +-inf.
double require_finite(const Param& parameter, double value);
/// Finite and > 0.
double require_positive(const Param& parameter, double value);
/// Finite and >= 0.
double require_nonnegative(const Param& parameter, double value);
/// > 0, and either finite or +inf (e.g. a diameter: inf means unconstrained).
double require_positive_or_inf(const Param& parameter, double value);
/// Finite and in the open interval (lo, hi).
double require_open(const Param& parameter, double value, double lo, double hi);
/// Finite and in the closed interval [lo, hi].
double require_closed(const Param& parameter, double value, double lo, double hi);
/// Integer in [lo, hi].
std::int64_t require_range(const Param& parameter, std::int64_t value, std::int64_t lo,
                           std::int64_t hi);

/// The unsigned integer written `text` (decimal digits, an optional leading '+'), at most
/// `hi`; a sign, a fraction, an exponent, other text or a value beyond `hi` is an
/// InvalidArgument naming `parameter` with the text as given (a seed of -1 must not wrap to
/// 2^64 - 1, nor 2^64 saturate). The one parse of every unsigned value a user states.
std::uint64_t parse_unsigned(const Param& parameter, std::string_view text,
                             std::uint64_t hi = ~std::uint64_t{0});

/// The signed integer written `text` (decimal digits with an optional sign), in the 64-bit
/// range; anything else (a fraction, an exponent, hex, other text, empty text, a value beyond
/// the range) is an InvalidArgument naming `parameter` with the text as given (never saturated:
/// 9223372036854775808 is not echoed as ...807). The one parse of every integer a user types.
std::int64_t parse_integer(const Param& parameter, std::string_view text);

/// The number written `text` (decimal or exponent notation, an optional sign, inf, nan), as the
/// nearest double; empty or other text, or a value beyond the float64 range (1e400), is an
/// InvalidArgument naming `parameter` with the text as given. Ranges are the caller's to check.
double parse_real(const Param& parameter, std::string_view text);

/// The finite number written `text` in parse_real's notation, or nothing (empty or other text,
/// inf, nan, a value beyond the float64 range): for text that may or may not be a number (a
/// label "0.5" or "M"). Like every parse and print of a number in hsdp, it does not depend on
/// the C locale (std::from_chars; fmt without 'L'): under LC_NUMERIC=de_DE.UTF-8 "1.5" is
/// still 1.5 and 1.5 prints "1.5" (docs/input.md, "Numbers").
std::optional<double> read_real(std::string_view text);

/// `text` with its control characters (and DEL) escaped as C escapes: \n, \t, \r, \0, \x1b.
/// Every message shows names and values through it: a file name with a newline or an escape
/// sequence cannot forge lines or colours, and a NUL cannot cut the message.
std::string escape_controls(std::string_view text);

/// The last resort of a front end, for an exception that is not an InvalidArgument (no input
/// should ever cause one): "<command>: <what> (a bug in hsdp, not in your input: please report
/// it with the command or call that caused it)". The CLI prints it as an internal error (exit
/// status 1), Python raises RuntimeError with it.
std::string internal_error(std::string_view command, std::string_view what);

/// A count computed in floating point from a stated value (T = epochs * n / b): the nearest
/// integer to `count` when `count` is finite and rounds into [lo, hi]; otherwise an
/// InvalidArgument naming `parameter` (the field stated), its value `stated`, and `what` (how
/// the count follows from it). Every real -> count conversion goes through here: converting
/// out of range is undefined (std::llround turned 1e30 epochs into one step).
std::int64_t count_from_real(const Param& parameter, double stated, double count, std::int64_t lo,
                             std::int64_t hi, std::string_view what);

/// The value named `text` among `options`; otherwise InvalidArgument listing the names
/// ("<parameter> = <text>: must be one of a, b, c").
template <typename E>
E pick_choice(const Param& parameter, std::string_view text,
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
