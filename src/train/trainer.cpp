#include "hsdp/train/trainer.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <span>
#include <limits>
#include <numeric>
#include <string_view>
#include <unordered_map>

#include "hsdp/calibrate.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/interrupt.hpp"
#include "hsdp/field_use.hpp"
#include "hsdp/limits.hpp"
#include "hsdp/random/csprng.hpp"
#include "hsdp/random/samplers.hpp"
#include "hsdp/random/noise_grid.hpp"
#include "hsdp/train/planner.hpp"
#include "sampler.hpp"

namespace hsdp::train {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Everything about the run that does not depend on the noise.
struct Plan {
  Sampling sampling;
  bool drop_last = true;  // shuffled batches only
  std::int64_t batch;
  std::int64_t steps;
  ScheduleShape shape;
  Schedule eta;
  Convention convention;
  LossConstants constants;
  bool clipping_acts = false;
};

Plan make_plan(const TrainConfig& c, std::int64_t n, std::size_t parameters) {
  constexpr std::int64_t kMaxSteps = limits::steps;
  require_range("n", n, 1, std::int64_t{1} << 53);
  c.constraint.validate();
  require_positive(opt("record_norm"), c.record_norm);
  Plan p;
  p.constants = derive_constants(c.loss, c.record_norm, c.bias, c.constraint, parameters);
  p.convention = convention_of(c.algorithm, c.noise);
  p.shape = c.eta_shape.value_or(c.algorithm == Algorithm::online ? ScheduleShape::inv_sqrt
                                                                  : ScheduleShape::constant);
  // A default batch size adapts to the data: at most a quarter of the training set (a stated
  // one is checked against it).
  const std::int64_t batch = c.batch_size_is_default
                                 ? std::min(c.batch_size, std::max<std::int64_t>(1, n / 4))
                                 : c.batch_size;
  auto batch_in_range = [&] { return require_range(opt("batch_size"), batch, 1, n); };
  // A stated batch size that the algorithm's batches do not read (field_use.hpp), named with n.
  auto batch_fixed_at = [&](std::int64_t b, std::string_view why) {
    if (c.from_statement && !c.unstated.batch_size && c.batch_size != b)
      refuse_unread("batch_size", std::to_string(c.batch_size), fmt::format("{} (n = {})", why, n));
  };
  auto explicit_steps = [&](std::int64_t hi, std::string_view range) {
    if (c.steps && (*c.steps < 1 || *c.steps > hi))
      fail(opt("steps"), static_cast<double>(*c.steps), fmt::format("1..{} ({})", hi, range));
  };
  switch (c.algorithm) {
    case Algorithm::noisy_sgd: {
      p.sampling = c.sampling;
      if (c.sampling == Sampling::full) batch_fixed_at(n, "full batches read every record");
      p.batch = c.sampling == Sampling::full ? n : batch_in_range();
      if (!c.drop_last && c.sampling != Sampling::shuffle)
        fail(opt("drop_last"), "false",
             fmt::format("stated only with {} (only a shuffled epoch leaves a partial last batch; sampling = {})",
                         error_field("sampling", "shuffle"), to_string(c.sampling)));
      p.drop_last = c.drop_last;
      if (!c.steps) require_positive(opt("epochs"), c.epochs);
      // The step limit applies to epochs too: T = epochs n / b (shuffled batches keeping the
      // partial one: epochs ceil(n/b)), checked before it is converted.
      const bool partial = c.sampling == Sampling::shuffle && !c.drop_last && n % p.batch != 0;
      const double per_epoch = partial ? static_cast<double>(n / p.batch + 1)
                                       : static_cast<double>(n) / static_cast<double>(p.batch);
      p.steps = c.steps ? *c.steps
                        : std::max<std::int64_t>(
                              1, count_from_real(opt("epochs"), c.epochs, c.epochs * per_epoch, 0, kMaxSteps,
                                                 partial ? fmt::format("T = epochs ceil(n / b) (n = {}, b = {})", n, p.batch)
                                                         : fmt::format("T = epochs n / b (n = {}, b = {})", n, p.batch)));
      explicit_steps(kMaxSteps, "any");
      break;
    }
    case Algorithm::noisy_gd:
      p.sampling = Sampling::full;
      batch_fixed_at(n, "noisy-gd reads every record at every step");
      p.batch = n;
      if (!c.steps) require_positive(opt("epochs"), c.epochs);
      p.steps = c.steps ? *c.steps
                        : std::max<std::int64_t>(1, count_from_real(opt("epochs"), c.epochs, c.epochs, 0, kMaxSteps,
                                                                     "T = epochs"));
      explicit_steps(kMaxSteps, "any");
      break;
    case Algorithm::pnsgd:
      // journal Alg. 2: one pass, the records in their (public) order, b per step.
      p.sampling = Sampling::cyclic;
      p.batch = batch_in_range();
      p.steps = c.steps.value_or(n / p.batch);
      explicit_steps(n / p.batch, "one pass: at most n / batch-size");
      break;
    case Algorithm::federated:
      // federated Alg. 1: every user takes part in exactly one round.
      p.sampling = Sampling::shuffle;
      p.batch = batch_in_range();
      p.steps = c.steps.value_or(n / p.batch);
      explicit_steps(n / p.batch, "each user in at most one round: at most n / m");
      break;
    case Algorithm::online:
      p.sampling = Sampling::cyclic;
      batch_fixed_at(1, "online reads one record per step");
      p.batch = 1;
      p.steps = c.steps.value_or(n);
      explicit_steps(n, "one pass over the stream: at most n");
      break;
  }
  const double eta = c.eta ? require_positive(opt("eta"), *c.eta) : 1.0 / p.constants.smoothness();
  p.eta = make_schedule(p.shape, eta, p.steps);
  if (c.clip) {
    require_positive(opt("clip"), *c.clip);
    // Clipping at C >= L never acts: the update is the plain gradient step.
    p.clipping_acts = !p.constants.lipschitz_data || *c.clip < *p.constants.lipschitz_data;
  }
  return p;
}

// The loss class reported in the Run (docs/training.md, "What the report is told").
LossClass loss_class(const Plan& p, const TrainConfig& c, std::size_t parameters) {
  LossClass lc;
  if (p.clipping_acts) {
    // A clipped gradient is not the gradient of a convex smooth loss in general: the
    // contraction / shifted-Renyi / LSI arguments do not describe the update. Only the
    // clip norm is stated; analyses that need L, beta or convexity say why they drop out.
    lc.convex = false;
    return lc;
  }
  const double beta = p.constants.smoothness();
  lc.smoothness = beta;
  lc.strong_convexity = p.constants.l2;
  lc.convex = true;
  // The sensitivity needs only the data part of the gradient (the regulariser is the same
  // on both datasets). The analyses also use L to bound the image of the update,
  // D + 2 eta L, which needs the whole gradient; they use that bound only when eta > 2/beta
  // (otherwise the 1-Lipschitz bound D is smaller). So L_data is exact when every
  // eta_t <= 2/beta or lambda = 0, and L_data + lambda sup_W ||theta|| (conservative) otherwise.
  bool contractive = true;
  for (double e : p.eta.values()) contractive = contractive && e <= 2.0 / beta;
  lc.lipschitz = (contractive || p.constants.l2 == 0)
                     ? p.constants.lipschitz_data
                     : p.constants.lipschitz_total(c.constraint, parameters);
  return lc;
}

// The algorithm states its noise as sigma in its paper's convention.
Schedule noise_from_sigma(const Plan& p, NoiseKind kind, double sigma) {
  return noise_std_schedule({NoiseUnit::sigma, p.convention, sigma}, p.eta, p.batch, kind,
                            std::nullopt);
}

// The run as the trainer states it to `account` (its noise as sigma in its algorithm's
// convention when it has one), and the query.
FieldValues account_request(const Run& run, const Plan& p, const std::optional<double>& sigma,
                            double delta) {
  std::optional<NoiseParameter> noise;
  if (sigma) noise = NoiseParameter{NoiseUnit::sigma, p.convention, *sigma};
  FieldValues a = RunSpec::stating(run, noise).to_map();
  a.emplace_back("delta", show(delta));
  return a;
}

// Per-coordinate noise with parameter-space std s on a power-of-two grid (random::GridNoise,
// docs/security.md): add(u, s) rounds u to the grid lambda(s) and adds lambda K, K the exact
// discrete Gaussian (or discrete Laplace, scale s / sqrt 2) in grid units, so the value it
// returns is a multiple of lambda whatever u is; draw(s) is lambda K alone. Every draw comes
// from the run's CSPRNG.
class NoiseSource {
 public:
  NoiseSource(random::Csprng& rng, NoiseKind kind)
      : rng_(rng), law_(kind == NoiseKind::gaussian ? random::Law::gaussian : random::Law::laplace) {}
  double add(double u, double s) { return grid(s).add(rng_, u, out_of_range_); }
  double draw(double s) {
    const random::GridNoise& g = grid(s);
    return g.lambda() * static_cast<double>(g.draw(rng_));
  }
  /// Noisy values whose grid index reached 2^52 (no longer exact on the grid).
  std::uint64_t out_of_range() const { return out_of_range_; }

