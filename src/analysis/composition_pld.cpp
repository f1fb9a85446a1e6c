// composition-pld: the release-every-iterate baseline by numerical composition of privacy
// loss distributions (docs/pld.md) -- the accounting dp_accounting, Opacus' PRV accountant
// and prv_accountant report -- instead of RDP. Same per-step mechanisms as composition-rdp
// (composition_params(), docs/analyses/neighbours.md: the subsampled Gaussian for hidden
// Poisson and fixed-size batches, one Gaussian mechanism of mu^2 = sum (sensitivity/z)^2 for
// full, shuffled and cyclic batches and known orders), same adjacencies; only the composition
// and the conversion to (eps, delta) differ. A valid bound for the last iterate too
// (post-processing), so it joins the accountant's best.
//
// Each step is div::Pld::sampled_gaussian(q, z_t, scheme, neighbours) with z_t the noise
// multiplier of step t (noise std b / (eta_t C)): both orders of the neighbouring pair are
// composed separately and the worse is reported (div/pld.hpp). Where that is the Gaussian
// mechanism (full batches, shuffled and cyclic batches, fixed-size add/remove) the steps
// compose exactly (mu-GDP: mu^2 = sum_t (sensitivity / z_t)^2), whatever the schedule.
// Otherwise a noise schedule with many distinct z_t is bucketed: each z_t is rounded DOWN to
// its bucket's smallest (less noise is a worse mechanism: more noise is post-processing by an
// independent Gaussian), buckets sized by each step's privacy cost (bucketed() below), so the
// composition stays one FFT over at most a few hundred distinct mechanisms. Each mechanism's discretisation is kept (a small cache keyed by mechanism
// and grid), so that runs differing only in their number of steps -- a calibration of the
// steps, a curve of eps against steps -- discretise once.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cache_key.hpp"
#include "composition_params.hpp"
#include "neighbours.hpp"
#include "hsdp/divergence/pld.hpp"
#include "hsdp/errors.hpp"
#include "pld_grid.hpp"
#include "registry.hpp"

namespace hsdp::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxMechanisms = 256;

// Pld::sampled_gaussian(q, z, scheme, nb, grid), kept for later runs (the grid depends on
// the mechanism only, not on the number of steps). At most 2^22 stored points.
div::Pld cached_step(double q, double z, div::Subsampling scheme, div::Neighbours nb,
                     const div::PldOptions& o) {
  static std::mutex mutex;
  static std::map<std::string, div::Pld> cache;
  static std::size_t points = 0;
  // Every argument, every field of the options (cache_key.hpp).
  const std::string key = fmt::format("{:a} {:a} {} {} {}", q, z, static_cast<int>(scheme),
                                      static_cast<int>(nb), cache_key(o));
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  div::Pld pld = div::Pld::sampled_gaussian(q, z, scheme, nb, o);
  const std::size_t size = pld.first().pmf().size() + (pld.symmetric() ? 0 : pld.second().pmf().size());
  std::lock_guard<std::mutex> lock(mutex);
  if (points + size > (std::size_t{1} << 22)) {
    cache.clear();
    points = 0;
  }
  if (cache.emplace(key, pld).second) points += size;
  return pld;
}

// Distinct noise multipliers, rounded down into buckets, each represented by its SMALLEST
// multiplier (less noise is a worse mechanism: more noise is post-processing by an independent
// Gaussian, so the rounded run is never less private). The buckets follow the privacy cost of
// a step rather than a geometric grid of z (docs/pld.md "Heterogeneous sequences"): a step's
// cost is taken as w(z) = e^{(shift/z)^2} - 1 (chi^2 / q^2 of its subsampled Gaussian pair,
// docs/rdp.md), and ascending in z a multiplier joins the current bucket while rounding it down
// to the bucket's smallest raises its w by at most kBucketBudget x (the run's total w) / T, so
// the rounding raises the run's total cost by at most kBucketBudget. Measured on z_t = 0.8 sqrt(t),
// T = 500 (tests/test_pld.cpp): 129 mechanisms instead of 500, eps 5e-5 to 1.4e-3 above the
// unbucketed composition for q = 0.01 .. 0.3 (the 32 geometric buckets used before: 2.4e-3 at
// q = 0.01, 1.1% at q = 0.1). Beyond kMaxMechanisms buckets the budget doubles (accuracy for
// time: each mechanism is one discretisation and one transform).
constexpr double kBucketBudget = 1e-2;

std::map<double, std::int64_t> bucketed(const std::map<double, std::int64_t>& z_counts, double shift) {
  if (z_counts.size() <= 32) return z_counts;
  auto w = [shift](double z) { return std::expm1(std::min((shift / z) * (shift / z), 700.0)); };
  double total = 0.0, steps = 0.0;
  for (const auto& [z, count] : z_counts) {
    total += static_cast<double>(count) * w(z);
    steps += static_cast<double>(count);
  }
  for (double budget = kBucketBudget;; budget *= 2) {
    const double allowance = budget * total / steps;
    std::map<double, std::int64_t> out;
    double rep = 0.0;
    for (const auto& [z, count] : z_counts) {  // ascending z
      if (out.empty() || !(w(rep) - w(z) <= allowance)) rep = z;
      out[rep] += count;
    }
    if (out.size() <= kMaxMechanisms || budget > 1e6) return out;
  }
}

