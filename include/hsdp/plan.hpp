// Privacy-utility planning (`hsdp plan`): for the settings where a paper states a utility
// bound, propose the noise, the number of steps and the step sizes that make the paper's
// bound smallest while the run meets a privacy target (epsilon, delta) under that paper's
// own privacy analysis; then re-evaluate the proposal with the full accountant.
//
//   langevin   Chourasia-Ye-Shokri 2021, Lemma 6 (20) (re-derived, docs/analyses/langevin.md)
//              under the `langevin` analysis (Thm 1 / Cor. 1), eta = 1/beta (Thm 4);
//              Thm 4's own choice (sigma^2 for every K, K*) is reported next to it.
//   federated  Asoodeh-Chen-Calmon-Ozgur 2021, Cor. 1 (Rakhlin-Shamir-Sridharan Thm 1 with
//              the noise's second moment) under the `federated` analysis (Thm 2), eta_t =
//              1/(lambda t), searching the users per round m and sigma.
//   online     Asoodeh-Diaz-Calmon 2021 (journal), Prop. 3 under the `online-gd` analysis
//              (Thm 5 (17)), eta_t = dia(W)/(M sqrt t), noise sigma_t = sigma t^a searched over
//              0 <= a <= 1/2 (a = 0: Example 3, constant sigma; a = 1/2: Example 4, constant
//              eta_t sigma_t).
//
// docs/plan.md states each bound, its assumptions and the decisions where a paper is
// ambiguous. Federated Cor. 2 (distribution-free) has no usable bound: its constant c is
// not given.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json_fwd.hpp>
#include <numbers>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/accountant.hpp"
#include "hsdp/analysis/analysis.hpp"
#include "hsdp/run.hpp"

namespace hsdp {

enum class PlanSetting { langevin, federated, online, noisy_sgd };
std::string_view to_string(PlanSetting);
/// Parses "langevin" | "federated" | "online" | "noisy-sgd"; throws InvalidArgument naming
/// `parameter`.
PlanSetting parse_plan_setting(std::string_view text, const Param& parameter = opt("setting"));

/// What the user fixes. Which fields a setting needs (InvalidArgument naming the field when
/// one is missing or out of range):
///   langevin   n, lipschitz, smoothness, strong_convexity > 0, dimension; r0, or a finite
///              diameter (then r0 <= diameter^2: th_0 and th* both lie in C)
///   federated  n, lipschitz, smoothness, strong_convexity > 0, finite diameter, dimension;
///              optional gradient_bound, gradient_variance, batch_size
///   online     n, lipschitz (= M), finite diameter, dimension; optional smoothness,
///              strong_convexity (they can only shrink dia(Psi_t(W)) in the privacy bound)
struct PlanProblem {
  PlanSetting setting = PlanSetting::langevin;
  double epsilon = 1.0;                                       ///< target epsilon, > 0
  double delta = 1e-5;                                        ///< target delta, in (0, 1)
  std::int64_t n = 0;                                         ///< records (users, cost functions)
  std::optional<double> lipschitz;                            ///< L (M in the online setting)
  std::optional<double> smoothness;                           ///< beta
  double strong_convexity = 0.0;                              ///< lambda
  double diameter = std::numeric_limits<double>::infinity();  ///< dia of the constraint set
  std::optional<std::int64_t> dimension;                      ///< d
  /// langevin: E||th_0 - th*||^2, when known (otherwise bounded from the diameter).
  std::optional<double> r0;
  /// federated Cor. 1: D with ||grad F||^2 <= D^2 (default L: ||grad F|| <= E||grad l|| <= L).
  std::optional<double> gradient_bound;
  /// federated Cor. 1: G^2 >= Var(grad l(W, X)) (default L^2 >= E||grad l||^2).
  std::optional<double> gradient_variance;
  /// federated: fix the users per round m instead of searching it.
  std::optional<std::int64_t> batch_size;
  /// The neighbouring relation of the target: replace-one (default) or add/remove-one (the
  /// adjacency of Opacus and dp_accounting; noisy-sgd only: the other settings' analyses are
  /// stated for replace-one).
  Adjacency adjacency = Adjacency::replace;
};

/// Checks a plan request as a user states it (`hsdp plan`, hsdp.plan): epsilon > 0, delta in
/// (0, 1), n >= 1, and the fields that only one setting reads (r0: langevin; gradient_bound,
/// gradient_variance, batch_size: federated) absent otherwise. Throws InvalidArgument naming
/// the field; plan() checks the rest against the setting's theorems.
void check_plan_request(const PlanProblem& problem);

struct Plan {
  PlanSetting setting = PlanSetting::langevin;
  double target_epsilon = 0, target_delta = 0;
  Adjacency target_adjacency = Adjacency::replace;  ///< the neighbouring relation of the target
  /// False when the target cannot be met (no noise in the search range meets it); then
  /// `reason` says why and nothing below is set.
  bool feasible = false;
  std::string reason;

  std::string utility_name;      ///< "excess_risk" or "stochastic_regret"
  std::string utility_citation;  ///< the paper, result and equation of the bound
  double utility = 0;            ///< the bound at the proposal (rounded up)
  std::string privacy_analysis;  ///< the analysis that constrained the search
  std::string convention;        ///< the convention of `sigma` (run.hpp Convention)
  double sigma = 0;              ///< the paper's sigma at the proposal
  std::string eta_schedule;      ///< "constant", "inv-sqrt" or "inv-t"
  double eta = 0;                ///< eta (constant) or the schedule's base eta_1
  std::string choice;  ///< online: example_3, example_4 or sigma_t_power; else how m / K was set

