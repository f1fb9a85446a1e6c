#include "hsdp/run.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "hsdp/errors.hpp"
#include "report/format.hpp"

namespace hsdp {

namespace {

// Finds the name of `value` in its enumeration's table.
template <typename E>
std::string_view name_of(E value) {
  for (const auto& [v, name] : names<E>())
    if (v == value) return name;
  return "?";
}

}  // namespace

template <>
std::span<const std::pair<NoiseKind, std::string_view>> names() {
  static constexpr std::pair<NoiseKind, std::string_view> table[] = {
      {NoiseKind::gaussian, "gaussian"}, {NoiseKind::laplace, "laplace"}};
  return table;
}
template <>
std::span<const std::pair<Sampling, std::string_view>> names() {
  static constexpr std::pair<Sampling, std::string_view> table[] = {
      {Sampling::full, "full"},       {Sampling::poisson, "poisson"}, {Sampling::fixed, "fixed"},
      {Sampling::shuffle, "shuffle"}, {Sampling::cyclic, "cyclic"}};
  return table;
}
template <>
std::span<const std::pair<Release, std::string_view>> names() {
  static constexpr std::pair<Release, std::string_view> table[] = {
      {Release::last, "last"}, {Release::random_stop, "random-stop"}, {Release::every, "every"}};
  return table;
}
template <>
std::span<const std::pair<Adjacency, std::string_view>> names() {
  static constexpr std::pair<Adjacency, std::string_view> table[] = {
      {Adjacency::replace, "replace"}, {Adjacency::remove, "remove"}};
  return table;
}
template <>
std::span<const std::pair<ScheduleShape, std::string_view>> names() {
  static constexpr std::pair<ScheduleShape, std::string_view> table[] = {
      {ScheduleShape::constant, "constant"},
      {ScheduleShape::inv_sqrt, "inv-sqrt"},
      {ScheduleShape::inv_t, "inv-t"}};
  return table;
}
template <>
std::span<const std::pair<Convention, std::string_view>> names() {
  static constexpr std::pair<Convention, std::string_view> table[] = {
      {Convention::journal, "journal"},
      {Convention::isit, "isit"},
      {Convention::federated, "federated"},
      {Convention::chourasia, "chourasia"},
      {Convention::altschuler, "altschuler"}};
  return table;
}

std::string_view to_string(NoiseKind k) { return name_of(k); }
std::string_view to_string(Sampling s) { return name_of(s); }
std::string_view to_string(Release r) { return name_of(r); }
std::string_view to_string(Adjacency a) { return name_of(a); }
std::string_view to_string(ScheduleShape s) { return name_of(s); }
std::string_view to_string(Convention c) { return name_of(c); }

Convention parse_convention(std::string_view text, const Param& parameter) {
  return parse_name<Convention>(text, parameter);
}

double Schedule::min() const { return *std::min_element(values_.begin(), values_.end()); }
double Schedule::max() const { return *std::max_element(values_.begin(), values_.end()); }

Schedule make_schedule(ScheduleShape shape, double base, std::int64_t steps) {
  require_positive("eta", base);
  if (shape == ScheduleShape::constant) return Schedule(base);
  require_range("steps", steps, 1, std::int64_t{1} << 40);
  std::vector<double> v(static_cast<std::size_t>(steps));
  for (std::int64_t t = 1; t <= steps; ++t) {
    const double td = static_cast<double>(t);
    v[static_cast<std::size_t>(t - 1)] = shape == ScheduleShape::inv_sqrt ? base / std::sqrt(td) : base / td;
  }
  return Schedule(std::move(v));
}

namespace {
void validate_schedule(const Schedule& s, std::string_view parameter, std::int64_t steps) {
  if (s.empty()) fail(parameter, "(empty)", "a constant or one value per step");
  if (!s.is_constant() && static_cast<std::int64_t>(s.size()) != steps)
    fail(parameter, fmt::format("a schedule of {} values", s.size()),
         fmt::format("a constant or exactly steps = {} values", steps));
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double v = s.values()[i];
    if (!std::isfinite(v) || !(v > 0))
      fail(s.is_constant() ? std::string(parameter) : fmt::format("{}[{}]", parameter, i + 1), v,
           "finite and > 0");
  }
}
}  // namespace

