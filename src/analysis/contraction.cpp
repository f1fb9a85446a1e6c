// Contraction-coefficient analyses of the LAST iterate of projected noisy (S)GD with hidden
// intermediate iterates (Asoodeh, Diaz, Calmon):
//
//   contraction-per-index    journal Thm 4, eq. (16) (proof App. E, (29)-(31)); isit Thm 4
//   contraction-laplace      isit Thm 3 (Laplace noise, one dimension; Lemma 1, eqs. (19)-(21))
//   contraction-random-stop  journal Thm 5, eq. (17) at the WORST position (ERRATA 1), with the
//                            closed forms (18), (19), (20) and isit Thm 5 eq. (16) as details
//
// and the three sums declared at the bottom of common.hpp, shared with online_gd.cpp.
//
// Notation in hsdp terms (docs/analyses/contraction.md):
//   T     = run.steps; the differing record is processed at step t = step_of_index(i)
//   s_t   = scale of the noise added to the parameters at step t: the Gaussian std
//           run.noise_std.at(t) (journal sigma_t; eta*sigma in the PNSGD papers), or the
//           Laplace scale run.laplace_scale(t) (isit: eta*v)
//   psi_t = sensitivity(run, t) = 2 eta_t L / b          (journal (36)-(37); isit (21)/(24))
//   D_t   = psi_diameter(run, t) = dia(Psi_t(W))          (journal (38), (42); isit Lemma 4)
//   E(r)  = E_{e^eps} of two noise laws whose means are r scales apart: theta_{e^eps}(r) for
//           Gaussian noise (journal Thm 1 / Lemma 1, isit Lemma 2), [1 - e^{(eps - r)/2}]_+
//           for Laplace noise (isit Lemma 1, eq. (9)). It is also the contraction coefficient
//           of the projected kernel whose input set has diameter r scales (journal Prop. 1 and
//           (30); isit (20), (23)).
//
// The delta of the record processed at step t is
//   E(psi_t/s_t) * prod_{j=t+1}^{T} E(D_j/s_j)                              (journal (16))
// and under a uniform random stop tau in 1..T (output W_{tau+1})
//   (1/T) E(psi_t/s_t) * sum_{tau=t}^{T} prod_{j=t+1}^{tau} E(D_j/s_j).     (journal (17))
//
// Everything is computed in the log domain (products of T factors underflow long before
// T = 10^6). Constant parameters (run.eta and run.noise_std both constant) take O(1) closed
// forms; schedules take O(T) backward recursions, never O(T^2).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "common.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/numerics/root.hpp"
#include "registry.hpp"

namespace hsdp::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

enum class Kernel { gaussian, laplace };

bool constant_parameters(const Run& run) {
  return run.eta.is_constant() && run.noise_std.is_constant();
}

/// Scale of the noise added to the parameters at step t: the Gaussian std s_t, or the
/// Laplace scale b_t = s_t / sqrt 2 (isit writes the noise as eta * L(0, v): b_t = eta v).
double noise_scale(const Run& run, Kernel kernel, std::int64_t t) {
  return kernel == Kernel::gaussian ? run.noise_std.at(t) : run.laplace_scale(t);
}

/// log E and log(1 - E) for E = E_{e^eps} of two laws of the kernel's noise family whose
/// means are `ratio` scales apart (journal Lemma 1 / isit Lemma 2 for Gaussian, isit Lemma 1
/// eq. (9) for Laplace). E is non-decreasing in ratio and non-increasing in eps.
struct LogPair {
  double log_e;            ///< log E (-inf when E = 0)
  double log_one_minus_e;  ///< log(1 - E) (-inf when E = 1)
};

