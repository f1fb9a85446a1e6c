// Membership-inference audit (include/hsdp/audit/mia.hpp, docs/audit.md).
#include "hsdp/audit/mia.hpp"
#include "hsdp/field_use.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <boost/math/special_functions/beta.hpp>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "hsdp/errors.hpp"
#include "hsdp/interrupt.hpp"
#include "hsdp/limits.hpp"
#include "hsdp/random/csprng.hpp"

namespace hsdp::audit {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ibeta_inv is accurate to a few ulps; the bounds are moved outwards by far more than that
// so that a confidence bound is never on the optimistic side of the exact quantile.
constexpr double kSlack = 1e-12;

void check_binomial(std::int64_t k, std::int64_t n, double alpha) {
  require_range("n", n, 1, std::int64_t{1} << 53);
  require_range("k", k, 0, n);
  require_open("alpha", alpha, 0.0, 1.0);
}

}  // namespace

double clopper_pearson_upper(std::int64_t k, std::int64_t n, double alpha) {
  check_binomial(k, n, alpha);
  if (k == n) return 1.0;
  // P(Bin(n, p) <= k) = 1 - I_p(k + 1, n - k) = alpha  <=>  p = ibetac_inv(k + 1, n - k, alpha).
  const double p = boost::math::ibetac_inv(static_cast<double>(k + 1), static_cast<double>(n - k), alpha);
  return std::min(1.0, p * (1 + kSlack) + std::numeric_limits<double>::denorm_min());
}

double clopper_pearson_lower(std::int64_t k, std::int64_t n, double alpha) {
  check_binomial(k, n, alpha);
  if (k == 0) return 0.0;
  // P(Bin(n, p) >= k) = I_p(k, n - k + 1) = alpha  <=>  p = ibeta_inv(k, n - k + 1, alpha).
  const double p = boost::math::ibeta_inv(static_cast<double>(k), static_cast<double>(n - k + 1), alpha);
  return std::max(0.0, p * (1 - kSlack));
}

namespace {

// Counts of {score >= t} and {score <= t} in a sorted sample.
std::int64_t count_at_least(const std::vector<double>& sorted, double t) {
  return static_cast<std::int64_t>(sorted.end() - std::lower_bound(sorted.begin(), sorted.end(), t));
}
std::int64_t count_at_most(const std::vector<double>& sorted, double t) {
  return static_cast<std::int64_t>(std::upper_bound(sorted.begin(), sorted.end(), t) - sorted.begin());
}

// log((p_lo - delta) / q_hi), -inf when p_lo <= delta; +inf when q_hi = 0 cannot happen
// (a Clopper-Pearson upper bound is > 0).
double log_ratio(double p_lower, double q_upper, double delta) {
  if (!(p_lower > delta)) return -kInf;
  return std::log((p_lower - delta) / q_upper);
}

ThresholdTest count_test(double t, bool upper_tail, bool canary_side_p, const std::vector<double>& without,
                         const std::vector<double>& with, double alpha_each, double delta) {
  ThresholdTest test;
  test.threshold = t;
  test.upper_tail = upper_tail;
  test.canary_side_p = canary_side_p;
  const auto& p = canary_side_p ? with : without;
  const auto& q = canary_side_p ? without : with;
  test.n_p = static_cast<std::int64_t>(p.size());
  test.n_q = static_cast<std::int64_t>(q.size());
  test.k_p = upper_tail ? count_at_least(p, t) : count_at_most(p, t);
  test.k_q = upper_tail ? count_at_least(q, t) : count_at_most(q, t);
  test.p_lower = clopper_pearson_lower(test.k_p, test.n_p, alpha_each);
  test.q_upper = clopper_pearson_upper(test.k_q, test.n_q, alpha_each);
  test.epsilon = std::max(0.0, log_ratio(test.p_lower, test.q_upper, delta));
  return test;
}

}  // namespace

