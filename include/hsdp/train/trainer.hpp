// The noisy iterations of the papers, run for real on a Dataset, and the Run they
// performed (docs/training.md).
//
// Every algorithm is the projected noisy update
//     theta_t = P_W( theta_{t-1} - eta_t * (1/b) sum_{i in B_t} grad l(theta_{t-1}, x_i)
//                    - eta_t * lambda theta_{t-1} + N_t ),
// N_t with std s_t per coordinate in parameter space; the algorithms differ in how the
// batches B_t are formed, in how the paper states its noise (its sigma -> s_t, run.hpp
// adapters) and in what is released:
//   noisy-sgd  altschuler-talwar 2022 Alg. (Noisy-SGD): any batch policy, s = eta sigma
//   noisy-gd   chourasia-ye-shokri 2021 Alg. 1: full batch, s = sqrt(2 eta) sigma
//   pnsgd      asoodeh-diaz-calmon journal Alg. 2 / isit Alg. 1: one pass over cyclic
//              batches, s = eta sigma (Laplace: isit Thm 3, s = sqrt(2) eta v), last
//              iterate or a uniformly random stop
//   federated  asoodeh-chen-calmon-ozgur 2021 Alg. 1: n users (Dataset::users, or one per
//              record), m per round without replacement (a hidden random permutation),
//              each user adds its own noise sigma Z_j to its gradient (the mean of its
//              records' gradients); aggregate (eta/m) sum_j; s = eta sigma / sqrt(m)
//   online     asoodeh-diaz-calmon journal Sec. VI (24): noisy OGD over the stream in
//              order, one record per step, eta_t = eta/sqrt(t) by default, random stop
// The trainer never computes a bound: it hands the Run it performed to the accountant.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/accountant.hpp"
#include "hsdp/data/dataset.hpp"
#include "hsdp/run.hpp"
#include "hsdp/train/model.hpp"

namespace hsdp::train {

enum class Algorithm { noisy_sgd, noisy_gd, pnsgd, federated, online };
std::string_view to_string(Algorithm);
Algorithm parse_algorithm(std::string_view text, const Param& parameter = opt("algorithm"));
/// The paper convention in which an algorithm states its sigma (run.hpp): noisy-sgd
/// altschuler, noisy-gd chourasia, pnsgd/online journal (isit for Laplace), federated.
Convention convention_of(Algorithm, NoiseKind);

struct TrainConfig {
  Algorithm algorithm = Algorithm::noisy_sgd;
  LossSpec loss;
  Constraint constraint;
  bool bias = true;
  /// Bound on the feature norm ||x|| of every record (the bias feature adds 1 to R^2).
  double record_norm = 1.0;

  /// Batch policy and size (noisy-sgd; pnsgd uses cyclic, federated shuffle, online
  /// cyclic with b = 1, noisy-gd full).
  Sampling sampling = Sampling::poisson;
  std::int64_t batch_size = 256;
  /// Shuffled batches: drop the partial last batch of each epoch (true) or keep it as a
  /// smaller batch averaged over its own records (false; Run::drop_last).
  bool drop_last = true;
  /// The batch order is public (Run::order_known). Unset: true for a seeded run (its order can
  /// be regenerated from the seed), false otherwise.
  std::optional<bool> order_known;
  /// The neighbouring relation of the target epsilon and of the report (Run::adjacency).
  Adjacency adjacency = Adjacency::replace;
  /// The batch size was not stated: the trainer uses min(batch_size, max(1, n / 4)) so the
  /// default never exceeds the training set and an epoch has at least ~4 batches.
  bool batch_size_is_default = false;
  /// Number of steps; default: epochs * n / b (noisy-sgd), epochs (noisy-gd), one pass
  /// n / b (pnsgd, federated), n (online).
  std::optional<std::int64_t> steps;
  /// The public size n that the run's count-derived constants are fixed from, once, before
  /// training: the Poisson rate q = b / n, T = epochs n / b, the default batch size, the plan,
  /// the report's n. Unset: the training records' count, treated as a public constant of the
  /// run. Under add/remove-one the neighbouring data set (n - 1 or n + 1 records) is trained
  /// with these same constants -- Poisson batches at the same q, the same T -- which is what
  /// the add/remove values of the report certify (docs/training.md "Public constants of the
  /// run"). A size other than the records' count is accepted for Poisson batches of one
  /// process only: the other orders are derived for the data set's own size
  /// (docs/analyses/neighbours.md).
  std::optional<std::int64_t> public_n;
  double epochs = 1.0;