LogPair log_e_gamma_pair(Kernel kernel, double eps, double ratio) {
  if (kernel == Kernel::laplace) {
    // [1 - e^{(eps - r)/2}]_+ : 1 - E = e^{(eps - r)/2} exactly.
    const double log_e = div::log_laplace_e_gamma(eps, ratio);
    return {log_e, log_e == -kInf ? 0.0 : 0.5 * (eps - ratio)};
  }
  if (ratio == 0.0 || eps == kInf) return {-kInf, 0.0};
  if (ratio == kInf) return {0.0, -kInf};  // theta(inf) = 1: no contraction
  // Contraction coefficients are often 1 - 1e-20 or closer (D/s >> 1); (T - t) log c and
  // 1 / (1 - c) need the digits of 1 - theta, which div::log_one_minus_theta keeps.
  const double log_e = div::log_theta(eps, ratio);
  const double log_one_minus = div::log_one_minus_theta(eps, ratio);
  if (log_e < -std::numbers::ln2) return {log_e, log_one_minus};
  return {std::min(0.0, std::log1p(-std::exp(log_one_minus))), log_one_minus};
}

/// log E (see log_e_gamma_pair); never > 0, never NaN for valid arguments.
double log_e_gamma(Kernel kernel, double eps, double ratio) {
  return log_e_gamma_pair(kernel, eps, ratio).log_e;
}

/// dia(Psi_t(W)). After check() a rule always applies (L is known); should none apply, the
/// conservative fallback is +inf: contraction coefficient 1, i.e. no amplification at t.
double dia(const Run& run, std::int64_t t) {
  const auto d = psi_diameter(run, t);
  if (const auto* p = std::get_if<PsiDiameter>(&d)) return p->value;
  return kInf;
}

/// psi_t / s_t: the first factor's argument (journal (31), isit (21)/(24)).
double shift_ratio(const Run& run, Kernel kernel, std::int64_t t) {
  return sensitivity(run, t) / noise_scale(run, kernel, t);
}

/// D_t / s_t: the argument of the contraction coefficient of step t (journal (30)).
double dia_ratio(const Run& run, Kernel kernel, std::int64_t t) {
  return dia(run, t) / noise_scale(run, kernel, t);
}

/// log E(ratio) at a fixed eps, re-evaluated only when the ratio changes: schedules often
/// repeat a ratio (e.g. psi_t/s_t = 2L/(b sigma) under the journal convention).
class LogCoefficient {
 public:
  LogCoefficient(Kernel kernel, double eps) : kernel_(kernel), eps_(eps) {}
  double operator()(double ratio) {
    if (!(ratio == ratio_)) {
      ratio_ = ratio;
      value_ = log_e_gamma(kernel_, eps_, ratio);
    }
    return value_;
  }

 private:
  Kernel kernel_;
  double eps_;
  double ratio_ = kNaN;
  double value_ = kNaN;
};

/// log sum_{m=0}^{k-1} c^m = log[(1 - c^k) / (1 - c)] for k >= 1, from c's LogPair: the
/// geometric sums of journal (17)-(18) / isit Thm 5. Both logs are passed: near c = 1 the
/// numerator must come from log(1 - c), not from log c, which is then a subnormal with a
/// few significant bits (1 - c ~ 1e-322 at D/s ~ 77), whose relative error would go
/// straight into the sum (num::log_geometric_sum).
double log_geometric(const LogPair& c, std::int64_t k) {
  return num::log_geometric_sum(c.log_e, c.log_one_minus_e, k);
}

/// Neumaier-compensated running sum: the O(T) paths add up to 10^6+ logs of contraction
/// coefficients, and plain summation would drift ~T ulps from the O(1) path's (T - t) log c.
class CompensatedSum {
 public:
  explicit CompensatedSum(double start = 0.0) : sum_(start) {}
  void add(double x) {
    if (!std::isfinite(x) || !std::isfinite(sum_)) {  // -inf absorbs everything
      sum_ += x;
      compensation_ = 0.0;
      return;
    }
    const double t = sum_ + x;
    compensation_ += std::abs(sum_) >= std::abs(x) ? (sum_ - t) + x : (x - t) + sum_;
    sum_ = t;
  }
  double value() const { return std::isfinite(sum_) ? sum_ + compensation_ : sum_; }

 private:
  double sum_;
  double compensation_ = 0.0;
};

/// The first record of the batch processed at step t (cyclic/shuffled order).
std::int64_t first_index_of_step(const Run& run, std::int64_t step) {
  return (step - 1) * run.batch_size + 1;
}

struct Worst {
  double log_delta;
  std::int64_t step;
};

