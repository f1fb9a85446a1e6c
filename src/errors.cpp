#include "hsdp/errors.hpp"
#include "hsdp/output_files.hpp"  // utf8_length_at

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

namespace hsdp {

std::string show(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{}", value);
}

namespace {

std::string with_underscores(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (c == '-') c = '_';
  return out;
}

// The spellings in use; the library's own until a front end installs its own (once, at
// start-up, so reads need no lock).
FieldNames& error_names() {
  static FieldNames names = FieldNames::library();
  return names;
}
FieldNames& report_names() {
  static FieldNames names = FieldNames::library();
  return names;
}
thread_local bool reports_as_errors = false;  // ReportsSpelledAsErrors on this thread
const FieldNames& spelling_of_reports() { return reports_as_errors ? error_names() : report_names(); }

}  // namespace

FieldNames FieldNames::library() {
  FieldNames f;
  f.option = [](std::string_view field) { return std::string(field); };
  f.option_value = [](std::string_view field, std::string_view value) {
    return value.empty() ? std::string(field) : fmt::format("{} = {}", field, value);
  };
  f.parameter = [](std::string_view name) { return std::string(name); };
  return f;
}

void use_field_names(FieldNames errors, FieldNames reports) {
  error_names() = std::move(errors);
  report_names() = std::move(reports);
}

ReportsSpelledAsErrors::ReportsSpelledAsErrors() : previous_(reports_as_errors) { reports_as_errors = true; }
ReportsSpelledAsErrors::~ReportsSpelledAsErrors() { reports_as_errors = previous_; }

std::string report_field(std::string_view field) { return spelling_of_reports().option(field); }
std::string report_field(std::string_view field, std::string_view value) {
  return spelling_of_reports().option_value(field, value);
}
std::string error_field(std::string_view field) { return error_names().option(field); }
std::string error_field(std::string_view field, std::string_view value) {
  return error_names().option_value(field, value);
}

std::string Param::spelled() const {
  return option_ ? error_names().option(name_) : error_names().parameter(name_);
}

std::string Param::field() const { return with_underscores(name_); }

InvalidArgument::InvalidArgument(const std::string& what) : std::invalid_argument(escape_controls(what)) {}

InvalidArgument::InvalidArgument(const Param& parameter, std::string value, std::string range)
    : std::invalid_argument(escape_controls(fmt::format("{} = {}: must be {}", parameter.spelled(), value, range))),
      field_(parameter.field()),
      value_(std::move(value)),
      range_(std::move(range)) {}

void fail(const Param& parameter, double value, std::string_view range) {
  fail(parameter, show(value), range);
}

void fail(const Param& parameter, std::string_view value, std::string_view range) {
  throw InvalidArgument(parameter, std::string(value), std::string(range));
}

double require_finite(const Param& parameter, double value) {
  if (!std::isfinite(value)) fail(parameter, value, "a finite number");
  return value;
}

double require_positive(const Param& parameter, double value) {
  if (!std::isfinite(value) || !(value > 0)) fail(parameter, value, "finite and > 0");
  return value;
}

double require_nonnegative(const Param& parameter, double value) {
  if (!std::isfinite(value) || !(value >= 0)) fail(parameter, value, "finite and >= 0");
  return value;
}

double require_positive_or_inf(const Param& parameter, double value) {
  if (std::isnan(value) || !(value > 0)) fail(parameter, value, "> 0 (inf allowed)");
  return value;
}

double require_open(const Param& parameter, double value, double lo, double hi) {
  if (!std::isfinite(value) || !(value > lo && value < hi))
    fail(parameter, value, fmt::format("in the open interval ({}, {})", show(lo), show(hi)));
  return value;
}

double require_closed(const Param& parameter, double value, double lo, double hi) {
  if (!std::isfinite(value) || !(value >= lo && value <= hi))
    fail(parameter, value, fmt::format("in [{}, {}]", show(lo), show(hi)));
  return value;
}

std::int64_t require_range(const Param& parameter, std::int64_t value, std::int64_t lo,
                           std::int64_t hi) {
  if (value < lo || value > hi)
    fail(parameter, fmt::format("{}", value), fmt::format("an integer in [{}, {}]", lo, hi));
  return value;
}

std::uint64_t parse_unsigned(const Param& parameter, std::string_view text, std::uint64_t hi) {
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  // from_chars reads no sign into an unsigned type, so "-1" is not a number here.
  if (digits.empty() || digits.front() == '+' || ec != std::errc() || end != digits.data() + digits.size() ||
      value > hi)
    fail(parameter, text, fmt::format("an integer in [0, {}]", hi));
  return value;
}

namespace {
// The text without one leading '+' before a digit or a point ("+5" reads as 5; "+-5" does not).
std::string_view without_plus(std::string_view text) {
  if (text.size() > 1 && text.front() == '+' && (std::isdigit(static_cast<unsigned char>(text[1])) || text[1] == '.'))
    text.remove_prefix(1);
  return text;
}
}  // namespace

std::int64_t parse_integer(const Param& parameter, std::string_view text) {
  const std::string_view digits = without_plus(text);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    fail(parameter, text.empty() ? std::string("(empty)") : std::string(text), "an integer in the 64-bit range");
  return value;
}

double parse_real(const Param& parameter, std::string_view text) {
  const std::string_view number = without_plus(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || end != number.data() + number.size() ||
      (ec != std::errc() && ec != std::errc::result_out_of_range))
    fail(parameter, text.empty() ? std::string("(empty)") : std::string(text), "a number");
  // Out of range: beyond the largest double (1e400; never inf), or below the smallest (1e-400,
  // read as 0 or a subnormal by from_chars's contract only in some libraries: refused too).
  if (ec == std::errc::result_out_of_range) fail(parameter, text, "a number in the float64 range");
  return value;
}

std::optional<double> read_real(std::string_view text) {
  const std::string_view number = without_plus(text);
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::string internal_error(std::string_view command, std::string_view what) {
  return escape_controls(fmt::format("{}: {} (a bug in hsdp, not in your input: please report it with the command "
                                     "or call that caused it)",
                                     command, what));
}

std::size_t utf8_length_at(std::string_view text, std::size_t at) {
  // RFC 3629, section 4: the well-formed sequences (no overlong forms, no surrogates, at most
  // U+10FFFF).
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char c = byte(at);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (c >= 0xc2 && c <= 0xdf) n = 2;
  else if (c == 0xe0) n = 3, lo = 0xa0;
  else if (c >= 0xe1 && c <= 0xec) n = 3;
  else if (c == 0xed) n = 3, hi = 0x9f;
  else if (c >= 0xee && c <= 0xef) n = 3;
  else if (c == 0xf0) n = 4, lo = 0x90;
  else if (c >= 0xf1 && c <= 0xf3) n = 4;
  else if (c == 0xf4) n = 4, hi = 0x8f;
  else return 0;
  if (at + n > text.size()) return 0;
  if (byte(at + 1) < lo || byte(at + 1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (byte(at + i) < 0x80 || byte(at + i) > 0xbf) return 0;
  return n;
}

std::string escape_controls(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t n = utf8_length_at(text, i);
    if (n > 1) {  // a valid multi-byte character, kept
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\0': out += "\\0"; break;
      default:
        // A control character, DEL, or a byte that is not part of valid UTF-8 (a file name is
        // bytes: the message stays valid text, for a terminal and for Python's str).
        if (c < 0x20 || c == 0x7f || n == 0) out += fmt::format("\\x{:02x}", c);
        else out += static_cast<char>(c);
    }
    ++i;
  }
  return out;
}

std::int64_t count_from_real(const Param& parameter, double stated, double count, std::int64_t lo,
                             std::int64_t hi, std::string_view what) {
  // Compared as doubles before any conversion (rounding half away from zero, as llround).
  const double rounded = std::round(count);
  if (!std::isfinite(count) || !(rounded >= static_cast<double>(lo)) || !(rounded <= static_cast<double>(hi)) ||
      !(rounded < 0x1p63))
    fail(parameter, stated, fmt::format("such that {} = {} is in [{}, {}]", what, show(count), lo, hi));
  return static_cast<std::int64_t>(rounded);
}

}  // namespace hsdp
