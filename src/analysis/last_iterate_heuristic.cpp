// last-iterate-heuristic: the heuristic of Steinke et al., "The last iterate advantage"
// (ICLR 2025) -- NOT a guarantee (kind heuristic: never best, never calibrated for; the table
// says so). It is the exact privacy of the last iterate when every loss is linear: the record
// moves the sum of the updates by one per-step sensitivity for each step that reads it, so the
// last iterate is K + N(0, T sigma^2) in those units, K the number of steps that read it
// (include/hsdp/divergence/last_iterate_heuristic.hpp). Counterexamples to it as a guarantee
// exist (non-linear losses can leak more); hsdp shows it as what auditing typically finds.
//
//   poisson, fixed : K ~ Binomial(T, b/n)      (each step reads the record w.p. b/n)
//   full           : K = T
//   cyclic, shuffle: K = the most times a record is read, ceil(T b / n) (deterministic)
// sigma = noise_std / (per-step sensitivity): eta C / b for add/remove, 2 eta C / b for
// replace-one (C = the clip norm, else L).
#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <string>

#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/divergence/last_iterate_heuristic.hpp"
#include "hsdp/numerics/root.hpp"
#include "registry.hpp"

namespace hsdp::detail {
namespace {

struct Params {
  std::int64_t T = 1;
  double q = 1.0;          // Binomial rate (1: deterministic count)
  std::int64_t count = 0;  // the deterministic count when q is not used
  bool binomial = true;
  double sigma = 1.0;      // noise std in per-step sensitivity units
};

Params params(const Run& run) {
  Params p;
  p.T = run.steps;
  const double b = static_cast<double>(run.batch_size), n = static_cast<double>(run.n);
  const double C = run.clip ? *run.clip : *run.loss.lipschitz;
  // Add/remove moves a full batch's mean by up to 2C/n (over n or n +- 1 records), a Poisson
  // batch's sum over the fixed b by C/b.
  const bool one = run.adjacency == Adjacency::remove && run.sampling == Sampling::poisson;
  const double unit = (one ? 1.0 : 2.0) * run.eta.at(1) * C / b;
  p.sigma = run.noise_std.at(1) / unit;
  switch (run.sampling) {
    case Sampling::poisson:
    case Sampling::fixed: p.q = run.order_known ? 1.0 : std::min(1.0, b / n); break;
    case Sampling::full: p.q = 1.0; break;
    default:
      p.binomial = false;
      p.count = static_cast<std::int64_t>(
          std::ceil(static_cast<double>(run.steps) * b / n - 1e-12));
  }
  return p;
}

class LastIterateHeuristic final : public Analysis {
 public:
  std::string_view name() const override { return "last-iterate-heuristic"; }
  std::string_view citation() const override {
    return "Steinke et al. 2025 (ICLR), The last iterate advantage: the linear-loss heuristic "
           "Binomial(T, q) + N(0, T sigma^2) vs N(0, T sigma^2) -- not a guarantee";
  }
  BoundKind kind() const override { return BoundKind::heuristic; }

  // sigma = noise_std / (k eta C / b): the step size cancels.
  bool reads_eta() const override { return false; }

  std::optional<std::string> check(const Run& run) const override {
    if (run.release != Release::last)
      return fmt::format("concerns the last iterate; release = {}", to_string(run.release));
    if (run.noise != NoiseKind::gaussian) return std::string("needs Gaussian noise");
    if (!run.clip && !run.loss.lipschitz)
      return std::string("needs the per-example gradient bound (a clip norm or L)");
    if (!run.eta.is_constant() || !run.noise_std.is_constant())
      return std::string("stated for a constant step size and noise");
    // Its model: the record adds a fixed shift at each step that reads it, every other record
    // the same on both data sets. Under add/remove only full batches (the mean moves by at most
    // 2C/n) and Poisson batches (the sum over the fixed b) keep that shape; a fixed-size,
    // shuffled or cyclic batch trades members with the neighbour.
    if (run.adjacency == Adjacency::remove && run.sampling != Sampling::full &&
        run.sampling != Sampling::poisson)
      return fmt::format(
          "its linear-loss model holds under add/remove for full and Poisson batches only; with "
          "{} batches a record added or removed moves other records between batches",
          to_string(run.sampling));
    if (run.sampling == Sampling::shuffle && run.partial_batch() > 0)
      return std::string(
          "its linear-loss model has one shift size; a shuffled run keeping its partial last "
          "batch shifts by 2C/(n mod b) there");
    return std::nullopt;
  }

  double log_delta(const Run& run, double epsilon) const override {
    const Params p = params(run);
    if (!p.binomial) {
      const double mu = static_cast<double>(p.count) / (std::sqrt(static_cast<double>(p.T)) * p.sigma);
      return div::log_theta(epsilon, mu);
    }
    return div::heuristic_log_delta(p.T, p.q, p.sigma, epsilon);
  }

  double epsilon(const Run& run, double delta) const override {
    const Params p = params(run);
    if (p.binomial) return div::heuristic_epsilon(p.T, p.q, p.sigma, delta);
    return Analysis::epsilon(run, delta);
  }

  std::vector<Detail> details(const Run& run, const Query&) const override {
    const Params p = params(run);
    std::vector<Detail> out{{"sigma_per_step", p.sigma}};
    if (p.binomial) out.push_back({"q", p.q});
    else out.push_back({"reads", static_cast<double>(p.count)});
    return out;
  }

  std::string note(const Run&) const override {
    return "a heuristic (exact for linear losses), not a guarantee";
  }
};

}  // namespace

AnalysisPtr make_last_iterate_heuristic() { return std::make_shared<LastIterateHeuristic>(); }

}  // namespace hsdp::detail