// ---------------------------------------------------------------------------------------
// Last iterate, one position: journal Thm 4 eq. (16) (App. E: (29) with (30) and (31));
// isit Thm 3 (Laplace, proof (19)-(21)) and Thm 4 (Gaussian, proof (22)-(24)).
//   log[ E(psi_t/s_t) prod_{j=t+1}^{T} E(D_j/s_j) ]
// The product is empty for t = T (journal footnote 2). A record never processed (t outside
// 1..T) does not influence the output: delta = 0.
double log_last_iterate(const Run& run, Kernel kernel, double eps, std::int64_t t) {
  const std::int64_t T = run.steps;
  if (t < 1 || t > T) return -kInf;
  const double first = log_e_gamma(kernel, eps, shift_ratio(run, kernel, t));
  if (t == T || first == -kInf) return first;
  if (constant_parameters(run)) {
    // isit Thm 3/4: E(psi/s) E(D/s)^{T-t}.
    const double log_c = log_e_gamma(kernel, eps, dia_ratio(run, kernel, 1));
    if (log_c == -kInf) return -kInf;  // avoid 0 * -inf below when T - t is huge
    return first + static_cast<double>(T - t) * log_c;
  }
  LogCoefficient coefficient(kernel, eps);
  CompensatedSum sum(first);
  for (std::int64_t j = t + 1; j <= T && sum.value() > -kInf; ++j)
    sum.add(coefficient(dia_ratio(run, kernel, j)));
  return sum.value();
}

/// The largest psi_t / s_t over all steps (no special function: O(T) divisions).
double max_shift_ratio(const Run& run, Kernel kernel) {
  if (constant_parameters(run)) return shift_ratio(run, kernel, 1);
  double m = 0.0;
  for (std::int64_t t = 1; t <= run.steps; ++t) m = std::max(m, shift_ratio(run, kernel, t));
  return m;
}

/// max over positions of log_last_iterate (DP needs every position: journal Def. 2 takes
/// the sup over i). Every factor is <= 1, so with constant parameters the last step T --
/// the record processed last, which no later step amplifies -- is the worst.
/// For schedules: one backward pass with the suffix sum P(t) = sum_{j>t} log E(D_j/s_j),
/// stopped early once max_t log E(psi_t/s_t) + P(t) falls below the best value found: P is
/// non-increasing as t decreases, so no earlier step can exceed that bound (exact, not an
/// approximation). Ties keep the later step.
Worst log_last_iterate_worst(const Run& run, Kernel kernel, double eps) {
  const std::int64_t T = run.steps;
  if (constant_parameters(run)) return {log_e_gamma(kernel, eps, shift_ratio(run, kernel, 1)), T};
  const double first_bound = log_e_gamma(kernel, eps, max_shift_ratio(run, kernel));
  if (first_bound == -kInf) return {-kInf, T};  // every first factor is 0
  LogCoefficient first(kernel, eps), coefficient(kernel, eps);
  Worst best{-kInf, T};
  CompensatedSum suffix;  // sum_{j=t+1}^{T} log E(D_j/s_j)
  for (std::int64_t t = T; t >= 1; --t) {
    const double value = first(shift_ratio(run, kernel, t)) + suffix.value();
    if (value > best.log_delta) best = {value, t};
    if (t == 1) break;
    suffix.add(coefficient(dia_ratio(run, kernel, t)));
    if (suffix.value() == -kInf || first_bound + suffix.value() < best.log_delta) break;
  }
  return best;
}

/// True when the worst position of the last-iterate bound is the last step for every eps:
/// psi_t / s_t non-decreasing in t (then E(psi_T/s_T) >= E(psi_t/s_t) >= the value at t).
bool last_step_always_worst(const Run& run, Kernel kernel) {
  if (constant_parameters(run)) return true;
  double previous = 0.0;
  for (std::int64_t t = 1; t <= run.steps; ++t) {
    const double r = shift_ratio(run, kernel, t);
    if (r < previous) return false;
    previous = r;
  }
  return true;
}

