// Every batch order x adjacency against exact instances (docs/analyses/neighbours.md, "Tests").
//
// The instances: linear losses, record i's gradient v_i in {-1, +1} (L = 1, d = 1), step size
// eta, Gaussian noise of std s in parameter space, no projection. Each data set is trained by
// the same algorithm with its own records (the convention of neighbours.hpp): full batches
// average over the data set's own records, Poisson batches divide their sum by the fixed b,
// fixed-size and shuffled batches hold b records (a kept partial last batch averages over its
// own), cyclic batches read positions (t-1)b .. tb-1 modulo the data set's size.
//
// Neighbours are enumerated: every record removed, a record of either sign added at every
// position, and (replace-one) every record's sign flipped. What is released:
//  - every iterate: the vector of the T batch means (the iterates are a bijective post-
//    processing of it). Deterministic orders (full, cyclic): one Gaussian, exact mu-GDP.
//    Random orders: a mixture over the batch sequences, exact for T = 1 (1-D, the certified
//    mixture E_gamma of src/audit) and T = 2 (the inner line by the same certified E_gamma,
//    the outer by adaptive Gauss-Kronrod quadrature; tolerance stated below).
//  - the last iterate with lambda >= 0 (strongly convex instance: every record's loss also
//    has (lambda/2) w^2): W_T = -eta sum_t c^{T-t} m_t + N(0, s^2 sum_t c^{2(T-t)}), a 1-D
//    mixture (exact, certified).
// Every upper bound hsdp reports for the run (and under add/remove, the "best under
// add/remove-one" values) must be >= the exact value minus its error. A bound that is
// "not applicable" is fine; the test checks that cyclic add/remove is refused.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <boost/math/quadrature/gauss_kronrod.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "hsdp/accountant.hpp"
#include "hsdp/audit/gaussian_mixture.hpp"
#include "hsdp/random/csprng.hpp"
#include "hsdp/train/trainer.hpp"
#include "train/sampler.hpp"
#include "fixtures.hpp"