  /// Base step size; default 1/beta (beta of the loss plus lambda), which satisfies
  /// eta <= 2/beta, eta < 2/(beta + lambda) and langevin's eta <= 1/beta.
  std::optional<double> eta;
  /// Default: inv-sqrt for online, constant otherwise.
  std::optional<ScheduleShape> eta_shape;

  NoiseKind noise = NoiseKind::gaussian;
  /// Exactly one of: the paper's sigma (convention_of), the parameter-space std, a
  /// target (epsilon, delta) to calibrate the smallest sigma for, or no noise at all (a
  /// non-private baseline: no report).
  std::optional<double> sigma;
  std::optional<double> noise_std;
  std::optional<double> target_epsilon;
  bool no_noise = false;
  /// delta of the report (and of the target).
  double delta = 1e-5;

  Release release = Release::last;
  /// Per-example gradient clipping norm C (> 0). When it can act (C < L) the update is no
  /// longer the gradient step of a convex smooth loss: the run is reported with the clip
  /// and without L, beta and convexity, so only the composition-type analyses apply.
  std::optional<double> clip;

  /// Seed for a reproducible run; without it the generator is seeded from the OS entropy.
  std::optional<std::uint64_t> seed;
  /// Called with (step, steps) every so often (e.g. a progress bar).
  std::function<void(std::int64_t, std::int64_t)> progress;
  /// Keep the users (record indices) of every step (for tests of the batch policies).
  bool record_batches = false;
  /// The fields the request left unstated (TrainSpec::resolve sets them; a configuration
  /// built by hand states everything). With a target epsilon, noisy-sgd and noisy-gd
  /// choose them by the plan (train/planner.hpp, docs/training.md "The plan").
  struct Unstated {
    bool sampling = false, batch_size = false, length = false, eta = false, radius = false, record_norm = false;
  } unstated;
  /// Built from a user's statement (TrainSpec::resolve): the rule of field_use.hpp applies to
  /// what train() decides with n known (a stated batch size that the algorithm's batches do not
  /// read is refused, naming it and n). A configuration built by hand states everything.
  bool from_statement = false;

  /// Data-parallel training over `size` processes (train/distributed.hpp sets this under
  /// mpirun; docs/distributed.md). Process `rank` holds the training records
  /// [offsets[rank], offsets[rank+1]) of the n = offsets[size] records (data/shard.hpp) and
  /// calls train() with those records only and the same configuration; it sums the
  /// gradients of its records, `sum` adds the partial sums of all processes in place (the
  /// same result on every one), and `share_seed` returns process 0's seed on every process,
  /// so batches and noise come from one generator sequence, as in one process. Unset: one
  /// process (no change at all).
  struct DataParallel {
    int rank = 0, size = 1;
    std::vector<std::size_t> offsets;  ///< size + 1 entries
    std::function<void(std::vector<double>&)> sum;
    std::function<std::uint64_t(std::uint64_t)> share_seed;
  };
  std::optional<DataParallel> data_parallel;