  Run run;                       ///< the proposed run (steps, batch, eta, noise_std)
  AnalysisResult paper_privacy;  ///< `privacy_analysis` at `run`: epsilon at the target delta
  Report report;                 ///< the full accountant at `run`, epsilon at the target delta
  /// Named side values: the paper's own prescription (langevin Thm 4), the other noise
  /// family (online), the search's size, the inputs the bound used (r0, D, G^2).
  std::vector<Detail> details;
  std::vector<std::string> notes;  ///< assumptions of the bound the user must check
};

/// Validates `problem` and searches the setting's free parameters. Throws InvalidArgument
/// for missing or out-of-range inputs (naming the field); an unreachable target is a Plan
/// with feasible = false. A feasible plan always meets the target under
/// `privacy_analysis` (re-evaluated, epsilon at the target delta, rounded up), and hence
/// under the accountant's best bound.
Plan plan(const PlanProblem& problem);

// ---- the utility bounds, exposed for tests and for users who fix every parameter ----

/// langevin Lemma 6's r0 = E||th_0 - th*||^2 used by the plan: diameter^2 (the start
/// th_0 ~ P_C(N(0, (2 sigma^2/lambda) I)) and th* both lie in C), or min(problem.r0, diameter^2)
/// when r0 is given; r0 must be given when the diameter is infinite.
double plan_langevin_r0(const PlanProblem& problem);

/// The smallest sigma^2 (chourasia convention) for which the `langevin` analysis (the smaller
/// of Thm 1 and Cor. 1 per order) meets the target after K steps of eta:
/// sigma^2 = sigma_inf^2 lambda min(eta K / 4, (1 - e^{-lambda eta K/2}) / lambda), where
/// sigma_inf^2 = langevin::thm4_sigma2_dp(eps, delta, 2L, n, lambda) (not rounded).
double plan_langevin_sigma2(const PlanProblem& problem, double eta, double K);

/// federated Cor. 1: 2 beta (D^2 + (G^2 + d sigma^2) / m) / (lambda^2 T), T = floor(n/m)
/// rounds, sigma in the federated convention.
double plan_federated_bound(const PlanProblem& problem, std::int64_t m, double sigma);

/// journal Prop. 3 for the released iterate W_{tau+1} (docs/analyses/online-gd.md decision 5):
/// 3 M dia(W) / (2 sqrt n) + (d / (2n)) sum_t noise_std_t^2 / eta_t + M dia(W) / (2 n^{3/2}).
double plan_online_regret(const Run& run);

// ---- the training plan (docs/training.md "The plan"; setting noisy-sgd; hsdp train) ----

/// The Gaussian-DP parameter mu whose exact curve delta(eps; mu) meets (epsilon, delta):
/// the largest mu with delta(epsilon; mu) <= delta (to 1e-12 relative), searched in
/// [1e-6, 1e3]: 1e-6 when even that misses the target (e.g. eps = 1e-6, delta = 1e-300).
/// A planning quantity, not a bound: the plan's noise is calibrated and verified separately.
double gdp_mu_for(double epsilon, double delta);

/// The rule's numbers for n records, a per-record gradient bound L, a step eta and records
/// whose norm with the bias feature is at most X (record_norm_with_bias: sqrt(R^2 + 1) with
/// a bias, R without): T = round(sqrt(2) n mu / (2 L eta X)) (at least 1), which holds the
/// released iterate's accumulated noise in the logit of a record at the bound at about
/// sqrt(2) (with R = 1 and a bias, T = round(n mu / (2 L eta)): one unit per unit of feature
/// norm); l = floor(sqrt(T/4)) batches per epoch, raised to keep at most 100 epochs, at most
/// n, moved to a divisor of n within a factor 2; b = n / l (or the given batch size, then
/// l = n / b); steps = whole epochs when b divides n, else T.
struct TrainingRule {
  double mu = 0;
  std::int64_t target_steps = 0, batches_per_epoch = 0, batch_size = 0, epochs = 0, steps = 0;
};
TrainingRule training_rule(std::int64_t n, double lipschitz, double eta, double epsilon,
                           double delta, std::optional<std::int64_t> batch_size = std::nullopt,
                           double record_norm_with_bias = std::numbers::sqrt2);

/// The batch policies the plans compare (each calibrated for the target at the same b, T and
/// eta; the one needing the least noise is chosen, ties to the earlier): the deterministic
/// order and shuffled batches, certified by the last-iterate analyses, then Poisson sampling,
/// certified by composition and subsampling. release = every: Poisson only (composition
/// cannot amplify deterministic or shuffled batches).
std::vector<Sampling> batch_policy_candidates(Release release);

/// A batch policy calibrated for a target: `base` with its sampling replaced, the smallest
/// noise std (every upper-bound analysis; calibrate()) that meets (epsilon, delta).
struct PolicyCandidate {
  Sampling sampling = Sampling::cyclic;
  bool feasible = false;
  double noise_std = 0;   ///< per-step std in parameter space
  std::string analysis;   ///< the bound that certified it
  std::string reason;     ///< when not feasible
  Run run;                ///< the calibrated run (when feasible)
};
PolicyCandidate calibrate_policy(Run base, Sampling sampling, double epsilon, double delta);

/// {"setting","target":{"epsilon","delta"},"feasible", and when feasible:
///  "proposal":{"sigma","convention","noise_std","noise_std_last","steps","eta",
///  "eta_schedule","batch_size","choice"},"utility":{"name","value","bound"},
///  "privacy":{"analysis","epsilon","delta","meets_target"},"best":{"name","epsilon",
///  "delta"},"details":{...},"notes":[...],"report":<hsdp account --json>}; else "reason".
nlohmann::json to_json(const Plan& plan);

/// The readable form printed by `hsdp plan`: the proposal, the predicted utility, and the
/// accountant's table.
std::string to_text(const Plan& plan);

}  // namespace hsdp
