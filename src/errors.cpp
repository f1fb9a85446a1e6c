#include "hsdp/errors.hpp"

#include <fmt/format.h>

#include <cmath>

namespace hsdp {

std::string show(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return fmt::format("{}", value);
}

void fail(std::string_view parameter, double value, std::string_view range) {
  fail(parameter, show(value), range);
}

void fail(std::string_view parameter, std::string_view value, std::string_view range) {
  throw InvalidArgument(fmt::format("{} = {}: must be {}", parameter, value, range));
}

double require_finite(std::string_view parameter, double value) {
  if (!std::isfinite(value)) fail(parameter, value, "a finite number");
  return value;
}

double require_positive(std::string_view parameter, double value) {
  if (!std::isfinite(value) || !(value > 0)) fail(parameter, value, "finite and > 0");
  return value;
}

double require_nonnegative(std::string_view parameter, double value) {
  if (!std::isfinite(value) || !(value >= 0)) fail(parameter, value, "finite and >= 0");
  return value;
}

double require_positive_or_inf(std::string_view parameter, double value) {
  if (std::isnan(value) || !(value > 0)) fail(parameter, value, "> 0 (inf allowed)");
  return value;
}

double require_open(std::string_view parameter, double value, double lo, double hi) {
  if (!std::isfinite(value) || !(value > lo && value < hi))
    fail(parameter, value, fmt::format("in the open interval ({}, {})", show(lo), show(hi)));
  return value;
}

double require_closed(std::string_view parameter, double value, double lo, double hi) {
  if (!std::isfinite(value) || !(value >= lo && value <= hi))
    fail(parameter, value, fmt::format("in [{}, {}]", show(lo), show(hi)));
  return value;
}

std::int64_t require_range(std::string_view parameter, std::int64_t value, std::int64_t lo,
                           std::int64_t hi) {
  if (value < lo || value > hi)
    fail(parameter, std::to_string(value), fmt::format("an integer in [{}, {}]", lo, hi));
  return value;
}

}  // namespace hsdp