void Run::validate() const {
  constexpr std::int64_t kMax = std::int64_t{1} << 53;
  require_range("n", n, 1, kMax);
  require_range("steps", steps, 1, kMax);
  require_range("batch-size", batch_size, 1, n);
  if (sampling == Sampling::full && batch_size != n)
    fail("batch-size", std::to_string(batch_size),
         fmt::format("equal to n = {} for full-batch sampling", n));
  validate_schedule(eta, "eta", steps);
  if (!eta_known && !(eta.is_constant() && eta.at(1) == 1.0))
    fail("eta", "a step size", "the unit 1 when the step size is unknown (eta_known = false)");
  validate_schedule(noise_std, "noise-std", steps);
  if (loss.lipschitz) require_positive("lipschitz", *loss.lipschitz);
  if (loss.smoothness) require_positive("smoothness", *loss.smoothness);
  require_nonnegative("strong-convexity", loss.strong_convexity);
  if (loss.strong_convexity > 0 && !loss.convex)
    fail("strong-convexity", loss.strong_convexity, "0 for a non-convex loss");
  if (loss.strong_convexity > 0 && loss.smoothness && loss.strong_convexity > *loss.smoothness)
    fail("strong-convexity", loss.strong_convexity,
         fmt::format("<= smoothness beta = {} (lambda <= beta for any loss)", show(*loss.smoothness)));
  require_positive_or_inf("diameter", diameter);
  if (index) require_range("index", *index, 1, n);
  if (dimension) require_range("dimension", *dimension, 1, kMax);
  if (clip) require_positive("clip", *clip);
  if (lsi_constant) require_positive("lsi_constant", *lsi_constant);
  // Positive here; the ranges of the grid are div::validate's (PldOptions), checked where
  // the grid is built and, for a stated run, by RunSpec::resolve naming the field.
  if (pld_interval) require_positive("pld_interval", *pld_interval);
  if (pld_cells) require_positive("pld_cells", *pld_cells);
  if (!drop_last && sampling != Sampling::shuffle)
    fail("drop_last", "false",
         fmt::format("true unless sampling = shuffle (only a shuffled epoch has a partial last batch to "
                     "keep; sampling = {})",
                     to_string(sampling)));
  if (grid) {
    require_nonnegative("grid_slack", grid->slack);
    require_nonnegative("grid_epsilon", grid->epsilon);
    if (std::isnan(grid->log_beta) || grid->log_beta > 0) fail("grid_log_beta", grid->log_beta, "<= 0 (or -inf)");
  }
}

std::int64_t Run::batches_per_epoch() const {
  return drop_last ? n / batch_size : n / batch_size + (n % batch_size != 0 ? 1 : 0);
}

std::int64_t Run::partial_batch() const { return drop_last ? 0 : n % batch_size; }

double Run::laplace_scale(std::int64_t t) const { return noise_std.at(t) / std::sqrt(2.0); }

bool Run::single_pass() const {
  if (sampling == Sampling::full) return steps == 1;
  if (sampling == Sampling::cyclic || sampling == Sampling::shuffle)
    return steps <= n / batch_size && steps * batch_size <= n;
  return false;
}

std::string Run::summary() const {
  auto sched = [](const Schedule& s) {
    return s.is_constant() ? report::g10(s.at(1))
                           : fmt::format("schedule[{}..{}]", report::g10(s.min()), report::g10(s.max()));
  };
  // With the step size unknown the noise is known per unit of step size: "std=0.0043*eta".
  std::string out = fmt::format("n={} steps={} batch={} sampling={} eta={} noise={} std={}{}", n,
                                steps, batch_size, to_string(sampling),
                                eta_known ? sched(eta) : std::string("unknown"), to_string(noise),
                                sched(noise_std), eta_known ? "" : "*eta");
  if (loss.lipschitz) out += fmt::format(" L={}", show(*loss.lipschitz));
  if (loss.smoothness) out += fmt::format(" beta={}", show(*loss.smoothness));
  if (loss.strong_convexity > 0) out += fmt::format(" lambda={}", show(loss.strong_convexity));
  if (!loss.convex) out += " non-convex";
  out += fmt::format(" D={} release={} adjacency={}", show(diameter), to_string(release),
                     to_string(adjacency));
  if (index) out += fmt::format(" index={}", *index);
  if (dimension) out += fmt::format(" d={}", *dimension);
  if (clip) out += fmt::format(" clip={}", show(*clip));
  if (lsi_constant) out += fmt::format(" lsi={}", show(*lsi_constant));
  if (pld_interval) out += fmt::format(" pld_interval={}", show(*pld_interval));
  if (pld_cells) out += fmt::format(" pld_cells={}", show(*pld_cells));
  if (!drop_last) out += " drop_last=false";
  if (order_known) out += " order_known=true";
  if (grid)
    out += fmt::format(" grid_slack={} grid_epsilon={} grid_log_beta={}", show(grid->slack), show(grid->epsilon),
                       show(grid->log_beta));
  return out;
}

double noise_std_from_sigma(Convention convention, double sigma, double eta,
                            std::int64_t batch_size, NoiseKind kind) {
  require_positive("sigma", sigma);
  require_positive("eta", eta);
  require_range("batch-size", batch_size, 1, std::int64_t{1} << 53);
  double s = 0;
  switch (convention) {
    case Convention::journal:
    case Convention::isit:
    case Convention::altschuler: s = eta * sigma; break;
    case Convention::federated: s = eta * sigma / std::sqrt(static_cast<double>(batch_size)); break;
    case Convention::chourasia: s = std::sqrt(2.0 * eta) * sigma; break;
  }
  return kind == NoiseKind::laplace ? std::sqrt(2.0) * s : s;
}

double sigma_from_noise_std(Convention convention, double noise_std, double eta,
                            std::int64_t batch_size, NoiseKind kind) {
  require_positive("noise-std", noise_std);
  // noise_std_from_sigma is linear in sigma.
  return noise_std / noise_std_from_sigma(convention, 1.0, eta, batch_size, kind);
}

double noise_std_from_multiplier(double noise_multiplier, double clip, double eta,
                                 std::int64_t batch_size) {
  require_positive("noise-multiplier", noise_multiplier);
  require_positive("clip", clip);
  require_positive("eta", eta);
  require_range("batch-size", batch_size, 1, std::int64_t{1} << 53);
  return eta * noise_multiplier * clip / static_cast<double>(batch_size);
}

}  // namespace hsdp