namespace {

using hsdp::Adjacency;
using hsdp::Release;
using hsdp::Run;
using hsdp::Sampling;
namespace audit = hsdp::audit;

// The exact (eps, delta) of mu-GDP, in long double from erfc (an implementation of its own,
// not hsdp's log-domain one): delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2).
long double gdp_delta(long double mu, long double eps) {
  if (mu <= 0) return 0;
  auto Phi = [](long double x) { return 0.5L * std::erfc(-x / std::sqrt(2.0L)); };
  return std::max(0.0L, Phi(-eps / mu + mu / 2) - std::exp(eps) * Phi(-eps / mu - mu / 2));
}

// ---- batch sequences of a data set (values in order) ---------------------------------------

// One outcome of an independent block of steps (an epoch of a shuffled run, one step of a
// random order): the batch means of its steps, with its probability.
struct Outcome {
  std::vector<double> means;
  double prob;
};
using Block = std::vector<Outcome>;

double mean_of(const std::vector<double>& v, const std::vector<std::size_t>& idx, double divisor) {
  double s = 0;
  for (auto i : idx) s += v[i];
  return s / divisor;
}

// Merges outcomes with bit-identical means.
Block merged(const Block& in) {
  std::map<std::vector<double>, double> m;
  for (const auto& o : in) m[o.means] += o.prob;
  Block out;
  for (const auto& [k, p] : m) out.push_back({k, p});
  return out;
}

// The blocks (independent, in step order) of a run of `sampling` with batch size b and T steps
// on the data set `v`.
std::vector<Block> blocks(Sampling sampling, const std::vector<double>& v, std::int64_t b, std::int64_t T,
                          bool drop_last) {
  const std::size_t m = v.size();
  const double bd = static_cast<double>(b);
  std::vector<Block> out;
  switch (sampling) {
    case Sampling::full: {
      std::vector<std::size_t> all(m);
      std::iota(all.begin(), all.end(), 0);
      const double mean = mean_of(v, all, static_cast<double>(m));
      out.push_back({{std::vector<double>(static_cast<std::size_t>(T), mean), 1.0}});
      break;
    }
    case Sampling::cyclic: {
      std::vector<double> means;
      for (std::int64_t t = 0; t < T; ++t) {
        std::vector<std::size_t> idx;
        for (std::int64_t j = 0; j < b; ++j) idx.push_back(static_cast<std::size_t>((t * b + j) % static_cast<std::int64_t>(m)));
        means.push_back(mean_of(v, idx, bd));
      }
      out.push_back({{means, 1.0}});
      break;
    }
    case Sampling::fixed:
    case Sampling::poisson: {
      Block step;
      const double q = bd / static_cast<double>(m);  // Poisson: the data set's own rate is b/n of the run...
      for (std::uint32_t mask = 0; mask < (1u << m); ++mask) {
        std::vector<std::size_t> idx;
        for (std::size_t i = 0; i < m; ++i)
          if (mask >> i & 1u) idx.push_back(i);
        const auto k = static_cast<std::int64_t>(idx.size());
        if (sampling == Sampling::fixed) {
          if (k != b) continue;
          double subsets = 1;  // C(m, b)
          for (std::int64_t i = 0; i < b; ++i) subsets = subsets * static_cast<double>(m - static_cast<std::size_t>(i)) / static_cast<double>(i + 1);
          step.push_back({{mean_of(v, idx, bd)}, 1.0 / subsets});
        } else {
          (void)q;
          step.push_back({{mean_of(v, idx, bd)}, 0.0});  // probability set by the caller (fixed rate)
        }
      }
      for (std::int64_t t = 0; t < T; ++t) out.push_back(step);
      break;
    }
    case Sampling::shuffle: {
      const std::int64_t r = static_cast<std::int64_t>(m) % b;
      const bool partial = !drop_last && r > 0;
      const std::int64_t l = static_cast<std::int64_t>(m) / b + (partial ? 1 : 0);
      std::vector<std::size_t> perm(m);
      std::iota(perm.begin(), perm.end(), 0);
      Block epoch;
      double count = 0;
      do {
        std::vector<double> means;
        for (std::int64_t k = 0; k < l; ++k) {
          std::vector<std::size_t> idx;
          for (std::int64_t j = k * b; j < std::min<std::int64_t>((k + 1) * b, static_cast<std::int64_t>(m)); ++j)
            idx.push_back(perm[static_cast<std::size_t>(j)]);
          means.push_back(mean_of(v, idx, static_cast<double>(idx.size())));
        }
        epoch.push_back({means, 1.0});
        ++count;
      } while (std::next_permutation(perm.begin(), perm.end()));
      for (auto& o : epoch) o.prob = 1.0 / count;
      epoch = merged(epoch);
      for (std::int64_t start = 0; start < T; start += l) {
        const std::int64_t len = std::min(l, T - start);
        Block cut;
        for (const auto& o : epoch) cut.push_back({std::vector<double>(o.means.begin(), o.means.begin() + len), o.prob});
        out.push_back(merged(cut));
      }
      break;
    }
  }
  return out;
}

// Poisson probabilities: each record in with the run's fixed rate q = b/n (the user's n).
void set_poisson(std::vector<Block>& bl, const std::vector<double>& v, double q) {
  const std::size_t m = v.size();
  for (auto& step : bl) {
    std::size_t mask = 0;
    for (auto& o : step) {
      const auto k = static_cast<double>(__builtin_popcountll(mask));
      o.prob = std::pow(q, k) * std::pow(1 - q, static_cast<double>(m) - k);
      ++mask;
    }
  }
}

// All sequences: the product of the blocks (release every, small T).
Block sequences(const std::vector<Block>& bl) {
  Block acc{{{}, 1.0}};
  for (const auto& b : bl) {
    Block next;
    for (const auto& a : acc)
      for (const auto& o : b) {
        auto means = a.means;
        means.insert(means.end(), o.means.begin(), o.means.end());
        next.push_back({means, a.prob * o.prob});
      }
    acc = merged(next);
  }
  return acc;
}

// The last iterate's mean -eta sum_t c^{T-t} m_t as a 1-D law (blocks convolved).
std::map<double, double> last_iterate_law(const std::vector<Block>& bl, std::int64_t T, double eta, double c) {
  std::map<double, double> acc{{0.0, 1.0}};
  std::int64_t t0 = 0;
  for (const auto& b : bl) {
    std::map<double, double> block;
    for (const auto& o : b) {
      double x = 0;
      for (std::size_t k = 0; k < o.means.size(); ++k)
        x += -eta * std::pow(c, static_cast<double>(T - (t0 + static_cast<std::int64_t>(k) + 1))) * o.means[k];
      block[x] += o.prob;
    }
    std::map<double, double> next;
    for (const auto& [a, p] : acc)
      for (const auto& [x, w] : block) next[a + x] += p * w;
    acc = std::move(next);
    t0 += static_cast<std::int64_t>(b.front().means.size());
  }
  return acc;
}

// ---- exact delta(eps) of two laws ------------------------------------------------------

struct Exact {
  double value = 0, error = 0;
};

audit::GaussianMixture mixture(const std::map<double, double>& law, double sd) {
  audit::GaussianMixture g;
  g.sd = sd;
  for (const auto& [x, w] : law) g.atoms.push_back({static_cast<long double>(w), static_cast<long double>(x)});
  g.weight_error = 1e-14L;
  g.mean_error = 1e-14L * (1 + std::abs(static_cast<long double>(law.empty() ? 0 : law.rbegin()->first)));
  return g;
}

Exact exact_1d(const std::map<double, double>& p, const std::map<double, double>& q, double sd, double eps) {
  const auto c = audit::mixture_delta(mixture(p, sd), mixture(q, sd), eps);
  return {c.value, c.error};
}

// E_gamma(P || Q) for 2-D mixtures with identity covariance s^2: the inner line by the
// certified 1-D E_gamma, the outer by adaptive Gauss-Kronrod.
double e_gamma_2d(const Block& P, const Block& Q, double s, double eps, double* error) {
  double lo = 0, hi = 0;
  for (const auto* M : {&P, &Q})
    for (const auto& o : *M) {
      lo = std::min(lo, o.means[0]);
      hi = std::max(hi, o.means[0]);
    }
  lo -= 9 * s;
  hi += 9 * s;
  const double norm = 1.0 / (s * std::sqrt(2 * M_PI));
  double inner_error = 0;
  auto inner = [&](double y1) {
    audit::GaussianMixture a, b;
    a.sd = b.sd = s;
    for (const auto& o : P)
      a.atoms.push_back({static_cast<long double>(o.prob * norm * std::exp(-0.5 * std::pow((y1 - o.means[0]) / s, 2))),
                         static_cast<long double>(o.means[1])});
    for (const auto& o : Q)
      b.atoms.push_back({static_cast<long double>(o.prob * norm * std::exp(-0.5 * std::pow((y1 - o.means[0]) / s, 2))),
                         static_cast<long double>(o.means[1])});
    const auto c = audit::mixture_e_gamma(a, b, eps);
    inner_error = std::max(inner_error, c.error);
    return c.value;
  };
  double err = 0;
  const double v = boost::math::quadrature::gauss_kronrod<double, 31>::integrate(inner, lo, hi, 12, 1e-10, &err);
  // The outer rule's estimate, each inner value's certified error over the interval, and the
  // mass beyond +-9 s (< 2.3e-19 of each law).
  *error = err + inner_error * (hi - lo) + 1e-18;
  return v;
}

Exact exact_2d(const Block& P, const Block& Q, double s, double eps) {
  double e1 = 0, e2 = 0;
  const double a = e_gamma_2d(P, Q, s, eps, &e1), b = e_gamma_2d(Q, P, s, eps, &e2);
  return {std::max(a, b), std::max(e1, e2)};
}

// ---- instances ---------------------------------------------------------------------------

struct Shape {
  Sampling sampling;
  std::int64_t n, b, T;
  bool drop_last;
  double s;       // noise std in parameter space (eta = 1)
  double lambda;  // strong convexity of the last-iterate instance (0: linear)
};

Run run_of(const Shape& sh, Adjacency adjacency, Release release) {
  Run r;
  r.n = sh.n;
  r.batch_size = sh.b;
  r.steps = sh.T;
  r.sampling = sh.sampling;
  r.drop_last = sh.drop_last;
  r.eta = hsdp::Schedule(1.0);
  r.noise_std = hsdp::Schedule(sh.s);
  r.loss.lipschitz = 1.0;
  r.loss.smoothness = std::max(sh.lambda, 1e-3);
  r.loss.strong_convexity = sh.lambda;
  r.release = release;
  r.adjacency = adjacency;
  return r;
}

// The neighbouring pairs of value vectors: the user's data set (n values) and a neighbour.
struct Pair {
  std::vector<double> mine, other;
  std::string what;
};

std::vector<Pair> pairs(const Shape& sh, Adjacency adjacency) {
  std::vector<Pair> out;
  const auto n = static_cast<std::size_t>(sh.n);
  for (std::uint32_t mask = 0; mask < (1u << n); ++mask) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = (mask >> i & 1u) ? 1.0 : -1.0;
    if (adjacency == Adjacency::replace) {
      for (std::size_t i = 0; i < n; ++i) {
        auto w = v;
        w[i] = -w[i];
        out.push_back({v, w, fmt::format("values {:#x}, record {} flipped", mask, i)});
      }
      continue;
    }
    for (std::size_t i = 0; i < n; ++i) {
      auto w = v;
      w.erase(w.begin() + static_cast<std::ptrdiff_t>(i));
      if (!w.empty()) out.push_back({v, w, fmt::format("values {:#x}, record {} removed", mask, i)});
    }
    for (std::size_t i = 0; i <= n; ++i)
      for (const double z : {-1.0, 1.0}) {
        auto w = v;
        w.insert(w.begin() + static_cast<std::ptrdiff_t>(i), z);
        out.push_back({v, w, fmt::format("values {:#x}, {:+} added at {}", mask, z, i)});
      }
  }
  return out;
}

