// The contraction-family analyses in the extreme bands, against an independent evaluation of
// each paper's formula in high precision (Boost.Multiprecision, test-only).
//
//   contraction-per-index    journal Thm 4 eq. (16), at a given index and at the worst one
//   contraction-random-stop  journal Thm 5 eq. (17), max over positions (ERRATA 1)
//   online-gd                journal Sec. VI: (17) with b = 1, steps = n
//   federated                federated Thm 2
//   federated-random-stop    federated Cor. 3
//
// The bands: D/(eta sigma) from 1e-3 to 1e3 (contraction coefficients from ~1e-4 to within
// 1e-300 of 1, where 1 - c is far below the smallest normal double), n and T up to 1e6,
// eps from 1e-4 to 50. Every reported delta must be >= the high-precision value (never an
// under-report) and within a relative 1e-6 of it (the analyses are exact evaluations of
// their formulas, rounded up by 1e-9). Before the fix of num::log_geometric_sum the
// random-stop and online-gd rows failed here by up to 32% (the regression below).
#include <gtest/gtest.h>

#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/expm1.hpp>
#include <boost/math/special_functions/log1p.hpp>
#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/numerics/log_normal.hpp"
#include "hsdp/run.hpp"
#include "fixtures.hpp"

namespace {

// 100 decimal digits: the geometric double sum of Cor. 3 cancels up to ~45 digits where
// T (1 - c) is just above the 1e-40 switch to its series below.
using Mp = boost::multiprecision::cpp_bin_float_100;
constexpr double kInf = std::numeric_limits<double>::infinity();

Mp q_mp(const Mp& x) { return boost::math::erfc(x / boost::multiprecision::sqrt(Mp(2))) / 2; }

/// theta_{e^eps}(r) and 1 - theta, each formed without cancellation where it is small:
/// theta = Q(eps/r - r/2) - e^eps Q(eps/r + r/2) (journal Thm 1), and
/// 1 - theta = Q(r/2 - eps/r) + e^eps Q(eps/r + r/2) (a sum of positive terms).
struct ThetaMp {
  Mp theta, one_minus;
};
ThetaMp theta_mp(double eps, double r) {
  const Mp e(eps), rr(r);
  const Mp a = e / rr - rr / 2, b = e / rr + rr / 2;
  const Mp tail = boost::multiprecision::exp(e) * q_mp(b);
  ThetaMp t;
  t.one_minus = q_mp(-a) + tail;
  t.theta = q_mp(a) - tail;
  if (t.theta > Mp(0.5)) t.theta = 1 - t.one_minus;
  else t.one_minus = 1 - t.theta;
  return t;
}

/// log c, from the smaller of c and 1 - c (each formed without cancellation above).
Mp log_c(const ThetaMp& c) {
  return c.theta < Mp(0.5) ? boost::multiprecision::log(c.theta) : boost::math::log1p(-c.one_minus);
}

/// c^k.
Mp power(const ThetaMp& c, std::int64_t k) {
  if (k == 0) return Mp(1);
  if (c.theta <= 0) return Mp(0);
  return boost::multiprecision::exp(Mp(k) * log_c(c));
}

/// sum_{m=0}^{k-1} c^m = (1 - c^k) / (1 - c).
Mp geometric(const ThetaMp& c, std::int64_t k) {
  if (c.one_minus == 0) return Mp(k);
  if (c.theta <= 0) return Mp(1);
  return -boost::math::expm1(Mp(k) * log_c(c)) / c.one_minus;
}

/// sum_{tau=1}^{T} sum_{k<tau} c^k = sum_{k=0}^{T-1} (T - k) c^k = [T - c G_T] / (1 - c).
Mp double_geometric(const ThetaMp& c, std::int64_t T) {
  const Mp Tm(T);
  if (c.theta <= 0) return Tm;
  // T u below 1e-40: the sum is T (T + 1) / 2 to a relative 1e-40.
  if (c.one_minus * Tm < Mp(1e-40)) return Tm * (Tm + 1) / 2;
  return (Tm - c.theta * geometric(c, T)) / c.one_minus;
}

double to_log(const Mp& x) {
  if (x <= 0) return -kInf;
  return static_cast<double>(boost::multiprecision::log(x));
}

/// A convex, beta-smooth, L-Lipschitz run with eta <= 2/beta, so dia(Psi(W)) = D (journal
/// App. H) and c = theta(D/s); psi = 2 eta L / b.
hsdp::Run smooth_run(std::int64_t n, std::int64_t steps, std::int64_t b, double eta, double s,
                     double L, double D, hsdp::Release release, hsdp::Sampling sampling) {
  hsdp::Run run;
  run.n = n;
  run.steps = steps;
  run.batch_size = b;
  run.sampling = sampling;
  run.eta = hsdp::Schedule(eta);
  run.noise_std = hsdp::Schedule(s);
  run.loss.lipschitz = L;
  run.loss.smoothness = 2.0 / eta;
  run.diameter = D;
  run.release = release;
  return run;
}

/// The reported delta at eps: what a user reads (rounded up, capped at 1, DBL_MIN floor).
double reported(const std::string& analysis, const hsdp::Run& run, double eps) {
  const auto a = hsdp::find_analysis(analysis);
  const auto r = a->evaluate(run, hsdp::Query::at_epsilon(eps));
  EXPECT_TRUE(r.applicable) << analysis << ": " << r.reason << " " << run.summary();
  return r.delta.value_or(kInf);
}

/// The reported delta must bound the exact value, and be within 1e-6 of it (or the floor /
/// cap that reporting applies).
void expect_bounds(double reported_delta, const Mp& exact, const std::string& what) {
  const double exact_d = static_cast<double>(exact);
  if (exact >= 1) {
    EXPECT_EQ(reported_delta, 1.0) << what;
    return;
  }
  ASSERT_FALSE(std::isnan(reported_delta)) << what;
  // Compare in logs: the exact value may be far below the smallest double.
  const double le = to_log(exact);
  if (le < std::log(std::numeric_limits<double>::min())) {
    // Reported as DBL_MIN, rounded up (never a subnormal, never 0).
    EXPECT_GE(reported_delta, std::numeric_limits<double>::min()) << what << " exact log " << le;
    EXPECT_LE(reported_delta, std::numeric_limits<double>::min() * (1 + 1e-6)) << what;
    return;
  }
  EXPECT_GE(reported_delta, exact_d) << what << " exact " << exact_d << " rel "
                                     << reported_delta / exact_d - 1;
  EXPECT_LE(reported_delta, exact_d * (1 + 1e-6)) << what << " exact " << exact_d;
}

double log_uniform(std::mt19937_64& g, double lo, double hi) {
  return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(g));
}
std::int64_t log_uniform_int(std::mt19937_64& g, std::int64_t lo, std::int64_t hi) {
  return std::min<std::int64_t>(hi, std::llround(log_uniform(g, static_cast<double>(lo),
                                                             static_cast<double>(hi))));
}

