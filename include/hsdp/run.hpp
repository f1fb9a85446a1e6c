// The one description of a training run that every part of hsdp shares (docs/architecture.md).
//
// A Run describes what was (or will be) done: dataset size, steps, batching, step sizes,
// noise in parameter space, loss-class constants, the constraint set and what is
// released. Analyses read it and decide whether their assumptions hold; they never read
// data. Paper-specific noise conventions are translated into `noise_std` by the adapters
// at the bottom of this header (the table in docs/architecture.md).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hsdp/errors.hpp"

namespace hsdp {

enum class NoiseKind { gaussian, laplace };
/// How each step's batch is formed.
///  full    : every record every step (b = n)
///  poisson : each record independently with probability b/n
///  fixed   : a uniformly random subset of size b each step, independently across steps
///  shuffle : each epoch a fresh uniformly random permutation, hidden and independent of
///            the data, cut into l = floor(n/b) batches of b (the n - l b records at its end
///            unused that epoch; Run::drop_last), or, keeping the partial last batch, into
///            ceil(n/b) batches whose last holds the n mod b records left (PyTorch's
///            DataLoader default, drop_last=False); an epoch is l steps
///  cyclic  : records in their given order, batches of size b, wrapping around
enum class Sampling { full, poisson, fixed, shuffle, cyclic };
/// What is published: the last iterate, the iterate at a uniformly random stopping
/// time in 1..steps, or every iterate (the composition setting).
enum class Release { last, random_stop, every };
/// Neighbouring datasets: one record replaced, or one record added/removed.
enum class Adjacency { replace, remove };

/// The names of an enumeration's values, in the order messages list them. One table per
/// enumeration serves printing (to_string) and parsing (parse_name).
template <typename E>
std::span<const std::pair<E, std::string_view>> names();

/// The value named `text`; otherwise InvalidArgument naming `parameter`
/// ("<parameter> = <text>: must be one of a, b, c").
template <typename E>
E parse_name(std::string_view text, const Param& parameter) {
  std::string known;
  for (const auto& [value, name] : names<E>()) {
    if (text == name) return value;
    known += known.empty() ? "" : ", ";
    known += name;
  }
  fail(parameter, text, "one of " + known);
}

template <> std::span<const std::pair<NoiseKind, std::string_view>> names();
template <> std::span<const std::pair<Sampling, std::string_view>> names();
template <> std::span<const std::pair<Release, std::string_view>> names();
template <> std::span<const std::pair<Adjacency, std::string_view>> names();

std::string_view to_string(NoiseKind);
std::string_view to_string(Sampling);
std::string_view to_string(Release);
std::string_view to_string(Adjacency);

/// A per-step sequence: either one constant value or one value per step (t = 1..steps).
class Schedule {
 public:
  Schedule() = default;
  /// A constant schedule.
  explicit Schedule(double value) : values_{value} {}
  /// One value per step; values[t-1] is step t.
  explicit Schedule(std::vector<double> values) : values_(std::move(values)) {}

  /// The value at step t (1-based). For a constant schedule, any t.
  double at(std::int64_t t) const {
    return values_.size() == 1 ? values_[0] : values_[static_cast<std::size_t>(t - 1)];
  }
  bool is_constant() const { return values_.size() == 1; }
  bool empty() const { return values_.empty(); }
  std::size_t size() const { return values_.size(); }
  double min() const;
  double max() const;
  const std::vector<double>& values() const { return values_; }