bool exchangeable(Sampling s) { return s != Sampling::cyclic; }

// The reduced set for exchangeable orders: the data set's law depends on the values as a
// multiset only, so one pair per (count of +1, neighbour kind) suffices.
std::vector<Pair> reduced(const Shape& sh, const std::vector<Pair>& all) {
  if (!exchangeable(sh.sampling)) return all;
  std::map<std::pair<std::vector<double>, std::vector<double>>, Pair> seen;
  for (const auto& p : all) {
    auto a = p.mine, b = p.other;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    seen.emplace(std::make_pair(a, b), p);
  }
  std::vector<Pair> out;
  for (auto& [k, p] : seen) out.push_back(p);
  return out;
}

std::vector<Block> blocks_of(const Shape& sh, const std::vector<double>& v) {
  auto bl = blocks(sh.sampling, v, sh.b, sh.T, sh.drop_last);
  if (sh.sampling == Sampling::poisson)
    set_poisson(bl, v, static_cast<double>(sh.b) / static_cast<double>(sh.n));
  return bl;
}

constexpr double kEps[] = {0.5, 1.0, 2.0};

// The bounds hsdp reports for the run at eps: name -> delta (applicable upper bounds).
std::map<std::string, double> bounds(const Run& run, double eps) {
  std::map<std::string, double> out;
  const auto report = hsdp::account(run, hsdp::Query::at_epsilon(eps));
  for (const auto& r : report.analyses)
    if (r.applicable && r.kind == hsdp::BoundKind::upper) out[r.name] = *r.delta;
  return out;
}

