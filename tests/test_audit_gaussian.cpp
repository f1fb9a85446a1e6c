// The Gaussian closed form of the exact audit (src/audit/gaussian_mixture.cpp): E_gamma of two
// Gaussian mixtures and the read law of the unprojected quadratic instance.
//
// Independent checks:
//  - single Gaussians: theta_gamma(r) (journal Thm 1) and 40-digit references (mpmath);
//  - a two-root mixture pair: 40-digit references (mpmath quadrature between the roots);
//  - random mixture pairs: Boost tanh-sinh / exp-sinh quadrature in long double of
//    (p - gamma q)^+, split at crossings found by a scan in this file;
//  - the read law: the recursion (convolution of per-epoch or per-step laws) against brute
//    force enumeration of every position sequence or inclusion pattern;
//  - full batch: (Q1) of the shifted-interpolation notes and div::shift_energy_uniform;
//  - the shuffled model against the trainer's own sampler (Monte Carlo, a sanity check only).
#include <gtest/gtest.h>

#include <boost/math/quadrature/exp_sinh.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "hsdp/random/csprng.hpp"
#include "hsdp/audit/gaussian_mixture.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/divergence/shift_program.hpp"
#include "hsdp/errors.hpp"
#include "fixtures.hpp"
#include "train/sampler.hpp"