 private:
  std::vector<double> values_;
};

/// Step-size schedule shapes the CLI can generate from a base value eta:
/// constant eta, eta / sqrt(t) (online GD, journal Prop. 3), eta / t (federated Cor. 1).
enum class ScheduleShape { constant, inv_sqrt, inv_t };
template <> std::span<const std::pair<ScheduleShape, std::string_view>> names();
std::string_view to_string(ScheduleShape);
Schedule make_schedule(ScheduleShape shape, double base, std::int64_t steps);

/// Constants of the loss class. Optional ones are "unknown": an analysis that needs
/// them reports "not applicable" and names the missing constant.
struct LossClass {
  std::optional<double> lipschitz;        ///< L: ||grad l(w, x)|| <= L
  std::optional<double> smoothness;       ///< beta: grad l(., x) is beta-Lipschitz
  double strong_convexity = 0.0;          ///< lambda (rho in isit) >= 0
  bool convex = true;
};

/// Noise drawn on a power-of-two grid by exact discrete samplers (the trainer's runs;
/// docs/security.md). Compared with the continuous run the analyses describe, each step's map
/// gains at most two roundings to the grid, and each draw's law is within a factor e^(+-eta)
/// of the continuous law rounded to the grid (a post-processing of the continuous mechanism)
/// outside an event of probability beta.
struct NoiseGrid {
  /// The extra distance per step, relative to the step's noise std s_t: two runs' next
  /// pre-noise points may be slack * s_t further apart than the continuous analysis assumes
  /// (2 lambda sqrt(d) <= 2 2^-32 sqrt(d) s_t). It also bounds the extra sensitivity of one
  /// step (one rounding) and the extra diameter of the update's image.
  double slack = 0.0;
  /// 2 eta summed over every draw: an (eps, delta) of the comparison run holds for the run at
  /// eps + epsilon (with delta scaled by e^(epsilon/2), plus the beta term).
  double epsilon = 0.0;
  /// log of beta summed over every draw (-inf: beta = 0), charged to delta as
  /// (1 + e^(eps + epsilon/2)) e^log_beta. log_beta >= 0: no charge derived (reason says why).
  double log_beta = -std::numeric_limits<double>::infinity();
  /// Why no charge is derived (log_beta >= 0), for the trainer's notes; not part of the report.
  std::string reason;
};

struct Run {
  std::int64_t n = 0;                     ///< dataset size (users in the federated setting)
  std::int64_t steps = 0;                 ///< T: number of noisy updates
  std::int64_t batch_size = 1;            ///< b (m users per round in the federated setting)
  Sampling sampling = Sampling::cyclic;
  Schedule eta{1.0};                      ///< step sizes eta_t (1 when !eta_known)
  /// False when the step size was not stated: the noise was stated relative to the step (a
  /// DP-SGD noise multiplier, or a paper's sigma whose std is eta sigma), `eta` is then 1 at
  /// every step and `noise_std` is the std per unit of step size (std_t / eta_t). Only the
  /// analyses that read the step sizes through noise_std_t / eta_t alone apply
  /// (Analysis::reads_eta); the others are "not applicable: needs the step size eta".
  bool eta_known = true;
  NoiseKind noise = NoiseKind::gaussian;
  Schedule noise_std{1.0};                ///< std of the noise added to the parameters at step t
  LossClass loss;
  double diameter = std::numeric_limits<double>::infinity();  ///< dia(W); inf = unconstrained
  Release release = Release::last;
  Adjacency adjacency = Adjacency::replace;
  /// Shuffled batches only: true drops the n mod b records left after the last full batch of
  /// each epoch's permutation; false keeps them as a smaller last batch, whose gradient is the
  /// mean over its own records (a record there moves the model by up to 2 eta L / (n mod b)).
  /// Any other order must keep the default (validate()).
  bool drop_last = true;
  /// The batch order is known to whoever sees the model (a published order log or seed; a
  /// seeded hsdp run): no guarantee may rely on the order being hidden. Shuffled batches are
  /// then certified at their worst position (no average over the hidden position) and
  /// Poisson and fixed-size batches without amplification by sampling.
  bool order_known = false;
  std::optional<std::int64_t> index;      ///< position (1..n) of the differing record, if asked
  std::optional<std::int64_t> dimension;  ///< d, for utility bounds that depend on it
  /// Clipping norm C of the per-example gradients (DP-SGD), if the trainer clips; > 0.
  /// Bounds one record's contribution to the gradient sum (used in place of L when given).
  std::optional<double> clip;
  /// A log-Sobolev constant c > 0 that the user asserts for every law of the iterates (and of
  /// the interpolating diffusions) of this run, in the convention Ent(f^2) <= (2/c) E|grad f|^2
  /// (a Gaussian N(m, v I) has c = 1/v). Used only by langevin Thm 2; never derived from data.
  std::optional<double> lsi_constant;
  /// The discretisation of the analyses that compose privacy loss distributions
  /// (composition-pld, shifted-interpolation), when stated: the grid spacing of the losses
  /// (div::PldOptions::interval, [1e-6, 0.5]) and the automatic refinement's grid cells per
  /// std of one step's loss (div::PldOptions::cells, [1, 1000]). Unset: the analyses'
  /// defaults (1e-3 and 40). Accuracy vs speed only: every value gives a certified bound.
  std::optional<double> pld_interval, pld_cells;
  /// Noise drawn on a grid (the trainer's runs); unset: the continuous noise the papers state
  /// (a hypothetical run typed into `hsdp account`).
  std::optional<NoiseGrid> grid;