EmpiricalEpsilon empirical_epsilon(std::span<const double> scores_without, std::span<const double> scores_with,
                                   double delta, double confidence) {
  require_open("delta", delta, 0.0, 1.0);
  require_open("confidence", confidence, 0.0, 1.0);
  if (scores_without.size() != scores_with.size())
    fail("trials", fmt::format("{} vs {} scores", scores_without.size(), scores_with.size()),
         "the same number of scores with and without the canary");
  require_range("trials", static_cast<std::int64_t>(scores_with.size()), 2, std::int64_t{1} << 40);
  for (double s : scores_without) require_finite("score", s);
  for (double s : scores_with) require_finite("score", s);

  EmpiricalEpsilon r;
  r.delta = delta;
  r.confidence = confidence;
  const std::size_t N = scores_with.size();
  const std::size_t half = N / 2;
  r.selection_trials = static_cast<std::int64_t>(half);
  r.evaluation_trials = static_cast<std::int64_t>(N - half);
  // Two bounds (lower on P(S), upper on Q(S)) for the one evaluated test: Bonferroni.
  const double alpha_each = (1 - confidence) / 2;

  auto sorted = [](std::span<const double> s) {
    std::vector<double> v(s.begin(), s.end());
    std::sort(v.begin(), v.end());
    return v;
  };
  const std::vector<double> sel_without = sorted(scores_without.subspan(0, half));
  const std::vector<double> sel_with = sorted(scores_with.subspan(0, half));
  const std::vector<double> ev_without = sorted(scores_without.subspan(half));
  const std::vector<double> ev_with = sorted(scores_with.subspan(half));

  // Selection: every threshold between the pooled scores of the selection trials, both tails, both
  // orders; the largest bound on the selection trials wins (ties: the first), and when none
  // is positive, the largest difference of the empirical rates k_p/n - k_q/n.
  // Thresholds halfway between consecutive distinct pooled scores: every distinct pair of
  // selection counts is reached, and the test keeps a margin on both sides for the
  // evaluation trials (a threshold at a sample point would be crossed by its neighbours).
  std::vector<double> values = sel_without;
  values.insert(values.end(), sel_with.begin(), sel_with.end());
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<double> pooled;
  for (std::size_t i = 0; i + 1 < values.size(); ++i) pooled.push_back(values[i] + 0.5 * (values[i + 1] - values[i]));
  if (pooled.empty()) pooled.push_back(values.front());
  bool have = false;
  double best_value = -kInf, best_gap = -kInf;
  for (double t : pooled)
    for (bool upper_tail : {true, false})
      for (bool canary_p : {true, false}) {
        ThresholdTest c = count_test(t, upper_tail, canary_p, sel_without, sel_with, alpha_each, delta);
        const double value = log_ratio(c.p_lower, c.q_upper, delta);
        const double gap = static_cast<double>(c.k_p) / static_cast<double>(c.n_p) -
                           static_cast<double>(c.k_q) / static_cast<double>(c.n_q);
        if (!have || value > best_value || (value == best_value && value == -kInf && gap > best_gap)) {
          have = true;
          best_value = value;
          best_gap = gap;
          r.selected = c;
        }
      }

  // Evaluation on the independent trials: the reported bound.
  r.evaluated = count_test(r.selected.threshold, r.selected.upper_tail, r.selected.canary_side_p, ev_without,
                           ev_with, alpha_each, delta);
  // A lower bound is rounded down.
  r.epsilon_lower = r.evaluated.epsilon > 0 ? r.evaluated.epsilon * (1 - kSlack) : 0.0;
  return r;
}

// ---------------------------------------------------------------------------------------
// The canary.