// ---- The regression from the issue: journal (17) where 1 - c ~ 1e-322. ---------------------

TEST(ExtremeBands, RandomStopWhereOneMinusCIsSubnormal) {
  // hsdp account --n 1000 --steps 1000 --batch-size 1 --eta 1 --sigma 0.5 --convention
  // journal --lipschitz 1 --smoothness 1 --diameter 38.478 --release random-stop --epsilon 0.2
  // c = theta_{e^0.2}(76.956) has 1 - c ~ 1e-322, so every term of (1/n) theta(4) sum_k c^k
  // is theta(4) to within 1e-319: delta = theta_{e^0.2}(4) = 0.9497613269...
  auto run = smooth_run(1000, 1000, 1, 1.0, 0.5, 1.0, 38.478, hsdp::Release::random_stop,
                        hsdp::Sampling::cyclic);
  run.loss.smoothness = 1.0;
  const Mp exact = theta_mp(0.2, 4.0).theta * geometric(theta_mp(0.2, 38.478 / 0.5), 1000) / 1000;
  EXPECT_NEAR(static_cast<double>(exact), 0.9497613269, 1e-10);
  for (const char* name : {"contraction-random-stop", "online-gd"}) {
    const double d = reported(name, run, 0.2);
    EXPECT_GE(d, 0.9497613269) << name;
    expect_bounds(d, exact, name);
  }
}

TEST(ExtremeBands, GeometricSumAgainstHighPrecision) {
  // num::log_geometric_sum over the whole range of 1 - c, including 1 - c below DBL_MIN
  // (where log c is a subnormal) and far below 1/k.
  std::mt19937_64 g(11);
  for (int i = 0; i < 400; ++i) {
    const double eps = log_uniform(g, 1e-4, 50.0), r = log_uniform(g, 1e-3, 1e3);
    const std::int64_t k = log_uniform_int(g, 1, 1000000000);
    const auto c = theta_mp(eps, r);
    const double got = hsdp::num::log_geometric_sum(std::min(0.0, hsdp::div::log_theta(eps, r)),
                                                     hsdp::div::log_one_minus_theta(eps, r), k);
    const double want = to_log(geometric(c, k));
    EXPECT_NEAR(got, want, 1e-12 * std::max(1.0, std::abs(want)))
        << "eps " << eps << " r " << r << " k " << k;
  }
}

// ---- Randomized property test over the bands (constant parameters: the closed forms). ----