struct Tally {
  int comparisons = 0;
  double worst_ratio = 1e300;  // smallest bound / exact seen
  std::vector<std::string> violations;
};

void check_against(const std::map<std::string, double>& b, const Exact& ex, const std::string& where, Tally& tally) {
  for (const auto& [name, delta] : b) {
    ++tally.comparisons;
    if (ex.value > 1e-9) tally.worst_ratio = std::min(tally.worst_ratio, delta / ex.value);
    if (!(delta >= ex.value - ex.error))
      tally.violations.push_back(fmt::format("{} delta {:.10g} < exact {:.10g} (error {:.2g}): {}", name, delta,
                                             ex.value, ex.error, where));
  }
}

// Every iterate released: the exact delta at each eps over all pairs, against every bound.
void every_iterate(const Shape& sh, Adjacency adjacency, Tally& tally) {
  const Run run = run_of(sh, adjacency, Release::every);
  if (bounds(run, 1.0).empty()) return;  // nothing certified (add/remove refused): nothing to check
  std::map<double, Exact> worst;
  for (const auto& pr : reduced(sh, pairs(sh, adjacency))) {
    const Block P = sequences(blocks_of(sh, pr.mine)), Q = sequences(blocks_of(sh, pr.other));
    for (const double eps : kEps) {
      // Two steps of a random order: the 2-D quadrature at eps = 1 only (the slow case).
      if (sh.T == 2 && (P.size() > 1 || Q.size() > 1) && eps != 1.0) continue;
      Exact ex;
      if (P.size() == 1 && Q.size() == 1) {
        double d2 = 0;
        for (std::size_t t = 0; t < P[0].means.size(); ++t) d2 += std::pow(P[0].means[t] - Q[0].means[t], 2);
        ex.value = static_cast<double>(gdp_delta(std::sqrt(static_cast<long double>(d2)) / sh.s, eps));
        ex.error = 1e-15;
      } else if (sh.T == 1) {
        std::map<double, double> p1, q1;
        for (const auto& o : P) p1[o.means[0]] += o.prob;
        for (const auto& o : Q) q1[o.means[0]] += o.prob;
        ex = exact_1d(p1, q1, sh.s, eps);
      } else {
        ASSERT_EQ(sh.T, 2) << "random orders: T <= 2 for the exact release-every value";
        ex = exact_2d(P, Q, sh.s, eps);
      }
      if (ex.value > worst[eps].value) worst[eps] = ex;
    }
  }
  for (const auto& [eps, ex] : worst)
    check_against(bounds(run, eps), ex, fmt::format("every iterate, eps {}: {}", eps, run.summary()), tally);
}

// The last iterate (linear or strongly convex instance): the exact delta over all pairs.
void last_iterate(const Shape& sh, Adjacency adjacency, Tally& tally) {
  const Run run = run_of(sh, adjacency, Release::last);
  if (bounds(run, 1.0).empty()) return;
  const double c = 1.0 - sh.lambda;  // eta = 1
  double var = 0;
  for (std::int64_t t = 1; t <= sh.T; ++t) var += sh.s * sh.s * std::pow(c, 2.0 * static_cast<double>(sh.T - t));
  const double sd = std::sqrt(var);
  std::map<double, Exact> worst;
  for (const auto& pr : reduced(sh, pairs(sh, adjacency))) {
    const auto p = last_iterate_law(blocks_of(sh, pr.mine), sh.T, 1.0, c);
    const auto q = last_iterate_law(blocks_of(sh, pr.other), sh.T, 1.0, c);
    for (const double eps : kEps) {
      const Exact ex = exact_1d(p, q, sd, eps);
      if (ex.value > worst[eps].value) worst[eps] = ex;
    }
  }
  for (const double eps : kEps)
    check_against(bounds(run, eps), worst[eps], fmt::format("last iterate, eps {}: {}", eps, run.summary()), tally);
}