Canary make_canary(const data::Dataset& data, const train::TrainConfig& config, std::optional<std::int64_t> position) {
  if (data.n < 1 || data.d < 1)
    fail(opt("data"), fmt::format("{} records of {} features", data.n, data.d), "at least 1 record and 1 feature");
  if (data.y.size() != data.n) fail(opt("data"), "unmapped labels", "a dataset whose labels are mapped (map_labels)");
  require_positive(opt("record_norm"), config.record_norm);
  const auto n = static_cast<std::int64_t>(data.n);
  Canary c;
  c.position = position ? require_range(opt("canary_index"), *position, 1, n)
                        : (config.release == Release::random_stop ? 1 : n);

  // The least-used axis: smallest mean square over the records.
  std::vector<double> second(data.d, 0.0);
  std::vector<double> x(data.d);
  for (std::size_t i = 0; i < data.n; ++i) {
    data.effective_row(i, x.data());
    for (std::size_t j = 0; j < data.d; ++j) second[j] += x[j] * x[j];
  }
  c.axis = static_cast<std::size_t>(std::min_element(second.begin(), second.end()) - second.begin());
  c.x.assign(data.d, 0.0);
  c.x[c.axis] = config.record_norm;

  std::string label_rule;
  switch (config.loss.kind) {
    case train::LossKind::logistic:
    case train::LossKind::huber: {
      std::int64_t pos = 0;
      for (double y : data.y) pos += train::binary_label(y) > 0 ? 1 : 0;
      c.y = pos < n - pos ? 1.0 : -1.0;
      label_rule = fmt::format("the minority label: {} of {} records are +1", pos, n);
      break;
    }
    case train::LossKind::softmax: {
      std::vector<std::int64_t> count(std::max<std::size_t>(config.loss.classes, 2), 0);
      for (double y : data.y) {
        const auto k = static_cast<std::size_t>(y);
        if (y >= 0 && k < count.size()) ++count[k];
      }
      c.y = static_cast<double>(std::min_element(count.begin(), count.end()) - count.begin());
      label_rule = fmt::format("the rarest class: {} records", count[static_cast<std::size_t>(c.y)]);
      break;
    }
    case train::LossKind::squared: {
      double mean = 0;
      for (double y : data.y) mean += y / static_cast<double>(n);
      c.y = mean >= 0 ? -config.loss.label_bound : config.loss.label_bound;
      label_rule = fmt::format("opposite to the mean label {}", show(mean));
      break;
    }
  }
  c.description = fmt::format(
      "x = {} e_{} (feature {}, the least used: mean x^2 = {:.3g}), label {} ({}), replacing record {} of {}",
      show(config.record_norm), c.axis + 1, c.axis + 1, second[c.axis] / static_cast<double>(n), show(c.y),
      label_rule, c.position, n);
  return c;
}

data::Dataset with_canary(const data::Dataset& data, const Canary& canary) {
  require_range(opt("canary_index"), canary.position, 1, static_cast<std::int64_t>(data.n));
  if (canary.x.size() != data.d)
    fail("canary", fmt::format("{} features", canary.x.size()), fmt::format("{} features like {}", data.d, error_field("data")));
  // The canary R e_axis is not a stored value times public scales: compact storage is
  // widened to float64 here (the audit trains on float64 features).
  data::Dataset out = data.compact() ? data::as_float64(data) : data;
  const auto i = static_cast<std::size_t>(canary.position - 1);
  std::copy(canary.x.begin(), canary.x.end(), out.row(i));
  out.y[i] = canary.y;
  if (i < out.raw_labels.size()) {
    out.raw_labels[i] = show(canary.y);
    for (std::size_t k = 0; k < out.labels.mapped.size(); ++k)
      if (out.labels.mapped[k] == canary.y) out.raw_labels[i] = out.labels.raw[k];
  }
  return out;
}

double canary_score(const train::LinearModel& model, const Canary& canary) {
  return -model.loss_at(canary.x.data(), canary.y);
}

// ---------------------------------------------------------------------------------------
// The experiment.

std::uint64_t derive_seed(std::uint64_t master, std::uint64_t stream) {
  // The first word of the ChaCha20 stream `stream` of the master's seeded key (random::Csprng).
  return random::Csprng(random::seed_key(master), stream).next_u64();
}