struct Instance {
  double eps, s, L, D;
  std::int64_t n, T, b;
  double psi_ratio() const { return 2.0 * L / (static_cast<double>(b) * s); }  // eta = 1
  double d_ratio() const { return D / s; }
};

Instance draw(std::mt19937_64& g, bool batches) {
  Instance x{};
  x.eps = log_uniform(g, 1e-4, 50.0);
  x.s = 1.0;
  x.n = log_uniform_int(g, 1, 1000000);
  x.b = batches ? log_uniform_int(g, 1, std::max<std::int64_t>(1, x.n / 10)) : 1;
  const std::int64_t max_steps = x.n / x.b;
  x.T = log_uniform_int(g, 1, max_steps);
  // D/s over [1e-3, 1e3], with a third of the draws in the band where 1 - c is subnormal or
  // below: 1 - c ~ Q(D/(2s)) crosses DBL_MIN at D/s ~ 75.3 and underflows at ~ 77.2 (small
  // eps); [60, 90] also covers the edges of that band.
  const int band = std::uniform_int_distribution<int>(0, 5)(g);
  x.D = band == 0   ? std::uniform_real_distribution<double>(60.0, 90.0)(g)
        : band == 1 ? std::uniform_real_distribution<double>(74.0, 80.0)(g)
                    : log_uniform(g, 1e-3, 1e3);
  // psi/s = 2 L / b over [1e-3, 1e2].
  x.L = log_uniform(g, 1e-3, 1e2) * static_cast<double>(x.b) / 2.0;
  return x;
}

std::string describe(const Instance& x) {
  return "eps=" + std::to_string(x.eps) + " n=" + std::to_string(x.n) + " T=" +
         std::to_string(x.T) + " b=" + std::to_string(x.b) + " psi/s=" +
         std::to_string(x.psi_ratio()) + " D/s=" + std::to_string(x.d_ratio());
}

TEST(ExtremeBands, ContractionPerIndexConstant) {
  std::mt19937_64 g(1);
  for (int i = 0; i < 150; ++i) {
    const Instance x = draw(g, true);
    auto run = smooth_run(x.n, x.T, x.b, 1.0, x.s, x.L, x.D, hsdp::Release::last,
                          hsdp::Sampling::cyclic);
    const auto a = theta_mp(x.eps, x.psi_ratio()), c = theta_mp(x.eps, x.d_ratio());
    // Worst index: the last step (journal (16) with an empty product).
    expect_bounds(reported("contraction-per-index", run, x.eps), a.theta, "worst " + describe(x));
    // A given index i in step t: theta(psi/s) c^{T - t}.
    const std::int64_t index = std::uniform_int_distribution<std::int64_t>(1, x.T * x.b)(g);
    run.index = index;
    const std::int64_t t = (index - 1) / x.b + 1;
    const Mp exact = a.theta * power(c, x.T - t);
    expect_bounds(reported("contraction-per-index", run, x.eps), exact,
                  "index " + std::to_string(index) + " " + describe(x));
  }
}

TEST(ExtremeBands, RandomStopAndOnlineGdConstant) {
  std::mt19937_64 g(2);
  for (int i = 0; i < 200; ++i) {
    const Instance x = draw(g, i % 2 == 0);
    const auto a = theta_mp(x.eps, x.psi_ratio()), c = theta_mp(x.eps, x.d_ratio());
    // journal (17) at the worst position t = 1: (1/T) theta(psi/s) sum_{k<T} c^k.
    auto run = smooth_run(x.n, x.T, x.b, 1.0, x.s, x.L, x.D, hsdp::Release::random_stop,
                          hsdp::Sampling::cyclic);
    const Mp exact = a.theta * geometric(c, x.T) / Mp(x.T);
    expect_bounds(reported("contraction-random-stop", run, x.eps), exact, describe(x));
    if (x.b == 1) {  // online-gd: one cost function per step, steps = n
      auto online = smooth_run(x.n, x.n, 1, 1.0, x.s, x.L, x.D, hsdp::Release::random_stop,
                               hsdp::Sampling::cyclic);
      const Mp exact_n = a.theta * geometric(c, x.n) / Mp(x.n);
      expect_bounds(reported("online-gd", online, x.eps), exact_n, "online " + describe(x));
    }
  }
}