  /// Federated training with a trusted aggregator over `size` processes (algorithm
  /// federated under mpirun; train/distributed.hpp sets this; docs/distributed.md
  /// "Federated training"). Rank 0 is the server: it draws the hidden permutation of the
  /// users and the random stop, sends each round's user ids, receives the sum of the
  /// clients' noisy messages, updates and projects theta and sends it back; it never reads
  /// a training record. Ranks 1..size-1 are clients: user u (in order of first appearance
  /// in the training set) belongs to client 1 + u mod (size - 1), which keeps only its
  /// users' records and adds its users' messages, each with its own noise from the client's
  /// generator (seeded by a job seed from the server and the rank). Every process calls
  /// train() with the same data and configuration. Unset, or size 1: one process.
  struct Federation {
    int rank = 0, size = 1;
    /// From rank 0 to every process, in place (the job seed, the round's user ids).
    std::function<void(std::vector<std::int64_t>&)> broadcast_ids;
    /// From rank 0 to every process, in place (theta).
    std::function<void(std::vector<double>&)> broadcast;
    /// The sum over all processes, in place on rank 0 (the others' values are unspecified).
    std::function<void(std::vector<double>&)> reduce;
  };
  std::optional<Federation> federation;
};

/// The users of a training set (Dataset::users) in order of first appearance: the record
/// indices of each. Without users every record is its own user ({0}, {1}, ...).
std::vector<std::vector<std::int64_t>> group_users(const data::Dataset& data);

/// With users (Dataset::users): the user-level adjacency of the run and its sensitivity.
struct UserLevel {
  std::int64_t users = 0, records = 0;
  /// Bound on the norm of one user's message without its noise: the mean of its records'
  /// gradients is bounded by L (or by the clip norm C when clipping acts), like one record's.
  std::optional<double> message_bound;
  /// 2 max_t eta_t message_bound / m: how far one user moves one round's update (replace
  /// adjacency: the two messages differ by at most twice the bound).
  std::optional<double> sensitivity;
  std::string description;  ///< one line for the text output
};


struct TrainResult {
  LinearModel model;              ///< the released iterate
  LossConstants constants;
  Run run;                        ///< what was performed (noise as actually used)
  /// run.n came from TrainConfig::public_n (true) or is the records' count treated as public.
  bool public_n_stated = false;
  /// Poisson batches: the probability q' <= q = b / n with which the sampler put each record
  /// into each batch (BatchSampler::inclusion_probability).
  std::optional<double> sampling_rate;
  std::optional<Report> report;   ///< the accountant on `run`, epsilon at config.delta
  bool seeded = false;            ///< "seeded: for experiments"
  Convention convention = Convention::altschuler;
  std::optional<double> sigma;    ///< the paper's sigma in `convention` (constant part)
  std::int64_t released_step = 0; ///< T, or the random stopping time tau in 1..T
  /// How the batches of the run were drawn, in one line (the model file's
  /// configuration.batch_order): the policy, batches per epoch, records unused per epoch,
  /// which generator drew the order and how the run can be reproduced.
  std::string batch_order;
  bool clipping_acts = false;
  std::int64_t clipped_examples = 0;  ///< per-example gradients that clipping scaled down
  /// Largest constraint excess over all iterates after projection (<= 0 up to rounding).
  double max_constraint_excess = 0;
  std::vector<std::int64_t> uses;     ///< how often each record (user, with users) entered a batch
  std::vector<std::vector<std::int64_t>> batches;  ///< when record_batches (user indices with users)
  std::vector<std::string> notes;     ///< assumption checks, calibration, clipping
  /// The `account` request that gives the same report (same Run, same query), field by
  /// field; each front end writes it in its own terms ("same report: hsdp account --n ...").
  FieldValues account_request;
  /// The configuration trained: `config` with the plan's choices (equal to it without a plan).
  TrainConfig config;
  /// What the plan chose and why (train/planner.hpp); empty without a plan.
  std::string plan_summary;
  /// The fields the plan chose (request names) and the batch policies it compared.
  std::vector<std::string> plan_chosen;
  std::vector<std::pair<std::string, double>> plan_candidates;  ///< (sampling, noise std)
  /// With users: the adjacency is user-level (one user's records replaced together).
  std::optional<UserLevel> user_level;
  /// Federated under mpirun: the released model on the whole training set, as the sum of
  /// the clients' sums (the server holds no training record); set on rank 0 only.
  std::optional<Evaluation> train_evaluation;
};

/// Trains on `data` (labels mapped, rows within config.record_norm: check_data), or with
/// config.data_parallel on this process's part of the data. Throws InvalidArgument for bad
/// configuration or data.
TrainResult train(const data::Dataset& data, const TrainConfig& config);

/// The Run that `config` describes on n records of dimension d, with the noise resolved
/// from sigma or noise_std (not from a target): what train() reports. Exposed so that a
/// run can be accounted for before training and for tests.
Run planned_run(const TrainConfig& config, std::int64_t n, std::size_t d,
                std::size_t outputs);

}  // namespace hsdp::train