void expect_clean(const Tally& t, int min_comparisons) {
  EXPECT_GE(t.comparisons, min_comparisons);
  std::cout << "comparisons " << t.comparisons << ", smallest bound / exact " << t.worst_ratio << "\n";
  for (const auto& v : t.violations) ADD_FAILURE() << v;
}

// ---- the issue's measured instances ----------------------------------------------------

// Cyclic add/remove was charged C per step; the exact values (every iterate, delta 1e-5):
// n 4 b 2 T 60 std 4: eps 12.87; n 6 b 3 T 60 std 6: 7.41; n 4 b 1 T 60 std 4: 14.83. hsdp
// now refuses cyclic add/remove; this checks the exact computation reproduces them.
TEST(NeighboursExact, CyclicAddRemoveIsRefusedAndTheExactValuesAreReproduced) {
  struct Case { std::int64_t n, b; double s, eps; };
  for (const Case c : {Case{4, 2, 4, 12.87}, Case{6, 3, 6, 7.41}, Case{4, 1, 4, 14.83}}) {
    const Shape sh{Sampling::cyclic, c.n, c.b, 60, true, c.s, 0};
    double worst = 0;
    for (const auto& pr : pairs(sh, Adjacency::remove)) {
      const Block P = sequences(blocks_of(sh, pr.mine)), Q = sequences(blocks_of(sh, pr.other));
      double d2 = 0;
      for (std::size_t t = 0; t < P[0].means.size(); ++t) d2 += std::pow(P[0].means[t] - Q[0].means[t], 2);
      worst = std::max(worst, d2);
    }
    // eps(1e-5) of mu = sqrt(worst)/s, by bisection on the exact GDP curve.
    const long double mu = std::sqrt(static_cast<long double>(worst)) / c.s;
    long double lo = 0, hi = 100;
    for (int i = 0; i < 200; ++i) {
      const long double mid = (lo + hi) / 2;
      (gdp_delta(mu, mid) > 1e-5L ? lo : hi) = mid;
    }
    EXPECT_NEAR(static_cast<double>(hi), c.eps, 0.005) << "n " << c.n << " b " << c.b;
    const auto b = bounds(run_of(sh, Adjacency::remove, Release::every), 1.0);
    EXPECT_EQ(b.count("composition-pld"), 0u);
    EXPECT_EQ(b.count("composition-rdp"), 0u);
    const auto report = hsdp::account(run_of(sh, Adjacency::remove, Release::every), hsdp::Query::at_delta(1e-5));
    for (const auto& r : report.analyses)
      if (r.name == "composition-pld") EXPECT_NE(r.reason.find("cyclic"), std::string::npos) << r.reason;
  }
}

// Shuffled n = 2, b = 1, T = 2, std 1: exact delta(eps = 1) = 0.4046 under add/remove (2-D
// quadrature); hsdp printed 0.2862. b = 1 divides n: hsdp now refuses it.
TEST(NeighboursExact, ShuffledTwoRecordsTheIssuesValue) {
  const Shape sh{Sampling::shuffle, 2, 1, 2, true, 1.0, 0};
  double worst = 0;
  for (const auto& pr : reduced(sh, pairs(sh, Adjacency::remove))) {
    const Block P = sequences(blocks_of(sh, pr.mine)), Q = sequences(blocks_of(sh, pr.other));
    worst = std::max(worst, exact_2d(P, Q, 1.0, 1.0).value);
  }
  EXPECT_NEAR(worst, 0.4046, 5e-4);
  EXPECT_TRUE(bounds(run_of(sh, Adjacency::remove, Release::every), 1.0).empty());
}

// ---- every order x adjacency, every iterate released -----------------------------------

TEST(NeighboursExact, EveryIterateDeterministicOrders) {
  Tally t;
  for (const Adjacency a : {Adjacency::replace, Adjacency::remove}) {
    for (const Shape sh : {Shape{Sampling::full, 3, 3, 5, true, 0.7, 0}, Shape{Sampling::full, 5, 5, 12, true, 0.3, 0},
                           Shape{Sampling::full, 1, 1, 3, true, 1.0, 0}, Shape{Sampling::cyclic, 4, 2, 9, true, 1.5, 0},
                           Shape{Sampling::cyclic, 5, 2, 7, true, 1.0, 0}, Shape{Sampling::cyclic, 5, 3, 11, true, 2.0, 0}})
      every_iterate(sh, a, t);
  }
  expect_clean(t, 50);
}

TEST(NeighboursExact, EveryIterateRandomOrdersOneStep) {
  Tally t;
  for (const Adjacency a : {Adjacency::replace, Adjacency::remove}) {
    for (const Shape sh : {Shape{Sampling::poisson, 4, 2, 1, true, 0.6, 0}, Shape{Sampling::fixed, 4, 2, 1, true, 0.5, 0},
                           Shape{Sampling::fixed, 5, 3, 1, true, 0.4, 0}, Shape{Sampling::shuffle, 5, 2, 1, true, 0.5, 0},
                           Shape{Sampling::shuffle, 5, 3, 1, false, 0.5, 0}, Shape{Sampling::shuffle, 7, 3, 1, true, 0.4, 0}})
      every_iterate(sh, a, t);
  }
  expect_clean(t, 40);
}