TEST(ExtremeBands, FederatedConstant) {
  std::mt19937_64 g(3);
  for (int i = 0; i < 150; ++i) {
    const Instance x = draw(g, true);
    const auto a = theta_mp(x.eps, x.psi_ratio()), c = theta_mp(x.eps, x.d_ratio());
    const Mp weight = Mp(x.b) / Mp(x.n);
    auto last = smooth_run(x.n, x.T, x.b, 1.0, x.s, x.L, x.D, hsdp::Release::last,
                           hsdp::Sampling::shuffle);
    // federated Thm 2: (b/n) theta_a (1 - c^T) / (1 - c).
    expect_bounds(reported("federated", last, x.eps), weight * a.theta * geometric(c, x.T),
                  describe(x));
    // federated Cor. 3: (b/n) (1/T) theta_a sum_{tau=1}^{T} (1 - c^tau) / (1 - c).
    auto stop = last;
    stop.release = hsdp::Release::random_stop;
    expect_bounds(reported("federated-random-stop", stop, x.eps),
                  weight * a.theta * double_geometric(c, x.T) / Mp(x.T), "cor3 " + describe(x));
  }
}

// ---- Schedules (the O(T) recursions): eta_t = eta / sqrt(t), brute-force sums. -----------

TEST(ExtremeBands, SchedulesAgainstBruteForce) {
  std::mt19937_64 g(4);
  // Under the sanitizers the first 10 of the 40 random schedules (the subnormal band, i % 3 == 0,
  // among them): the sanitizers check memory and undefined behaviour on the recursions, the
  // Release build checks the values on all 40.
  for (int i = 0; i < hsdp::testing::repetitions(40, 10); ++i) {
    const double eps = log_uniform(g, 1e-4, 50.0);
    const std::int64_t T = log_uniform_int(g, 2, 300);
    const double eta0 = log_uniform(g, 1e-2, 1.0), sigma = log_uniform(g, 1e-3, 10.0);
    // D/(eta_t sigma) sweeps a decade as eta_t falls; a third of the draws sit where 1 - c_t
    // is subnormal for the early steps.
    const bool band = i % 3 == 0;
    const double D = band ? eta0 * sigma * std::uniform_real_distribution<double>(60.0, 75.0)(g)
                          : eta0 * sigma * log_uniform(g, 1e-3, 1e3);
    const double L = eta0 * sigma * log_uniform(g, 1e-3, 1e2) / 2.0;
    std::vector<double> etas, stds;
    for (std::int64_t t = 1; t <= T; ++t) {
      etas.push_back(eta0 / std::sqrt(static_cast<double>(t)));
      stds.push_back(etas.back() * sigma);  // journal convention: s_t = eta_t sigma
    }
    hsdp::Run run = smooth_run(T, T, 1, eta0, 1.0, L, D, hsdp::Release::random_stop,
                               hsdp::Sampling::cyclic);
    run.eta = hsdp::Schedule(etas);
    run.noise_std = hsdp::Schedule(stds);
    run.loss.smoothness = 2.0 / eta0;
    std::vector<ThetaMp> a, c;  // index t - 1
    for (std::int64_t t = 1; t <= T; ++t) {
      const double s = stds[t - 1];
      a.push_back(theta_mp(eps, 2.0 * etas[t - 1] * L / s));
      c.push_back(theta_mp(eps, D / s));
    }
    // journal (17), max over positions: (1/T) max_t a_t sum_{tau=t}^{T} prod_{j=t+1}^{tau} c_j.
    Mp worst_rs = 0, worst_last = 0;
    for (std::int64_t t = 1; t <= T; ++t) {
      Mp sum = 0, prod = 1;
      for (std::int64_t tau = t; tau <= T; ++tau) {
        if (tau > t) prod *= c[tau - 1].theta;
        sum += prod;
      }
      worst_rs = std::max(worst_rs, a[t - 1].theta * sum / Mp(T));
      worst_last = std::max(worst_last, a[t - 1].theta * prod);  // (16): prod_{j>t} c_j
    }
    const std::string what = "eps=" + std::to_string(eps) + " T=" + std::to_string(T) +
                             " D/s_1=" + std::to_string(D / stds[0]);
    expect_bounds(reported("contraction-random-stop", run, eps), worst_rs, "rs " + what);
    expect_bounds(reported("online-gd", run, eps), worst_rs, "online " + what);
    auto last = run;
    last.release = hsdp::Release::last;
    expect_bounds(reported("contraction-per-index", last, eps), worst_last, "last " + what);
    // federated Thm 2 / Cor. 3 with the same schedule: A_tau = sum_{t<=tau} a_t prod c_j.
    auto fed = last;
    fed.sampling = hsdp::Sampling::shuffle;
    Mp A = 0, sum_A = 0;
    for (std::int64_t t = 1; t <= T; ++t) {
      A = a[t - 1].theta + (t > 1 ? c[t - 1].theta * A : Mp(0));
      sum_A += A;
    }
    expect_bounds(reported("federated", fed, eps), A / Mp(T), "fed " + what);  // b/n = 1/T
    fed.release = hsdp::Release::random_stop;
    expect_bounds(reported("federated-random-stop", fed, eps), sum_A / Mp(T) / Mp(T),
                  "fed-rs " + what);
  }
}

}  // namespace
