// online-gd: noisy online gradient descent released at a uniformly random stop
// (Asoodeh, Diaz, Calmon 2021, "journal" in papers/, Sec. VI):
//
//   W_{t+1} = P_W(W_t - eta_t grad f_t(W_t) + eta_t sigma_t Z_t),  t = 1..n     (journal (24))
//
// one cost function f_t per step, in the order they arrive, output W_{tau+1} with tau
// uniform on 1..n (journal Alg. 1). In hsdp terms: batch 1, cyclic order, steps = n,
// noise_std_t = eta_t sigma_t (sigma_t is the paper's sigma, = noise_std_t / eta_t).
//
// The privacy value is journal Thm 5 eq. (17) with schedules, at the WORST position
// (ERRATA 1: the paper prints "min over i"), computed by detail::log_random_stop_delta_worst
// (contraction.cpp), with psi_t = 2 eta_t L and D_t = dia(Psi_t(W)) per step.
//
// Relation to contraction-random-stop: for a run this analysis accepts, the two report the
// same delta (the same function computes both); contraction-random-stop also covers
// batches b > 1, shuffled order and T < n, and reports the closed form (18). What online-gd
// adds is the online-learning view of Sec. VI: the step-size schedule of Prop. 3,
// eta_t = dia(W) / (M sqrt t) with M = L, the stochastic-regret bound of Prop. 3 and the
// two worked trade-offs, Examples 3 and 4, each checked against the exact (17).
//
// Conservative decisions (also in docs/analyses/online-gd.md):
//  * Examples 3 and 4 are (18) with psi, D and sigma read as the paper defines them under
//    Thm 5 for time-varying steps: psi = max_t psi_t = 2 eta_1 L (psi depends on eta_t),
//    sigma = min_t noise_std_t, and B = max{dia(W), max_t D_t} in place of D. Example 3's
//    printed theta(psi M sqrt(n) / (B sigma)) and theta(M sqrt(n) / sigma) divide by B
//    (resp. dia(W)) where s_min = eta_n sigma = dia(W) sigma / (M sqrt n) gives dia(W)
//    (resp. B): taken literally they can be BELOW (17) (psi/s_min uses dia(W) <= B). We
//    use psi/s_min and B/s_min, which dominate every factor of (17).
//  * Prop. 3 bounds E f(W_tau) for tau uniform on 1..n (W_1 is the data-independent start),
//    while Alg. 1 releases W_{tau+1}. The regret of the released iterate needs one more
//    (analysis-only) step in App. I's telescoping sum: + eta_n M^2 / (2n) = M dia(W) /
//    (2 n^{3/2}). Every regret detail includes it.
//  * Example 4's printed regret (M/2)(3D/sqrt(n) + d lambda^2 sqrt(n) / B) divides by B >=
//    dia(W) and uses D where App. I has dia(W); from Prop. 3 with sum sqrt(t) <= n sqrt(n)
//    the valid bound is (M/2)(3 dia(W)/sqrt(n) + d lambda^2 sqrt(n) / dia(W)), reported.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
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

bool constant_parameters(const Run& run) {
  return (run.eta.is_constant() || run.eta.min() == run.eta.max()) &&
         (run.noise_std.is_constant() || run.noise_std.min() == run.noise_std.max());
}

// True when v(t) agrees with target(t) to a relative 1e-9 for t = 1..steps.
bool matches(const Run& run, const std::function<double(std::int64_t)>& v,
             const std::function<double(std::int64_t)>& target) {
  for (std::int64_t t = 1; t <= run.steps; ++t) {
    const double x = v(t), y = target(t);
    if (!(std::abs(x - y) <= 1e-9 * std::abs(y))) return false;
  }
  return true;
}

// journal Prop. 3: eta_t = dia(W) / (M sqrt t) with M = L (CLI: --eta-schedule inv-sqrt
// --eta D/L).
bool is_prop3_schedule(const Run& run) {
  const double base = run.diameter / run.loss.lipschitz.value();
  return matches(run, [&](std::int64_t t) { return run.eta.at(t); },
                 [&](std::int64_t t) { return base / std::sqrt(static_cast<double>(t)); });
}

// Example 3: the paper's sigma_t = noise_std_t / eta_t is constant.
bool is_example3(const Run& run) {
  const double sigma = run.noise_std.at(1) / run.eta.at(1);
  return matches(run, [&](std::int64_t t) { return run.noise_std.at(t) / run.eta.at(t); },
                 [&](std::int64_t) { return sigma; });
}

