// Privacy-utility planning (include/hsdp/plan.hpp, docs/plan.md).
//
// Each setting minimises the utility bound its paper states over the parameters the paper
// leaves free, subject to the privacy target under that paper's own analysis, then
// re-evaluates the proposal: first with that analysis (epsilon at the target delta, rounded
// up, must be <= the target epsilon; the noise is nudged up until it is), then with the
// full accountant (reported next to it).
//
//  langevin   bound: Lemma 6 (20) as re-derived in docs/analyses/langevin.md,
//               E[L(th_K) - L*] <= (beta/2)[q^{2K} r0 + 2 d sigma^2/(lambda (2 - eta lambda))],
//               q = 1 - eta lambda;
//             eta = 1/beta (Thm 4; Cor. 1 needs eta <= 1/beta, Lemma 6 eta <= 2/(lambda+beta)).
//             Free: K and sigma. At a given K the bound increases with sigma, so sigma(K) is
//             the smallest noise the `langevin` analysis accepts after K steps; K is then
//             searched exhaustively (see plan_langevin). Thm 4's prescription (the sigma that
//             is private for every K, and K*) is reported next to it.
//  federated  bound: Cor. 1, 2 beta (D^2 + (G^2 + sigma^2)/m)/(lambda^2 T), T = n/m,
//             eta_t = 1/(lambda t), with sigma^2 read as the noise's second moment d sigma^2
//             (Alg. 1 adds sigma N(0, I_d); Cor. 1 is Theorem 1 of Rakhlin-Shamir-Sridharan
//             with E||g_t||^2 <= D^2 + (G^2 + E||sigma Z||^2)/m). Free: m and sigma; sigma(m)
//             from the calibration solver restricted to `federated` (Thm 2).
//  online     bound: journal Prop. 3 (plus the release shift of online-gd.cpp), eta_t =
//             dia(W)/(M sqrt t). Free: the noise sigma_t = sigma t^a, 0 <= a <= 1/2: a = 0 is
//             Example 3 (sigma_t = sigma) and a = 1/2 Example 4 (eta_t sigma_t constant), both
//             from the calibration solver restricted to `online-gd`; between them a bisection
//             on the same analysis. The a with the smallest Prop. 3 regret is proposed.
#include "hsdp/plan.hpp"
#include "hsdp/random/noise_grid.hpp"
#include "hsdp/field_use.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <utility>

#include "hsdp/analysis/langevin.hpp"
#include "hsdp/calibrate.hpp"
#include "hsdp/errors.hpp"
#include "../report/format.hpp"

