// Calibration (include/hsdp/calibrate.hpp): one generic solver over a parameter x -> Run
// (calibrate_parameter), the adapters of noise, steps and sampling rate over it
// (calibration_adapter), and their texts (calibrate). The search runs on the accountant's
// envelope: a candidate meets the target (epsilon, delta) when some applicable upper-bound
// analysis certifies delta(epsilon) <= delta (one evaluation of log_delta per analysis, no
// root finding). The returned value is then re-evaluated with the full accountant
// (epsilon at the target delta, rounded up) and moved towards the safe side until that
// check passes too, so the reported guarantee always meets the target.
#include "hsdp/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/interrupt.hpp"

namespace hsdp {

std::string_view to_string(CalibrationParameter p) {
  switch (p) {
    case CalibrationParameter::noise: return "noise";
    case CalibrationParameter::steps: return "steps";
    case CalibrationParameter::sampling_rate: return "sampling-rate";
  }
  return "?";
}

CalibrationParameter parse_calibration_parameter(std::string_view text, const Param& parameter) {
  for (auto p : {CalibrationParameter::noise, CalibrationParameter::steps,
                 CalibrationParameter::sampling_rate})
    if (text == to_string(p)) return p;
  fail(parameter, text, "one of noise, steps, sampling-rate");
}

namespace {

/// Builds the candidate runs: the base run with (noise value, steps, batch) substituted,
/// the step sizes regenerated when T changes and the noise std recomputed from the value
/// in its units (it depends on eta_t and b for sigma and multiplier units).
struct Builder {
  Run base;
  NoiseParameter noise;
  ScheduleShape shape;
  bool keep_noise_schedule = false;  // base noise_std is a schedule and is kept as given

  Run make(double noise_value, std::int64_t steps, std::int64_t batch) const {
    Run r = base;
    r.steps = steps;
    r.batch_size = batch;
    if (steps != base.steps) r.eta = make_schedule(shape, base.eta.at(1), steps);
    if (!keep_noise_schedule) r.noise_std = noise_schedule(r, {noise.unit, noise.convention, noise_value});
    return r;
  }
};

/// The accountant's envelope at the target: does some applicable upper bound certify
/// delta(epsilon) <= delta (delta rounded up, as the accountant reports it)?
class Envelope {
 public:
  Envelope(std::span<const AnalysisPtr> analyses, double epsilon, double delta,
           std::function<void(int, double)> progress = {})
      : analyses_(analyses), epsilon_(epsilon), delta_(delta), progress_(std::move(progress)) {}

  /// `x`: the value of the searched parameter (for the progress callback only).
  bool meets(const Run& run, double x = std::numeric_limits<double>::quiet_NaN()) {
    poll_interrupt();  // one evaluation of the search (include/hsdp/interrupt.hpp)
    if (progress_) progress_(evaluations_, x);
    ++evaluations_;
    gap_ = std::numeric_limits<double>::infinity();
    for (const auto& a : analyses_) {
      if (a->kind() != BoundKind::upper || a->not_applicable(run)) continue;
      const double ld = a->log_delta(run, epsilon_);
      if (std::isnan(ld))
        throw std::logic_error(fmt::format("{}: log delta is NaN at eps = {}", a->name(), epsilon_));
      gap_ = std::min(gap_, ld - std::log(delta_));
      if (log_delta_meets(ld, delta_)) return true;
    }
    return false;
  }

  /// log delta - log(target delta) of the last run that meets() evaluated: the smallest over
  /// the analyses it evaluated (it stops at the first that meets the target), +inf when none
  /// applies. What the continuous search interpolates; the decisions are meets()'s.
  double gap() const { return gap_; }

  /// The full accountant (epsilon at the target delta) at `run`.
  Report report(const Run& run) const { return account(run, Query::at_delta(delta_), analyses_); }

  /// The re-evaluation that decides what is returned: the accountant's best epsilon at the
  /// target delta is finite and <= the target epsilon.
  bool verified(const Report& r) const {
    if (!r.best) return false;
    const double e = *r.analyses[*r.best].epsilon;
    return std::isfinite(e) && e <= epsilon_;
  }

