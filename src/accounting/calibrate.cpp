// Calibration (include/hsdp/calibrate.hpp). The search runs on the accountant's envelope:
// a candidate meets the target (epsilon, delta) when some applicable upper-bound analysis
// certifies delta(epsilon) <= delta (one evaluation of log_delta per analysis, no root
// finding). The returned value is then re-evaluated with the full accountant (epsilon at
// the target delta, rounded up) and moved towards the safe side until that check passes
// too, so the reported guarantee always meets the target.
#include "hsdp/calibrate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

#include "hsdp/errors.hpp"

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

constexpr double kInf = std::numeric_limits<double>::infinity();

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
  Envelope(std::span<const AnalysisPtr> analyses, double epsilon, double delta)
      : analyses_(analyses), epsilon_(epsilon), delta_(delta) {}

  bool meets(const Run& run) {
    ++evaluations_;
    for (const auto& a : analyses_) {
      if (a->kind() != BoundKind::upper || a->check(run)) continue;
      const double ld = a->log_delta(run, epsilon_);
      if (std::isnan(ld))
        throw std::logic_error(fmt::format("{}: log delta is NaN at eps = {}", a->name(), epsilon_));
      if (log_delta_meets(ld, delta_)) return true;
    }
    return false;
  }

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
  int evaluations_ = 0;
};

std::string describe_best(const Report& r) {
  if (!r.best) return "no analysis applies";
  const auto& b = r.analyses[*r.best];
  return fmt::format("the tightest bound, {}, gives epsilon = {:.10g}", b.name, *b.epsilon);
}

void fill_achieved(CalibrationResult& out, Report report) {
  const auto& b = report.analyses[*report.best];
  out.achieved_name = b.name;
  out.achieved_epsilon = *b.epsilon;
  out.achieved_delta = *b.delta;
  out.report = std::move(report);
}

// ---- noise: the smallest value in [lo_limit, hi_limit] (more noise never hurts any of
// the analyses, but that is checked, not assumed: the bracket's ends are evaluated).
void solve_noise(CalibrationResult& out, const Builder& b, Envelope& env, double start,
                 double lo_limit, double hi_limit, double tol) {
  auto meets = [&](double v) { return env.meets(b.make(v, b.base.steps, b.base.batch_size)); };
  double lo = 0, hi = 0;  // lo fails, hi meets
  double x = std::clamp(start, lo_limit, hi_limit);
  bool at_lower_limit = false;
  if (meets(x)) {
    hi = x;
    for (;;) {
      if (hi <= lo_limit) {
        at_lower_limit = true;
        break;
      }
      const double next = std::max(lo_limit, hi / 4);
      if (!meets(next)) {
        lo = next;
        break;
      }
      hi = next;
    }
  } else {
    lo = x;
    for (;;) {
      if (lo >= hi_limit) {
        const Report r = env.report(b.make(hi_limit, b.base.steps, b.base.batch_size));
        out.reason = r.best ? fmt::format("no noise up to the search limit {} = {} meets the "
                                          "target ({})",
                                          out.name, show(hi_limit), describe_best(r))
                            : std::string("no upper-bound analysis applies to this run (`hsdp "
                                          "account` gives each analysis' reason)");
        return;
      }
      const double next = std::min(hi_limit, lo * 4);
      if (meets(next)) {
        hi = next;
        break;
      }
      lo = next;
    }
  }
  // Bisection in log scale on [lo, hi] down to hi / lo <= 1 + tol; hi always meets.
  while (!at_lower_limit && hi / lo - 1 > tol) {
    const double mid = std::sqrt(lo * hi);
    if (!(mid > lo && mid < hi)) break;
    (meets(mid) ? hi : lo) = mid;
  }
  // Re-evaluate with the full accountant; nudge up within the tolerance if its epsilon
  // (the root finder's conservative end) lands a hair above the target.
  // The value is rounded up to 10 significant digits (more noise, the safe side) so that
  // the number printed is the number verified.
  for (int i = 0; i < 64 && hi <= hi_limit; ++i) {
    hi = round_up(hi);
    Run run = b.make(hi, b.base.steps, b.base.batch_size);
    Report r = env.report(run);
    if (env.verified(r)) {
      out.feasible = true;
      out.value = hi;
      out.run = std::move(run);
      fill_achieved(out, std::move(r));
      if (at_lower_limit)
        out.note = fmt::format("the target holds down to the lower search limit {} = {}", out.name,
                               show(lo_limit));
      return;
    }
    hi *= 1 + std::max(tol, 1e-9);
  }
  out.reason = "the re-evaluation by the accountant did not confirm the solver's boundary";
}