TEST(NeighboursExact, EveryIterateRandomOrdersTwoSteps) {
  Tally t;
  for (const Adjacency a : {Adjacency::replace, Adjacency::remove}) {
    for (const Shape sh : {Shape{Sampling::shuffle, 5, 2, 2, true, 0.8, 0},   // l = 2: one epoch
                           Shape{Sampling::shuffle, 5, 3, 2, false, 0.8, 0},  // l = 2, partial batch of 2
                           Shape{Sampling::shuffle, 4, 3, 2, true, 0.6, 0},   // l = 1: two epochs
                           Shape{Sampling::fixed, 4, 2, 2, true, 0.6, 0}, Shape{Sampling::poisson, 3, 1, 2, true, 0.5, 0}})
      every_iterate(sh, a, t);
  }
  expect_clean(t, 30);
}

// ---- the last iterate (every analysis that applies), linear and strongly convex ------------

TEST(NeighboursExact, LastIterateEveryOrder) {
  Tally t;
  // Under the sanitizers (hsdp::testing::keep_cell) one lambda per (adjacency, shape),
  // alternating: every shape still runs under both adjacencies, linear under one and strongly
  // convex under the other. The sanitizers check memory and undefined behaviour on these paths; the
  // Release build checks the values on all 36 cells.
  for (const Adjacency a : {Adjacency::replace, Adjacency::remove}) {
    for (const double lambda : {0.0, 0.3}) {
      std::size_t shape = 0;
      for (const Shape sh : {Shape{Sampling::full, 4, 4, 6, true, 0.3, lambda},
                             Shape{Sampling::cyclic, 4, 2, 6, true, 0.6, lambda},
                             Shape{Sampling::shuffle, 5, 2, 6, true, 0.5, lambda},    // l = 2, 3 epochs
                             Shape{Sampling::shuffle, 5, 3, 4, false, 0.5, lambda},   // partial batch of 2
                             Shape{Sampling::shuffle, 7, 3, 6, false, 0.4, lambda},   // partial batch of 1
                             Shape{Sampling::shuffle, 7, 3, 4, true, 0.5, lambda},    // add/remove: coupling
                             Shape{Sampling::shuffle, 6, 4, 4, false, 0.5, lambda},   // add/remove, partial kept
                             Shape{Sampling::fixed, 4, 2, 3, true, 0.5, lambda},
                             Shape{Sampling::poisson, 4, 2, 3, true, 0.5, lambda}})
        if (hsdp::testing::keep_cell(shape++ + (lambda > 0) + (a == Adjacency::remove), 2))
          last_iterate({sh.sampling, sh.n, sh.b, sh.T, sh.drop_last, sh.s, lambda}, a, t);
    }
  }
  expect_clean(t, hsdp::testing::repetitions(100, 50));
}

// The coupling's conditions: shuffled add/remove is refused exactly when b divides n or n + 1
// (partial batch dropped), n - 1 or n (kept); cyclic always; fixed when b > n - 1.
TEST(NeighboursExact, AddRemoveRefusedWhereNotDerived) {
  auto applies = [](Sampling s, std::int64_t n, std::int64_t b, bool drop) {
    Shape sh{s, n, b, 3, drop, 1.0, 0};
    return !bounds(run_of(sh, Adjacency::remove, Release::every), 1.0).empty();
  };
  EXPECT_FALSE(applies(Sampling::shuffle, 12000, 1500, true));  // b | n: the README's main job
  EXPECT_FALSE(applies(Sampling::shuffle, 11999, 1500, true));  // b | n + 1
  EXPECT_TRUE(applies(Sampling::shuffle, 11998, 1500, true));
  EXPECT_FALSE(applies(Sampling::shuffle, 12001, 1500, false));  // b | n - 1
  EXPECT_FALSE(applies(Sampling::shuffle, 12000, 1500, false));  // b | n
  EXPECT_TRUE(applies(Sampling::shuffle, 12002, 1500, false));
  EXPECT_FALSE(applies(Sampling::shuffle, 9, 1, true));
  EXPECT_FALSE(applies(Sampling::shuffle, 9, 2, true));  // b = 2 divides n or n + 1 always
  EXPECT_FALSE(applies(Sampling::cyclic, 10, 3, true));
  EXPECT_FALSE(applies(Sampling::fixed, 10, 10, true));
  EXPECT_TRUE(applies(Sampling::fixed, 10, 9, true));
  EXPECT_TRUE(applies(Sampling::full, 10, 10, true));
  EXPECT_TRUE(applies(Sampling::poisson, 10, 3, true));
}

// ---- the trainer's own Poisson sampler under add/remove (issue 35) ----------------------