 private:
  const random::GridNoise& grid(double s) {
    if (!grid_ || s != s_) {
      grid_.emplace(law_, s);
      s_ = s;
    }
    return *grid_;
  }
  random::Csprng& rng_;
  random::Law law_;
  std::optional<random::GridNoise> grid_;
  double s_ = 0.0;
  std::uint64_t out_of_range_ = 0;
};

// Federated on the grid (docs/security.md, "Federated runs on the grid"): every message and the
// server's update are integers in units of the users' grid lambda (the grid of the per-user std
// s). An index is exact while every term of the round's sum stays below 2^52 / (m + 1) units
// (the sum of at most 2 m + 1 of them is then an integer below 2^53, in any order).
struct FederatedGrid {
  double lambda = 0.0, limit = 0.0;
  std::uint64_t out_of_range = 0;
  /// The grid of step t: the users' per-user std s, m users per round.
  void set(const random::GridNoise& g, std::int64_t m) {
    lambda = g.lambda();
    limit = 0x1p52 / static_cast<double>(m + 1);
  }
  /// round(u / lambda) (u / lambda exact: lambda is a power of two), range-checked.
  double index(double u) {
    const double w = std::nearbyint(u / lambda);
    if (!(std::fabs(w) < limit)) ++out_of_range;
    return w;
  }
  /// One user's noise K in grid units, range-checked.
  double draw(const random::GridNoise& g, random::Csprng& rng) {
    const auto k = static_cast<double>(g.draw(rng));
    if (!(std::fabs(k) < limit)) ++out_of_range;
    return k;
  }
};

random::Law law_of(NoiseKind kind) {
  return kind == NoiseKind::gaussian ? random::Law::gaussian : random::Law::laplace;
}

}  // namespace


namespace {

// The grid of a run of `config` under plan `p` (m = the plan's batch for federated runs).
NoiseGrid grid_of(std::size_t parameters, const Plan& p, const TrainConfig& config) {
  return random::noise_grid(parameters, p.steps, config.noise,
                    config.algorithm == Algorithm::federated ? std::optional(p.batch) : std::nullopt);
}

}  // namespace

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::noisy_sgd: return "noisy-sgd";
    case Algorithm::noisy_gd: return "noisy-gd";
    case Algorithm::pnsgd: return "pnsgd";
    case Algorithm::federated: return "federated";
    case Algorithm::online: return "online";
  }
  return "?";
}