// Example 4: eta_t sigma_t = lambda, i.e. noise_std is constant.
bool is_example4(const Run& run) {
  const double lambda = run.noise_std.at(1);
  return matches(run, [&](std::int64_t t) { return run.noise_std.at(t); },
                 [&](std::int64_t) { return lambda; });
}

// B = max{dia(W), max_t dia(Psi_t(W))} (journal Sec. VI, before Example 3).
double big_b(const Run& run) {
  double b = run.diameter;
  const auto d = max_psi_diameter(run);
  if (const auto* p = std::get_if<PsiDiameter>(&d)) b = std::max(b, p->value);
  return b;
}

// Examples 3 and 4 (journal Sec. VI), both instances of (18) (App. F, last display):
// (1/n) theta(psi / s_min) [1 - theta(B / s_min)]^{-1}, psi = max_t 2 eta_t L,
// s_min = min_t noise_std_t (Ex. 3: eta_n sigma = dia(W) sigma/(M sqrt n); Ex. 4: lambda),
// B = max{dia(W), max_t dia(Psi_t(W))}. Every factor of (17) at every position is
// dominated: theta(psi_t/s_t) <= theta(psi/s_min), theta(D_j/s_j) <= theta(B/s_min), and the
// geometric sum is extended to infinity. +inf when theta(B/s_min) rounds to 1.
double log_example(const Run& run, double eps) {
  double psi = 0.0, s_min = kInf;
  for (std::int64_t t = 1; t <= run.steps; ++t) {
    psi = std::max(psi, sensitivity(run, t));
    s_min = std::min(s_min, run.noise_std.at(t));
  }
  const double b = big_b(run);
  const double first = div::log_theta(eps, psi / s_min);
  if (first == -kInf) return -kInf;
  // [1 - theta]^{-1} from log(1 - theta) itself: near theta = 1, log theta is a subnormal
  // with few significant bits and log1mexp of it would carry that error into delta
  // (+inf when theta = 1, i.e. B / s_min = inf).
  return first - div::log_one_minus_theta(eps, b / s_min) - std::log(static_cast<double>(run.n));
}

// M dia(W) / (2 n^{3/2}): eta_n M^2 / (2n) with eta_n = dia(W) / (M sqrt n).
double release_shift(double M, double D, double n) { return M * D / (2.0 * n * std::sqrt(n)); }

// journal Prop. 3 (proof App. I) for the released iterate W_{tau+1}:
//   3 M dia(W) / (2 sqrt n) + (d / (2n)) sum_t eta_t sigma_t^2 + M dia(W) / (2 n^{3/2}),
// with eta_t sigma_t^2 = noise_std_t^2 / eta_t; the last term is the extra step of App. I's
// telescoping sum that moves the bound from W_tau to W_{tau+1} (see the header).
double prop3_regret(const Run& run) {
  const double M = run.loss.lipschitz.value(), D = run.diameter;
  const double n = static_cast<double>(run.n), d = static_cast<double>(*run.dimension);
  double noise = 0.0;
  for (std::int64_t t = 1; t <= run.steps; ++t)
    noise += run.noise_std.at(t) * run.noise_std.at(t) / run.eta.at(t);
  return 1.5 * M * D / std::sqrt(n) + d / (2.0 * n) * noise + release_shift(M, D, n);
}

// journal Example 3 regret as printed, (B / sqrt n)(3M/2 + d sigma^2 / M): valid, since
// Prop. 3 with sum_t 1/sqrt(t) <= 2 sqrt(n) gives it with dia(W) <= B; plus the release shift.
double example3_regret(const Run& run, double B) {
  const double M = run.loss.lipschitz.value(), n = static_cast<double>(run.n);
  const double d = static_cast<double>(*run.dimension);
  const double sigma = run.noise_std.at(1) / run.eta.at(1);
  return B / std::sqrt(n) * (1.5 * M + d * sigma * sigma / M) +
         release_shift(M, run.diameter, n);
}

