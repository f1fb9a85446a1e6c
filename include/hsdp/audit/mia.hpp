// Membership-inference audit: an empirical lower bound on the epsilon of the trainer,
// measured by training many models with and without a canary record, set next to the
// certified epsilon of the same run (docs/architecture.md, audit/; docs/audit.md).
//
// The experiment. D is the (preprocessed) training set and D' is D with the record at one
// position replaced by a canary (replace-one adjacency, the adjacency of the trainer's own
// report). N models are trained on D and N on D' with the real trainer (train::train),
// each with its own recorded seed, and each is scored by the canary's loss:
//     score(theta) = -l(theta; x_c, y_c)      (higher: "the canary was trained on").
//
// The statistics. (eps, delta)-DP holds iff every test S between the two output laws has
//     P_D'(S) <= e^eps P_D(S) + delta   and   P_D(S) <= e^eps P_D'(S) + delta
// (the hypothesis-testing characterisation: Wasserman & Zhou 2010; Kairouz, Oh & Viswanath
// 2015 Thm 2.1). So for any S, with a lower confidence bound p_lo on one side's P(S) and an
// upper bound q_hi on the other's,
//     eps >= log((p_lo - delta) / q_hi).
// The candidate tests are S = {score >= t} and S = {score <= t} for t halfway between
// consecutive pooled scores, in both orders (P, Q) = (D', D) and (D, D') — which also
// covers the complementary form log((1 - FPR - delta) / (1 - TPR)). To keep the confidence exact despite the search over
// tests, the samples are split: the first floor(N/2) trials of each side choose the test
// (the one with the largest bound on those trials), the remaining trials evaluate it with
// one-sided Clopper–Pearson bounds, each at confidence 1 - (1 - c)/2 (Bonferroni over the two
// bounds), so the reported eps_lower holds with probability >= c (default 0.95) whatever
// test was chosen.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "hsdp/accountant.hpp"
#include "hsdp/data/dataset.hpp"
#include "hsdp/train/prepare.hpp"
#include "hsdp/train/request.hpp"
#include "hsdp/train/train_spec.hpp"
#include "hsdp/train/trainer.hpp"