// ---- integers (steps, batch size): the largest value in [1, limit] meeting the target.
// The envelope need not be monotone (analyses apply only on some ranges; last-iterate
// bounds plateau), so: evaluate a geometric grid plus the given special points (where an
// analysis starts or stops applying), take the largest point that meets the target, and
// bisect between it and the next grid point (which fails) to an exact boundary: the value
// returned meets the target and value + 1 does not (or value = limit).
struct IntegerSolution {
  std::int64_t value = 0;  // 0: no grid point meets the target
  bool at_limit = false;
  /// When at_limit: the smallest grid point from which every grid point up to the limit
  /// meets the target.
  std::int64_t holds_from = 0;
  std::int64_t first_failing_grid = 0;  // the grid point above value (fails), if any
};

IntegerSolution solve_integer(const std::function<bool(std::int64_t)>& meets, std::int64_t limit,
                              std::vector<std::int64_t> special) {
  std::vector<std::int64_t> grid = std::move(special);
  for (std::int64_t g = 1; g < limit; g *= 2) grid.push_back(g);
  grid.push_back(limit);
  std::erase_if(grid, [&](std::int64_t g) { return g < 1 || g > limit; });
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  // Every grid point is evaluated: the feasible set need not be an interval.
  std::vector<char> ok(grid.size());
  for (std::size_t k = 0; k < grid.size(); ++k) ok[k] = meets(grid[k]);
  IntegerSolution s;
  std::size_t k = grid.size();
  while (k > 0 && !ok[k - 1]) --k;
  if (k == 0) return s;
  std::int64_t lo = grid[k - 1];
  if (k == grid.size()) {
    s.value = lo;
    s.at_limit = true;
    std::size_t j = k - 1;
    while (j > 0 && ok[j - 1]) --j;
    s.holds_from = grid[j];
    return s;
  }
  std::int64_t hi = grid[k];  // fails
  s.first_failing_grid = hi;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (meets(mid) ? lo : hi) = mid;
  }
  s.value = lo;
  return s;
}

/// Shared tail of the integer solvers: re-evaluate with the accountant, stepping down
/// while the full check disagrees with the envelope (a boundary within rounding).
bool verify_integer(CalibrationResult& out, Envelope& env, std::int64_t value,
                    const std::function<Run(std::int64_t)>& make) {
  for (int i = 0; i < 64 && value >= 1; ++i, --value) {
    Run run = make(value);
    Report r = env.report(run);
    if (env.verified(r)) {
      out.feasible = true;
      out.value = static_cast<double>(value);
      out.run = std::move(run);
      fill_achieved(out, std::move(r));
      return true;
    }
  }
  out.reason = "the re-evaluation by the accountant did not confirm the solver's boundary";
  return false;
}

}  // namespace