/// The eps from which the Laplace last-iterate delta at step t is exactly 0 (isit Thm 3:
/// "delta = 0 if eps >= min{2L/v, M(b-a)/(eta v)}"): a factor [1 - e^{(eps - r)/2}]_+ vanishes
/// for eps >= r, so eps_0(t) = min(psi_t/b_t, min_{j>t} D_j/b_j). For t = T the product is
/// empty and eps_0(T) = psi_T/b_T. 0 for a record never processed.
double laplace_eps_zero(const Run& run, std::int64_t t) {
  const std::int64_t T = run.steps;
  if (t < 1 || t > T) return 0.0;
  double zero = shift_ratio(run, Kernel::laplace, t);
  if (t == T) return zero;
  if (constant_parameters(run)) return std::min(zero, dia_ratio(run, Kernel::laplace, 1));
  for (std::int64_t j = t + 1; j <= T; ++j) zero = std::min(zero, dia_ratio(run, Kernel::laplace, j));
  return zero;
}

/// max over positions of laplace_eps_zero: the worst-position delta (a max of the
/// per-position deltas) is 0 exactly when every per-position delta is. Constant parameters:
/// the last step's psi/b = 2L/(b v) is the largest (the others are min(psi/b, D/b)).
double laplace_eps_zero_worst(const Run& run) {
  const std::int64_t T = run.steps;
  if (constant_parameters(run)) return shift_ratio(run, Kernel::laplace, T);
  double worst = 0.0, suffix_min = kInf;
  for (std::int64_t t = T; t >= 1; --t) {
    worst = std::max(worst, std::min(shift_ratio(run, Kernel::laplace, t), suffix_min));
    suffix_min = std::min(suffix_min, dia_ratio(run, Kernel::laplace, t));
  }
  return worst;
}

// ---------------------------------------------------------------------------------------
// Random stop, one position: journal Thm 5 eq. (17) (App. F, (32)-(34)), the summand of the
// record processed at step t, with the per-step D_j of (34)+(30) (the printed (17) uses the
// larger D = max_j D_j; per-step is what the proof gives and is never larger):
//   log[ (1/T) E(psi_t/s_t) G(t) ],  G(t) = sum_{tau=t}^{T} prod_{j=t+1}^{tau} E(D_j/s_j).
// G obeys G(T) = 1, G(t) = 1 + E(D_{t+1}/s_{t+1}) G(t+1) (Horner), so all positions cost
// O(T) together; with constant parameters G(t) = (1 - c^{T-t+1}) / (1 - c).
double log_random_stop(const Run& run, Kernel kernel, double eps, std::int64_t t) {
  const std::int64_t T = run.steps;
  if (t < 1 || t > T) return -kInf;
  const double log_T = std::log(static_cast<double>(T));
  const double first = log_e_gamma(kernel, eps, shift_ratio(run, kernel, t));
  if (first == -kInf) return -kInf;
  if (t == T) return first - log_T;
  if (constant_parameters(run))
    return first + log_geometric(log_e_gamma_pair(kernel, eps, dia_ratio(run, kernel, 1)), T - t + 1) -
           log_T;
  LogCoefficient coefficient(kernel, eps);
  double log_g = 0.0;  // log G(T)
  for (std::int64_t j = T; j > t; --j)
    log_g = num::logaddexp(0.0, coefficient(dia_ratio(run, kernel, j)) + log_g);
  return first + log_g - log_T;
}

/// max over positions of log_random_stop. ERRATA 1: journal (17) prints "min over i"; DP
/// needs every position, so hsdp takes the maximum. Constant parameters: G(t) grows as t
/// decreases, so the first step is the worst (ties keep the earlier step).
Worst log_random_stop_worst(const Run& run, Kernel kernel, double eps) {
  const std::int64_t T = run.steps;
  if (constant_parameters(run)) return {log_random_stop(run, kernel, eps, 1), 1};
  const double log_T = std::log(static_cast<double>(T));
  LogCoefficient first(kernel, eps), coefficient(kernel, eps);
  Worst best{-kInf, T};
  double log_g = 0.0;
  for (std::int64_t t = T; t >= 1; --t) {
    if (t < T) log_g = num::logaddexp(0.0, coefficient(dia_ratio(run, kernel, t + 1)) + log_g);
    const double value = first(shift_ratio(run, kernel, t)) + log_g;
    if (value >= best.log_delta) best = {value, t};
  }
  best.log_delta -= log_T;
  return best;
}