namespace hsdp {

std::string_view to_string(PlanSetting s) {
  switch (s) {
    case PlanSetting::langevin:
      return "langevin";
    case PlanSetting::federated:
      return "federated";
    case PlanSetting::online:
      return "online";
    case PlanSetting::noisy_sgd:
      return "noisy-sgd";
  }
  return "?";
}

PlanSetting parse_plan_setting(std::string_view text, const Param& parameter) {
  for (auto s : {PlanSetting::langevin, PlanSetting::federated, PlanSetting::online, PlanSetting::noisy_sgd})
    if (text == to_string(s)) return s;
  fail(parameter, text, "one of langevin, federated, online, noisy-sgd");
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- input checks (every message names the field, the value and the range) ----------

double need(const std::optional<double>& v, const Param& name, std::string_view why) {
  if (!v) fail(name, "(missing)", why);
  return require_positive(name, *v);
}

std::int64_t need_dimension(const PlanProblem& p) {
  if (!p.dimension)
    fail(opt("dimension"), "(missing)",
         "given: the model dimension d >= 1 (the bound's noise term is d sigma^2)");
  return require_range(opt("dimension"), *p.dimension, 1, std::int64_t{1} << 53);
}

double need_lambda(const PlanProblem& p, std::string_view why) {
  if (!(p.strong_convexity > 0))
    fail(opt("strong_convexity"), p.strong_convexity, fmt::format("> 0 ({})", why));
  return require_positive(opt("strong_convexity"), p.strong_convexity);
}

double need_finite_diameter(const PlanProblem& p, std::string_view why) {
  if (!(p.diameter > 0) || !std::isfinite(p.diameter))
    fail(opt("diameter"), p.diameter, fmt::format("finite and > 0 ({})", why));
  return p.diameter;
}

void check_common(const PlanProblem& p) {
  require_positive(opt("epsilon"), p.epsilon);
  require_open(opt("delta"), p.delta, 0.0, 1.0);
  require_range(opt("n"), p.n, 1, std::int64_t{1} << 53);
  require_positive_or_inf(opt("diameter"), p.diameter);
  require_nonnegative(opt("strong_convexity"), p.strong_convexity);
}

/// The analysis' epsilon at the target delta (rounded up by evaluate) is finite and within
/// the target.
bool meets(const AnalysisResult& r, double epsilon) {
  return r.applicable && r.epsilon && std::isfinite(*r.epsilon) && *r.epsilon <= epsilon;
}

// Minimises f over the integers lo..hi (f may be +inf where infeasible). Exhaustive when
// there are fewer than `exhaustive_up_to` values; otherwise every value up to lo + 15 and a
// geometric grid (ratio 2^{1/4}), then the bracket around the best grid point is narrowed with 17
// evenly spaced points until at most 64 values remain, which are all evaluated. f is memoised by
// the caller.
std::int64_t minimise_integer(const std::function<double(std::int64_t)>& f, std::int64_t lo,
                              std::int64_t hi, std::int64_t exhaustive_up_to) {
  auto argmin = [&](const std::vector<std::int64_t>& xs) {
    std::size_t k = 0;
    for (std::size_t i = 1; i < xs.size(); ++i)
      if (f(xs[i]) < f(xs[k])) k = i;
    return k;
  };
  auto exhaustive = [&](std::int64_t a, std::int64_t b) {
    std::int64_t best = a;
    for (std::int64_t x = a + 1; x <= b; ++x)
      if (f(x) < f(best)) best = x;
    return best;
  };
  if (hi - lo < exhaustive_up_to) return exhaustive(lo, hi);
  std::vector<std::int64_t> grid;
  for (std::int64_t x = lo; x <= lo + 15; ++x) grid.push_back(x);
  for (double x = static_cast<double>(lo + 15) * std::pow(2.0, 0.25); x < static_cast<double>(hi);
       x *= std::pow(2.0, 0.25))
    grid.push_back(static_cast<std::int64_t>(std::llround(x)));
  grid.push_back(hi);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  std::size_t k = argmin(grid);
  std::int64_t a = grid[k == 0 ? 0 : k - 1], b = grid[std::min(k + 1, grid.size() - 1)];
  while (b - a > 64) {
    std::vector<std::int64_t> pts;
    for (int i = 0; i <= 16; ++i) pts.push_back(a + (b - a) * i / 16);
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    const std::size_t j = argmin(pts);
    a = pts[j == 0 ? 0 : j - 1];
    b = pts[std::min(j + 1, pts.size() - 1)];
  }
  return exhaustive(a, b);
}

Plan start(const PlanProblem& p) {
  Plan out;
  out.setting = p.setting;
  out.target_epsilon = p.epsilon;
  out.target_delta = p.delta;
  out.target_adjacency = p.adjacency;
  return out;
}

// The full accountant at the proposal, epsilon at the target delta. Also flags a vacuous
// bound: every objective here is L-Lipschitz on a set of diameter D (federated: ||grad F|| <= L),
// so any point of the set is within L D of the optimum.
void finish(Plan& out, const PlanProblem& p) {
  out.report = account(out.run, Query::at_delta(p.delta));
  out.feasible = true;
  const double trivial = *p.lipschitz * p.diameter;
  if (std::isfinite(trivial) && out.utility >= trivial)
    out.notes.push_back(fmt::format(
        "the predicted {} is at least L x diameter = {}, which any point of the constraint set "
        "achieves: the bound is vacuous at this target",
        out.utility_name, show(trivial)));
}

// =========================================================================================
// langevin: Chourasia-Ye-Shokri 2021, Lemma 6 under the `langevin` analysis
// =========================================================================================

struct LangevinInputs {
  double L, beta, lambda, eta, d;
};

LangevinInputs langevin_inputs(const PlanProblem& p) {
  LangevinInputs in{};
  in.L =
      need(p.lipschitz, opt("lipschitz"), "given: L > 0 (the total gradient sensitivity is S_g = 2L)");
  in.beta = need(p.smoothness, opt("smoothness"),
                 "given: beta > 0 (Thm 4 takes eta = 1/beta; Lemma 6 uses beta-smoothness)");
  in.lambda = need_lambda(p, "langevin Cor. 1 and Lemma 6 need a strongly convex loss");
  if (in.lambda > in.beta)
    fail(opt("strong_convexity"), in.lambda,
         fmt::format("<= smoothness = {} (lambda <= beta)", show(in.beta)));
  in.d = static_cast<double>(need_dimension(p));
  if (p.r0) require_nonnegative(opt("r0"), *p.r0);
  if (!p.r0 && !std::isfinite(p.diameter))
    fail(opt("r0"), "(missing)",
         "given (E||th_0 - th*||^2 >= 0) when the diameter is infinite: otherwise r0 <= "
         "diameter^2 (th_0 and th* both lie in C)");
  // Thm 4: eta = 1/beta. Cor. 1 (Lemma 5) needs eta <= 1/beta; Lemma 6 needs eta <=
  // 2/(lambda + beta), implied by lambda <= beta.
  in.eta = 1.0 / in.beta;
  return in;
}

// sigma(K)^2 = sigma_inf^2 lambda min(eta K/4, (1 - e^{-lambda eta K/2})/lambda): the per-order
// RDP of `langevin` is S_g^2/(sigma^2 n^2) times min(eta K/4 (Thm 1), (1 - e^{-lambda eta
// K/2})/lambda (Cor. 1)), and sigma_inf^2 = S_g^2/(lambda rho* n^2) puts Cor. 1's limit at the
// largest per-order constant rho* whose curve alpha rho* converts to the target (thm4_sigma2_dp).
double sigma2_at(double sigma_inf2, double lambda, double eta, double K) {
  const double thm1 = eta * K / 4.0;
  const double cor1 = -std::expm1(-lambda * eta * K / 2.0) / lambda;
  return sigma_inf2 * lambda * std::min(thm1, cor1);
}

// r0 = E||th_0 - th*||^2. The start of Lemma 6 / Thm 4, th_0 ~ P_C(N(0, (2 sigma^2/lambda) I)),
// lies in C and so does th*, hence r0 <= diameter^2 whatever sigma is and wherever C sits (tighter
// than
// ||th*||^2 + 2 d sigma^2/lambda, which would also need 0 in C to bound ||th*||). A given r0 is
// the user's value for their start, capped by diameter^2 (both bounds hold).
double r0_at(const PlanProblem& p) {
  const double box = p.diameter * p.diameter;  // +inf when C is unbounded
  return p.r0 ? std::min(*p.r0, box) : box;
}

double noise_floor(double d, double sigma, double lambda, double eta) {
  return 2.0 * d * sigma * sigma / (lambda * (2.0 - eta * lambda));
}

Run langevin_run(const PlanProblem& p, const LangevinInputs& in, std::int64_t K, double sigma) {
  Run r;
  r.n = p.n;
  r.steps = K;
  r.batch_size = p.n;
  r.sampling = Sampling::full;
  r.eta = Schedule(in.eta);
  r.noise_std = Schedule(noise_std_from_sigma(Convention::chourasia, sigma, in.eta, p.n));
  r.loss.lipschitz = in.L;
  r.loss.smoothness = in.beta;
  r.loss.strong_convexity = in.lambda;
  r.diameter = p.diameter;
  r.release = Release::last;
  r.dimension = p.dimension;
  r.validate();
  return r;
}

// Raises sigma (chourasia) in steps of 1e-9 relative until `analysis` confirms the target at
// K steps; sigma is rounded up to 10 digits first so that the printed value is the verified one.
std::pair<double, AnalysisResult> verified_sigma(const PlanProblem& p, const LangevinInputs& in,
                                                 std::int64_t K, double sigma,
                                                 const Analysis& analysis) {
  sigma = round_up(sigma);
  for (int i = 0; i < 256; ++i) {
    AnalysisResult r = analysis.evaluate(langevin_run(p, in, K, sigma), Query::at_delta(p.delta));
    if (meets(r, p.epsilon)) return {sigma, std::move(r)};
    sigma = round_up(sigma * (1 + 1e-9));
  }
  throw std::logic_error("plan langevin: the langevin analysis does not confirm sigma(K)");
}

Plan plan_langevin(const PlanProblem& p) {
  Plan out = start(p);
  const LangevinInputs in = langevin_inputs(p);
  const double n = static_cast<double>(p.n);
  const double sigma_inf2 = langevin::thm4_sigma2_dp(p.epsilon, p.delta, 2.0 * in.L, n, in.lambda);
  auto bound = [&](double K, double sigma) {
    return langevin::lemma6_excess_risk(K, in.eta, in.lambda, in.beta, in.d, sigma, r0_at(p));
  };

  // The search over K >= 1. The noise term (beta/2) floor(sigma(K)) is non-decreasing in K
  // and the start's term is >= 0, so once the noise term alone reaches the best bound so far
  // no larger K can do better: the scan stops there, exactly. With eta = 1/beta the noise
  // term's deficit decays like e^{-lambda K/(2 beta)}, slower than the start term's
  // e^{-2 lambda K/beta}, so the bound dips below its limit and the stop comes within a few
  // multiples of beta/lambda steps; in any case it comes once sigma(K) = sigma_inf in floating
  // point and the start term is below the rounding of the floor. Capped at 2^26 steps (a note
  // says so if reached).
  const std::int64_t cap = std::int64_t{1} << 26;
  double best = kInf;
  std::int64_t best_k = 1, scanned = 0;
  bool stopped = false;
  for (std::int64_t K = 1; K <= cap; ++K) {
    ++scanned;
    const double sigma =
        std::sqrt(sigma2_at(sigma_inf2, in.lambda, in.eta, static_cast<double>(K)));
    const double b = bound(static_cast<double>(K), sigma);
    if (b < best) {
      best = b;
      best_k = K;
    }
    if (in.beta / 2.0 * noise_floor(in.d, sigma, in.lambda, in.eta) >= best) {
      stopped = true;
      break;
    }
  }
  const auto analysis = find_analysis("langevin");
  auto [sigma, privacy] = verified_sigma(
      p, in, best_k,
      std::sqrt(sigma2_at(sigma_inf2, in.lambda, in.eta, static_cast<double>(best_k))), *analysis);

  out.utility_name = "excess_risk";
  out.utility_citation =
      "Chourasia-Ye-Shokri 2021, Lemma 6 (20), re-derived: (beta/2)[(1 - eta lambda)^{2K} r0 + "
      "2 d sigma^2/(lambda (2 - eta lambda))], eta = 1/beta (Thm 4)";
  out.privacy_analysis = "langevin";
  out.convention = "chourasia";
  out.sigma = sigma;
  out.eta_schedule = "constant";
  out.eta = in.eta;
  out.choice = "lemma6_minimum";
  out.run = langevin_run(p, in, best_k, sigma);
  out.paper_privacy = std::move(privacy);
  out.utility = round_up(bound(static_cast<double>(best_k), sigma));

  // Thm 4's own prescription: sigma^2 private for every K (Cor. 1's limit), K* the smallest
  // K whose start term is at most the noise floor (thm4_steps; with lambda = beta the
  // gradient step lands on th* and one step suffices).
  const double sigma_inf = round_up(std::sqrt(sigma_inf2));
  const double r0_inf = r0_at(p);
  double k_star;
  if (in.eta * in.lambda < 1) {
    k_star = langevin::thm4_steps(in.eta, in.lambda, in.d, sigma_inf, r0_inf);
  } else {
    k_star = r0_inf <= noise_floor(in.d, sigma_inf, in.lambda, in.eta) ? 0.0 : 1.0;
  }
  const std::int64_t k_run = std::max<std::int64_t>(1, static_cast<std::int64_t>(k_star));
  const AnalysisResult thm4_privacy =
      analysis->evaluate(langevin_run(p, in, k_run, sigma_inf), Query::at_delta(p.delta));
  out.details = {
      {"r0", r0_at(p)},
      {"noise_floor_excess_risk",
       round_up(in.beta / 2 * noise_floor(in.d, sigma, in.lambda, in.eta))},
      {"thm4_sigma", sigma_inf},
      {"thm4_steps", k_star},
      {"thm4_excess_risk", round_up(bound(static_cast<double>(k_run), sigma_inf))},
      {"thm4_epsilon", thm4_privacy.epsilon.value_or(kInf)},
      {"steps_searched", static_cast<double>(scanned)},
  };
  out.notes.push_back(
      "Lemma 6 assumes an L-Lipschitz, lambda-strongly convex, beta-smooth loss whose empirical "
      "minimiser th* lies in the interior of C (grad L(th*) = 0)");
  if (p.r0 && !(std::isfinite(p.diameter) && p.diameter * p.diameter < *p.r0)) {
    out.notes.push_back(fmt::format("r0 = E||th_0 - th*||^2 as given ({})", report_field("r0")));
  } else {
    out.notes.push_back(
        "r0 <= diameter^2: the start th_0 ~ P_C(N(0, (2 sigma^2/lambda) I)) of Lemma 6 / Thm 4 "
        "and th* both lie in C");
  }
  out.notes.push_back(fmt::format(
      "the proposed sigma is private for exactly {} steps (the smallest noise the langevin "
      "analysis accepts there); thm4_sigma = {} is private for every number of steps",
      best_k, show(sigma_inf)));
  // Cor. 1 (the log-Sobolev argument of Lemma 5) does not hold for noise drawn on a grid
  // (docs/analyses/langevin.md, "Trained models: noise on a grid"): when the proposal relies on
  // it, a model trained by hsdp is certified by Thm 1 with the grid's slack instead, which the
  // note evaluates at the proposed run with the trainer's grid charges (the plan's numbers stay
  // those of the setting's analysis on continuous noise).
  const double k_best = static_cast<double>(best_k);
  if (-std::expm1(-in.lambda * in.eta * k_best / 2.0) / in.lambda < in.eta * k_best / 4.0) {
    Run gridded = out.run;
    gridded.grid = random::noise_grid(static_cast<std::size_t>(in.d), best_k, NoiseKind::gaussian);
    const AnalysisResult on_grid = analysis->evaluate(gridded, Query::at_delta(p.delta));
    const std::string grid_value =
        on_grid.applicable && on_grid.epsilon
            ? fmt::format("epsilon = {} at delta = {}", report::show10_or_inf(*on_grid.epsilon), show(p.delta))
            : "not applicable: " + on_grid.reason;
    out.notes.push_back(fmt::format(
        "the langevin epsilon above uses Cor. 1, which does not hold for noise drawn on a grid "
        "(docs/analyses/langevin.md): a model trained by hsdp is certified by Thm 1 on the grid ({} for this "
        "run with the trainer's grid charges)",
        grid_value));
  }
  if (!stopped)
    out.notes.push_back(fmt::format("the search over K stopped at the cap K = {}", cap));
  finish(out, p);
  return out;
}

// =========================================================================================
// federated: Asoodeh-Chen-Calmon-Ozgur 2021, Cor. 1 under the `federated` analysis
// =========================================================================================

struct FederatedInputs {
  double L, beta, lambda, D, G2, d;
};

FederatedInputs federated_inputs(const PlanProblem& p) {
  FederatedInputs in{};
  in.L = need(p.lipschitz, opt("lipschitz"), "given: L > 0 (Thm 2's sensitivity 2L/m)");
  in.beta = need(p.smoothness, opt("smoothness"), "given: beta > 0 (Cor. 1's 2 beta / (lambda^2 T))");
  in.lambda = need_lambda(p, "federated Cor. 1: a strongly convex F and eta_t = 1/(lambda t)");
  if (in.lambda > in.beta)
    fail(opt("strong_convexity"), in.lambda,
         fmt::format("<= smoothness = {} (lambda <= beta)", show(in.beta)));
  need_finite_diameter(p,
                       "federated Cor. 1 and Thm 2 project onto a ball of radius rho = diameter/2");
  in.d = static_cast<double>(need_dimension(p));
  // ||grad F|| = ||E grad l|| <= L and Var(grad l) <= E||grad l||^2 <= L^2: the defaults are
  // valid (if loose) whenever the loss is L-Lipschitz.
  in.D = p.gradient_bound ? require_positive(opt("gradient_bound"), *p.gradient_bound) : in.L;
  in.G2 = p.gradient_variance ? require_nonnegative(opt("gradient_variance"), *p.gradient_variance)
                              : in.L * in.L;
  if (p.batch_size) require_range(opt("batch_size"), *p.batch_size, 1, p.n);
  return in;
}

Run federated_base(const PlanProblem& p, const FederatedInputs& in, std::int64_t m) {
  Run r;
  r.n = p.n;
  r.batch_size = m;
  r.steps = p.n / m;  // T = n/m rounds, each user in at most one (Alg. 1)
  r.sampling = Sampling::shuffle;
  r.eta = make_schedule(ScheduleShape::inv_t, 1.0 / in.lambda, r.steps);
  r.loss.lipschitz = in.L;
  r.loss.smoothness = in.beta;
  r.loss.strong_convexity = in.lambda;
  r.diameter = p.diameter;
  r.release = Release::last;
  r.dimension = p.dimension;
  r.noise_std = noise_schedule(r, {NoiseUnit::sigma, Convention::federated, 1.0});
  r.validate();
  return r;
}

constexpr std::int64_t kExhaustiveUsers = 20000;

Plan plan_federated(const PlanProblem& p) {
  Plan out = start(p);
  const FederatedInputs in = federated_inputs(p);
  const std::vector<AnalysisPtr> only{find_analysis("federated")};
  std::map<std::int64_t, CalibrationResult> solved;
  auto solve = [&](std::int64_t m) -> const CalibrationResult& {
    auto it = solved.find(m);
    if (it != solved.end()) return it->second;
    CalibrationOptions o;
    o.noise = NoiseParameter{NoiseUnit::sigma, Convention::federated, 1.0};
    o.eta_shape = ScheduleShape::inv_t;
    o.analyses = only;
    return solved
        .emplace(m, calibrate(federated_base(p, in, m), CalibrationParameter::noise, p.epsilon,
                              p.delta, o))
        .first->second;
  };
  auto objective = [&](std::int64_t m) {
    const auto& c = solve(m);
    return c.feasible ? plan_federated_bound(p, m, c.value) : kInf;
  };
  // Every m is tried when n <= kExhaustiveUsers (the calibrations cost about n log n
  // rounds in all): T = floor(n/m) makes the bound jump between neighbouring m, and a grid
  // can miss the minimum (tests: FederatedBatchMinimisesCor1AgainstBruteForce). Above that,
  // the grid search, stated in a note.
  const bool exhaustive = p.n <= kExhaustiveUsers;
  const std::int64_t m =
      p.batch_size ? *p.batch_size : minimise_integer(objective, 1, p.n, kExhaustiveUsers + 1);
  const CalibrationResult& c = solve(m);
  if (!c.feasible) {
    out.reason = fmt::format("m = {}: {}", m, c.reason);
    return out;
  }
  out.utility_name = "excess_risk";
  out.utility_citation =
      "Asoodeh-Chen-Calmon-Ozgur 2021, Cor. 1: 2 beta (D^2 + (G^2 + d sigma^2)/m)/(lambda^2 T), "
      "T = n/m, eta_t = 1/(lambda t), sigma^2 read as the noise's second moment d sigma^2";
  out.privacy_analysis = "federated";
  out.convention = "federated";
  out.sigma = c.value;
  out.eta_schedule = "inv-t";
  out.eta = 1.0 / in.lambda;
  out.choice = p.batch_size ? "fixed_batch" : "searched_batch";
  out.run = c.run;
  out.paper_privacy = only[0]->evaluate(out.run, Query::at_delta(p.delta));
  if (!meets(out.paper_privacy, p.epsilon))
    throw std::logic_error("plan federated: the calibrated sigma does not meet the target");
  out.utility = round_up(plan_federated_bound(p, m, c.value));
  out.details = {
      {"rounds_T", static_cast<double>(out.run.steps)},
      {"gradient_bound_D", in.D},
      {"gradient_variance_G2", in.G2},
      {"batch_sizes_evaluated", static_cast<double>(solved.size())},
  };
  out.notes.push_back(
      "Cor. 1 assumes i.i.d. records, F = E l lambda-strongly convex and beta-smooth on W with its "
      "minimiser in the interior (so F(w) - F* <= (beta/2)||w - w*||^2), ||grad F||^2 <= D^2, "
      "Var(grad l) <= G^2, and W inside the ball of radius diameter/2");
  if (!p.gradient_bound || !p.gradient_variance)
    out.notes.push_back(fmt::format(
        "D = L and G^2 = L^2 unless given ({}, {}): valid for an L-Lipschitz loss, possibly loose",
        report_field("gradient_bound"), report_field("gradient_variance")));
  out.notes.push_back(
      "the bound is for the last iterate W_T; federated Cor. 2 (random stop, distribution-free) "
      "has "
      "no usable bound: its constant c is not given");
  if (!p.batch_size && !exhaustive)
    out.notes.push_back(fmt::format(
        "n > {}: m was searched on a grid refined around its best point (the minimum over every m "
        "may be slightly smaller); pass {} to evaluate a given m",
        kExhaustiveUsers, report_field("batch_size")));
  if (out.run.steps * m < p.n)
    out.notes.push_back(fmt::format("T = floor(n/m) = {} rounds: {} users take part in no round",
                                    out.run.steps, p.n - out.run.steps * m));
  finish(out, p);
  return out;
}

// =========================================================================================
// online: journal Prop. 3 under the `online-gd` analysis, Examples 3 and 4
// =========================================================================================

Run online_base(const PlanProblem& p, double M) {
  Run r;
  r.n = p.n;
  r.steps = p.n;  // one pass over the n cost functions (journal Alg. 1)
  r.batch_size = 1;
  r.sampling = Sampling::cyclic;
  // Prop. 3: eta_t = dia(W) / (M sqrt t).
  r.eta = make_schedule(ScheduleShape::inv_sqrt, p.diameter / M, p.n);
  r.loss.lipschitz = M;
  r.loss.smoothness = p.smoothness;
  r.loss.strong_convexity = p.strong_convexity;
  r.diameter = p.diameter;
  r.release = Release::random_stop;
  r.dimension = p.dimension;
  r.noise_std = Schedule(1.0);
  r.validate();
  return r;
}

// The paper's sigma_t = c t^a in the journal convention, noise std eta_t c t^a: a = 0 is
// Example 3 (sigma_t = sigma), a = 1/2 is Example 4 (eta_t sigma_t = c dia(W)/M, constant).
Run power_noise_run(Run r, double c, double a) {
  std::vector<double> s(static_cast<std::size_t>(r.steps));
  for (std::int64_t t = 1; t <= r.steps; ++t)
    s[static_cast<std::size_t>(t - 1)] = r.eta.at(t) * c * std::pow(static_cast<double>(t), a);
  r.noise_std = Schedule(std::move(s));
  return r;
}

// The smallest c (bisection in log scale to 1e-6 relative, keeping the end that meets the
// target) for which `analysis` certifies delta(eps) <= delta at sigma_t = c t^a; then c is
// rounded up and raised until the analysis' epsilon at the target delta (rounded up) is within
// the target, as calibrate() does. nullopt when no c in [1e-12, 1e12] meets it.
std::optional<std::pair<double, Run>> smallest_power_noise(const Run& base, double a,
                                                           const Analysis& analysis, double epsilon,
                                                           double delta) {
  if (analysis.not_applicable(power_noise_run(base, 1.0, a))) return std::nullopt;
  auto ok = [&](double c) {
    const double ld = analysis.log_delta(power_noise_run(base, c, a), epsilon);
    return log_delta_meets(ld, delta);
  };
  double lo = 1.0, hi = 1.0;  // lo fails, hi meets
  if (ok(1.0)) {
    while (ok(lo)) {
      hi = lo;
      lo /= 4;
      if (lo < 1e-12) break;
    }
  } else {
    while (!ok(hi)) {
      lo = hi;
      hi *= 4;
      if (hi > 1e12) return std::nullopt;
    }
  }
  while (hi / lo - 1 > 1e-6) {
    const double mid = std::sqrt(lo * hi);
    (ok(mid) ? hi : lo) = mid;
  }
  for (int i = 0; i < 400; ++i) {
    const double c = round_up(hi);
    Run run = power_noise_run(base, c, a);
    if (meets(analysis.evaluate(run, Query::at_delta(delta)), epsilon))
      return std::make_pair(c, std::move(run));
    hi = c * (1 + 1e-6);
  }
  return std::nullopt;
}

Plan plan_online(const PlanProblem& p) {
  Plan out = start(p);
  const double M =
      need(p.lipschitz, opt("lipschitz"), "given: M = L > 0 (Prop. 3's eta_t = dia(W)/(M sqrt t))");
  need_finite_diameter(p, "journal Sec. VI projects onto W and Prop. 3 uses dia(W)");
  need_dimension(p);
  if (p.smoothness) require_positive(opt("smoothness"), *p.smoothness);
  const Run base = online_base(p, M);
  const std::vector<AnalysisPtr> only{find_analysis("online-gd")};
  CalibrationOptions o;
  o.eta_shape = ScheduleShape::inv_sqrt;
  o.analyses = only;
  // Example 3: sigma_t = sigma (journal convention: noise std eta_t sigma).
  o.noise = NoiseParameter{NoiseUnit::sigma, Convention::journal, 1.0};
  const CalibrationResult ex3 = calibrate(base, CalibrationParameter::noise, p.epsilon, p.delta, o);
  // Example 4: eta_t sigma_t = lambda, a constant noise std.
  o.noise = NoiseParameter{NoiseUnit::std, Convention::journal, p.diameter};
  const CalibrationResult ex4 = calibrate(base, CalibrationParameter::noise, p.epsilon, p.delta, o);
  if (!ex3.feasible && !ex4.feasible) {
    out.reason =
        fmt::format("Example 3 (constant sigma): {}; Example 4 (constant eta_t sigma_t): {}",
                    ex3.reason, ex4.reason);
    return out;
  }
  const double r3 = ex3.feasible ? plan_online_regret(ex3.run) : kInf;
  const double r4 = ex4.feasible ? plan_online_regret(ex4.run) : kInf;

  // Between the two examples: sigma_t = c t^a, 0 < a < 1/2. Prop. 3 holds for any sigma_t, and
  // the paper (after Example 4) observes that sigma_t must grow, but slower than sqrt(t), for
  // both guarantees to stay non-trivial. a on a grid of step 0.1, then a golden-section
  // refinement around the best grid point (8 exponents, bracket width 0.2 -> 0.011).
  struct Candidate {
    double a, c, regret;
    Run run;
  };
  std::map<double, Candidate> tried;
  if (ex3.feasible) tried.emplace(0.0, Candidate{0.0, ex3.value, r3, ex3.run});
  if (ex4.feasible) tried.emplace(0.5, Candidate{0.5, ex4.value / ex4.run.eta.at(1), r4, ex4.run});
  auto regret_at = [&](double a) {
    auto it = tried.find(a);
    if (it != tried.end()) return it->second.regret;
    auto solved = smallest_power_noise(base, a, *only[0], p.epsilon, p.delta);
    if (!solved) return tried.emplace(a, Candidate{a, 0.0, kInf, base}).first->second.regret;
    const double r = plan_online_regret(solved->second);
    return tried.emplace(a, Candidate{a, solved->first, r, std::move(solved->second)})
        .first->second.regret;
  };
  const std::vector<double> grid{0.0, 0.1, 0.2, 0.3, 0.4, 0.5};
  std::size_t k = 0;
  for (std::size_t i = 1; i < grid.size(); ++i)
    if (regret_at(grid[i]) < regret_at(grid[k])) k = i;
  // Golden-section search on [lo, hi], one new exponent per step (the other is carried).
  double lo = grid[k == 0 ? 0 : k - 1], hi = grid[std::min(k + 1, grid.size() - 1)];
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = regret_at(x1), f2 = regret_at(x2);
  for (int i = 0; i < 6; ++i) {
    if (f1 <= f2) {
      hi = x2, x2 = x1, f2 = f1;
      x1 = hi - g * (hi - lo), f1 = regret_at(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2;
      x2 = lo + g * (hi - lo), f2 = regret_at(x2);
    }
  }
  const Candidate* best = nullptr;
  for (const auto& [a, cand] : tried)
    if (std::isfinite(cand.regret) && (!best || cand.regret < best->regret)) best = &cand;
  if (!best) {
    out.reason = "no noise sigma_t = c t^a (0 <= a <= 1/2) up to c = 1e12 meets the target";
    return out;
  }
  const bool pick3 = best->a == 0.0, pick4 = best->a == 0.5;

  out.utility_name = "stochastic_regret";
  out.utility_citation =
      "Asoodeh-Diaz-Calmon 2021 (journal), Prop. 3: 3 M dia(W)/(2 sqrt n) + (d/(2n)) sum_t eta_t "
      "sigma_t^2, plus M dia(W)/(2 n^{3/2}) for the released W_{tau+1}; eta_t = dia(W)/(M sqrt t)";
  out.privacy_analysis = "online-gd";
  out.run = best->run;
  out.convention = "journal";
  // The paper's sigma_1 = noise_std_1 / eta_1 = c (sigma_t = c t^a).
  out.sigma = best->c;
  out.eta_schedule = "inv-sqrt";
  out.eta = out.run.eta.at(1);
  out.choice = pick3 ? "example_3" : pick4 ? "example_4" : "sigma_t_power";
  out.paper_privacy = only[0]->evaluate(out.run, Query::at_delta(p.delta));
  if (!meets(out.paper_privacy, p.epsilon))
    throw std::logic_error("plan online: the calibrated noise does not meet the target");
  out.utility = round_up(best->regret);
  out.details.push_back({"sigma_exponent_a", best->a});
  if (ex3.feasible) {
    out.details.push_back({"example_3_sigma", ex3.value});
    out.details.push_back({"example_3_regret", round_up(r3)});
  }
  if (ex4.feasible) {
    out.details.push_back({"example_4_lambda", ex4.value});
    out.details.push_back({"example_4_regret", round_up(r4)});
  }
  out.details.push_back({"exponents_evaluated", static_cast<double>(tried.size())});
  out.notes.push_back(
      "Prop. 3 assumes convex cost functions f_t drawn i.i.d., with M = sup ||grad f|| <= L");
  out.notes.push_back(
      "the step sizes are Prop. 3's eta_t = dia(W)/(M sqrt t): the paper states no regret bound "
      "for another base, so the base is not searched");
  if (pick4)
    out.notes.push_back(fmt::format(
        "Example 4 noise: eta_t sigma_t = lambda = {} at every step (sigma above is sigma_1)",
        show(ex4.value)));
  if (!pick3 && !pick4)
    out.notes.push_back(fmt::format(
        "noise sigma_t = sigma t^a with a = {}, between Example 3 (a = 0) and Example 4 (a = 1/2): "
        "Prop. 3 holds for any sigma_t, and the paper notes sigma_t must grow slower than sqrt(t)",
        fmt::format("{:.4g}", best->a)));
  finish(out, p);
  return out;
}

}  // namespace

double plan_langevin_r0(const PlanProblem& problem) {
  require_positive_or_inf(opt("diameter"), problem.diameter);
  if (problem.r0) require_nonnegative(opt("r0"), *problem.r0);
  if (!problem.r0 && !std::isfinite(problem.diameter))
    fail(opt("r0"), "(missing)", "given when the diameter is infinite");
  return r0_at(problem);
}

double plan_langevin_sigma2(const PlanProblem& problem, double eta, double K) {
  check_common(problem);
  const double L = need(problem.lipschitz, opt("lipschitz"), "given: L > 0");
  const double lambda = need_lambda(problem, "langevin Cor. 1");
  require_positive("eta", eta);
  require_positive("K", K);
  return sigma2_at(langevin::thm4_sigma2_dp(problem.epsilon, problem.delta, 2.0 * L,
                                            static_cast<double>(problem.n), lambda),
                   lambda, eta, K);
}

double plan_federated_bound(const PlanProblem& problem, std::int64_t m, double sigma) {
  require_range(opt("n"), problem.n, 1, std::int64_t{1} << 53);
  const FederatedInputs in = federated_inputs(problem);
  require_range("m", m, 1, problem.n);
  require_positive("sigma", sigma);
  const double T = static_cast<double>(problem.n / m);
  const double md = static_cast<double>(m);
  return 2.0 * in.beta * (in.D * in.D + (in.G2 + in.d * sigma * sigma) / md) /
         (in.lambda * in.lambda * T);
}

double plan_online_regret(const Run& run) {
  run.validate();
  if (!run.loss.lipschitz) fail(opt("lipschitz"), "(missing)", "given: M = L > 0");
  if (!run.dimension) fail(opt("dimension"), "(missing)", "given: d >= 1");
  if (!std::isfinite(run.diameter)) fail(opt("diameter"), run.diameter, "finite (Prop. 3 uses dia(W))");
  const double M = *run.loss.lipschitz, D = run.diameter;
  const double n = static_cast<double>(run.n), d = static_cast<double>(*run.dimension);
  // eta_t sigma_t^2 = noise_std_t^2 / eta_t (journal convention noise_std_t = eta_t sigma_t).
  double noise = 0.0;
  for (std::int64_t t = 1; t <= run.steps; ++t)
    noise += run.noise_std.at(t) * run.noise_std.at(t) / run.eta.at(t);
  return 1.5 * M * D / std::sqrt(n) + d / (2.0 * n) * noise + M * D / (2.0 * n * std::sqrt(n));
}

namespace detail {
Plan plan_noisy_sgd(const PlanProblem& problem);  // plan_training.cpp
}  // namespace detail

Plan plan(const PlanProblem& problem) {
  check_common(problem);
  switch (problem.setting) {
    case PlanSetting::langevin:
      return plan_langevin(problem);
    case PlanSetting::federated:
      return plan_federated(problem);
    case PlanSetting::online:
      return plan_online(problem);
    case PlanSetting::noisy_sgd:
      return detail::plan_noisy_sgd(problem);
  }
  fail("setting", "?", "one of langevin, federated, online, noisy-sgd");
}

nlohmann::json to_json(const Plan& p) {
  nlohmann::json j;
  j["setting"] = to_string(p.setting);
  j["target"] = {{"epsilon", p.target_epsilon}, {"delta", p.target_delta},
                 {"adjacency", to_string(p.target_adjacency)}};
  j["feasible"] = p.feasible;
  if (!p.feasible) {
    j["reason"] = p.reason;
    return j;
  }
  const Run& r = p.run;
  j["proposal"] = {{"sigma", p.sigma},
                   {"convention", p.convention},
                   {"noise_std", r.noise_std.at(1)},
                   {"noise_std_last", r.noise_std.at(r.steps)},
                   {"steps", r.steps},
                   {"eta", p.eta},
                   {"eta_schedule", p.eta_schedule},
                   {"batch_size", r.batch_size},
                   {"choice", p.choice}};
  j["utility"] = {{"name", p.utility_name}, {"value", p.utility}, {"bound", p.utility_citation}};
  j["privacy"] = {{"analysis", p.privacy_analysis},
                  {"epsilon", report::json_nonnegative(p.paper_privacy.epsilon.value_or(kInf))},
                  {"delta", p.target_delta},
                  {"meets_target", meets(p.paper_privacy, p.target_epsilon)}};
  if (p.report.best) {
    const auto& b = p.report.analyses[*p.report.best];
    j["best"] = {{"name", b.name}, {"epsilon", report::json_nonnegative(*b.epsilon)}, {"delta", *b.delta}};
  } else {
    j["best"] = nullptr;
  }
  nlohmann::json details = nlohmann::json::object();
  for (const auto& d : p.details) details[d.name] = report::json_nonnegative(d.value);
  j["details"] = details;
  j["notes"] = p.notes;
  j["report"] = to_json(p.report);
  return j;
}

std::string to_text(const Plan& p) {
  std::string out = fmt::format("plan: setting={} target epsilon={} delta={} ({})\n",
                                to_string(p.setting), show(p.target_epsilon), show(p.target_delta),
                                p.target_adjacency == Adjacency::remove ? "add/remove-one" : "replace-one");
  if (!p.feasible) return out + "infeasible: " + p.reason + "\n";
  const Run& r = p.run;
  out += fmt::format(
      "proposal: sigma={} ({} convention)  noise_std={}{}  steps={}  eta={}{}  batch={}\n",
      report::show10_or_inf(p.sigma), p.convention, report::show10_or_inf(r.noise_std.at(1)),
      r.noise_std.is_constant() ? "" : fmt::format("..{}", report::show10_or_inf(r.noise_std.at(r.steps))),
      r.steps, report::show10_or_inf(p.eta),
      p.eta_schedule == "constant" ? "" : fmt::format(" ({})", p.eta_schedule), r.batch_size);
  out += fmt::format("predicted {}: {}  [{}]\n", p.utility_name, report::show10_or_inf(p.utility),
                     p.utility_citation);
  out += fmt::format("privacy ({}): epsilon={} at delta={}\n", p.privacy_analysis,
                     report::show10_or_inf(p.paper_privacy.epsilon.value_or(kInf)), show(p.target_delta));
  if (!p.details.empty()) {
    out += "details:";
    for (const auto& d : p.details) out += fmt::format(" {}={}", d.name, report::show10_or_inf(d.value));
    out += "\n";
  }
  for (const auto& n : p.notes) out += "note: " + n + "\n";
  out += "\n";
  out += to_table(p.report);
  return out;
}

void check_plan_request(const PlanProblem& p) {
  require_positive(opt("epsilon"), p.epsilon);
  require_open(opt("delta"), p.delta, 0.0, 1.0);
  require_range(opt("n"), p.n, 1, std::int64_t{1} << 53);
  // The fields one setting reads (field_use.hpp): refused with the others.
  const std::string setting(to_string(p.setting));
  if (p.setting != PlanSetting::langevin && p.r0)
    refuse_unread("r0", show(*p.r0), fmt::format("only {} reads it (not {})", error_field("setting", "langevin"),
                                                 error_field("setting", setting)));
  for (const auto& [field, value] : {std::pair{"gradient_bound", p.gradient_bound}, std::pair{"gradient_variance", p.gradient_variance}})
    if (p.setting != PlanSetting::federated && value)
      refuse_unread(field, show(*value), fmt::format("only {} reads it (not {})", error_field("setting", "federated"),
                                                     error_field("setting", setting)));
  if (p.adjacency != Adjacency::replace && p.setting != PlanSetting::noisy_sgd)
    fail(opt("adjacency"), to_string(p.adjacency),
         fmt::format("replace with {} (its analyses are stated for replace-one neighbours; add/remove-one is "
                     "planned for {})",
                     error_field("setting", to_string(p.setting)), error_field("setting", "noisy-sgd")));
  if (p.setting != PlanSetting::federated && p.setting != PlanSetting::noisy_sgd && p.batch_size)
    refuse_unread("batch_size", std::to_string(*p.batch_size),
                  fmt::format("only {} and {} read it (not {})", error_field("setting", "federated"),
                              error_field("setting", "noisy-sgd"), error_field("setting", setting)));
}

}  // namespace hsdp