namespace hsdp::audit {

/// One-sided Clopper–Pearson bounds on a binomial proportion from k successes in n trials:
/// upper = the p with P(Bin(n, p) <= k) = alpha (1 when k = n), i.e. the (1 - alpha)
/// quantile of Beta(k + 1, n - k); lower = the p with P(Bin(n, p) >= k) = alpha (0 when
/// k = 0), the alpha quantile of Beta(k, n - k + 1). Each holds with probability >= 1 - alpha.
/// Throws InvalidArgument naming `k`, `n` or `alpha` (alpha in (0, 1), 0 <= k <= n, n >= 1).
double clopper_pearson_upper(std::int64_t k, std::int64_t n, double alpha);
double clopper_pearson_lower(std::int64_t k, std::int64_t n, double alpha);

/// A threshold test S and its two counts.
struct ThresholdTest {
  double threshold = 0.0;
  bool upper_tail = true;       ///< S = {score >= threshold}; else {score <= threshold}
  bool canary_side_p = true;    ///< P = D' (with canary), Q = D; else P = D, Q = D'
  std::int64_t k_p = 0, n_p = 0;  ///< records of the P sample in S
  std::int64_t k_q = 0, n_q = 0;  ///< records of the Q sample in S
  double p_lower = 0.0;         ///< Clopper–Pearson lower bound on P(S)
  double q_upper = 1.0;         ///< Clopper–Pearson upper bound on Q(S)
  double epsilon = 0.0;         ///< max(0, log((p_lower - delta) / q_upper)) (0 if p_lower <= delta)
};

struct EmpiricalEpsilon {
  double epsilon_lower = 0.0;   ///< the evaluated test's bound (rounded down)
  double delta = 0.0;
  double confidence = 0.95;
  ThresholdTest selected;       ///< the chosen test, counted on the selection trials
  ThresholdTest evaluated;      ///< the same test, counted on the evaluation trials
  std::int64_t selection_trials = 0, evaluation_trials = 0;  ///< per side
};

/// The statistics above from the two score samples (scores of models trained on D and on
/// D', in trial order; at least 2 each). Throws InvalidArgument naming `delta` (in (0, 1)),
/// `confidence` (in (0, 1)) or `trials`.
EmpiricalEpsilon empirical_epsilon(std::span<const double> scores_without,
                                   std::span<const double> scores_with, double delta,
                                   double confidence = 0.95);

/// The canary record: norm R (config.record_norm) along the coordinate axis e_j that the
/// training records use least (smallest mean x_ij^2, the first such j), so that only the
/// canary moves the model along it, with a label "flipped" against the data: the minority
/// label (logistic, huber: the rarer of -1/+1, -1 on a tie; softmax: the rarest class, the
/// smallest id on a tie; squared: -Y when the mean label is >= 0, else +Y), so that models
/// trained without it misclassify it and its gradient stays near the Lipschitz bound.
struct Canary {
  std::vector<double> x;        ///< d features, ||x|| = record_norm
  double y = 0.0;               ///< the label as the loss uses it
  std::size_t axis = 0;         ///< j (0-based feature index)
  std::int64_t position = 0;    ///< 1-based position of the replaced record
  std::string description;
};

/// The canary for `data` under `config` (loss, record_norm, release), replacing the record at
/// 1-based `position` (default: n for the last iterate, where cyclic orders process it last;
/// 1 for a random stop). Throws InvalidArgument naming `canary_index`.
Canary make_canary(const data::Dataset& data, const train::TrainConfig& config,
                   std::optional<std::int64_t> position = std::nullopt);
/// D' = D with the record at canary.position replaced by the canary.
data::Dataset with_canary(const data::Dataset& data, const Canary& canary);
/// -loss of the canary under `model`.
double canary_score(const train::LinearModel& model, const Canary& canary);

struct MiaOptions {
  std::int64_t trials = 200;    ///< N models per dataset (>= 4)
  double delta = 1e-5;          ///< delta of both the empirical bound and the certified report
  double confidence = 0.95;
  /// Master seed: trial k of dataset s gets seed derive_seed(master, 2k + s) (s = 0: D,
  /// s = 1: D'); without it the master comes from the OS entropy (getrandom; recorded).
  std::optional<std::uint64_t> seed;
  std::optional<std::int64_t> canary_index;  ///< 1-based position replaced (make_canary)
  int threads = 0;              ///< 0: all OpenMP threads
  /// Called with (trainings done, 2N) after each training, from one thread at a time.
  std::function<void(std::int64_t, std::int64_t)> progress;
};

struct MiaResult {
  Canary canary;
  std::vector<double> scores_without, scores_with;  ///< trial order
  std::uint64_t master_seed = 0;
  bool seeded = false;          ///< master given by the user (else OS entropy, recorded)
  std::vector<std::uint64_t> seeds_without, seeds_with;
  EmpiricalEpsilon empirical;
  Report certified;             ///< the trainer's report of the run (identical for D and D')
  std::optional<std::string> certified_name;  ///< best analysis; nullopt when none applies
  double certified_epsilon = 0.0;             ///< +inf when none applies
  std::optional<double> sigma;  ///< the algorithm's sigma (resolved once from a target)
  std::vector<std::string> notes;
  double seconds = 0.0;         ///< wall time of the 2N trainings
  int threads = 1;
};

/// Trains N models on `data` and N on D' (config.seed and config.progress are ignored: each
/// training gets its own seed; config.delta is set to options.delta). A target epsilon is
/// calibrated once (one extra training on D) and its sigma used for every trial. `data` must
/// be ready for train::train (labels mapped, rows within config.record_norm). Throws
/// InvalidArgument naming `trials`, `delta`, `confidence`, `threads`, `no_noise`
/// or what the trainer rejects.
MiaResult mia(const data::Dataset& data, train::TrainConfig config, const MiaOptions& options);

/// A membership-inference audit, validated: the trainer's configuration and the audit's
/// options.
struct MiaSetup {
  train::TrainConfig config;
  MiaOptions options;
};

/// A membership-inference audit as a user states it (the request of `hsdp audit mia` and
/// hsdp.audit_mia): the training run (the TrainSpec fields, with the trainer's defaults),
/// its noise (sigma, noise_std or a target epsilon), its records (the data statement of the
/// training request: a file or records in memory, format, labels, label column, positive,
/// classes, public feature constants; every record trains, none is held out) and the audit's
/// options. Each field is named as its keyword (the command's flag with '-' for '_'), so a
/// front end reports a bad value in its own spelling (`--trials`, `trials`).
struct MiaRequest : train::TrainSpec {
  train::DataSpec data;           ///< the records, read and prepared as hsdp train prepares them
  std::optional<double> epsilon;  ///< a target: sigma calibrated once (at delta), every trial uses it
  double delta = 1e-5;            ///< of the empirical bound and of the certified report
  double confidence = 0.95;
  std::int64_t trials = 200;      ///< models per dataset N (2N trainings), in [4, 2^24]
  std::int64_t threads = 0;       ///< trainings in parallel, in [0, 4096] (0: all cores, at most 4096)
  std::optional<std::uint64_t> seed;          ///< master seed (default: OS entropy, recorded)
  std::optional<std::int64_t> canary_index;   ///< 1-based position the canary replaces
  /// Called with (trainings done, 2N) (MiaOptions::progress); not a field of the request.
  std::function<void(std::int64_t, std::int64_t)> progress;

  /// Checks, in this order, and throws InvalidArgument naming the first bad field: the
  /// training run (TrainSpec::resolve), the noise (one of sigma, noise_std or a target
  /// epsilon), delta in (0, 1), trials in [4, 2^24], confidence in (0, 1), threads in
  /// [0, 4096], and the rule of field_use.hpp (the data fields an audit does not read: a test
  /// file or fraction, a split seed, users, feature storage). The data are not read.
  MiaSetup resolve() const;
};

/// What the audit did: the result, how the records were prepared, and what they were.
struct MiaAudit {
  MiaResult result;
  train::Preparation preparation;
  std::size_t records = 0, features = 0;
  std::string labels;  ///< how the labels were mapped
};

/// The request: resolve(), then its data read and prepared through the training request's
/// data path (train::prepare_all_records: read, classes, labels, public feature constants,
/// rows scaled to the record norm; float64 features: the canary is not a stored value), then
/// mia() on them.
MiaAudit mia_request(const MiaRequest& request);

/// The trial seeds: the first 64-bit word of ChaCha20 stream `stream` keyed by
/// random::seed_key(master) (the one randomness module, random/csprng.hpp).
std::uint64_t derive_seed(std::uint64_t master, std::uint64_t stream);

/// {"empirical":{"epsilon_lower","delta","confidence","trials","test":{...}},
///  "certified":{"name","epsilon"},"seeds":{"master","seeded","derivation","without","with"},
///  "canary":{...},"scores":{"without","with"},"run":{...},"seconds","threads","notes"}.
/// An infinite certified epsilon is the string "inf"; name is null when none applies.
nlohmann::json to_json(const MiaResult& result);
std::string to_table(const MiaResult& result);

}  // namespace hsdp::audit
