// How numbers read in what the library prints: the text of reports, plans, audits and run
// summaries, and numbers in their JSON. The presentation helpers in one place. Privacy values
// are rounded up before they are printed (round_up, include/hsdp/analysis/analysis.hpp), so
// 10 significant digits never print below a bound.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace hsdp::report {

/// 10 significant digits ("{:.10g}"), no special case: a run summary's values.
inline std::string g10(double v) { return fmt::format("{:.10g}", v); }

/// A report's value: 10 significant digits, "inf" for +-inf, "0" for 0.
inline std::string show10(double v) {
  if (std::isinf(v)) return "inf";
  if (v == 0) return "0";
  return g10(v);
}

/// A plan's value: 10 significant digits, "inf" for any value that is not finite (a bound
/// that could not be computed is no bound).
inline std::string show10_or_inf(double v) { return std::isfinite(v) ? g10(v) : "inf"; }

/// An audit's estimate: 6 significant digits, "inf" for +-inf.
inline std::string show6(double v) {
  if (std::isinf(v)) return "inf";
  return fmt::format("{:.6g}", v);
}

/// A number in JSON, which has no infinity: +-inf as the text "inf" / "-inf".
inline nlohmann::json json_number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

/// A value >= 0 or +inf in JSON (a plan's noise and bounds): inf as the text "inf".
inline nlohmann::json json_nonnegative(double v) {
  if (std::isinf(v)) return "inf";
  return v;
}

}  // namespace hsdp::report