Algorithm parse_algorithm(std::string_view text, const Param& parameter) {
  for (auto a : {Algorithm::noisy_sgd, Algorithm::noisy_gd, Algorithm::pnsgd, Algorithm::federated,
                 Algorithm::online})
    if (text == to_string(a)) return a;
  fail(parameter, text, "one of noisy-sgd, noisy-gd, pnsgd, federated, online");
}

Convention convention_of(Algorithm a, NoiseKind kind) {
  switch (a) {
    case Algorithm::noisy_sgd: return Convention::altschuler;
    case Algorithm::noisy_gd: return Convention::chourasia;
    case Algorithm::pnsgd: return kind == NoiseKind::laplace ? Convention::isit : Convention::journal;
    case Algorithm::federated: return Convention::federated;
    case Algorithm::online: return Convention::journal;
  }
  return Convention::journal;
}

namespace {

Run base_run(const TrainConfig& c, const Plan& p, std::int64_t n, std::size_t parameters) {
  Run run;
  run.n = n;
  run.steps = p.steps;
  run.batch_size = p.batch;
  run.sampling = p.sampling;
  run.eta = p.eta;
  run.noise = c.noise;
  run.loss = loss_class(p, c, parameters);
  run.diameter = c.constraint.diameter(parameters);
  run.release = c.release;
  run.adjacency = c.adjacency;
  run.drop_last = p.sampling != Sampling::shuffle || p.drop_last;
  // A seeded run's batches can be regenerated from its seed: certified as an order known to
  // the adversary unless the caller states otherwise.
  run.order_known = c.order_known.value_or(c.seed.has_value());
  run.dimension = static_cast<std::int64_t>(parameters);
  if (p.clipping_acts) run.clip = *c.clip;
  return run;
}

void check_noise_choice(const TrainConfig& c) {
  const int given = (c.sigma ? 1 : 0) + (c.noise_std ? 1 : 0) + (c.target_epsilon ? 1 : 0) +
                    (c.no_noise ? 1 : 0);
  if (given != 1)
    fail("noise", fmt::format("{} noise choices given", given),
         fmt::format("exactly one of {}, {}, a target {} with {}, or {}", error_field("sigma"),
                     error_field("noise_std"), error_field("epsilon"), error_field("delta"),
                     error_field("no_noise")));
  if (c.sigma) require_positive(opt("sigma"), *c.sigma);
  if (c.noise_std) require_positive(opt("noise_std"), *c.noise_std);
  if (c.target_epsilon) require_positive(opt("epsilon"), *c.target_epsilon);
  require_open(opt("delta"), c.delta, 0.0, 1.0);
  // release = every: the same algorithm, the last iterate written, but accounted (and the
  // noise calibrated) as if every iterate were published -- composition only, the usual
  // DP-SGD accounting, so that users can compare the two on the same data.
}

// The layout of a data-parallel run: process `rank` holds records [offsets[rank],
// offsets[rank+1]) of n = offsets[size], and `data` is that part.
void check_layout(const TrainConfig::DataParallel& p, const data::Dataset& data) {
  const auto K = static_cast<std::size_t>(p.size);
  if (p.rank < 0 || p.rank >= p.size)
    fail("data_parallel.rank", static_cast<double>(p.rank), fmt::format("in [0, {})", p.size));
  if (p.offsets.size() != K + 1 || p.offsets.front() != 0 ||
      !std::is_sorted(p.offsets.begin(), p.offsets.end()))
    fail("data_parallel.offsets", fmt::format("{} entries", p.offsets.size()),
         fmt::format("{} non-decreasing offsets from 0 (size + 1)", K + 1));
  const std::size_t held = p.offsets[static_cast<std::size_t>(p.rank) + 1] - p.offsets[static_cast<std::size_t>(p.rank)];
  if (data.n != held)
    fail("data.n", static_cast<double>(data.n),
         fmt::format("the {} records of process {} (offsets)", held, p.rank));
  if (p.offsets.back() == 0) fail("data", "(no records)", "at least one record");
}

// ---- users (federated Alg. 1 with several records per user)
//
// With users the run's n is the number of users and the unit of privacy is a user: two
// neighbouring training sets differ in all the records of one user (replace adjacency over
// users). User u's loss is the mean of its records' losses,
//     f_u(theta) = (1/k_u) sum_{i in u} l(theta, x_i),
// an average of functions that are each convex, beta-smooth and L-Lipschitz in theta, so f_u
// is all three with the same constants: convexity is kept by non-negative combinations;
// ||grad f_u(a) - grad f_u(b)|| <= (1/k_u) sum_i ||grad l_i(a) - grad l_i(b)|| <= beta ||a - b||;
// ||grad f_u|| <= (1/k_u) sum_i ||grad l_i|| <= L. With clipping the message is the mean of
// the clipped gradients, of norm <= C by the same triangle inequality. So one user's message
// (without its noise) is bounded like one record's gradient, and the analyses of the run
// with n = users apply unchanged: one round's update moves by at most 2 eta_t L / m (2 eta_t C
// / m) when one user is replaced. The trainer states this (UserLevel) next to the report.

// Adds (1/k) sum_{i in records} g_i (clipped if clip > 0) to grad[0..P); tmp has size P.
std::int64_t add_user_mean(const LinearModel& model, const data::Dataset& data,
                           const std::vector<std::int64_t>& records, double clip,
                           std::vector<double>& grad, std::vector<double>& tmp) {
  std::fill(tmp.begin(), tmp.end(), 0.0);
  const std::int64_t clipped = batch_gradient_sum(model, data, records, clip, tmp);
  const double inv_k = 1.0 / static_cast<double>(records.size());
  for (std::size_t j = 0; j < tmp.size(); ++j) grad[j] += tmp[j] * inv_k;
  return clipped;
}

void check_users(const data::Dataset& data, const TrainConfig& c) {
  if (data.users.size() != data.n)
    fail(opt("users"), fmt::format("{} user ids for {} records", data.users.size(), data.n),
         "one user id per record");
  if (c.algorithm != Algorithm::federated)
    fail(opt("users"), "(given)", fmt::format("given only with {} (user-level training is federated Alg. 1's)",
                                              error_field("algorithm", "federated")));
}

UserLevel user_level(const Plan& p, const TrainConfig& c, std::int64_t users, std::size_t records) {
  UserLevel u;
  u.users = users;
  u.records = static_cast<std::int64_t>(records);
  if (p.clipping_acts)
    u.message_bound = *c.clip;
  else
    u.message_bound = p.constants.lipschitz_data;
  const double m = static_cast<double>(p.batch);
  if (u.message_bound) u.sensitivity = 2.0 * p.eta.max() * *u.message_bound / m;
  const char* sym = p.clipping_acts ? "C" : "L";
  u.description = fmt::format(
      "user-level: neighbouring training sets differ in all the records of one user ({} users, {} "
      "training records; the run's n = {}); a user's message is the mean of its records' {}gradients{}",
      users, records, users, p.clipping_acts ? "clipped " : "",
      u.sensitivity ? fmt::format(", of norm <= {} = {}, so replacing one user moves a round's update by at "
                                  "most 2 eta {} / m = {}",
                                  sym, show(*u.message_bound), sym, show(*u.sensitivity))
                    : std::string(" (no bound on its norm)"));
  return u;
}

void check_classes(const LossSpec& loss) {
  if (loss.kind == LossKind::softmax && loss.classes < 2)
    fail("classes", static_cast<double>(loss.classes), ">= 2 distinct labels for softmax");
}

}  // namespace