namespace {

namespace audit = hsdp::audit;
using audit::Atom;
using audit::GaussianMixture;
using hsdp::Sampling;
using ld = long double;
constexpr double kInf = std::numeric_limits<double>::infinity();

GaussianMixture single(ld mean) { return GaussianMixture{{{1.0L, mean}}, 1.0L}; }

TEST(GaussianMixture, TwoGaussiansAgainstReferences) {
  // N(0,1) vs N(1.3,1): delta(eps) = theta_{e^eps}(1.3); 40-digit references (mpmath:
  // ncdf(-e/mu + mu/2) - e^e ncdf(-e/mu - mu/2)).
  const struct { double eps; ld ref; } cases[] = {
      {0.0, 0.48430777838827054982L},         {0.5, 0.35663569145691560692L},
      {1.0, 0.24074896038423459463L},         {3.0, 0.017562097826489466672L},
      {10.0, 1.4304397628725335614e-13L}};
  const auto p = single(0), q = single(1.3L);
  for (const auto& c : cases) {
    const auto d = audit::mixture_delta(p, q, c.eps);
    EXPECT_LE(std::abs(d.value - c.ref), d.error) << c.eps;
    EXPECT_LT(d.error, 4e-16 * d.value + 1e-300) << c.eps;  // near the last bit of a double
    EXPECT_NEAR(d.value, hsdp::div::theta(c.eps, 1.3), 1e-14 * d.value) << c.eps;
  }
  // Scaled: sd 0.2 and means 0, 0.26 are the same pair.
  const GaussianMixture ps{{{1.0L, 0.0L}}, 0.2L}, qs{{{1.0L, 0.26L}}, 0.2L};
  EXPECT_NEAR(audit::mixture_delta(ps, qs, 1.0).value, 0.24074896038423459463, 1e-16);
}

TEST(GaussianMixture, TwoRootPairAgainstReferences) {
  // P = (N(-2,1) + N(2,1))/2, Q = N(0,1): p - gamma q has two roots in each order (the
  // coefficients of the exponential sum change sign twice: the Rolle path). References:
  // mpmath quadrature between the roots at 40 digits.
  const GaussianMixture a{{{0.5L, -2.0L}, {0.5L, 2.0L}}, 1.0L}, b = single(0);
  const struct { double eps; ld ab, ba; } cases[] = {
      {0.0, 0.5655524727222573419354L, 0.5655524727222573419354L},
      {0.5, 0.4748900174669649914677L, 0.4268402954544729430927L},
      {1.0, 0.3848598876073073334168L, 0.2708751807480051345362L}};
  for (const auto& c : cases) {
    const auto ab = audit::mixture_e_gamma(a, b, c.eps), ba = audit::mixture_e_gamma(b, a, c.eps);
    EXPECT_LE(std::abs(ab.value - c.ab), ab.error) << c.eps;
    EXPECT_LE(std::abs(ba.value - c.ba), ba.error) << c.eps;
    EXPECT_LT(ab.error, 1e-15);
  }
}

// E_gamma(P || Q) by Boost quadrature in long double: (p - gamma q)^+ integrated between the
// crossings, which a scan of step sd/16 (refined by bisection) finds.
ld quad_e_gamma(const GaussianMixture& p, const GaussianMixture& q, double eps) {
  const ld gamma = std::exp(static_cast<ld>(eps));
  auto dens = [](const GaussianMixture& m, ld x) {
    ld s = 0;
    for (const auto& a : m.atoms) {
      const ld z = (x - a.mean) / m.sd;
      s += a.weight * std::exp(-z * z / 2);
    }
    return s * 0.398942280401432677939946059934381868L / m.sd;
  };
  auto f = [&](ld x) { return dens(p, x) - gamma * dens(q, x); };
  ld lo = 0, hi = 0;
  for (const auto* m : {&p, &q})
    for (const auto& a : m->atoms) {
      lo = std::min(lo, a.mean - 14 * m->sd);
      hi = std::max(hi, a.mean + 14 * m->sd);
    }
  std::vector<ld> cuts;
  const ld step = p.sd / 16;
  for (ld x = lo; x < hi; x += step) {
    const ld fa = f(x), fb = f(x + step);
    if ((fa > 0) == (fb > 0)) continue;
    ld a = x, b = x + step;
    for (int i = 0; i < 200 && b - a > 0; ++i) {
      const ld m = (a + b) / 2;
      if (m == a || m == b) break;
      ((f(m) > 0) == (fa > 0) ? a : b) = m;
    }
    cuts.push_back((a + b) / 2);
  }
  auto pos = [&](ld x) { return std::max(f(x), 0.0L); };
  boost::math::quadrature::tanh_sinh<ld> ts;
  boost::math::quadrature::exp_sinh<ld> es;
  const ld tol = 1e-17L;
  ld sum = 0;
  std::vector<ld> ends{-std::numeric_limits<ld>::infinity()};
  ends.insert(ends.end(), cuts.begin(), cuts.end());
  ends.push_back(std::numeric_limits<ld>::infinity());
  for (std::size_t i = 0; i + 1 < ends.size(); ++i) {
    const ld a = ends[i], b = ends[i + 1];
    const ld mid = std::isinf(a) ? (std::isinf(b) ? 0 : b - 1) : (std::isinf(b) ? a + 1 : (a + b) / 2);
    if (!(f(mid) > 0)) continue;
    if (std::isinf(a) && std::isinf(b)) sum += es.integrate(pos, 0.0L, std::numeric_limits<ld>::infinity(), tol) +
                                            es.integrate([&](ld x) { return pos(-x); }, 0.0L, std::numeric_limits<ld>::infinity(), tol);
    else if (std::isinf(a)) sum += es.integrate([&](ld x) { return pos(b - x); }, 0.0L, std::numeric_limits<ld>::infinity(), tol);
    else if (std::isinf(b)) sum += es.integrate([&](ld x) { return pos(a + x); }, 0.0L, std::numeric_limits<ld>::infinity(), tol);
    else sum += ts.integrate(pos, a, b, tol);
  }
  return sum;
}

TEST(GaussianMixture, RandomPairsAgainstQuadrature) {
  std::mt19937_64 rng(20240521);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int checked = 0;
  for (int trial = 0; trial < 12; ++trial) {
    auto draw = [&](int k, ld sd) {
      GaussianMixture m;
      m.sd = sd;
      ld total = 0;
      for (int i = 0; i < k; ++i) {
        const ld w = 0.05L + static_cast<ld>(u(rng));
        m.atoms.push_back({w, static_cast<ld>(6 * u(rng) - 3) * sd});
        total += w;
      }
      for (auto& a : m.atoms) a.weight /= total;
      return m;
    };
    const ld sd = 0.3L + static_cast<ld>(u(rng));
    const auto p = draw(1 + trial % 5, sd), q = draw(1 + (trial / 2) % 4, sd);
    for (const double eps : {0.0, 0.3, 1.0, 2.5}) {
      for (int order = 0; order < 2; ++order) {
        const auto& a = order ? q : p;
        const auto& b = order ? p : q;
        const auto e = audit::mixture_e_gamma(a, b, eps);
        const ld ref = quad_e_gamma(a, b, eps);
        // Quadrature at tolerance 1e-17 in long double: good to ~1e-17 of the masses.
        EXPECT_LE(std::abs(e.value - ref), e.error + 1e-16L)
            << "trial " << trial << " eps " << eps << " order " << order;
        EXPECT_LT(e.error, 1e-15);
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 96);
}

TEST(GaussianMixture, EpsilonBracketsTheBoundary) {
  const GaussianMixture a{{{0.3L, 0.0L}, {0.7L, 1.1L}}, 0.5L}, b{{{0.3L, 0.0L}, {0.7L, -1.1L}}, 0.5L};
  for (const double delta : {1e-2, 1e-5, 1e-9}) {
    const auto e = audit::mixture_epsilon(a, b, delta);
    ASSERT_TRUE(std::isfinite(e.value));
    EXPECT_LT(e.error, 1e-9 * std::max(1.0, e.value));
    EXPECT_LE(audit::mixture_delta(a, b, e.value + e.error).hi(), delta) << delta;
    if (e.value - e.error > 0) EXPECT_GT(audit::mixture_delta(a, b, e.value - e.error).lo(), delta) << delta;
  }
  // Identical laws: delta(0) = 0, so eps = 0.
  EXPECT_EQ(audit::mixture_epsilon(a, a, 1e-5).value, 0.0);
  EXPECT_EQ(audit::mixture_delta(a, a, 0.0).value, 0.0);
}

// ---- the read law of the quadratic instance -------------------------------------------------

hsdp::Run quad_run(std::int64_t n, std::int64_t steps, std::int64_t b, Sampling sampling, double eta,
                   double std, double lambda) {
  hsdp::Run r = hsdp::testing::make_run(n, steps, b, sampling, eta, std, kInf);
  r.loss.strong_convexity = lambda;
  r.loss.smoothness = std::max(1.0, lambda);
  return r;
}

TEST(GaussianMixture, FullBatchIsTheClosedFormQ1) {
  // Full batch, c = 1 - eta lambda: one Gaussian pair with mu^2 = (eta Delta / s)^2
  // (1 + c)(1 - c^t) / ((1 - c)(1 + c^t)) (note Q1 = div::shift_energy_uniform / s^2).
  for (const double lambda : {0.0, 0.3, 0.9}) {
    const double eta = 0.5, s = 0.4, L = 1.0;
    const std::int64_t n = 5, t = 12;
    const auto run = quad_run(n, t, n, Sampling::full, eta, s, lambda);
    const auto law = audit::read_law(run);
    ASSERT_EQ(law.atoms.size(), 1u);
    const auto [p, q] = audit::quadratic_laws(run, law, L, -L);
    const double h = eta * 2 * L / n, c = 1 - eta * lambda;
    const double mu = static_cast<double>((q.atoms[0].mean - p.atoms[0].mean) / p.sd);
    const double mu_q1 = std::sqrt(hsdp::div::shift_energy_uniform(c, h, t)) / s;
    EXPECT_NEAR(mu, mu_q1, 1e-14 * mu) << lambda;
    if (lambda > 0)
      EXPECT_NEAR(mu, (h / s) * std::sqrt((1 + c) * (1 - std::pow(c, t)) / ((1 - c) * (1 + std::pow(c, t)))),
                  1e-13 * mu);
    for (const double eps : {0.0, 1.0, 4.0})
      EXPECT_NEAR(audit::mixture_delta(p, q, eps).value, hsdp::div::theta(eps, mu), 1e-13 * hsdp::div::theta(eps, mu));
  }
}

TEST(GaussianMixture, CyclicIsOneGaussianAtTheRecordsSteps) {
  // n = 6, b = 2 (3 batches), T = 7, record 4 (in batch 2: steps 2 and 5), c = 0.8.
  auto run = quad_run(6, 7, 2, Sampling::cyclic, 0.5, 0.3, 0.4);
  run.index = 4;
  const auto law = audit::read_law(run);
  ASSERT_EQ(law.atoms.size(), 1u);
  EXPECT_NEAR(static_cast<double>(law.atoms[0].mean), 0.5 * (std::pow(0.8, 5) + std::pow(0.8, 2)), 1e-15);
  double v = 0;
  for (int k = 0; k < 7; ++k) v += 0.09 * std::pow(0.8, 2 * k);
  EXPECT_NEAR(static_cast<double>(law.variance), v, 1e-15);
  // Default position: the last record of batch T (batch 1 again: records 1, 2) -> 2.
  run.index.reset();
  EXPECT_EQ(audit::read_law(run).index.value(), 2);
}

// The law of A by brute force: every per-epoch position (1..l, or absent) sequence of a
// shuffled run, or every inclusion pattern of a random-batch run, summed directly.
std::vector<Atom> enumerate_shuffle(const hsdp::Run& run) {
  const std::int64_t l = run.n / run.batch_size, T = run.steps;
  const ld pb = static_cast<ld>(run.batch_size) / static_cast<ld>(run.n);
  const std::int64_t epochs = (T + l - 1) / l;
  std::vector<Atom> out;
  std::vector<std::int64_t> pos(static_cast<std::size_t>(epochs), 0);  // 0 = absent
  const ld c = 1.0L - static_cast<ld>(run.eta.at(1)) * static_cast<ld>(run.loss.strong_convexity);
  for (;;) {
    ld w = 1, a = 0;
    bool possible = true;
    for (std::int64_t e = 0; e < epochs; ++e) {
      const std::int64_t run_here = std::min(l, T - e * l);
      const std::int64_t p = pos[static_cast<std::size_t>(e)];
      if (p == 0) {
        w *= 1 - static_cast<ld>(run_here) * pb;
      } else if (p > run_here) {
        possible = false;  // folded into "absent" above
      } else {
        w *= pb;
        const std::int64_t t = e * l + p;
        a += static_cast<ld>(run.eta.at(t)) * std::pow(c, static_cast<ld>(T - t));
      }
    }
    if (possible && w > 0) out.push_back({w, a});
    std::size_t k = 0;
    while (k < pos.size() && ++pos[k] > l) pos[k++] = 0;
    if (k == pos.size()) break;
  }
  return out;
}

std::vector<Atom> enumerate_random(const hsdp::Run& run) {
  const std::int64_t T = run.steps;
  const ld p = static_cast<ld>(run.batch_size) / static_cast<ld>(run.n);
  const ld c = 1.0L - static_cast<ld>(run.eta.at(1)) * static_cast<ld>(run.loss.strong_convexity);
  std::vector<Atom> out;
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << T); ++mask) {
    ld w = 1, a = 0;
    for (std::int64_t t = 1; t <= T; ++t) {
      if (mask >> (t - 1) & 1) {
        w *= p;
        a += static_cast<ld>(run.eta.at(t)) * std::pow(c, static_cast<ld>(T - t));
      } else {
        w *= 1 - p;
      }
    }
    out.push_back({w, a});
  }
  return out;
}

void expect_same_privacy(const hsdp::Run& run, const std::vector<Atom>& brute, const std::string& what) {
  const auto law = audit::read_law(run);
  audit::ReadLaw b = law;
  b.atoms = brute;
  ld total = 0;
  for (const auto& a : brute) total += a.weight;
  EXPECT_NEAR(static_cast<double>(total), 1.0, 1e-15) << what;
  EXPECT_LE(law.atoms.size(), brute.size()) << what;
  for (const auto& [gp, gq] : {std::pair{1.0, -1.0}, std::pair{2.0, 0.0}}) {
    const auto [p1, q1] = audit::quadratic_laws(run, law, gp, gq);
    const auto [p2, q2] = audit::quadratic_laws(run, b, gp, gq);
    for (const double eps : {0.0, 0.7, 2.0}) {
      const auto d1 = audit::mixture_delta(p1, q1, eps), d2 = audit::mixture_delta(p2, q2, eps);
      EXPECT_LE(std::abs(d1.value - d2.value), d1.error + d2.error + 1e-15)
          << what << " pair " << gp << "/" << gq << " eps " << eps << ": " << d1.value << " vs " << d2.value;
    }
  }
}

TEST(GaussianMixture, ShuffleRecursionEqualsEnumeration) {
  // l = floor(n/b) batches per epoch; b dividing n or not; whole and partial last epochs;
  // c = 1 and c < 1.
  const struct { std::int64_t n, b, T; double lambda; } cases[] = {
      {4, 1, 8, 0.3}, {6, 2, 9, 0.5}, {7, 2, 6, 0.2}, {7, 2, 7, 0.0}, {9, 2, 11, 0.6},
      {5, 1, 12, 0.4}, {13, 3, 9, 1.2}, {6, 1, 24, 0.1},
      // eta lambda = 1.5: c = -0.5, the values of A change sign (several roots: the Rolle path).
      {8, 2, 8, 3.0}};
  for (const auto& c : cases) {
    const auto run = quad_run(c.n, c.T, c.b, Sampling::shuffle, 0.5, 0.3, c.lambda);
    expect_same_privacy(run, enumerate_shuffle(run),
                        "shuffle n=" + std::to_string(c.n) + " b=" + std::to_string(c.b) + " T=" + std::to_string(c.T));
  }
}

TEST(GaussianMixture, RandomBatchRecursionEqualsEnumeration) {
  for (const auto sampling : {Sampling::fixed, Sampling::poisson})
    for (const double lambda : {0.0, 0.35}) {
      const auto run = quad_run(10, 8, 3, sampling, 0.5, 0.3, lambda);
      const auto law = audit::read_law(run);
      // c = 1, constant eta: A = eta (number of reads), Binomial(T, b/n): T + 1 atoms.
      if (lambda == 0) EXPECT_EQ(law.atoms.size(), 9u);
      if (lambda > 0) EXPECT_EQ(law.atoms.size(), 256u);  // every pattern has its own effect
      expect_same_privacy(run, enumerate_random(run), std::string(hsdp::to_string(sampling)));
    }
}

TEST(GaussianMixture, ShuffleWithoutContractionForgetsThePositions) {
  // c = 1, constant eta: where in the epoch the record is read does not matter. b | n: read
  // once per epoch for sure (one atom, E eta); b not dividing n: absent from an epoch with
  // probability 1 - l b/n, so A = eta Binomial(E, l b/n).
  const auto whole = audit::read_law(quad_run(6, 9, 2, Sampling::shuffle, 0.5, 0.3, 0.0));
  ASSERT_EQ(whole.atoms.size(), 1u);
  EXPECT_EQ(whole.atoms[0].mean, 1.5L);
  const auto ragged = audit::read_law(quad_run(7, 6, 2, Sampling::shuffle, 0.5, 0.3, 0.0));
  ASSERT_EQ(ragged.atoms.size(), 3u);  // 2 epochs of 3 batches
  const ld q = 6.0L / 7.0L;
  EXPECT_NEAR(static_cast<double>(ragged.atoms[0].weight), static_cast<double>((1 - q) * (1 - q)), 1e-16);
  EXPECT_NEAR(static_cast<double>(ragged.atoms[2].weight), static_cast<double>(q * q), 1e-16);
}

TEST(GaussianMixture, ShuffleModelMatchesTheTrainersSampler) {
  // Monte Carlo sanity check (not an assertion of any bound): the trainer's shuffled batches
  // (src/train/sampler.cpp) put a given record in batch j of an epoch with probability b/n
  // and in none with 1 - l b/n. n = 7, b = 2: l = 3, 2/7 each, 1/7 absent.
  auto rng = hsdp::random::Csprng::from_seed(11);
  hsdp::train::BatchSampler sampler(Sampling::shuffle, 7, 2, rng);
  const int epochs = 20000;
  std::vector<int> count(4, 0);
  std::vector<std::int64_t> batch;
  for (int e = 0; e < epochs; ++e) {
    int where = 0;
    for (int j = 1; j <= 3; ++j) {
      sampler.next(static_cast<std::int64_t>(e) * 3 + j, batch);
      if (std::find(batch.begin(), batch.end(), 3) != batch.end()) where = j;
    }
    ++count[static_cast<std::size_t>(where)];
  }
  const double expected[4] = {1.0 / 7, 2.0 / 7, 2.0 / 7, 2.0 / 7};
  for (int j = 0; j < 4; ++j) {
    const double f = static_cast<double>(count[static_cast<std::size_t>(j)]) / epochs;
    const double sd = std::sqrt(expected[j] * (1 - expected[j]) / epochs);
    EXPECT_NEAR(f, expected[j], 5 * sd) << "position " << j;
  }
}

TEST(GaussianMixture, InvalidInputNamesTheField) {
  auto field = [](auto f) {
    try {
      f();
    } catch (const hsdp::InvalidArgument& e) {
      return e.field();
    }
    return std::string("no exception");
  };
  auto run = quad_run(8, 8, 2, Sampling::shuffle, 0.5, 0.3, 0.2);
  auto projected = run;
  projected.diameter = 2;
  EXPECT_EQ(field([&] { audit::read_law(projected); }), "diameter");
  auto stop = run;
  stop.release = hsdp::Release::random_stop;
  EXPECT_EQ(field([&] { audit::read_law(stop); }), "release");
  auto lap = run;
  lap.noise = hsdp::NoiseKind::laplace;
  EXPECT_EQ(field([&] { audit::read_law(lap); }), "noise");
  auto big = quad_run(10, 40, 3, Sampling::fixed, 0.5, 0.3, 0.2);
  EXPECT_EQ(field([&] { audit::read_law(big, 1000); }), "steps");
  auto expanding = quad_run(8, 8, 2, Sampling::cyclic, 0.5, 0.3, 5.0);
  expanding.loss.smoothness = 5.0;
  EXPECT_EQ(field([&] { audit::read_law(expanding); }), "strong_convexity");
  // Mixtures with different sds are not a pair of this kind.
  EXPECT_THROW(audit::mixture_e_gamma(single(0), GaussianMixture{{{1.0L, 0.0L}}, 2.0L}, 1.0),
               hsdp::InvalidArgument);
}

}  // namespace