// ---------------------------------------------------------------------------------------
// Closed form (18) of journal Thm 5 (App. F, last display):
//   (1/T) theta(psi/sigma) [1 - theta(D/sigma)]^{-1}
// with psi = max_t psi_t, sigma = min_t s_t, D = max_t D_t. It bounds (17) at EVERY position
// (each term is enlarged and the geometric sum extended to infinity), hence also the max.
// With constant parameters it is journal (19) (Lipschitz rule, D_t = D + 2 eta L), (20)
// (convex smooth, eta <= 2/beta: D_t = D) or isit Thm 5 eq. (16) (strongly convex: M D),
// with n -> T and 2L/sigma -> psi/s (= 2L/(b sigma) for batches of b).
struct ClosedForm18 {
  double psi;
  double sigma;
  double diameter;
  PsiRule rule;
};

ClosedForm18 closed_form_18_parameters(const Run& run) {
  ClosedForm18 c{0.0, run.noise_std.min(), kInf, PsiRule::lipschitz};
  if (run.eta.is_constant()) {
    c.psi = sensitivity(run, 1);
  } else {
    for (std::int64_t t = 1; t <= run.steps; ++t) c.psi = std::max(c.psi, sensitivity(run, t));
  }
  const auto d = max_psi_diameter(run);
  if (const auto* p = std::get_if<PsiDiameter>(&d)) {
    c.diameter = p->value;
    c.rule = p->rule;
  }
  return c;
}

double log_closed_form_18(const Run& run, const ClosedForm18& c, double eps) {
  const double first = log_e_gamma(Kernel::gaussian, eps, c.psi / c.sigma);
  if (first == -kInf) return -kInf;  // 0 * [1 - theta]^{-1}: the sums it bounds are 0 too
  const double log_one_minus_c =
      log_e_gamma_pair(Kernel::gaussian, eps, c.diameter / c.sigma).log_one_minus_e;
  return first - log_one_minus_c - std::log(static_cast<double>(run.steps));  // +inf if c = 1
}

// ---------------------------------------------------------------------------------------
// Analyses.

/// eps of the query: given, or the analysis' own eps(delta).
double query_epsilon(const Analysis& a, const Run& run, const Query& q) {
  return q.epsilon ? *q.epsilon : a.epsilon(run, *q.delta);
}

/// A delta or epsilon for display, rounded up (docs/architecture.md: never under-report).
double up(double v) { return std::isnan(v) ? kInf : round_up(v); }

std::optional<std::string> release_reason(const Run& run, Release wanted) {
  if (run.release == wanted) return std::nullopt;
  if (wanted == Release::last)
    return fmt::format("bounds the last iterate only ({}); release = {}",
                       report_field("release", "last"), to_string(run.release));
  return fmt::format("bounds the iterate at a uniformly random stopping time ({}); release = {}",
                     report_field("release", "random-stop"), to_string(run.release));
}

/// contraction-per-index (Gaussian) and contraction-laplace: the last iterate at the record
/// index run.index, or at the worst index when none is given.
class LastIterate final : public Analysis {
 public:
  explicit LastIterate(Kernel kernel) : kernel_(kernel) {}
  bool charges_grid() const override { return true; }  // via sensitivity / diameter (common.hpp)

  std::string_view name() const override {
    return kernel_ == Kernel::gaussian ? "contraction-per-index" : "contraction-laplace";
  }
  std::string_view citation() const override {
    return kernel_ == Kernel::gaussian
               ? "Asoodeh-Diaz-Calmon 2021 (journal) Thm 4 eq. (16); ISIT 2020 Thm 4"
               : "Asoodeh-Diaz-Calmon ISIT 2020 Thm 3 (Laplace, Lemma 1 eq. (9), Lemma 4)";
  }