// The law of one Poisson step as the trainer draws it: each record of `v` (values +-1) in the
// batch with probability q (the sampler's own inclusion probability), the sum divided by the
// run's b, eta = 1: the released mean -sum/b, as a 1-D law. By counts: with k records of +1
// and m of -1 in the data set, the sum is Bin(k, q) - Bin(m, q) (the subsets grouped by how
// many of each they hold; poisson_law_by_subsets enumerates them one by one, for the check).
std::map<double, double> poisson_step_law(const std::vector<double>& v, double q, std::int64_t b) {
  const auto k = std::count(v.begin(), v.end(), 1.0), m = static_cast<std::ptrdiff_t>(v.size()) - k;
  auto binomial = [q](std::ptrdiff_t N) {
    std::vector<long double> p(static_cast<std::size_t>(N) + 1);
    for (std::ptrdiff_t j = 0; j <= N; ++j)
      p[static_cast<std::size_t>(j)] = std::exp(std::lgamma(N + 1.0L) - std::lgamma(j + 1.0L) - std::lgamma(N - j + 1.0L)) *
                                       std::pow(static_cast<long double>(q), j) *
                                       std::pow(1.0L - q, static_cast<long double>(N - j));
    return p;
  };
  const auto plus = binomial(k), minus = binomial(m);
  std::map<double, double> law;
  for (std::ptrdiff_t i = 0; i <= k; ++i)
    for (std::ptrdiff_t j = 0; j <= m; ++j)
      law[-static_cast<double>(i - j) / static_cast<double>(b)] +=
          static_cast<double>(plus[static_cast<std::size_t>(i)] * minus[static_cast<std::size_t>(j)]);
  return law;
}
std::map<double, double> poisson_law_by_subsets(const std::vector<double>& v, double q, std::int64_t b) {
  auto bl = blocks(Sampling::poisson, v, b, 1, true);
  set_poisson(bl, v, q);
  return last_iterate_law(bl, 1, 1.0, 1.0);
}

// The add/remove pairs of an exchangeable order, one per (count of +1, neighbour kind): the
// law of a Poisson step depends on the values as a multiset only (what reduced() keeps, without
// enumerating the 2^n value vectors first).
std::vector<Pair> poisson_pairs(std::int64_t n) {
  std::vector<Pair> out;
  for (std::int64_t k = 0; k <= n; ++k) {
    std::vector<double> v(static_cast<std::size_t>(n), -1.0);
    std::fill(v.begin(), v.begin() + k, 1.0);
    for (const double z : {-1.0, 1.0}) {
      auto added = v;
      added.push_back(z);
      out.push_back({v, added, fmt::format("{} of +1, {:+} added", k, z)});
      const auto at = std::find(v.begin(), v.end(), z);
      if (at == v.end() || n == 1) continue;
      auto removed = v;
      removed.erase(removed.begin() + (at - v.begin()));
      out.push_back({v, removed, fmt::format("{} of +1, a {:+} removed", k, z)});
    }
  }
  return out;
}

// The rate the trainer's sampler draws at on a data set of `records` records, for a run whose
// public n is `n` (TrainConfig::public_n, or the data's count treated as public).
double trainer_rate(std::int64_t records, std::int64_t b, std::int64_t n) {
  hsdp::random::Csprng rng(hsdp::random::seed_key(1));
  return hsdp::train::BatchSampler(Sampling::poisson, records, b, rng, true, n).inclusion_probability();
}

// A trained run on `records` records of one feature, Poisson batches of b, T = 1, with the
// run's n stated as `n` (the neighbouring data set trained with the constants of the run).
hsdp::train::TrainResult trained(std::int64_t records, std::int64_t b, std::optional<std::int64_t> n) {
  hsdp::data::Dataset ds;
  ds.n = static_cast<std::size_t>(records);
  ds.d = 1;
  for (std::int64_t i = 0; i < records; ++i) {
    ds.x.push_back(i % 2 ? 1.0 : -1.0);
    ds.y.push_back(i % 2 ? 1.0 : -1.0);
  }
  hsdp::train::TrainConfig c;
  c.loss.kind = hsdp::train::LossKind::logistic;
  c.bias = false;
  c.sampling = Sampling::poisson;
  c.batch_size = b;
  c.steps = 1;
  c.no_noise = true;  // the constants and the sampler are the run's; the report is checked below
  c.seed = 1;
  c.adjacency = Adjacency::remove;
  c.public_n = n;
  return hsdp::train::train(ds, c);
}