// journal Example 4 regret, corrected (header): (M/2)(3 dia(W)/sqrt(n) + d lambda^2 sqrt(n) /
// dia(W)) from Prop. 3 with sum_t sqrt(t) <= n sqrt(n), plus the release shift.
double example4_regret(const Run& run) {
  const double M = run.loss.lipschitz.value(), n = static_cast<double>(run.n);
  const double d = static_cast<double>(*run.dimension), D = run.diameter;
  const double lambda = run.noise_std.at(1);
  return 0.5 * M * (3.0 * D / std::sqrt(n) + d * lambda * lambda * std::sqrt(n) / D) +
         release_shift(M, D, n);
}

class OnlineGd final : public Analysis {
 public:
  std::string_view name() const override { return "online-gd"; }
  bool charges_grid() const override { return true; }  // via sensitivity / diameter (common.hpp)
  std::string_view citation() const override {
    return "Asoodeh-Diaz-Calmon 2021 (journal) Sec. VI: noisy OGD (24), Thm 5 eq. (17) max "
           "over i (ERRATA 1); Prop. 3 (App. I) regret; Examples 3 and 4";
  }

  std::optional<std::string> check(const Run& run) const override {
    if (run.release != Release::random_stop)
      return fmt::format(
          "bounds the iterate at a uniformly random stop ({}, journal Alg. 1); release = {}",
          report_field("release", "random-stop"), to_string(run.release));
    if (run.batch_size != 1)
      return fmt::format(
          "processes one cost function per step ({}, journal (24)); batch size = "
          "{} (contraction-random-stop covers batches)",
          report_field("batch_size", "1"), run.batch_size);
    if (run.sampling != Sampling::cyclic)
      return fmt::format(
          "needs the online order, f_t used at step t ({}); sampling = {}",
          report_field("sampling", "cyclic"), to_string(run.sampling));
    if (run.steps != run.n)
      return fmt::format(
          "runs once over the n cost functions (steps = n, journal Alg. 1); steps = {}, n = {}",
          run.steps, run.n);
    if (auto why = check_one_pass(run)) return why;
    if (!std::isfinite(run.diameter))
      return fmt::format(
          "needs a bounded constraint set ({}): journal Sec. VI projects onto W and "
          "Prop. 3 uses dia(W)",
          report_field("diameter"));
    return std::nullopt;
  }

  // journal Thm 5 (17) with per-step eta_t, sigma_t, at the worst position (ERRATA 1).
  double log_delta(const Run& run, double epsilon) const override {
    return log_random_stop_delta_worst(run, epsilon, nullptr);
  }

  std::optional<std::int64_t> index(const Run& run) const override {
    if (constant_parameters(run)) return 1;  // the first cost function is the worst, any eps
    return std::nullopt;                     // eps-dependent: see the worst_index detail
  }

  std::vector<Detail> details(const Run& run, const Query& q) const override {
    std::vector<Detail> out;
    const double eps = q.epsilon ? *q.epsilon : epsilon(run, *q.delta);
    if (std::isfinite(eps)) {
      std::int64_t worst = 1;
      log_random_stop_delta_worst(run, eps, &worst);
      out.push_back({"worst_index", static_cast<double>(worst)});  // b = 1: index = step
    }
    if (!is_prop3_schedule(run)) return out;
    const bool ex3 = is_example3(run), ex4 = is_example4(run);
    const double B = big_b(run);
    if (ex3) out.push_back(curve(q, "example_3", run));
    if (ex4) out.push_back(curve(q, "example_4", run));
    if (run.dimension) {
      out.push_back({"prop3_regret", round_up(prop3_regret(run))});
      if (ex3) out.push_back({"example_3_regret", round_up(example3_regret(run, B))});
      if (ex4) out.push_back({"example_4_regret", round_up(example4_regret(run))});
    }
    return out;
  }

 private:
  // The example's delta at the query's eps, or its eps at the query's delta (the unit of
  // the result), rounded up and not capped.
  static Detail curve(const Query& q, std::string name, const Run& run) {
    if (q.epsilon) {
      const double ld = log_example(run, *q.epsilon);
      return {std::move(name), round_up(num::exp_upper(ld))};
    }
    const double target = std::log(*q.delta);
    auto e = num::smallest_meeting([&](double x) { return log_example(run, x) - target; }, 0.0,
                                   1.0, 1e4);
    return {std::move(name), e ? round_up(*e) : kInf};
  }
};

}  // namespace

AnalysisPtr make_online_gd() { return std::make_shared<OnlineGd>(); }

}  // namespace hsdp::detail