MiaResult mia(const data::Dataset& stored, train::TrainConfig config, const MiaOptions& options) {
  // The audit trains on float64 features: the canary (R e_axis) is not a stored value times
  // public scales, and both worlds must see the same arithmetic.
  const data::Dataset widened = stored.compact() ? data::as_float64(stored) : data::Dataset{};
  const data::Dataset& data = stored.compact() ? widened : stored;
  const std::int64_t N = require_range(opt("trials"), options.trials, 4, std::int64_t{1} << 24);
  require_open(opt("delta"), options.delta, 0.0, 1.0);
  require_open(opt("confidence"), options.confidence, 0.0, 1.0);
  require_range(opt("threads"), options.threads, 0, 4096);
  if (config.no_noise)
    fail(opt("no_noise"), "set", "absent: the audit compares the empirical epsilon with the certified one");
  config.delta = options.delta;
  config.progress = nullptr;
  config.record_batches = false;

  MiaResult res;
  res.canary = make_canary(data, config, options.canary_index);
  const data::Dataset with = with_canary(data, res.canary);

  if (options.seed) {
    res.master_seed = *options.seed;
    res.seeded = true;
  } else {
    res.master_seed = random::entropy_u64();  // getrandom: the operating system's entropy
  }

  if (config.target_epsilon) {
    // One calibration (the trainer's own noise search), then every trial at that sigma:
    // the noise does not depend on the data, so D and D' get the same run.
    train::TrainConfig cal = config;
    cal.seed = res.master_seed;
    const train::TrainResult r = train::train(data, cal);
    config.sigma = r.sigma;
    config.target_epsilon.reset();
    res.notes.push_back(fmt::format("sigma = {} calibrated once for epsilon = {} at delta = {}; every trial uses it",
                                    show(*r.sigma), show(*cal.target_epsilon), show(config.delta)));
  }
  res.sigma = config.sigma;

  res.seeds_without.resize(static_cast<std::size_t>(N));
  res.seeds_with.resize(static_cast<std::size_t>(N));
  for (std::int64_t k = 0; k < N; ++k) {
    poll_interrupt();  // 2 N keyed streams: seconds for a million trials
    res.seeds_without[static_cast<std::size_t>(k)] = derive_seed(res.master_seed, 2 * static_cast<std::uint64_t>(k));
    res.seeds_with[static_cast<std::size_t>(k)] = derive_seed(res.master_seed, 2 * static_cast<std::uint64_t>(k) + 1);
  }
  res.scores_without.assign(static_cast<std::size_t>(N), 0.0);
  res.scores_with.assign(static_cast<std::size_t>(N), 0.0);

  // Trial 0 of each side first (serially): its report is the certified one, and a bad
  // configuration fails here with the trainer's own message before any thread starts.
  auto run_one = [&](std::int64_t job) -> train::TrainResult {
    const bool canary = job % 2 == 1;
    const auto k = static_cast<std::size_t>(job / 2);
    train::TrainConfig c = config;
    c.seed = canary ? res.seeds_with[k] : res.seeds_without[k];
    train::TrainResult r = train::train(canary ? with : data, c);
    (canary ? res.scores_with : res.scores_without)[k] = canary_score(r.model, res.canary);
    return r;
  };
  const std::int64_t total = 2 * N;
  std::atomic<std::int64_t> done{0};
  auto tick = [&] {
    const std::int64_t d = ++done;
    if (options.progress) {
#pragma omp critical(hsdp_mia_progress)
      options.progress(d, total);
    }
  };
  const auto t0 = std::chrono::steady_clock::now();
  const train::TrainResult first = run_one(0);
  tick();
  const train::TrainResult first_with = run_one(1);
  tick();
  if (!first.report) throw std::logic_error("the trainer returned no privacy report for a noisy run");
  res.certified = *first.report;
  if (res.certified.best) {
    const auto& a = res.certified.analyses[*res.certified.best];
    res.certified_name = a.name;
    res.certified_epsilon = a.epsilon.value_or(kInf);
  } else {
    res.certified_epsilon = kInf;
  }
  // Replace-one adjacency: D and D' have the same n, so the run (and its report) is the same.
  const bool same = first_with.report && first_with.report->best == res.certified.best &&
                    (!res.certified.best ||
                     first_with.report->analyses[*res.certified.best].epsilon ==
                         res.certified.analyses[*res.certified.best].epsilon);
  if (!same) throw std::logic_error("the reports of D and D' differ");
  res.notes.insert(res.notes.end(), first.notes.begin(), first.notes.end());

  // 0: every thread OpenMP offers, at most limits::threads (OMP_NUM_THREADS=10^6 would crash libgomp).
  const int threads = options.threads > 0 ? options.threads : std::clamp(omp_get_max_threads(), 1, limits::threads);
  res.threads = threads;
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  // One training per iteration; the trainer's own row-parallel passes run single-threaded
  // inside (nested regions are inactive), and every training is seeded, so the scores do
  // not depend on the thread count or the schedule.
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::int64_t job = 2; job < total; ++job) {
    if (failed.load()) continue;
    try {
      poll_interrupt();  // also polled inside each training (include/hsdp/interrupt.hpp)
      run_one(job);
      tick();
    } catch (...) {
#pragma omp critical(hsdp_mia_error)
      {
        if (!error) error = std::current_exception();
      }
      failed = true;
    }
  }
  if (error) std::rethrow_exception(error);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  res.empirical = empirical_epsilon(res.scores_without, res.scores_with, options.delta, options.confidence);
  return res;
}

