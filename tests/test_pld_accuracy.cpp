// composition-pld's default discretisation against converged values: never below, at most
// 0.2% above (docs/pld.md "Accuracy"), on DP-SGD runs -- the reference table's cases and a
// randomized set over q in [1e-5, 1], T in [1, 10^7], z in [0.5, 20], both adjacencies,
// Poisson sampling (full batches when q = 1), plus a few fixed-size replace-one runs.
//
// The converged values below were computed by DISABLED_PrintConvergedTable (run it with
// --gtest_also_run_disabled_tests to regenerate): the same library composition on the
// automatic grid at 64 and 128 cells per step std (16 is the default; 32 and 64 where 128
// does not fit in 2^24 points), eps of the stored laws without the floating-point error
// bounds, extrapolated by Richardson (the connect-the-dots error is second order in the
// spacing: e_inf = e_128 - (e_64 - e_128) / 3; the three-grid ratio (e_32 - e_64) / (e_64 -
// e_128), printed beside each value, is close to 4). Gaussian runs (q = 1) are exact GDP
// (gdp_epsilon), as are their converged values. The reference table's converged values
// agree with dp_accounting's PLD at finer intervals (docs/pld.md).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/pld.hpp"
#include "hsdp/run.hpp"

namespace {

using hsdp::div::Neighbours;
using hsdp::div::Pld;
using hsdp::div::PldOptions;
using hsdp::div::PldSteps;
using hsdp::div::Subsampling;

constexpr double kDelta = 1e-5;

struct Case {
  std::int64_t n, b, steps;
  double z;
  hsdp::Sampling sampling;
  hsdp::Adjacency adjacency;
  double converged;  // eps at delta = 1e-5
};

hsdp::Run run_of(const Case& c) {
  hsdp::Run run;
  run.n = c.n;
  run.batch_size = c.b;
  run.steps = c.steps;
  // Poisson with b = n: q = 1, the sum over every record divided by the fixed n (a full
  // batch averaged over its own records is charged 2C/n under add/remove too,
  // docs/analyses/neighbours.md).
  run.sampling = c.sampling;
  run.eta = hsdp::Schedule(0.5);
  run.noise_std = hsdp::Schedule(hsdp::noise_std_from_multiplier(c.z, 1.0, 0.5, c.b));
  run.clip = 1.0;
  run.adjacency = c.adjacency;
  run.release = hsdp::Release::every;
  run.validate();
  return run;
}

// The reference table (docs/pld.md) and the randomized set: 40 runs drawn by
// DISABLED_PrintConvergedTable (seed 25; q = b / n with n = 10^7).
const std::vector<Case>& cases() {
  using S = hsdp::Sampling;
  using A = hsdp::Adjacency;
  static const std::vector<Case> all = {
      // clang-format off
#include "pld_accuracy_cases.inc"
      // clang-format on
  };
  return all;
}

double default_epsilon(const Case& c) {
  const auto pld = hsdp::find_analysis("composition-pld");
  const auto r = pld->evaluate(run_of(c), hsdp::Query::at_delta(kDelta));
  EXPECT_TRUE(r.applicable) << r.reason;
  return r.epsilon.value_or(std::nan(""));
}

std::string describe(const Case& c) {
  return "n=" + std::to_string(c.n) + " b=" + std::to_string(c.b) + " T=" + std::to_string(c.steps) +
         " z=" + std::to_string(c.z) + " " + std::string(hsdp::to_string(c.sampling)) + " " +
         std::string(hsdp::to_string(c.adjacency));
}

TEST(PldAccuracy, DefaultIsWithinTwoPerMilleAboveConvergedNeverBelow) {
  ASSERT_GE(cases().size(), 48u);
  double worst = 0;
  for (const Case& c : cases()) {
    const double e = default_epsilon(c);
    // Never below (the composition is pessimistic; the extrapolated value carries ~1e-6
    // relative of its own error), at most 0.2% above.
    EXPECT_GE(e, c.converged * (1 - 2e-6) - 1e-12) << describe(c);
    EXPECT_LE(e, c.converged * (1 + 2e-3) + 1e-12) << describe(c);
    if (c.converged > 0) worst = std::max(worst, e / c.converged - 1);
  }
  // The stated accuracy of the default (about 1/(12 cells^2) relative): the worst case is
  // well inside the bound.
  EXPECT_LT(worst, 1e-3);
}

TEST(PldAccuracy, GaussianRunsAreExactGdpFromAbove) {
  // q = 1: T Gaussian steps of sensitivity 1 (remove: the sum over the fixed n) or 2
  // (replace) over z are mu-GDP with mu = sqrt(T) s / z: the converged value is gdp_epsilon itself.
  for (const Case& c : cases()) {
    if (c.b != c.n) continue;
    const double s = c.adjacency == hsdp::Adjacency::replace ? 2.0 : 1.0;
    const double exact = hsdp::div::gdp_epsilon(kDelta, std::sqrt(static_cast<double>(c.steps)) * s / c.z);
    EXPECT_NEAR(c.converged, exact, 1e-9 * exact) << describe(c);
    const double e = default_epsilon(c);
    EXPECT_GE(e, exact) << describe(c);
    EXPECT_LE(e, exact * (1 + 1e-4)) << describe(c);
  }
}

// ---------------------------------------------------------------- the table's generator

// Uniform in [0, 1) from the raw 64-bit engine (the same on every standard library).
struct Uniform {
  std::uint64_t state;
  double operator()() {  // splitmix64
    std::uint64_t x = (state += 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return static_cast<double>(x >> 11) * 0x1.0p-53;
  }
};

// eps at delta of the stored laws themselves, without the floating-point error bounds (what
// the grids converge to): the worse order's root of sum_{l_j > eps} p_j (1 - e^{eps - l_j}) +
// mass at +inf = delta, by bisection.
double stored_epsilon(const Pld& pld, double delta) {
  auto profile = [](const hsdp::div::PrivacyLoss& p, double eps) {
    double d = p.infinity_mass();
    for (std::size_t j = 0; j < p.pmf().size(); ++j) {
      const double l = static_cast<double>(p.offset() + static_cast<std::int64_t>(j)) * p.interval();
      if (l > eps) d += p.pmf()[j] * -std::expm1(eps - l);
    }
    return d;
  };
  double out = 0;
  for (const auto* p : {&pld.first(), &pld.second()}) {
    if (profile(*p, 0.0) <= delta) continue;
    double lo = 0, hi = static_cast<double>(p->offset() + static_cast<std::int64_t>(p->pmf().size())) * p->interval();
    for (int i = 0; i < 100; ++i) {
      const double mid = 0.5 * (lo + hi);
      (profile(*p, mid) > delta ? lo : hi) = mid;
    }
    out = std::max(out, hi);
  }
  return out;
}

// eps (stored_epsilon) of the same mechanisms as the analysis (its q and noise multiplier)
// on the automatic grid at `cells`, FFTs up to 2^24 points; the spacing used in *h.
double library_epsilon(const Case& c, double cells, double* h) {
  const auto pld = hsdp::find_analysis("composition-pld");
  const hsdp::Run run = run_of(c);
  double q = 1, z = 0;
  for (const auto& d : pld->details(run, hsdp::Query::at_delta(kDelta))) {
    if (d.name == "q") q = d.value;
    if (d.name == "noise_multiplier") z = d.value;
  }
  const auto nb = c.adjacency == hsdp::Adjacency::replace ? Neighbours::replace : Neighbours::remove;
  const auto sc = c.sampling == hsdp::Sampling::fixed ? Subsampling::fixed : Subsampling::poisson;
  PldOptions o;
  o.cells = cells;
  o.max_length = std::int64_t{1} << 24;
  const PldSteps steps{[=](const PldOptions& oo) { return Pld::sampled_gaussian(q, z, sc, nb, oo); }, c.steps};
  const Pld composed = hsdp::div::compose_steps({&steps, 1}, o);
  *h = composed.first().interval();
  return stored_epsilon(composed, kDelta);
}

TEST(PldAccuracy, DISABLED_PrintConvergedTable) {
  std::vector<Case> list = {
      // The reference table (docs/pld.md): DP-SGD at delta = 1e-5.
      {60000, 600, 10000, 1.0, hsdp::Sampling::poisson, hsdp::Adjacency::remove, 0},
      {60000, 2400, 2250, 1.5, hsdp::Sampling::poisson, hsdp::Adjacency::remove, 0},
      {60000, 256, 10000, 1.0, hsdp::Sampling::poisson, hsdp::Adjacency::remove, 0},
      {60000, 60, 100000, 0.8, hsdp::Sampling::poisson, hsdp::Adjacency::remove, 0},
      {60000, 6, 1000000, 2.0, hsdp::Sampling::poisson, hsdp::Adjacency::remove, 0},
      {60000, 6000, 1000, 4.0, hsdp::Sampling::poisson, hsdp::Adjacency::remove, 0},
      {60000, 60000, 100, 10.0, hsdp::Sampling::poisson, hsdp::Adjacency::remove, 0},
      {60000, 1500, 8000, 3.0, hsdp::Sampling::poisson, hsdp::Adjacency::replace, 0},
      // Fixed-size batches, replace-one (the symmetrised pair).
      {60000, 600, 10000, 1.0, hsdp::Sampling::fixed, hsdp::Adjacency::replace, 0},
      {1000, 50, 200, 1.5, hsdp::Sampling::fixed, hsdp::Adjacency::replace, 0},
      {100000, 1000, 100000, 3.0, hsdp::Sampling::fixed, hsdp::Adjacency::replace, 0},
  };
  Uniform u{25};
  for (int i = 0; i < 40; ++i) {
    const double lq = -5 + 5 * u(), lt = 7 * u(), lz = u(), adj = u(), full = u();
    const std::int64_t n = 10000000;
    const auto b = full < 0.1 ? n : std::max<std::int64_t>(1, std::llround(std::pow(10.0, lq) * static_cast<double>(n)));
    const auto t = std::max<std::int64_t>(1, std::llround(std::pow(10.0, lt)));
    const double z = 0.5 * std::pow(40.0, lz);
    list.push_back({n, b, t, z, hsdp::Sampling::poisson, adj < 0.5 ? hsdp::Adjacency::remove : hsdp::Adjacency::replace, 0});
  }
  for (const Case& c : list) {
    double converged = 0, ratio = 0;
    std::string how;
    if (c.b == c.n && c.sampling == hsdp::Sampling::poisson) {
      const double s = c.adjacency == hsdp::Adjacency::replace ? 2.0 : 1.0;
      converged = hsdp::div::gdp_epsilon(kDelta, std::sqrt(static_cast<double>(c.steps)) * s / c.z);
      how = "exact GDP";
    } else {
      // 32, 64, 128 cells; 16, 32, 64 where the finest grid does not fit in 2^24 points.
      for (double base : {32.0, 16.0}) {
        double h1, h2, h4;
        const double e1 = library_epsilon(c, base, &h1), e2 = library_epsilon(c, 2 * base, &h2),
                     e4 = library_epsilon(c, 4 * base, &h4);
        const bool nested = std::abs(h1 / h2 - 2) < 1e-9 && std::abs(h2 / h4 - 2) < 1e-9;
        if (!nested && base > 16) continue;
        converged = e4 - (e2 - e4) / 3;
        ratio = e2 > e4 ? (e1 - e2) / (e2 - e4) : 0;
        how = "Richardson " + std::to_string(static_cast<int>(2 * base)) + "/" +
              std::to_string(static_cast<int>(4 * base)) + " cells, three-grid ratio " + std::to_string(ratio);
        if (!nested) how += " GRIDS NOT NESTED";
        if (!(e1 >= e2 && e2 >= e4) && e4 > 0) how += " NOT MONOTONE";
        break;
      }
    }
    std::printf("      {%lld, %lld, %lld, %.17g, S::%s, A::%s, %.17g},  // %s\n", static_cast<long long>(c.n),
                static_cast<long long>(c.b), static_cast<long long>(c.steps), c.z,
                std::string(hsdp::to_string(c.sampling)).c_str(), std::string(hsdp::to_string(c.adjacency)).c_str(),
                converged, how.c_str());
    std::fflush(stdout);
  }
}

}  // namespace