  std::optional<std::string> check(const Run& run) const override {
    if (auto why = release_reason(run, Release::last)) return why;
    if (kernel_ == Kernel::laplace) {
      if (run.noise != NoiseKind::laplace) return fmt::format("needs Laplace noise ({})", report_field("noise", "laplace"));
      // isit footnote 2 and Lemma 1: the Laplace E_gamma (9) is that of a scalar shift; a
      // d-dimensional Laplace vector has no such closed form, so the model must be 1-D and
      // we ask for it explicitly rather than assume it.
      if (!run.dimension)
        return fmt::format(
            "needs a one-dimensional model ({}): isit Thm 3 is stated for K = [a, b] "
            "and its Laplace E_gamma (Lemma 1) is that of a scalar shift",
            report_field("dimension", "1"));
      if (*run.dimension != 1)
        return fmt::format(
            "needs a one-dimensional model ({}): isit Thm 3 is stated for K = [a, b]; "
            "dimension = {}",
            report_field("dimension", "1"), *run.dimension);
    }
    return check_one_pass(run, /*allow_laplace=*/kernel_ == Kernel::laplace);
  }

  double log_delta(const Run& run, double epsilon) const override {
    if (run.index) return log_last_iterate(run, kernel_, epsilon, step_of_index(run, *run.index));
    return log_last_iterate_worst(run, kernel_, epsilon).log_delta;
  }

  double epsilon(const Run& run, double delta) const override {
    if (kernel_ == Kernel::gaussian) return Analysis::epsilon(run, delta);
    // isit Thm 3: delta(eps) is continuous and exactly 0 from eps_0 on, so the answer lies
    // in [0, eps_0]; bracketing there keeps the root finder away from log 0 = -inf and
    // returns eps_0 itself (pure DP) when nothing smaller meets the target.
    const double zero = eps_zero(run);
    const double target = std::log(delta);
    auto f = [&](double eps) { return log_delta(run, eps) - target; };
    if (f(0.0) <= 0.0) return 0.0;
    if (!(zero <= 1e4)) return Analysis::epsilon(run, delta);
    return num::monotone_boundary(f, 0.0, zero, num::Holds::above);
  }

  std::optional<std::int64_t> index(const Run& run) const override {
    if (run.index) return run.index;
    if (last_step_always_worst(run, kernel_)) return first_index_of_step(run, run.steps);
    return std::nullopt;  // the worst position depends on eps: see the worst_index detail
  }

  std::vector<Detail> details(const Run& run, const Query& query) const override {
    std::vector<Detail> out;
    const double eps = query_epsilon(*this, run, query);
    std::int64_t step = run.steps;
    if (run.index) {
      step = step_of_index(run, *run.index);
    } else if (std::isfinite(eps)) {
      step = log_last_iterate_worst(run, kernel_, eps).step;
    }
    if (!run.index) out.push_back({"worst_index", static_cast<double>(first_index_of_step(run, step))});
    out.push_back({"step", static_cast<double>(step)});
    if (kernel_ == Kernel::laplace) out.push_back({"eps_zero_delta", up(eps_zero(run))});
    if (step < 1 || !std::isfinite(eps)) return out;
    // delta of one step at the record's batch, before any amplification by later steps.
    out.push_back({"one_step_delta", up(num::exp_upper(log_e_gamma(kernel_, eps, shift_ratio(run, kernel_, step))))});
    if (step < run.steps) {
      // The largest per-step contraction coefficient E(D_j/s_j) over the steps j > step that
      // amplify the record (the only one when parameters are constant), and dia(Psi(W)).
      double ratio = 0.0, diameter = 0.0;
      if (constant_parameters(run)) {
        ratio = dia_ratio(run, kernel_, 1);
        diameter = dia(run, 1);
      } else {
        for (std::int64_t j = step + 1; j <= run.steps; ++j) {
          ratio = std::max(ratio, dia_ratio(run, kernel_, j));
          diameter = std::max(diameter, dia(run, j));
        }
      }
      out.push_back({"contraction_factor", up(num::exp_upper(log_e_gamma(kernel_, eps, ratio)))});
      out.push_back({"psi_diameter", diameter});
    }
    return out;
  }