CalibrationResult calibrate(const Run& base, CalibrationParameter which, double epsilon,
                            double delta, const CalibrationOptions& options) {
  base.validate();
  require_nonnegative("epsilon", epsilon);
  require_open("delta", delta, 0.0, 1.0);
  require_open("relative_tolerance", options.relative_tolerance, 0.0, 0.5);
  require_range("max_steps", options.max_steps, 1, std::int64_t{1} << 53);

  Builder b{base, {}, options.eta_shape};
  if (options.noise) {
    b.noise = *options.noise;
    require_positive(to_string(b.noise.unit), b.noise.value);
  } else if (base.noise_std.is_constant()) {
    b.noise = {NoiseUnit::std, Convention::journal, base.noise_std.at(1)};
  } else if (which == CalibrationParameter::noise || which == CalibrationParameter::steps ||
             base.noise_std.size() != static_cast<std::size_t>(base.steps)) {
    fail("noise", "(a per-step noise_std schedule without its units)",
         "given (CalibrationOptions::noise) when the noise std is not constant");
  } else {
    b.keep_noise_schedule = true;  // sampling-rate with a std schedule: kept as given
  }
  if (which == CalibrationParameter::steps && !base.eta.is_constant() &&
      options.eta_shape == ScheduleShape::constant)
    fail("eta_shape", "constant",
         "the shape of the non-constant step-size schedule (inv-sqrt or inv-t), so that it can "
         "be regenerated for other numbers of steps");

  const std::span<const AnalysisPtr> analyses =
      options.analyses.empty() ? std::span<const AnalysisPtr>(all_analyses()) : options.analyses;
  Envelope env(analyses, epsilon, delta);

  CalibrationResult out;
  out.parameter = which;
  const double tol = options.relative_tolerance;

  switch (which) {
    case CalibrationParameter::noise: {
      if (b.keep_noise_schedule) fail("noise", "(schedule)", "given");
      out.name = std::string(to_string(b.noise.unit));
      if (b.noise.unit == NoiseUnit::sigma) out.convention = std::string(to_string(b.noise.convention));
      const double start = b.noise.value;
      const double lo_limit = options.noise_min.value_or(start * 1e-12);
      const double hi_limit = options.noise_max.value_or(start * 1e12);
      require_positive("noise_min", lo_limit);
      require_positive("noise_max", hi_limit);
      if (!(lo_limit < hi_limit)) fail("noise_min", lo_limit, fmt::format("< noise_max = {}", show(hi_limit)));
      // Each candidate run must itself be valid (e.g. a multiplier needs the clip).
      b.make(start, base.steps, base.batch_size).validate();
      solve_noise(out, b, env, start, lo_limit, hi_limit, tol);
      break;
    }
    case CalibrationParameter::steps: {
      out.name = "steps";
      std::int64_t limit = options.max_steps;
      // A step-size schedule is materialised (one value per step): keep it in memory.
      if (options.eta_shape != ScheduleShape::constant) limit = std::min<std::int64_t>(limit, 1 << 24);
      auto make = [&](std::int64_t T) { return b.make(b.noise.value, T, base.batch_size); };
      auto meets = [&](std::int64_t T) { return env.meets(make(T)); };
      // Where analyses switch on or off: one pass (T = n / b), T = n (online-gd, the
      // batch-1 RDP comparisons), the given T.
      const std::int64_t one_pass = base.n / base.batch_size;
      const auto s = solve_integer(meets, limit, {1, base.steps, one_pass, one_pass + 1, base.n, base.n + 1});
      if (s.value == 0) {
        const Report r = env.report(make(1));
        out.reason = fmt::format("no number of steps meets the target: at T = 1 {}; "
                                 "every T checked up to {} fails",
                                 describe_best(r), limit);
        break;
      }
      if (!verify_integer(out, env, s.value, make)) break;
      if (s.at_limit && out.value == static_cast<double>(limit)) {
        out.unbounded = true;
        // Is the tightest bound flat in T there (a last-iterate plateau)?
        const Report half = env.report(make(std::max<std::int64_t>(1, limit / 2)));
        const bool flat = half.best && half.analyses[*half.best].name == out.achieved_name &&
                          *half.analyses[*half.best].epsilon == out.achieved_epsilon;
        out.note = fmt::format(
            "no largest T: the target holds at the search limit T = {} and at every grid point "
            "checked from T = {} up to it (powers of two and the points where analyses switch on "
            "or off); {}",
            limit, s.holds_from,
            flat ? fmt::format("{} gives the same epsilon at T = {} (its bound has plateaued)",
                               out.achieved_name, limit / 2)
                 : fmt::format("the tightest bound there is {}", out.achieved_name));
      } else if (s.first_failing_grid > 0) {
        out.note = fmt::format("T = {} meets the target and T = {} does not", out.value, out.value + 1);
      }
      break;
    }
    case CalibrationParameter::sampling_rate: {
      if (base.sampling == Sampling::full)
        fail("sampling", "full",
             "poisson, fixed, shuffle or cyclic when calibrating the sampling rate (full batches "
             "have rate 1)");
      out.name = "batch_size";
      auto make = [&](std::int64_t batch) { return b.make(b.noise.value, base.steps, batch); };
      auto meets = [&](std::int64_t batch) { return env.meets(make(batch)); };
      const std::int64_t one_pass = base.n / base.steps;  // largest b with T b <= n
      const auto s = solve_integer(meets, base.n, {1, base.batch_size, one_pass, one_pass + 1});
      if (s.value == 0) {
        const Report r = env.report(make(1));
        out.reason = fmt::format("no batch size meets the target: at b = 1 {}; every b checked "
                                 "up to n = {} fails",
                                 describe_best(r), base.n);
        break;
      }
      if (!verify_integer(out, env, s.value, make)) break;
      out.sampling_rate = out.value / static_cast<double>(base.n);
      if (s.at_limit && out.value == static_cast<double>(base.n))
        out.note = "the target holds at every record in every batch (b = n, rate 1)";
      break;
    }
  }
  out.evaluations = env.evaluations();
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
  j["run"] = to_json(r.run);
  return j;
}

}  // namespace hsdp
