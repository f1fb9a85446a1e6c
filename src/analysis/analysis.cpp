#include "hsdp/analysis/analysis.hpp"

#include <fmt/format.h>

#include <cassert>
#include <cmath>
#include <limits>

#include "hsdp/errors.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"
#include "registry.hpp"

namespace hsdp {

namespace {
// log(1 + e^x) without overflow.
double log1p_exp(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
}  // namespace

Query Query::at_epsilon(double epsilon) {
  Query q;
  q.epsilon = require_nonnegative("epsilon", epsilon);
  return q;
}

Query Query::at_delta(double delta) {
  Query q;
  q.delta = require_open("delta", delta, 0.0, 1.0);
  return q;
}

double Analysis::epsilon(const Run& run, double delta) const {
  const double target = std::log(delta);
  // delta(eps) is non-increasing; find the smallest eps with log delta(eps) <= log delta.
  // eps beyond 1e4 is reported as +inf (no useful guarantee).
  auto f = [&](double eps) { return log_delta(run, eps) - target; };
  auto eps = num::smallest_meeting(f, 0.0, 1.0, 1e4);
  return eps ? *eps : std::numeric_limits<double>::infinity();
}

std::string_view to_string(BoundKind kind) {
  switch (kind) {
    case BoundKind::upper: return "upper";
    case BoundKind::lower: return "lower";
    case BoundKind::heuristic: return "heuristic";
    case BoundKind::comparison: return "comparison";
  }
  return "?";
}

double delta_upper(double log_delta) {
  if (std::isnan(log_delta)) return log_delta;
  if (log_delta >= 0.0) return 1.0;
  return std::min(1.0, round_up(num::exp_upper(log_delta)));
}

bool log_delta_meets(double log_delta, double delta) {
  return log_delta == -std::numeric_limits<double>::infinity() || delta_upper(log_delta) <= delta;
}

double round_up(double value) {
  assert(!std::isnan(value));
  if (value == 0.0 || std::isinf(value)) return value;
  const double inflated = value * (1.0 + 1e-9);
  // long double keeps 10^(9 - exponent) representable down to 1e-320.
  const int exponent = static_cast<int>(std::floor(std::log10(inflated)));
  const long double scale = std::pow(10.0L, 9 - exponent);
  double rounded = static_cast<double>(std::ceil(static_cast<long double>(inflated) * scale) / scale);
  // The conversions can land a hair below the inflated value; step up until they do not.
  while (rounded < inflated) rounded = std::nextafter(rounded, std::numeric_limits<double>::infinity());
  return rounded;
}

std::optional<std::string> Analysis::not_applicable(const Run& run) const {
  if (!run.eta_known && reads_eta())
    return fmt::format("needs the step size eta ({})", report_field("eta"));
  if (auto why = check(run)) return why;
  if (run.grid && kind() != BoundKind::heuristic) {
    if (run.grid->log_beta >= 0.0)
      return fmt::format(
          "the noise was drawn on a grid and no charge is derived for this run ({} >= 0; docs/security.md)",
          report_field("grid_log_beta"));
    if (!charges_grid())
      return std::string(
          "the noise was drawn on a grid (exact discrete samplers, docs/security.md) and this analysis does "
          "not derive the cost of the roundings");
  }
  return std::nullopt;
}

AnalysisResult Analysis::evaluate(const Run& run, const Query& query) const {
  // The query first: an error in it is the caller's, never "not applicable".
  if (!query.epsilon && !query.delta) throw InvalidArgument("query: give exactly one of epsilon or delta");
  for (const double alpha : query.alphas)
    if (std::isnan(alpha) || !(alpha > 1.0)) fail("alpha", alpha, "> 1");
  AnalysisResult r;
  r.name = std::string(name());
  r.citation = std::string(citation());
  r.kind = kind();
  r.adjacency = run.adjacency;
  if (auto why = not_applicable(run)) {
    r.reason = *why;
    return r;
  }
  try {
    compute(run, query, r);
  } catch (const InvalidArgument& e) {
    // A valid run whose numbers leave the range this analysis computes in (a noise std of
    // 1e308 over a sensitivity of 1e-10 makes its sigma overflow): no number, and why.
    AnalysisResult out;
    out.name = r.name;
    out.citation = r.citation;
    out.kind = r.kind;
    out.adjacency = r.adjacency;
    out.reason = fmt::format("the run's numbers are outside the range this analysis computes in ({})", e.what());
    return out;
  }
  return r;
}

void Analysis::compute(const Run& run, const Query& query, AnalysisResult& r) const {
  r.applicable = true;
  r.index = index(run);
  // Noise on a grid (docs/security.md): the run is a post-processing of the continuous run
  // this analysis bounds, up to its samplers: each draw's law within e^(+-eta) of the rounded
  // continuous law outside probability beta. An (e', d') of the comparison run gives the run
  // (e' + E, e^(E/2) d' + tv (1 + e^(e' + E/2))), E = 2 sum eta, tv = sum beta. A heuristic is
  // not charged.
  const bool charged = run.grid && kind() != BoundKind::heuristic;
  const double E = charged ? run.grid->epsilon : 0.0;
  const double log_beta = charged ? run.grid->log_beta : -std::numeric_limits<double>::infinity();
  if (query.epsilon) {
    const double eps = *query.epsilon;
    const double inner = std::max(0.0, eps - E);
    double ld = log_delta(run, inner);
    if (std::isnan(ld))
      throw std::logic_error(fmt::format("{}: log delta is NaN at eps = {}", name(), inner));
    if (charged) {
      std::vector<double> terms{ld + 0.5 * E};
      if (log_beta > -std::numeric_limits<double>::infinity())
        terms.push_back(log_beta + log1p_exp(inner + 0.5 * E));
      // Below E: (E, d) implies (eps, d + e^E - e^eps).
      if (eps < E) terms.push_back(eps + std::log(std::expm1(E - eps)));
      ld = num::logsumexp(terms);
    }
    r.epsilon = eps;
    // An upper bound reports delta_upper (delta > 1 is vacuous: 1; below the smallest
    // normal double: DBL_MIN, above the true value, with the exact log delta in the note);
    // a lower bound keeps what it can represent.
    // A heuristic or a comparison is rounded like an upper bound (never shown smaller than
    // computed).
    r.delta = kind() != BoundKind::lower ? delta_upper(ld) : (ld >= 0.0 ? 1.0 : std::exp(ld));
    constexpr double kMinNormal = std::numeric_limits<double>::min();
    if (ld > -std::numeric_limits<double>::infinity() && ld < std::log(kMinNormal))
      r.note = fmt::format("delta = e^{} is below the smallest normal double; reported as {}",
                           show(ld), show(*r.delta));
  } else {
    const double delta = *query.delta;
    double eps = 0.0;
    if (!charged) {
      eps = epsilon(run, delta);
    } else if (log_beta == -std::numeric_limits<double>::infinity()) {
      eps = epsilon(run, delta * std::exp(-0.5 * E)) + E;
    } else if (log_beta + log1p_exp(1e4 + 1.0 + 0.5 * E) <= std::log(delta * 0x1p-50)) {
      // beta (1 + e^(e' + 1 + E/2)) <= delta 2^-50 for every e' up to 1e4 (beyond, epsilon()
      // reports +inf): one evaluation at delta (1 - 2^-50) e^(-E/2).
      eps = epsilon(run, delta * (1.0 - 0x1p-50) * std::exp(-0.5 * E)) + E;
    } else {
      // The smallest e' with e^(E/2) d'(e') + beta (1 + e^(e' + E/2)) <= delta: e' at
      // (delta - xi) e^(-E/2) with xi >= beta (1 + e^(b + 1 + E/2)), valid while e' <= b + 1.
      // xi is at least delta 2^-50, so that a beta term too small for a double is still paid.
      double base = epsilon(run, delta * std::exp(-0.5 * E));
      eps = std::numeric_limits<double>::infinity();
      for (int round = 0; round < 4 && std::isfinite(base); ++round) {
        const double xi = std::max(delta * 0x1p-50, std::exp(log_beta + log1p_exp(base + 1.0 + 0.5 * E)));
        if (!(xi < delta)) break;
        const double e = epsilon(run, (delta - xi) * std::exp(-0.5 * E));
        if (std::isnan(e) || e <= base + 1.0) {
          eps = e + E;
          break;
        }
        base = e;
      }
    }
    if (std::isnan(eps))
      throw std::logic_error(fmt::format("{}: epsilon is NaN at delta = {}", name(), delta));
    r.delta = *query.delta;
    r.epsilon = kind() != BoundKind::lower ? round_up(eps) : eps;
    if (std::isinf(eps))
      r.note = fmt::format("no finite epsilon (up to 1e4) reaches delta = {}", show(*query.delta));
  }
  if (r.note.empty()) r.note = note(run);
  r.details = details(run, query);
  // The RDP curve at the requested orders (RDP analyses only), rounded up. Not on a gridded
  // run: its samplers' charge is stated for (epsilon, delta).
  if (run.grid && !query.alphas.empty() && rdp_at(run, query.alphas.front()))
    r.note += std::string(r.note.empty() ? "" : "; ") +
              "no RDP curve: the noise grid's charge applies to (epsilon, delta) only";
  for (const double alpha : run.grid ? std::vector<double>{} : query.alphas) {
    if (auto v = rdp_at(run, alpha)) {
      if (std::isnan(*v))
        throw std::logic_error(fmt::format("{}: RDP is NaN at alpha = {}", name(), alpha));
      r.rdp.push_back({alpha, r.kind != BoundKind::lower ? round_up(*v) : *v});
    }
  }
}

const std::vector<AnalysisPtr>& all_analyses() {
  static const std::vector<AnalysisPtr> list = {
      detail::make_contraction_per_index(), detail::make_contraction_laplace(),
      detail::make_contraction_random_stop(), detail::make_federated(),
      detail::make_federated_random_stop(), detail::make_online_gd(),
      detail::make_pabi_feldman(),           detail::make_balle_mixing(),
      detail::make_composition_rdp(),        detail::make_composition_pld(),
      detail::make_shifted_renyi(),          detail::make_shifted_interpolation(),
      detail::make_ye_shokri(),
      detail::make_langevin(),               detail::make_langevin_lower(),
      detail::make_last_iterate_heuristic(),
  };
  return list;
}

AnalysisPtr find_analysis(std::string_view name, const Param& parameter) {
  std::string known;
  for (const auto& a : all_analyses()) {
    if (a->name() == name) return a;
    known += known.empty() ? "" : ", ";
    known += a->name();
  }
  fail(parameter, name, fmt::format("one of: {}", known));
}

}  // namespace hsdp