// The composed PLD on the run's grid (pld_grid: the default or the stated pld_interval /
// pld_cells), or on a grid 4, 16, ... times coarser when the losses of the whole run span
// more than 2^20 grid points (tiny noise, huge T). nullopt when even a 0.5 grid is too fine:
// the caller then uses the RDP route of the same mechanisms (a valid, looser bound). The
// last few compositions are kept (the accountant asks for eps, then for the details; a
// calibration asks the same run twice).
std::shared_ptr<const std::optional<div::Pld>> composed(const Run& run) {
  const CompositionParams p = composition_params(run);
  const bool gaussian = p.gaussian;
  const std::map<double, std::int64_t> z_counts =
      gaussian ? p.z_counts : bucketed(p.z_counts, p.scheme == div::Subsampling::fixed ? 2.0 : p.sensitivity);
  const div::PldOptions grid = pld_grid(run);
  // The key holds every input of the composition below: q, scheme, neighbours, the grid (every
  // field, cache_key.hpp) and the steps (mu^2 of a Gaussian run; otherwise each bucketed
  // multiplier over the sensitivity with its count).
  std::string key = fmt::format("{:a} {} {} {}", p.q, static_cast<int>(p.scheme),
                                static_cast<int>(p.neighbours), cache_key(grid));
  const double mu2 = p.gaussian_mu2;  // a Gaussian run: one Gaussian of mu^2
  if (gaussian) {
    // A noise so large that mu^2 = sum (c/z)^2 underflows: no number this analysis can compute
    // with (Analysis::evaluate says "not applicable" and why), never an empty mechanism.
    if (!(mu2 > 0))
      fail("noise_multiplier", z_counts.empty() ? 0.0 : z_counts.begin()->first,
           "such that the composed privacy loss mu^2 = sum (sensitivity / z)^2 is a positive double");
    key += fmt::format(" gaussian {:a}", mu2);
  } else {
    for (const auto& [z, count] : z_counts) key += fmt::format(" {:a}x{}", z / p.sensitivity, count);
  }
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const std::optional<div::Pld>>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::vector<div::PldSteps> steps;
  if (gaussian) {
    steps.push_back({{}, 1, std::sqrt(mu2)});
  } else {
    for (const auto& [z, count] : z_counts) {
      const double q = p.q, zs = z / p.sensitivity;
      const auto scheme = p.scheme;
      const auto nb = p.neighbours;
      steps.push_back({[=](const div::PldOptions& o) { return cached_step(q, zs, scheme, nb, o); }, count});
    }
  }
  auto pld = std::make_shared<const std::optional<div::Pld>>(on_a_grid_that_fits(
      grid, [&](const div::PldOptions& o) { return div::compose_steps(steps, o); }));
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 4) cache.clear();
  cache.emplace(key, pld);
  return pld;
}

}  // namespace

std::shared_ptr<const std::optional<div::Pld>> composition_pld_of(const Run& run) { return composed(run); }

namespace {

// The RDP route of the same per-step mechanisms (what composition-rdp reports).
div::RdpCurve rdp_curve(const Run& run) {
  const CompositionParams p = composition_params(run);
  return {[p](double alpha) { return composition_rdp(p, alpha); }};
}

class CompositionPld final : public Analysis {
 public:
  std::string_view name() const override { return "composition-pld"; }
  bool charges_grid() const override { return true; }  // via sensitivity / diameter (common.hpp)
  std::string_view citation() const override {
    return "PLD composition, assumes every iterate is released: pessimistic connect-the-dots "
           "discretisation (Doroshenko et al. 2022) composed by FFT (Koskela et al. 2020); "
           "subsampled Gaussian pairs of Zhu-Dong-Wang 2022 (docs/pld.md)";
  }

  // The noise multiplier z_t = noise_std_t b / (eta_t C) is all it reads of the step size.
  bool reads_eta() const override { return false; }

  std::optional<std::string> check(const Run& run) const override {
    if (run.noise != NoiseKind::gaussian)
      return std::string("needs Gaussian noise (--noise gaussian): the subsampled Gaussian mechanism");
    if (!run.clip && !run.loss.lipschitz)
      return std::string(
          "needs a bound on one record's gradient: --clip C (clipping norm) or --lipschitz L");
    return add_remove_reason(run);
  }

  double log_delta(const Run& run, double epsilon) const override {
    if (const auto pld = composed(run); *pld) return (*pld)->log_delta(epsilon);
    return div::best_log_delta(rdp_curve(run), epsilon).value;
  }

  double epsilon(const Run& run, double delta) const override {
    if (const auto pld = composed(run); *pld) return (*pld)->epsilon(delta);
    return div::best_epsilon(rdp_curve(run), delta).value;
  }

  std::vector<Detail> details(const Run& run, const Query&) const override {
    const CompositionParams p = composition_params(run);
    std::vector<Detail> out = composition_details(p);
    // The grid the composition used (coarser than the run's when its losses did not fit).
    const auto pld = composed(run);
    out.push_back({"pld_interval", *pld ? (*pld)->first().interval() : pld_grid(run).interval});
    if (run.pld_cells) out.push_back({"pld_cells", *run.pld_cells});
    return out;
  }
};

}  // namespace

AnalysisPtr make_composition_pld() { return std::make_shared<CompositionPld>(); }

}  // namespace hsdp::detail