 private:
  /// Laplace only: the eps from which delta = 0 at the index used (isit Thm 3).
  double eps_zero(const Run& run) const {
    return run.index ? laplace_eps_zero(run, step_of_index(run, *run.index))
                     : laplace_eps_zero_worst(run);
  }

  Kernel kernel_;
};

/// contraction-random-stop: journal Thm 5 eq. (17), maximum over positions (ERRATA 1).
class RandomStop final : public Analysis {
 public:
  std::string_view name() const override { return "contraction-random-stop"; }
  bool charges_grid() const override { return true; }  // via sensitivity / diameter (common.hpp)
  std::string_view citation() const override {
    return "Asoodeh-Diaz-Calmon 2021 (journal) Thm 5 eq. (17), max over i (ERRATA 1); closed "
           "forms (18)-(20), ISIT 2020 Thm 5 eq. (16)";
  }

  std::optional<std::string> check(const Run& run) const override {
    if (auto why = release_reason(run, Release::random_stop)) return why;
    return check_one_pass(run);
  }

  // The guarantee holds for every record (worst position); run.index, if given, is not
  // used: the worst position bounds it too.
  double log_delta(const Run& run, double epsilon) const override {
    return log_random_stop_worst(run, Kernel::gaussian, epsilon).log_delta;
  }

  std::optional<std::int64_t> index(const Run& run) const override {
    if (constant_parameters(run)) return 1;  // G(t) is largest at t = 1 for every eps
    return std::nullopt;                     // eps-dependent: see the worst_index detail
  }

  std::vector<Detail> details(const Run& run, const Query& query) const override {
    std::vector<Detail> out;
    const double eps = query_epsilon(*this, run, query);
    if (std::isfinite(eps)) {
      const auto worst = log_random_stop_worst(run, Kernel::gaussian, eps);
      out.push_back({"worst_index", static_cast<double>(first_index_of_step(run, worst.step))});
    }
    // (18) reported like the result: delta at the query's eps, or eps at the query's delta.
    const ClosedForm18 c = closed_form_18_parameters(run);
    double value = kInf;
    if (query.epsilon) {
      const double ld = log_closed_form_18(run, c, *query.epsilon);
      value = num::exp_upper(ld);  // +inf if ld is; may exceed 1: (18) is looser than (17)
    } else {
      const double target = std::log(*query.delta);
      auto f = [&](double e) { return log_closed_form_18(run, c, e) - target; };
      value = num::smallest_meeting(f, 0.0, 1.0, 1e4).value_or(kInf);
    }
    value = up(value);
    out.push_back({"closed_form_18", value});
    if (constant_parameters(run)) {
      switch (c.rule) {
        case PsiRule::lipschitz: out.push_back({"journal_eq_19", value}); break;
        case PsiRule::smooth: out.push_back({"journal_eq_20", value}); break;
        case PsiRule::strongly_convex: out.push_back({"isit_thm5_eq_16", value}); break;
      }
    }
    return out;
  }
};

}  // namespace

// ---- The shared sums declared in common.hpp (Gaussian noise).

double log_per_index_delta(const Run& run, double epsilon, std::int64_t step) {
  // journal Thm 4 eq. (16) / isit Thm 4.
  return log_last_iterate(run, Kernel::gaussian, epsilon, step);
}

double log_random_stop_delta(const Run& run, double epsilon, std::int64_t step) {
  // journal Thm 5 eq. (17), the bracket at one position.
  return log_random_stop(run, Kernel::gaussian, epsilon, step);
}

double log_random_stop_delta_worst(const Run& run, double epsilon, std::int64_t* worst_step) {
  // journal Thm 5 eq. (17) with max over positions (ERRATA 1).
  const Worst w = log_random_stop_worst(run, Kernel::gaussian, epsilon);
  if (worst_step) *worst_step = w.step;
  return w.log_delta;
}

AnalysisPtr make_contraction_per_index() { return std::make_shared<LastIterate>(Kernel::gaussian); }
AnalysisPtr make_contraction_laplace() { return std::make_shared<LastIterate>(Kernel::laplace); }
AnalysisPtr make_contraction_random_stop() { return std::make_shared<RandomStop>(); }

}  // namespace hsdp::detail