std::vector<std::vector<std::int64_t>> group_users(const data::Dataset& data) {
  std::vector<std::vector<std::int64_t>> groups;
  if (data.users.empty()) {
    groups.resize(data.n);
    for (std::size_t i = 0; i < data.n; ++i) groups[i].push_back(static_cast<std::int64_t>(i));
    return groups;
  }
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < data.users.size(); ++i) {
    const auto [it, added] = index.try_emplace(data.users[i], groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(static_cast<std::int64_t>(i));
  }
  return groups;
}

namespace {

// The records of the users client `rank` holds (user u -> client 1 + u mod (size - 1)),
// stored contiguously; local[u] lists user u's rows in it (empty for the other users).
data::Dataset client_records(const data::Dataset& data, const std::vector<std::vector<std::int64_t>>& groups,
                             int rank, int size, std::vector<std::vector<std::int64_t>>& local) {
  data::Dataset mine = data::Dataset::empty_like(data);
  mine.labels = data.labels;
  local.assign(groups.size(), {});
  const bool origin = data.origin.size() == data.n;
  for (std::size_t u = 0; u < groups.size(); ++u) {
    if (1 + static_cast<int>(u % static_cast<std::size_t>(size - 1)) != rank) continue;
    for (const auto i : groups[u]) {
      const auto row = static_cast<std::size_t>(i);
      mine.append_features_of(data, row);
      mine.y.push_back(data.y[row]);
      if (origin) mine.origin.push_back(data.origin[row]);
      local[u].push_back(static_cast<std::int64_t>(mine.n++));
    }
  }
  return mine;
}

// federated Alg. 1 across processes (TrainConfig::Federation, docs/distributed.md). Per
// round: the server's m user ids (broadcast), the clients' noisy messages (grid units) summed to
// the server (reduce, with the clipped and out-of-range counts as two more coordinates), the new theta
// (broadcast). Then the released theta (broadcast) and the clients' sums of the training
// loss and of the correct predictions (reduce) for the server's evaluation.
// Returns the server's count of grid indices out of range (0 on a client).
std::uint64_t federated_rounds(TrainResult& res, const data::Dataset& mine,
                      const std::vector<std::vector<std::int64_t>>& local, const Plan& plan, const Run& run,
                      const TrainConfig& config, const random::Key& key, const TrainConfig::Federation& fed) {
  const std::size_t P = res.model.parameters();
  const bool server = fed.rank == 0;
  const auto clients = static_cast<std::int64_t>(fed.size - 1);
  const auto users = static_cast<std::int64_t>(local.size());
  // Every process has its own generator. The server's is the run's (the seed's key or fresh
  // entropy). A client's is keyed from its own operating-system entropy, so that neither the
  // server nor the other clients can replay its noise, nor any client the hidden permutation
  // or stop; with a seed it is derived from the seed's key and the rank (reproducible).
  random::Csprng rng(server ? key
                            : config.seed ? random::Csprng(key).derive_key("federated client", static_cast<std::uint64_t>(fed.rank))
                                          : random::entropy_key());

  const std::int64_t T = plan.steps;
  std::int64_t tau = T;
  std::optional<BatchSampler> sampler;
  if (server) {
    // The same draws, in the same order, as one process: the stop, then the permutation.
    if (config.release == Release::random_stop) tau = rng.uniform_int(1, T);
    sampler.emplace(plan.sampling, users, plan.batch, rng);
    res.uses.assign(static_cast<std::size_t>(users), 0);
  }
  res.released_step = tau;
  res.batch_order = describe_batch_order(plan.sampling, users, plan.batch, T, res.seeded);
  std::vector<double>& theta = res.model.theta;
  // message: P grid indices, the clipped count, the out-of-range count (docs/security.md).
  std::vector<double> message(P + 2), tmp(P), released = theta;
  FederatedGrid fg;
  std::uint64_t out_of_range = 0;
  std::vector<std::int64_t> ids(static_cast<std::size_t>(plan.batch));
  const double clip = config.clip ? *config.clip : 0.0;
  const double l2 = config.loss.l2;
  const double m = static_cast<double>(plan.batch);
  double max_excess = -kInf;
  const std::int64_t report_every = std::max<std::int64_t>(1, T / 200);
  for (std::int64_t t = 1; t <= T; ++t) {
    if (server) sampler->next(t, ids);
    fed.broadcast_ids(ids);
    std::fill(message.begin(), message.end(), 0.0);
    const double eta = plan.eta.at(t);
    // The users' grid: that of the per-user std s = sigma (the parameter-space std times
    // sqrt(m) / eta, as in one process); the same on every process.
    const double s = config.no_noise ? 0.0 : run.noise_std.at(t) * std::sqrt(m) / eta;
    std::optional<random::GridNoise> gn;
    if (s > 0) {
      gn.emplace(law_of(config.noise), s);
      fg.set(*gn, plan.batch);
    }
    if (!server) {
      // This client's users in the round: the sum of their mean gradients rounded to the grid,
      // plus each user's own noise K_u, in grid units (docs/security.md, "Federated runs on the
      // grid"); without noise the plain sum.
      std::int64_t clipped = 0;
      std::int64_t here = 0;
      for (const auto u : ids) {
        if (1 + u % clients != fed.rank) continue;
        clipped += add_user_mean(res.model, mine, local[static_cast<std::size_t>(u)], clip, message, tmp);
        ++here;
      }
      if (gn) {
        for (std::size_t j = 0; j < P; ++j) {
          double k = fg.index(message[j]);
          for (std::int64_t i = 0; i < here; ++i) k += fg.draw(*gn, rng);
          message[j] = k;
        }
      }
      message[P] = static_cast<double>(clipped);
      message[P + 1] = static_cast<double>(fg.out_of_range);
      fg.out_of_range = 0;
    }
    fed.reduce(message);
    if (server) {
      res.clipped_examples += std::llround(message[P]);
      out_of_range += static_cast<std::uint64_t>(std::llround(message[P + 1]));
      for (const auto u : ids) ++res.uses[static_cast<std::size_t>(u)];
      if (config.record_batches) res.batches.push_back(ids);
      if (gn) {
        // theta <- P((eta/m) lambda J), J = round(c(theta) m / (eta lambda)) - sum of the messages.
        const double scale = eta / m;
        for (std::size_t j = 0; j < P; ++j) {
          const double J = fg.index((theta[j] - eta * l2 * theta[j]) / scale) - message[j];
          theta[j] = scale * (J * fg.lambda);
        }
      } else {
        for (std::size_t j = 0; j < P; ++j) theta[j] -= eta * (message[j] / m + l2 * theta[j]);
      }
      config.constraint.project(theta);
      max_excess = std::max(max_excess, config.constraint.excess(theta));
      if (t == tau) released = theta;
      if (config.progress && (t % report_every == 0 || t == T)) config.progress(t, T);
    }
    fed.broadcast(theta);
  }
  if (server) theta = released;
  fed.broadcast(theta);
  res.max_constraint_excess = max_excess;
  // The training loss and accuracy of the released model: sums over the clients' records.
  std::vector<double> sums(3, 0.0);
  if (!server) {
    const EvaluationSums e = evaluation_sums(res.model, mine);
    sums = {e.loss, e.correct, e.records};
  }
  fed.reduce(sums);
  if (server && sums[2] > 0) res.train_evaluation = evaluation_of(res.model, {sums[0], sums[1], sums[2]});
  return server ? out_of_range + fg.out_of_range : 0;
}

// A noisy value left the range where the grid is exact (`count` of them): its set of possible
// values is no longer known to be input-independent, so no analysis certifies the run.
void mark_out_of_range(TrainResult& res, Run& run, const Plan& plan, const TrainConfig& config, std::uint64_t count) {
  if (count == 0 || !run.grid) return;
  run.grid->log_beta = 0.0;
  run.grid->reason = fmt::format(
      "{} noisy value{} left the range where doubles represent the noise grid exactly (|value| >= 2^52 "
      "grid steps, 2^20 noise stds{})",
      count, count == 1 ? "" : "s",
      config.algorithm == Algorithm::federated ? "; federated: 2^52 / (m + 1) steps per term" : "");
  res.notes.push_back(run.grid->reason + ": the report certifies nothing");
  res.report = account_request(run, Query::at_delta(config.delta));
  res.account_request = account_request(run, plan, res.sigma, config.delta);
}

}  // namespace