// ---------------------------------------------------------------------------------------
// Output.

namespace {

nlohmann::json number_or_inf(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

nlohmann::json test_json(const ThresholdTest& t) {
  return {{"threshold", t.threshold},
          {"set", t.upper_tail ? "score >= threshold" : "score <= threshold"},
          {"p", t.canary_side_p ? "with canary (D')" : "without canary (D)"},
          {"q", t.canary_side_p ? "without canary (D)" : "with canary (D')"},
          {"k_p", t.k_p},
          {"n_p", t.n_p},
          {"k_q", t.k_q},
          {"n_q", t.n_q},
          {"p_lower", t.p_lower},
          {"q_upper", t.q_upper},
          {"epsilon", t.epsilon}};
}

std::string test_text(const ThresholdTest& t) {
  return fmt::format("S = {{score {} {:.6g}}}: P = {} {}/{} (lower {:.4g}), Q = {} {}/{} (upper {:.4g})",
                     t.upper_tail ? ">=" : "<=", t.threshold, t.canary_side_p ? "D'" : "D", t.k_p, t.n_p,
                     t.p_lower, t.canary_side_p ? "D" : "D'", t.k_q, t.n_q, t.q_upper);
}

}  // namespace

namespace {

// The data fields an audit does not read: it trains on every record of one data set.
using Rule = ReadRule<train::ResolvedRequest>;
std::optional<std::string> nothing_held_out(const train::ResolvedRequest&) {
  return std::string("the audit trains every model on all the records (none is held out)");
}
std::optional<std::string> not_user_level(const train::ResolvedRequest&) {
  return std::string("the audit's canary replaces one record, not one user's records");
}
std::optional<std::string> float64_only(const train::ResolvedRequest&) {
  return std::string("the audit keeps float64 features (its canary is not a stored value)");
}
const std::vector<Rule>& audit_data_rules() {
  static const std::vector<Rule> table = {{"test_data", nothing_held_out}, {"test_labels", nothing_held_out},
                                          {"test_fraction", nothing_held_out}, {"split_seed", nothing_held_out},
                                          {"users", not_user_level}, {"no_labels", nothing_held_out}};
  return table;
}

}  // namespace

MiaSetup MiaRequest::resolve() const {
  MiaSetup s;
  s.config = TrainSpec::resolve();  // the trainer's defaults (hsdp train)
  s.config.target_epsilon = epsilon;
  // The rule (field_use.hpp): the data statement as the training request reads it, then what
  // an audit does not read of it.
  const train::ResolvedRequest resolved{s.config, data};
  const FieldValues stated = data.to_map();
  hsdp::require_read<train::ResolvedRequest>(stated, train::request_rules(), resolved);
  hsdp::require_read<train::ResolvedRequest>(stated, audit_data_rules(), resolved);
  if (data.feature_storage != "auto" && data.feature_storage != "float64")
    refuse_unread("feature_storage", data.feature_storage, *float64_only(resolved));
  for (const auto& [field, value] : stated)
    if (value.empty()) refuse_empty(field, "a value");
  if (!sigma && !noise_std && !epsilon)
    fail(opt("sigma"), "(missing)",
         fmt::format("one of {}, {} or a target {} (with {})", error_field("sigma"), error_field("noise_std"),
                     error_field("epsilon"), error_field("delta")));
  s.config.delta = require_open(opt("delta"), delta, 0.0, 1.0);
  s.options.trials = require_range(opt("trials"), trials, 4, std::int64_t{1} << 24);
  s.options.delta = delta;
  s.options.confidence = require_open(opt("confidence"), confidence, 0.0, 1.0);
  s.options.seed = seed;
  s.options.canary_index = canary_index;
  s.options.threads = static_cast<int>(require_range(opt("threads"), threads, 0, limits::threads));
  s.options.progress = progress;
  return s;
}

MiaAudit mia_request(const MiaRequest& request) {
  MiaSetup setup = request.resolve();  // every field checked before the data are read
  train::DataSpec data = request.data;
  data.feature_storage = "float64";
  train::PreparedData prepared = train::prepare_all_records(std::move(data), setup.config);
  MiaAudit out;
  out.preparation = prepared.preparation;
  const data::Dataset& d = prepared.train.data;
  out.records = d.n;
  out.features = d.d;
  out.labels = d.labels.describe();
  out.result = mia(d, setup.config, setup.options);
  return out;
}

nlohmann::json to_json(const MiaResult& r) {
  nlohmann::json j;
  const auto& e = r.empirical;
  j["empirical"] = {{"epsilon_lower", e.epsilon_lower},
                    {"delta", e.delta},
                    {"confidence", e.confidence},
                    {"trials", static_cast<std::int64_t>(r.scores_with.size())},
                    {"selection_trials", e.selection_trials},
                    {"evaluation_trials", e.evaluation_trials},
                    {"test", test_json(e.evaluated)},
                    {"selected_on", test_json(e.selected)},
                    {"method",
                     "eps >= log((P_lower(S) - delta) / Q_upper(S)), one-sided Clopper-Pearson bounds at "
                     "(1 - confidence)/2 each; S chosen on the selection trials, counted on the evaluation trials"}};
  j["certified"] = {{"name", r.certified_name ? nlohmann::json(*r.certified_name) : nlohmann::json(nullptr)},
                    {"epsilon", number_or_inf(r.certified_epsilon)},
                    {"delta", r.certified.query.delta ? nlohmann::json(*r.certified.query.delta) : nlohmann::json(nullptr)}};
  j["seeds"] = {{"master", r.master_seed},
                {"seeded", r.seeded},
                {"source", r.seeded ? report_field("seed") : "operating-system entropy"},
                {"derivation", "trial k: the first 64-bit word of ChaCha20 stream 2k + s keyed by SHA-256 of the master, s = 0 without, 1 with the canary"},
                {"without", r.seeds_without},
                {"with", r.seeds_with}};
  j["canary"] = {{"x_axis", r.canary.axis + 1},
                 {"norm", r.canary.x.empty() ? 0.0 : r.canary.x[r.canary.axis]},
                 {"label", r.canary.y},
                 {"position", r.canary.position},
                 {"score", "-loss of the canary under the released model"},
                 {"description", r.canary.description}};
  j["scores"] = {{"without", r.scores_without}, {"with", r.scores_with}};
  j["run"] = to_json(r.certified.run);
  if (r.sigma) j["sigma"] = *r.sigma;
  j["seconds"] = r.seconds;
  j["threads"] = r.threads;
  j["notes"] = r.notes;
  return j;
}

std::string to_table(const MiaResult& r) {
  const auto& e = r.empirical;
  std::string s;
  s += fmt::format("canary: {}\n", r.canary.description);
  s += fmt::format("trials: {} models on D and {} on D' ({} trainings, {} threads, {:.2f} s)\n", r.scores_with.size(),
                   r.scores_without.size(), 2 * r.scores_with.size(), r.threads, r.seconds);
  s += fmt::format("seeds: master {} ({}); trial k uses the first word of ChaCha20 stream 2k of the master's key on D, "
                   "stream 2k+1 on D' (every training seeded: an experiment, not a release)\n",
                   r.master_seed, r.seeded ? report_field("seed") : "operating-system entropy");
  for (const auto& note : r.notes) s += fmt::format("note: {}\n", note);
  s += fmt::format("test chosen on trials 1..{}: {}\n", e.selection_trials, test_text(e.selected));
  s += fmt::format("evaluated on the other {}:     {}\n", e.evaluation_trials, test_text(e.evaluated));
  s += fmt::format("empirical epsilon >= {:.6g}  (delta = {}, confidence {})\n", e.epsilon_lower, show(e.delta),
                   show(e.confidence));
  if (r.certified_name)
    s += fmt::format("certified epsilon  = {:.6g}  ({}, the trainer's report of the same run)\n", r.certified_epsilon,
                     *r.certified_name);
  else
    s += "certified epsilon  = inf  (no analysis applies to the run)\n";
  return s;
}

}  // namespace hsdp::audit