// The issue's instances (n = 4, b = 2 and n = 16, b = 4; std 1, T = 1): every neighbour (a
// record removed, or one added) is trained with the run's constants, so the trainer's sampler
// draws at the same q on both sides, and the exact add/remove delta of that law (brute force
// over subsets, certified mixture E_gamma) is below every bound the report prints. With the
// neighbour at its own rate b/n' (what `hsdp train` did) the exact delta exceeds the printed
// one at n = 4 (the issue: 7.8e-3 against 2.1e-4): the comparison can fail.
TEST(NeighboursExact, TrainersPoissonSamplerKeepsTheRunsRateUnderAddRemove) {
  for (const auto [n, b] : {std::pair<std::int64_t, std::int64_t>{4, 2}, {16, 4}}) {
    const Shape sh{Sampling::poisson, n, b, 1, true, 1.0, 0};
    const hsdp::Run run = run_of(sh, Adjacency::remove, Release::last);
    const double q = trainer_rate(n, b, n);
    EXPECT_LE(q, static_cast<double>(b) / static_cast<double>(n));
    EXPECT_NEAR(q, static_cast<double>(b) / static_cast<double>(n), 1e-11);
    // The trainer itself: a neighbour trained with the run's n reports the same n and rate.
    for (const std::int64_t records : {n - 1, n + 1}) {
      EXPECT_EQ(trainer_rate(records, b, n), q);
      const auto r = trained(records, b, n);
      EXPECT_EQ(r.run.n, n);
      ASSERT_TRUE(r.sampling_rate);
      EXPECT_EQ(*r.sampling_rate, q);
      EXPECT_TRUE(r.public_n_stated);
    }
    // The sampler's draws follow that law: each of n - 1 records in a batch with frequency q,
    // two records together with q^2 (independence), over 20000 batches (5 standard errors).
    {
      hsdp::random::Csprng rng(hsdp::random::seed_key(7));
      hsdp::train::BatchSampler sampler(Sampling::poisson, n - 1, b, rng, true, n);
      constexpr int kDraws = 20000;
      std::vector<double> in(static_cast<std::size_t>(n - 1), 0.0);
      double both = 0;
      std::vector<std::int64_t> batch;
      for (int t = 1; t <= kDraws; ++t) {
        sampler.next(t, batch);
        for (const auto i : batch) in[static_cast<std::size_t>(i)] += 1.0 / kDraws;
        both += (std::count(batch.begin(), batch.end(), 0) && std::count(batch.begin(), batch.end(), 1)) ? 1.0 / kDraws : 0.0;
      }
      for (const double f : in) EXPECT_NEAR(f, q, 5 * std::sqrt(q * (1 - q) / kDraws));
      EXPECT_NEAR(both, q * q, 5 * std::sqrt(q * q * (1 - q * q) / kDraws));
    }
    const auto own = trained(n, b, std::nullopt);
    EXPECT_EQ(own.run.n, n);
    EXPECT_EQ(*own.sampling_rate, q);
    EXPECT_FALSE(own.public_n_stated);

    // The law by counts is the law over the 2^n subsets.
    {
      std::vector<double> v(static_cast<std::size_t>(n), -1.0);
      std::fill(v.begin(), v.begin() + n / 3, 1.0);
      const auto by_counts = poisson_step_law(v, q, b), by_subsets = poisson_law_by_subsets(v, q, b);
      ASSERT_EQ(by_counts.size(), by_subsets.size());
      for (auto a = by_counts.begin(), c = by_subsets.begin(); a != by_counts.end(); ++a, ++c) {
        EXPECT_EQ(a->first, c->first);
        EXPECT_NEAR(a->second, c->second, 1e-14);
      }
    }
    struct Laws {
      std::map<double, double> mine, same, own;
    };
    std::vector<Laws> laws;
    for (const auto& pr : poisson_pairs(n)) {
      const auto m = static_cast<std::int64_t>(pr.other.size());
      laws.push_back({poisson_step_law(pr.mine, trainer_rate(n, b, n), b),
                      poisson_step_law(pr.other, trainer_rate(m, b, n), b),
                      poisson_step_law(pr.other, trainer_rate(m, b, m), b)});
    }
    Tally tally;
    double worst_own_rate_excess = 0;
    for (const double eps : kEps) {
      const auto b_eps = bounds(run, eps);
      ASSERT_FALSE(b_eps.empty());
      Exact worst, worst_own;
      for (const Laws& l : laws) {
        const Exact ex = exact_1d(l.mine, l.same, sh.s, eps);
        if (ex.value > worst.value) worst = ex;
        const Exact ex_own = exact_1d(l.mine, l.own, sh.s, eps);
        if (ex_own.value > worst_own.value) worst_own = ex_own;
      }
      check_against(b_eps, worst, fmt::format("trainer's Poisson sampler, n {} b {}, eps {}", n, b, eps), tally);
      double smallest = 1e300;
      for (const auto& [name, delta] : b_eps) smallest = std::min(smallest, delta);
      worst_own_rate_excess = std::max(worst_own_rate_excess, (worst_own.value - worst_own.error) / smallest);
      std::cout << fmt::format("n {} b {} eps {}: exact {:.3g} (neighbour at its own rate {:.3g}), smallest bound {:.3g}\n",
                               n, b, eps, worst.value, worst_own.value, smallest);
    }
    expect_clean(tally, 3);
    if (n == 4) EXPECT_GT(worst_own_rate_excess, 1.0);
  }
}

}  // namespace