// The std of step t's noise draws: the parameter-space std, or with the federated
// algorithm's local noise each user's sigma = std sqrt(m) / eta_t (its draws are averaged).
double draw_std(const Run& run, const Plan& p, bool local_noise, std::int64_t t) {
  const double s = run.noise_std.at(t);
  return local_noise ? s * std::sqrt(static_cast<double>(p.batch)) / p.eta.at(t) : s;
}

// Every noise draw's std inside what the noise grid draws (random::GridNoise: a normal grid
// spacing, noisy values far below the largest double; docs/input.md), checked before any
// work. The error names the field the noise came from: sigma, noise_std, or the epsilon it
// was calibrated to.
void check_noise_stds(const Run& run, const Plan& p, const TrainConfig& c, bool local_noise) {
  if (c.no_noise) return;
  const random::Law law = c.noise == NoiseKind::gaussian ? random::Law::gaussian : random::Law::laplace;
  const double lo = random::grid_noise_min_std(law), hi = random::kGridNoiseMaxStd;
  const bool constant = run.noise_std.is_constant() && p.eta.is_constant();
  for (std::int64_t t = 1; t <= (constant ? 1 : p.steps); ++t) {
    const double s = draw_std(run, p, local_noise, t);
    if (s >= lo && s <= hi) continue;
    const Param field = c.sigma ? opt("sigma") : c.noise_std ? opt("noise_std") : opt("epsilon");
    const double stated = c.sigma ? *c.sigma : c.noise_std ? *c.noise_std : c.target_epsilon.value_or(0.0);
    fail(field, stated,
         fmt::format("a value whose noise draws have a std in [{}, {}], what the noise grid can draw "
                     "(step {}: std {} with eta = {})",
                     show(lo), show(hi), t, show(s), show(p.eta.at(t))));
  }
}