  /// Validates every field (ranges, schedule lengths, NaN/inf) and throws
  /// InvalidArgument naming the first offending parameter.
  void validate() const;

  /// Batches per epoch of a shuffled run: floor(n/b) with drop_last, ceil(n/b) without.
  std::int64_t batches_per_epoch() const;
  /// Records of the partial last batch of a shuffled run that keeps it (n mod b; 0 when b
  /// divides n or the partial batch is dropped).
  std::int64_t partial_batch() const;

  /// Laplace scale b_t = std / sqrt(2) (Lap(0, b) has variance 2 b^2).
  double laplace_scale(std::int64_t t) const;
  /// True when each record is used at most once, in a single pass (cyclic or shuffled
  /// batches with steps * b <= n, or a single full-batch step).
  bool single_pass() const;
  /// Human-readable one-line summary ("n=1000 steps=1000 b=1 cyclic ...").
  std::string summary() const;
};

/// A request stated field by field, in order: library field name -> value as text (an empty
/// value is a switch, e.g. "non_convex"). Front ends spell the fields (FieldNames, errors.hpp).
using FieldValues = std::vector<std::pair<std::string, std::string>>;

/// The paper conventions for the noise parameter sigma (docs/architecture.md table).
enum class Convention { journal, isit, federated, chourasia, altschuler };
template <> std::span<const std::pair<Convention, std::string_view>> names();
std::string_view to_string(Convention);
/// Parses "journal" etc.; throws InvalidArgument naming `parameter`.
Convention parse_convention(std::string_view text, const Param& parameter = opt("convention"));

/// Noise std in parameter space at a step with step size eta and batch size b, for a
/// paper's own sigma:
///   journal, isit, altschuler: eta * sigma
///   federated:                 eta * sigma / sqrt(b)   (b = m users per round)
///   chourasia:                 sqrt(2 eta) * sigma
/// For Laplace noise (isit Thm 3) sigma is the paper's Laplace scale v and the returned
/// value is the std of eta * Lap(0, v), i.e. sqrt(2) * eta * v.
double noise_std_from_sigma(Convention convention, double sigma, double eta,
                            std::int64_t batch_size, NoiseKind kind = NoiseKind::gaussian);

/// DP-SGD / Opacus convention: N(0, (z C)^2) added to the sum of b clipped gradients,
/// the sum divided by b, times eta: std eta * z * C / b.
double noise_std_from_multiplier(double noise_multiplier, double clip, double eta,
                                 std::int64_t batch_size);

/// The paper's sigma for a given parameter-space std (inverse of noise_std_from_sigma).
double sigma_from_noise_std(Convention convention, double noise_std, double eta,
                            std::int64_t batch_size, NoiseKind kind = NoiseKind::gaussian);

}  // namespace hsdp