  int evaluations() const { return evaluations_; }

 private:
  std::span<const AnalysisPtr> analyses_;
  double epsilon_, delta_;
  std::function<void(int, double)> progress_;
  int evaluations_ = 0;
  double gap_ = std::numeric_limits<double>::infinity();
};

std::string describe_best(const Report& r) {
  if (!r.best) return "no analysis applies";
  const auto& b = r.analyses[*r.best];
  return fmt::format("the tightest bound, {}, gives epsilon = {:.10g}", b.name, *b.epsilon);
}

constexpr const char* kNotConfirmed = "the re-evaluation by the accountant did not confirm the solver's boundary";

/// Rounds down / up to 10 significant digits (a parameter value, not an evaluated bound: no
/// inflation as in round_up; a value already on that grid is kept, so that a candidate the
/// search evaluated is re-evaluated as it is -- and its composition found in the analyses'
/// caches). 0 and +-inf are kept.
double round_down(double value) {
  if (value == 0.0 || std::isinf(value)) return value;
  const int exponent = static_cast<int>(std::floor(std::log10(value)));
  const long double scale = std::pow(10.0L, 9 - exponent);
  double rounded = static_cast<double>(std::floor(static_cast<long double>(value) * scale) / scale);
  while (rounded > value) rounded = std::nextafter(rounded, -std::numeric_limits<double>::infinity());
  return rounded;
}
double round_up_digits(double value) {
  if (value == 0.0 || std::isinf(value)) return value;
  const int exponent = static_cast<int>(std::floor(std::log10(value)));
  const long double scale = std::pow(10.0L, 9 - exponent);
  double rounded = static_cast<double>(std::ceil(static_cast<long double>(value) * scale) / scale);
  while (rounded < value) rounded = std::nextafter(rounded, std::numeric_limits<double>::infinity());
  return rounded;
}

/// Accepts `run` (verified by the full accountant) as the solution at x.
void accept(ParameterSolution& out, double x, Run run, Report report) {
  out.feasible = true;
  out.value = x;
  out.run = std::move(run);
  const auto& b = report.analyses[*report.best];
  out.achieved_name = b.name;
  out.achieved_epsilon = *b.epsilon;
  out.achieved_delta = *b.delta;
  out.report = std::move(report);
}

/// Nothing within the limits meets the target: the accountant at the most private limit.
/// `scope` says what was searched ("up to the search limit").
void infeasible(ParameterSolution& out, const CalibrationAdapter& a, Envelope& env, double private_limit,
                std::string_view scope) {
  Report r = env.report(a.make(private_limit));
  out.reason = r.best ? fmt::format("no {} {} meets the target (at {} = {}, {})", a.name, scope, a.name,
                                    show(private_limit), describe_best(r))
                      : fmt::format("no upper-bound analysis applies at {} = {}", a.name, show(private_limit));
  out.at_private_limit = std::move(r);
}

// ---- continuous: log-scale bracket grown by factors of 4 from the start, then narrowed
// (the analyses are monotone in the noise, but that is checked, not assumed: the
// bracket's ends are evaluated). The narrowing reuses the values of the evaluations made
// so far: the next candidate is where log delta of the envelope (a smooth function of log x
// for the noise, the steps, the rate) crosses the target on the line through the bracket's
// ends (regula falsi with the Illinois rule), aimed a quarter tolerance past that point
// towards the end that has not moved, so that the bracket closes from both sides; a
// bisection step whenever interpolation did not halve the bracket twice running (so never
// more steps than bisection's double). Typically 4-6 evaluations instead of ~14. Candidates
// are on the 10-significant-digit grid of the value reported.
void solve_continuous(ParameterSolution& out, const CalibrationAdapter& a, Envelope& env, double tol) {
  const bool up = a.direction == PrivacyDirection::larger_is_more_private;  // the private side is up
  auto on_grid = [&](double x) { return up ? round_up_digits(x) : round_down(x); };
  auto meets = [&](double x) { return env.meets(a.make(x), x); };
  auto toward_public = [&](double x) { return up ? std::max(a.lower, x / 4) : std::min(a.upper, x * 4); };
  auto toward_private = [&](double x) { return up ? std::min(a.upper, x * 4) : std::max(a.lower, x / 4); };
  auto at_public_limit = [&](double x) { return up ? x <= a.lower : x >= a.upper; };
  auto at_private_limit = [&](double x) { return up ? x >= a.upper : x <= a.lower; };
  double bad = 0, ok = 0;  // bad fails, ok meets
  double ok_gap = std::numeric_limits<double>::infinity(), bad_gap = ok_gap;  // env.gap() there
  const double x = std::clamp(a.start.value_or(std::sqrt(a.lower) * std::sqrt(a.upper)), a.lower, a.upper);
  a.make(x).validate();
  if (meets(x)) {
    ok = x;
    ok_gap = env.gap();
    for (;;) {
      if (at_public_limit(ok)) {
        out.at_limit = true;
        break;
      }
      const double next = toward_public(ok);
      if (!meets(next)) {
        bad = next;
        bad_gap = env.gap();
        break;
      }
      ok = next;
      ok_gap = env.gap();
    }
  } else {
    bad = x;
    bad_gap = env.gap();
    for (;;) {
      if (at_private_limit(bad)) {
        infeasible(out, a, env, up ? a.upper : a.lower, up ? "up to the search limit" : "down to the search limit");
        return;
      }
      const double next = toward_private(bad);
      if (meets(next)) {
        ok = next;
        ok_gap = env.gap();
        break;
      }
      bad = next;
      bad_gap = env.gap();
    }
  }
  // Narrowing in log scale down to a relative bracket width <= tol; ok always meets.
  double g_ok = ok_gap, g_bad = bad_gap;  // values at the ends (for the interpolation)
  int moved_ok = 0, moved_bad = 0, slow = 0;  // consecutive moves of one end; slow steps
  const double aim = 0.25 * std::log1p(tol);
  while (!out.at_limit && (up ? ok / bad : bad / ok) - 1 > tol) {
    const double u_ok = std::log(ok), u_bad = std::log(bad), width = std::abs(u_bad - u_ok);
    const double dir = u_bad > u_ok ? 1.0 : -1.0;  // from ok towards bad
    double u = 0.5 * (u_ok + u_bad);
    if (slow < 2 && std::isfinite(g_ok) && std::isfinite(g_bad) && g_ok <= 0 && g_bad > 0) {
      // Illinois: an end that stayed twice has its value halved (per extra stay).
      const double go = g_ok * std::ldexp(1.0, -std::max(0, moved_bad - 1));
      const double gb = g_bad * std::ldexp(1.0, -std::max(0, moved_ok - 1));
      u = u_ok + (u_bad - u_ok) * go / (go - gb);
      u += moved_ok > 0 ? dir * aim : -dir * aim;
      const double margin = std::min(aim, 0.25 * width);
      u = dir > 0 ? std::clamp(u, u_ok + margin, u_bad - margin) : std::clamp(u, u_bad + margin, u_ok - margin);
    }
    const double x = on_grid(std::exp(u));
    if (!(up ? x > bad && x < ok : x > ok && x < bad)) break;
    const bool m = meets(x);
    const double before = width;
    if (m) {
      ok = x;
      g_ok = env.gap();
      ++moved_ok;
      moved_bad = 0;
    } else {
      bad = x;
      g_bad = env.gap();
      ++moved_bad;
      moved_ok = 0;
    }
    slow = std::abs(std::log(bad) - std::log(ok)) > 0.5 * before ? slow + 1 : 0;
  }
  // Re-evaluate with the full accountant; move towards the private side within the
  // tolerance if its epsilon (the root finder's conservative end) lands a hair above the
  // target. The value is rounded to 10 significant digits towards the private side so
  // that the number printed is the number verified.
  const double factor = 1 + std::max(tol, 1e-9);
  for (int i = 0; i < 64 && (up ? ok <= a.upper : ok >= a.lower); ++i) {
    ok = on_grid(ok);
    Run run = a.make(ok);
    Report r = env.report(run);
    if (env.verified(r)) {
      accept(out, ok, std::move(run), std::move(r));
      if (out.at_limit)
        out.note = up ? fmt::format("the target holds down to the lower search limit {} = {}", a.name, show(a.lower))
                      : fmt::format("the target holds up to the upper search limit {} = {}", a.name, show(a.upper));
      return;
    }
    ok = up ? ok * factor : ok / factor;
  }
  out.reason = kNotConfirmed;
}

// ---- integers: the envelope need not be monotone (analyses apply only on some ranges;
// last-iterate bounds plateau), so: evaluate a geometric grid plus the special points
// (where an analysis starts or stops applying), take the least private point that meets
// the target, and bisect between it and its neighbour on the grid (which fails) to an
// exact boundary; then re-evaluate with the accountant, stepping towards the private side
// while the full check disagrees with the envelope (a boundary within rounding).
void solve_integer(ParameterSolution& out, const CalibrationAdapter& a, Envelope& env) {
  const bool up = a.direction == PrivacyDirection::larger_is_more_private;
  const auto lo = static_cast<std::int64_t>(a.lower), hi = static_cast<std::int64_t>(a.upper);
  auto meets = [&](std::int64_t x) { return env.meets(a.make(static_cast<double>(x)), static_cast<double>(x)); };
  std::vector<std::int64_t> grid = a.special_points;
  for (std::int64_t g = 1; g < hi; g *= 2) grid.push_back(g);
  grid.push_back(hi);
  grid.push_back(lo);
  std::erase_if(grid, [&](std::int64_t g) { return g < lo || g > hi; });
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  // Every grid point is evaluated: the feasible set need not be an interval.
  std::vector<char> ok(grid.size());
  for (std::size_t k = 0; k < grid.size(); ++k) ok[k] = meets(grid[k]);
  const std::size_t m = grid.size();
  // Walk the grid from the least private end (index i counts from that end).
  auto at = [&](std::size_t i) { return up ? i : m - 1 - i; };
  std::size_t i = 0;
  while (i < m && !ok[at(i)]) ++i;
  if (i == m) {
    infeasible(out, a, env, static_cast<double>(up ? hi : lo),
               fmt::format("in [{}, {}] (every grid point checked fails)", lo, hi));
    return;
  }
  std::int64_t value = grid[at(i)];
  if (i == 0) {
    out.at_limit = true;
    std::size_t j = 0;
    while (j + 1 < m && ok[at(j + 1)]) ++j;
    out.holds_from = grid[at(j)];
  } else {
    std::int64_t good = value, fails = grid[at(i - 1)];
    while (std::abs(fails - good) > 1) {
      const std::int64_t mid = std::min(good, fails) + std::abs(fails - good) / 2;
      (meets(mid) ? good : fails) = mid;
    }
    value = good;
    out.exact_boundary = true;
  }
  for (int k = 0; k < 64 && value >= lo && value <= hi; ++k, value += up ? 1 : -1) {
    Run run = a.make(static_cast<double>(value));
    Report r = env.report(run);
    if (env.verified(r)) {
      accept(out, static_cast<double>(value), std::move(run), std::move(r));
      const std::int64_t limit = up ? lo : hi;
      if (out.at_limit && value == limit)
        out.note = fmt::format("the target holds at the search limit {} = {} and at every grid point checked from "
                               "{} = {} to it",
                               a.name, limit, a.name, out.holds_from);
      else if (out.exact_boundary)
        out.note = fmt::format("{} = {} meets the target and {} = {} does not", a.name, value, a.name,
                               up ? value - 1 : value + 1);
      return;
    }
  }
  out.reason = kNotConfirmed;
}

}  // namespace

ParameterSolution calibrate_parameter(const CalibrationAdapter& adapter, double epsilon, double delta,
                                      const CalibrationSearch& search) {
  require_nonnegative("epsilon", epsilon);
  require_open("delta", delta, 0.0, 1.0);
  require_open("relative_tolerance", search.relative_tolerance, 0.0, 0.5);
  if (!adapter.make) fail("make", "(empty)", "a function from the parameter to a run");
  if (adapter.domain == ParameterDomain::continuous) {
    require_positive("lower", adapter.lower);
    require_positive("upper", adapter.upper);
    if (!(adapter.lower < adapter.upper))
      fail("lower", adapter.lower, fmt::format("< upper = {}", show(adapter.upper)));
    if (adapter.start) require_positive("start", *adapter.start);
  } else {
    constexpr double kMax = 9007199254740992.0;  // 2^53: every integer up to it is a double
    require_closed("lower", adapter.lower, 1.0, kMax);
    require_closed("upper", adapter.upper, adapter.lower, kMax);
    if (adapter.lower != std::floor(adapter.lower)) fail("lower", adapter.lower, "a whole number");
    if (adapter.upper != std::floor(adapter.upper)) fail("upper", adapter.upper, "a whole number");
  }
  const std::span<const AnalysisPtr> analyses =
      search.analyses.empty() ? std::span<const AnalysisPtr>(all_analyses()) : search.analyses;
  Envelope env(analyses, epsilon, delta, search.progress);
  ParameterSolution out;
  if (adapter.domain == ParameterDomain::continuous)
    solve_continuous(out, adapter, env, search.relative_tolerance);
  else
    solve_integer(out, adapter, env);
  out.evaluations = env.evaluations();
  return out;
}

CalibrationAdapter calibration_adapter(const Run& base, CalibrationParameter which,
                                       const CalibrationOptions& options) {
  base.validate();
  require_range("max_steps", options.max_steps, 1, std::int64_t{1} << 53);
  auto b = std::make_shared<Builder>(Builder{base, {}, options.eta_shape});
  if (options.noise) {
    b->noise = *options.noise;
    require_positive(to_string(b->noise.unit), b->noise.value);
  } else if (base.noise_std.is_constant()) {
    b->noise = {NoiseUnit::std, Convention::journal, base.noise_std.at(1)};
  } else if (which == CalibrationParameter::noise || which == CalibrationParameter::steps ||
             base.noise_std.size() != static_cast<std::size_t>(base.steps)) {
    fail("noise", "(a per-step noise_std schedule without its units)",
         "given (CalibrationOptions::noise) when the noise std is not constant");
  } else {
    b->keep_noise_schedule = true;  // sampling-rate with a std schedule: kept as given
  }
  if (which == CalibrationParameter::steps && !base.eta.is_constant() &&
      options.eta_shape == ScheduleShape::constant)
    fail("eta_shape", "constant",
         "the shape of the non-constant step-size schedule (inv-sqrt or inv-t), so that it can "
         "be regenerated for other numbers of steps");

  CalibrationAdapter a;
  switch (which) {
    case CalibrationParameter::noise: {
      if (b->keep_noise_schedule) fail("noise", "(schedule)", "given");
      a.name = std::string(to_string(b->noise.unit));
      a.domain = ParameterDomain::continuous;
      a.direction = PrivacyDirection::larger_is_more_private;
      const double start = b->noise.value;
      a.start = start;
      a.lower = options.noise_min.value_or(start * 1e-12);
      a.upper = options.noise_max.value_or(start * 1e12);
      require_positive("noise_min", a.lower);
      require_positive("noise_max", a.upper);
      if (!(a.lower < a.upper)) fail("noise_min", a.lower, fmt::format("< noise_max = {}", show(a.upper)));
      // Each candidate run must itself be valid (e.g. a multiplier needs the clip).
      b->make(start, base.steps, base.batch_size).validate();
      a.make = [b](double v) { return b->make(v, b->base.steps, b->base.batch_size); };
      break;
    }
    case CalibrationParameter::steps: {
      a.name = "steps";
      a.domain = ParameterDomain::integer;
      a.direction = PrivacyDirection::larger_is_less_private;
      std::int64_t limit = options.max_steps;
      // A step-size schedule is materialised (one value per step): keep it in memory.
      if (options.eta_shape != ScheduleShape::constant) limit = std::min<std::int64_t>(limit, 1 << 24);
      a.lower = 1;
      a.upper = static_cast<double>(limit);
      // Where analyses switch on or off: one pass (T = n / b), T = n (online-gd, the
      // batch-1 RDP comparisons), the given T.
      const std::int64_t one_pass = base.n / base.batch_size;
      a.special_points = {1, base.steps, one_pass, one_pass + 1, base.n, base.n + 1};
      a.make = [b](double T) {
        return b->make(b->noise.value, static_cast<std::int64_t>(T), b->base.batch_size);
      };
      break;
    }
    case CalibrationParameter::sampling_rate: {
      if (base.sampling == Sampling::full)
        fail("sampling", "full",
             "poisson, fixed, shuffle or cyclic when calibrating the sampling rate (full batches "
             "have rate 1)");
      a.name = "batch_size";
      a.domain = ParameterDomain::integer;
      a.direction = PrivacyDirection::larger_is_less_private;
      a.lower = 1;
      a.upper = static_cast<double>(base.n);
      const std::int64_t one_pass = base.n / base.steps;  // largest b with T b <= n
      a.special_points = {1, base.batch_size, one_pass, one_pass + 1};
      a.make = [b](double batch) {
        return b->make(b->noise.value, b->base.steps, static_cast<std::int64_t>(batch));
      };
      break;
    }
  }
  return a;
}

namespace {

CalibrationResult calibrate_one(const Run& base, CalibrationParameter which, double epsilon,
                            double delta, const CalibrationOptions& options) {
  base.validate();
  require_nonnegative("epsilon", epsilon);
  require_open("delta", delta, 0.0, 1.0);
  require_open("relative_tolerance", options.relative_tolerance, 0.0, 0.5);
  const CalibrationAdapter adapter = calibration_adapter(base, which, options);
  ParameterSolution s =
      calibrate_parameter(adapter, epsilon, delta, {options.analyses, options.relative_tolerance, options.progress});

  CalibrationResult out;
  out.parameter = which;
  out.name = adapter.name;
  if (which == CalibrationParameter::noise && options.noise && options.noise->unit == NoiseUnit::sigma)
    out.convention = std::string(to_string(options.noise->convention));
  out.feasible = s.feasible;
  out.reason = std::move(s.reason);
  out.evaluations = s.evaluations;
  if (s.feasible) {
    out.value = s.value;
    out.run = std::move(s.run);
    out.report = std::move(s.report);
    out.achieved_name = std::move(s.achieved_name);
    out.achieved_epsilon = s.achieved_epsilon;
    out.achieved_delta = s.achieved_delta;
  }
  // The texts of the three parameters (the solver's own are generic).
  const Report* limit_report = s.at_private_limit ? &*s.at_private_limit : nullptr;
  switch (which) {
    case CalibrationParameter::noise:
      if (limit_report)
        out.reason = limit_report->best
                         ? fmt::format("no noise up to the search limit {} = {} meets the target ({})", out.name,
                                       show(adapter.upper), describe_best(*limit_report))
                         : std::string("no upper-bound analysis applies to this run (`hsdp account` gives each "
                                       "analysis' reason)");
      if (s.feasible && s.at_limit) out.note = std::move(s.note);  // "holds down to the lower search limit"
      break;
    case CalibrationParameter::steps: {
      const auto limit = static_cast<std::int64_t>(adapter.upper);
      if (limit_report)
        out.reason = fmt::format("no number of steps meets the target: at T = 1 {}; every T checked up to {} fails",
                                 describe_best(*limit_report), limit);
      if (!s.feasible) break;
      if (s.at_limit && out.value == adapter.upper) {
        out.unbounded = true;
        // Is the tightest bound flat in T there (a last-iterate plateau)? Compared at T = limit / 2,
        // which exists only for a limit of 2 or more (--max-steps 1 has no smaller T).
        bool flat = false;
        if (limit >= 2) {
          const Report half = account(adapter.make(static_cast<double>(limit / 2)), Query::at_delta(delta),
                                      options.analyses.empty() ? std::span<const AnalysisPtr>(all_analyses())
                                                               : options.analyses);
          flat = half.best && half.analyses[*half.best].name == out.achieved_name &&
                 *half.analyses[*half.best].epsilon == out.achieved_epsilon;
        }
        out.note = fmt::format(
            "no largest T: the target holds at the search limit T = {}{}; {}", limit,
            limit == 1 ? std::string(" (the only T searched)")
                       : fmt::format(" and at every grid point checked from T = {} up to it (powers of two and the "
                                     "points where analyses switch on or off)",
                                     s.holds_from),
            flat ? fmt::format("{} gives the same epsilon at T = {} (its bound has plateaued)", out.achieved_name,
                               limit / 2)
                 : fmt::format("the tightest bound there is {}", out.achieved_name));
      } else if (s.exact_boundary) {
        out.note = fmt::format("T = {} meets the target and T = {} does not", out.value, out.value + 1);
      }
      break;
    }
    case CalibrationParameter::sampling_rate:
      if (limit_report)
        out.reason = fmt::format("no batch size meets the target: at b = 1 {}; every b checked up to n = {} fails",
                                 describe_best(*limit_report), base.n);
      if (!s.feasible) break;
      out.sampling_rate = out.value / static_cast<double>(base.n);
      if (s.at_limit && out.value == static_cast<double>(base.n))
        out.note = "the target holds at every record in every batch (b = n, rate 1)";
      break;
  }
  return out;
}

}  // namespace

CalibrationResult calibrate(const Run& base, CalibrationParameter which, double epsilon, double delta,
                            const CalibrationOptions& options) {
  CalibrationResult out = calibrate_one(base, which, epsilon, delta, options);
  out.adjacency = base.adjacency;
  if (!options.with_add_remove || base.adjacency != Adjacency::replace) return out;
  // The same problem under add/remove-one, when an analysis covers the run's order there
  // (docs/analyses/neighbours.md); otherwise the order's reason.
  Report probe = account(base, Query::at_delta(delta),
                         options.analyses.empty() ? std::span<const AnalysisPtr>(all_analyses()) : options.analyses);
  add_add_remove(probe, options.analyses.empty() ? std::span<const AnalysisPtr>(all_analyses()) : options.analyses);
  if (!probe.add_remove_best && !probe.add_remove_reason.empty()) {
    out.add_remove_reason = probe.add_remove_reason;
    return out;
  }
  Run other = base;
  other.adjacency = Adjacency::remove;
  CalibrationOptions o = options;
  o.with_add_remove = false;
  auto r = std::make_shared<CalibrationResult>(calibrate_one(other, which, epsilon, delta, o));
  r->adjacency = Adjacency::remove;
  out.add_remove = std::move(r);
  return out;
}

nlohmann::json to_json(const CalibrationResult& r) {
  nlohmann::json j;
  j["parameter"] = to_string(r.parameter);
  j["feasible"] = r.feasible;
  j["unit"] = r.name;
  if (!r.convention.empty()) j["convention"] = r.convention;
  if (!r.feasible) {
    j["value"] = nullptr;
    j["achieved"] = nullptr;
    j["reason"] = r.reason;
    j["adjacency"] = to_string(r.adjacency);
    return j;
  }
  if (r.parameter == CalibrationParameter::noise) {
    j["value"] = r.value;
  } else {
    j["value"] = static_cast<std::int64_t>(r.value);
  }
  if (r.sampling_rate) j["sampling_rate"] = *r.sampling_rate;
  if (r.parameter == CalibrationParameter::steps) j["unbounded"] = r.unbounded;
  j["achieved"] = {{"name", r.achieved_name},
                   {"epsilon", r.achieved_epsilon},
                   {"delta", r.achieved_delta}};
  if (!r.note.empty()) j["note"] = r.note;
  j["adjacency"] = to_string(r.adjacency);
  if (r.add_remove) {
    nlohmann::json a = to_json(*r.add_remove);
    a.erase("run");  // the same run, adjacency remove
    j["add_remove"] = a;
  } else if (!r.add_remove_reason.empty()) {
    j["add_remove"] = nullptr;
    j["add_remove_reason"] = r.add_remove_reason;
  }
  j["run"] = to_json(r.run);
  return j;
}

}  // namespace hsdp