// The released weights are finite: an unconstrained run whose steps expand (eta l2 > 2, a
// noise std near the top of its range over very many steps) can leave the double range; it is
// refused naming the step size (nothing is written), never a model of inf or NaN weights.
void check_finite_model(std::span<const double> theta, const Plan& p, const TrainConfig& c) {
  for (double v : theta) {
    if (std::isfinite(v)) continue;
    fail(opt("eta"), p.eta.max(),
         fmt::format("a step size under which the iterates stay finite: they left the double range "
                     "(l2 = {}, constraint {}); bound them with a constraint set or a smaller step",
                     show(c.loss.l2),
                     c.constraint.kind == ConstraintKind::none ? std::string("none")
                                                               : "radius " + show(c.constraint.radius)));
  }
}

Run planned_run(const TrainConfig& config, std::int64_t n, std::size_t d, std::size_t outputs) {
  const std::size_t parameters = outputs * (d + (config.bias ? 1 : 0));
  const Plan p = make_plan(config, n, parameters);
  Run run = base_run(config, p, n, parameters);
  if (config.sigma) run.noise_std = noise_from_sigma(p, config.noise, *config.sigma);
  if (config.noise_std) run.noise_std = Schedule(*config.noise_std);
  if (!config.no_noise) run.grid = grid_of(parameters, p, config);
  return run;
}

TrainResult train(const data::Dataset& data, const TrainConfig& requested) {
  check_noise_choice(requested);
  check_classes(requested.loss);
  const bool with_users = !data.users.empty();
  if (with_users) check_users(data, requested);
  const TrainConfig::Federation* fed =
      requested.federation && requested.federation->size > 1 ? &*requested.federation : nullptr;
  const TrainConfig::DataParallel* parallel =
      requested.data_parallel && requested.data_parallel->size > 1 ? &*requested.data_parallel : nullptr;
  if (fed && requested.algorithm != Algorithm::federated)
    throw std::logic_error("TrainConfig::federation is for the federated algorithm");
  if (with_users && parallel)
    throw std::logic_error("users under data-parallel training: use TrainConfig::federation");
  // The run's n: users (each record its own user without Dataset::users).
  std::vector<std::vector<std::int64_t>> groups;
  if (with_users || fed) groups = group_users(data);
  // Federated under mpirun: every process holds the whole training set; a client keeps (and
  // checks) only its users' records; the server reads none.
  data::Dataset mine;
  std::vector<std::vector<std::int64_t>> mine_users;
  if (fed) {
    if (data.n == 0) fail("data", "(no records)", "at least one record");
    if (fed->rank > 0) {
      mine = client_records(data, groups, fed->rank, fed->size, mine_users);
      if (mine.n > 0) check_data(mine, requested.loss, requested.record_norm);
    } else {
      mine_users.resize(groups.size());
    }
  } else {
    // Data parallel: `data` is this process's part, n the records of all parts.
    if (parallel) check_layout(*parallel, data);
    if (!parallel || data.n > 0) check_data(data, requested.loss, requested.record_norm);
  }
  const auto records = static_cast<std::int64_t>(
      !groups.empty() ? groups.size() : parallel ? parallel->offsets.back() : data.n);
  // The run's n: every count-derived constant (q, T, the default batch, the plan) is fixed
  // from it once, and the sampler and the step count use those constants, never the data
  // set's own size again (docs/training.md "Public constants of the run").
  if (requested.public_n) require_range("public_n", *requested.public_n, 1, std::int64_t{1} << 53);
  const std::int64_t n = requested.public_n.value_or(records);

  TrainResult res;
  res.model = LinearModel::zeros(requested.loss, data.d, requested.bias);
  const std::size_t P = res.model.parameters();
  // The plan fills what the request left unstated (public quantities only).
  if (auto tp = plan_training(requested, n, data.d, res.model.outputs)) {
    res.config = std::move(tp->config);
    res.plan_summary = std::move(tp->summary);
    res.plan_chosen = std::move(tp->chosen);
    for (const auto& c : tp->candidates)
      if (c.feasible) res.plan_candidates.emplace_back(std::string(to_string(c.sampling)), c.noise_std);
  } else {
    res.config = requested;
  }
  const TrainConfig& config = res.config;
  const Plan plan = make_plan(config, n, P);
  res.public_n_stated = config.public_n.has_value();
  if (n != records && (plan.sampling != Sampling::poisson || with_users || fed || parallel))
    fail("public_n", static_cast<double>(n),
         fmt::format("the training records' count {} unless the batches are Poisson batches of one process "
                     "(sampling = {}): only a Poisson rate q = b/n is a constant the data set's size does not "
                     "enter; the other orders are derived for the data set's own size "
                     "(docs/analyses/neighbours.md)",
                     records, to_string(plan.sampling)));
  res.constants = plan.constants;
  res.convention = plan.convention;
  res.clipping_acts = plan.clipping_acts;
  Run run = base_run(config, plan, n, P);
  if (with_users) res.user_level = user_level(plan, config, n, data.n);

  const double beta = plan.constants.smoothness();
  if (plan.eta.max() > 2.0 / beta)
    res.notes.push_back(fmt::format(
        "eta = {} exceeds 2/beta = {}: the gradient step is not certified contractive; the "
        "report drops the analyses that need it",
        show(plan.eta.max()), show(2.0 / beta)));
  if (config.clip) {
    res.notes.push_back(
        plan.clipping_acts
            ? fmt::format("per-example clipping at C = {} can act (C < L): the report keeps only "
                          "analyses valid for clipped gradients (composition baseline)",
                          show(*config.clip))
            : fmt::format("clipping at C = {} never acts (C >= L = {})", show(*config.clip),
                          show(*plan.constants.lipschitz_data)));
  }
  if (config.noise == NoiseKind::laplace && P != 1)
    res.notes.push_back(fmt::format(
        "Laplace noise on {} parameters: the Laplace analysis (isit Thm 3) is stated in 1-D", P));

  // Noise drawn on a grid (docs/security.md): its cost, known before training, is part of the
  // run every analysis (and the calibration) reads.
  if (!config.no_noise) {
    run.grid = grid_of(P, plan, config);
    if (!run.grid->reason.empty()) res.notes.push_back(run.grid->reason + ": the report certifies nothing");
  }

  // ---- noise
  if (config.sigma) {
    res.sigma = *config.sigma;
    run.noise_std = noise_from_sigma(plan, config.noise, *config.sigma);
  } else if (config.noise_std) {
    run.noise_std = Schedule(*config.noise_std);
  } else if (config.target_epsilon) {
    // The smallest sigma (in the algorithm's own convention) whose tightest valid bound
    // meets the target; calibrate() re-evaluates its answer with the full accountant.
    run.noise_std = noise_from_sigma(plan, config.noise, 1.0);
    CalibrationOptions options;
    options.noise = NoiseParameter{NoiseUnit::sigma, plan.convention, 1.0};
    options.eta_shape = plan.shape;
    const CalibrationResult cal =
        calibrate(run, CalibrationParameter::noise, *config.target_epsilon, config.delta, options);
    if (!cal.feasible)
      fail(opt("epsilon"), *config.target_epsilon,
           fmt::format("a target some noise level meets for this run ({})", cal.reason));
    res.sigma = cal.value;
    run.noise_std = noise_from_sigma(plan, config.noise, cal.value);
    // A target so loose that its noise is below what the grid draws (epsilon = 1e300): more
    // noise is post-processing (never less private), so the smallest drawable std meets it too.
    const random::Law law = config.noise == NoiseKind::gaussian ? random::Law::gaussian : random::Law::laplace;
    const double lowest = random::grid_noise_min_std(law);
    double smallest = kInf;
    const bool local = config.algorithm == Algorithm::federated;
    for (std::int64_t t = 1; t <= (run.noise_std.is_constant() && plan.eta.is_constant() ? 1 : plan.steps); ++t)
      smallest = std::min(smallest, draw_std(run, plan, local, t));
    if (smallest < lowest) {
      double sigma = cal.value * (lowest / smallest);
      for (int i = 0; i < 64; ++i) {  // rounding: up until every step's std is drawable
        run.noise_std = noise_from_sigma(plan, config.noise, sigma);
        double m = kInf;
        for (std::int64_t t = 1; t <= (run.noise_std.is_constant() && plan.eta.is_constant() ? 1 : plan.steps); ++t)
          m = std::min(m, draw_std(run, plan, local, t));
        if (m >= lowest) break;
        sigma = std::nextafter(sigma, kInf) * (1 + 1e-15);
      }
      res.sigma = sigma;
      res.notes.push_back(fmt::format("the calibrated sigma = {} is below what the noise grid draws; sigma = {} "
                                      "(more noise) is used",
                                      show(cal.value), show(sigma)));
    }
    res.notes.push_back(fmt::format("calibrated sigma = {} ({} convention) for epsilon = {} at delta = {}",
                                    show(cal.value), to_string(plan.convention),
                                    show(*config.target_epsilon), show(config.delta)));
  } else {
    run.noise_std = Schedule(0.0);
    res.notes.push_back("no noise: a non-private baseline, no privacy report");
  }

  check_noise_stds(run, plan, config, config.algorithm == Algorithm::federated);
  if (!config.no_noise) {
    run.validate();
    // The `account` request, so that the report is the one `hsdp account` prints for the
    // same run (with the add/remove-one values of a replace-one run).
    res.report = account_request(run, Query::at_delta(config.delta));
    if (config.target_epsilon) {
      // Never report a calibration that the accountant does not confirm.
      if (!res.report->best || !(*res.report->analyses[*res.report->best].epsilon <= *config.target_epsilon))
        throw std::logic_error("calibrated noise does not meet the target under the accountant");
    }
    res.account_request = account_request(run, plan, res.sigma, config.delta);
  }

  // ---- randomness: one CSPRNG keyed from the operating system, or from the seed
  res.seeded = config.seed.has_value();
  random::Key key = config.seed ? random::seed_key(*config.seed) : random::entropy_key();
  if (fed) {
    const std::uint64_t out_of_range = federated_rounds(res, mine, mine_users, plan, run, config, key, *fed);
    check_finite_model(res.model.theta, plan, config);
    if (res.clipped_examples > 0 && !plan.clipping_acts) throw std::logic_error("clipping acted although C >= L");
    if (fed->rank == 0) mark_out_of_range(res, run, plan, config, out_of_range);
    res.run = run;
    return res;
  }
  // Data parallel: every process draws from process 0's key (its 4 words broadcast), so
  // batches and noise are one generator sequence, as in one process.
  if (parallel) {
    for (std::size_t w = 0; w < key.size(); w += 8) {
      std::uint64_t word = 0;
      for (std::size_t i = 0; i < 8; ++i) word |= static_cast<std::uint64_t>(key[w + i]) << (8 * i);
      word = parallel->share_seed(word);
      for (std::size_t i = 0; i < 8; ++i) key[w + i] = static_cast<std::uint8_t>(word >> (8 * i));
    }
  }
  random::Csprng rng(key);
  NoiseSource noise(rng, config.noise);

  // ---- the iteration
  const std::int64_t T = plan.steps;
  const std::int64_t tau =
      config.release == Release::random_stop ? rng.uniform_int(1, T)  // hidden stopping time
                                             : T;
  res.released_step = tau;
  res.batch_order = describe_batch_order(plan.sampling, n, plan.batch, T, res.seeded, run.drop_last);
  res.uses.assign(static_cast<std::size_t>(records), 0);
  // Poisson: q = b / n with the run's n, not the records' count (the same q on both sides of
  // an add/remove pair; they differ only when public_n is stated, Poisson only).
  BatchSampler sampler(plan.sampling, records, plan.batch, rng, run.drop_last, n);
  if (plan.sampling == Sampling::poisson) res.sampling_rate = sampler.inclusion_probability();
  std::vector<double>& theta = res.model.theta;
  std::vector<double> grad(P), released, user_grad(with_users ? P : 0);
  std::vector<std::int64_t> batch;
  const double clip = config.clip ? *config.clip : 0.0;
  const double l2 = config.loss.l2;
  const double inv_plan_b = 1.0 / static_cast<double>(plan.batch);
  const bool local_noise = config.algorithm == Algorithm::federated;
  FederatedGrid fgrid;  // federated's grid indices (out-of-range count)
  double max_excess = -kInf;
  const std::int64_t report_every = std::max<std::int64_t>(1, T / 200);
  // Data parallel: this process holds records [first, last) (at local index i - first); per
  // step the partial sums of the K processes are added (and the clipped counts with them, as
  // one more coordinate when clipping is on).
  std::vector<std::int64_t> local;
  const auto first = parallel ? static_cast<std::int64_t>(parallel->offsets[static_cast<std::size_t>(parallel->rank)]) : 0;
  const auto last = first + static_cast<std::int64_t>(data.n);
  const std::size_t reduced = P + (config.clip ? 1 : 0);

  for (std::int64_t t = 1; t <= T; ++t) {
    std::fill(grad.begin(), grad.end(), 0.0);
    std::int64_t clipped = 0;
    if (plan.sampling == Sampling::full) {
      clipped = full_gradient_sum(res.model, data, clip, grad);
      for (auto& u : res.uses) ++u;
      if (config.record_batches) {
        batch.resize(static_cast<std::size_t>(n));
        std::iota(batch.begin(), batch.end(), 0);
        res.batches.push_back(batch);
      }
    } else {
      sampler.next(t, batch);
      if (with_users) {  // federated: the batch is m users; each sends its mean gradient
        for (const auto u : batch)
          clipped += add_user_mean(res.model, data, groups[static_cast<std::size_t>(u)], clip, grad, user_grad);
      } else if (parallel) {  // the records of the batch this process holds, by local index
        local.clear();
        for (auto i : batch)
          if (i >= first && i < last) local.push_back(i - first);
        clipped = batch_gradient_sum(res.model, data, local, clip, grad);
      } else {
        clipped = batch_gradient_sum(res.model, data, batch, clip, grad);
      }
      for (auto i : batch) ++res.uses[static_cast<std::size_t>(i)];
      if (config.record_batches) res.batches.push_back(batch);
    }
    if (parallel) {  // the sum over all processes (and the clipped count with it)
      grad.resize(reduced);
      if (config.clip) grad[P] = static_cast<double>(clipped);
      parallel->sum(grad);
      if (config.clip) clipped = std::llround(grad[P]);
      grad.resize(P);
    }
    res.clipped_examples += clipped;
    const double eta = plan.eta.at(t);
    // The batch-mean gradient: the sum over b, except a shuffled run's partial last batch,
    // averaged over its own records (what the analyses charge: 2 eta L / (n mod b)).
    const double inv_b = plan.sampling == Sampling::shuffle && static_cast<std::int64_t>(batch.size()) < plan.batch
                             ? 1.0 / static_cast<double>(batch.size())
                             : inv_plan_b;
    if (local_noise && !config.no_noise) {
      // federated Alg. 1: user j sends grad_j + sigma Z_j; the aggregator averages the m
      // messages. In parameter space: eta/m sum_j sigma Z_j has std eta sigma / sqrt(m). On the
      // grid of the per-user std s (docs/security.md, "Federated runs on the grid"): the users'
      // summed gradient rounded, plus each user's K_u, and the server's c(theta) = theta -
      // eta lambda theta in message units rounded, all in grid units J; theta <- P((eta/m) lambda J).
      // As under mpirun, where each client rounds its users' sum (at most m + 2 roundings).
      const double s = run.noise_std.at(t) * std::sqrt(static_cast<double>(plan.batch)) / eta;
      const random::GridNoise gn(law_of(config.noise), s);
      fgrid.set(gn, plan.batch);
      const double scale = eta * inv_b;
      for (std::size_t j = 0; j < P; ++j) {
        double J = fgrid.index((theta[j] - eta * l2 * theta[j]) / scale) - fgrid.index(grad[j]);
        for (std::size_t u = 0; u < batch.size(); ++u) J -= fgrid.draw(gn, rng);
        theta[j] = scale * (J * fgrid.lambda);
      }
    } else {
      const double s = config.no_noise ? 0.0 : run.noise_std.at(t);
      for (std::size_t j = 0; j < P; ++j) {
        const double u = theta[j] - eta * (grad[j] * inv_b + l2 * theta[j]);
        theta[j] = s > 0 ? noise.add(u, s) : u;  // on the grid of s (docs/security.md)
      }
    }
    config.constraint.project(theta);
    max_excess = std::max(max_excess, config.constraint.excess(theta));
    if (t == tau) released = theta;
    if (config.progress && (t % report_every == 0 || t == T)) config.progress(t, T);
    poll_interrupt();  // a front end's Ctrl-C (include/hsdp/interrupt.hpp); not in the MPI rounds above
  }
  theta = released;
  check_finite_model(theta, plan, config);
  res.max_constraint_excess = max_excess;
  if (res.clipped_examples > 0 && !plan.clipping_acts)
    throw std::logic_error("clipping acted although C >= L");
  mark_out_of_range(res, run, plan, config, noise.out_of_range() + fgrid.out_of_range);

  res.run = run;
  return res;
}

}  // namespace hsdp::train
