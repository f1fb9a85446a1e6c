// shifted-interpolation on shuffled batches (docs/analyses/shifted-interpolation.md,
// "Shuffled batches"): the O(1) epoch program against the dense program, every position
// sequence of small runs against the shipped worst case and position average, the worst case
// against the cyclic bound, the README main job's run, and the extremes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "hsdp/accountant.hpp"
#include "hsdp/analysis/analysis.hpp"
#include "hsdp/divergence/hockey_stick.hpp"
#include "hsdp/divergence/shift_program.hpp"
#include "hsdp/run.hpp"
#include "fixtures.hpp"

namespace {

using hsdp::testing::smooth_run;

constexpr double kInf = std::numeric_limits<double>::infinity();

const hsdp::AnalysisPtr& si() {
  static const auto a = hsdp::find_analysis("shifted-interpolation");
  return a;
}


std::optional<double> detail(const hsdp::AnalysisResult& r, const std::string& name) {
  for (const auto& d : r.details)
    if (d.name == name) return d.value;
  return std::nullopt;
}

/// The dense shift sequence of an epoch structure (the program's own input).
std::vector<double> dense(double h, std::int64_t l, std::int64_t J, std::int64_t r,
                          std::optional<std::int64_t> final_position) {
  std::vector<double> s(static_cast<std::size_t>(J * l + r), 0.0);
  for (std::int64_t e = 1; e <= J; ++e) s[static_cast<std::size_t>(e * l - 1)] = h;
  if (final_position) s[static_cast<std::size_t>(J * l + *final_position - 1)] += h;
  return s;
}

TEST(ShiftProgram, EpochStructureEqualsTheDenseProgram) {
  std::mt19937_64 g(11);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int checked = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::int64_t l = 1 + static_cast<std::int64_t>(9 * u(g));
    const std::int64_t J = static_cast<std::int64_t>(40 * u(g));
    const std::int64_t r = 1 + static_cast<std::int64_t>(static_cast<double>(l) * u(g));
    std::optional<std::int64_t> f;
    if (u(g) < 0.8) f = 1 + static_cast<std::int64_t>(static_cast<double>(r) * u(g));
    const double pick = u(g);
    const double c = pick < 0.2 ? 1.0 : pick < 0.3 ? 0.0 : pick < 0.5 ? 1 - 1e-6 * u(g) : u(g);
    const double h = std::pow(10.0, 2 * u(g) - 1);
    const double gap = u(g) < 0.5 ? 0.0 : std::pow(10.0, 3 * u(g) - 1);
    const double fast = hsdp::div::shift_energy_epochs(c, h, l, J, r, f, gap);
    const double exact = hsdp::div::shift_energy(c, gap, dense(h, l, J, r, f));
    // Both round up; the O(1) form by 1e-12 relative.
    EXPECT_GE(fast, exact * (1 - 1e-13) - 1e-320) << "c=" << c << " l=" << l << " J=" << J << " r=" << r;
    EXPECT_LE(fast, exact * (1 + 1e-10) + 1e-300) << "c=" << c << " l=" << l << " J=" << J << " r=" << r;
    ++checked;
  }
  EXPECT_EQ(checked, 4000);
  // (Q2) is the all-last sequence of whole epochs.
  for (double c : {1.0, 0.99, 0.7})
    EXPECT_NEAR(hsdp::div::shift_energy_epochs(c, 0.3, 8, 35, 8, 8, 0.0),
                hsdp::div::shift_energy_cyclic_last(c, 0.3, 8, 36), 1e-12);
  EXPECT_THROW(hsdp::div::shift_energy_epochs(1.0, 1.0, 4, 2, 5, std::nullopt, 0.0), std::invalid_argument);
  EXPECT_THROW(hsdp::div::shift_energy_epochs(1.0, 1.0, 4, 2, 4, 5, 0.0), std::invalid_argument);
  EXPECT_THROW(hsdp::div::shift_energy_epochs(1.0, -1.0, 4, 2, 4, 1, 0.0), std::invalid_argument);
  // Huge horizons stay finite and O(1).
  const double big = hsdp::div::shift_energy_epochs(1.0, 1.0, 8, std::int64_t{1} << 37, 8, 8, 0.0);
  EXPECT_NEAR(big, 1.0 + static_cast<double>(std::int64_t{1} << 37) / 8.0, 1e-10 * big);
  const double sc = hsdp::div::shift_energy_epochs(0.999, 1.0, 8, std::int64_t{1} << 37, 8, 8, 0.0);
  EXPECT_NEAR(sc, hsdp::div::shift_energy_cyclic_last(0.999, 1.0, 8, (std::int64_t{1} << 37) + 1), 1e-9);
}

/// Every position sequence of a shuffled run: per epoch the record is at one of the l
/// positions (probability b/n each) or, when l b < n, in no batch (1 - l b/n); the last,
/// possibly partial, epoch of r steps reads it at j <= r (b/n each) or not (1 - r b/n).
struct Sequence {
  std::vector<double> shifts;
  double probability;
};

std::vector<Sequence> all_sequences(std::int64_t n, std::int64_t b, std::int64_t t, double h) {
  const std::int64_t l = n / b, epochs = (t + l - 1) / l;
  const double pos = static_cast<double>(b) / static_cast<double>(n);
  std::vector<Sequence> out;
  std::vector<std::int64_t> p(static_cast<std::size_t>(epochs), 0);  // 0 = not read
  std::function<void(std::int64_t, double)> rec = [&](std::int64_t e, double prob) {
    if (e == epochs) {
      Sequence s{std::vector<double>(static_cast<std::size_t>(t), 0.0), prob};
      for (std::int64_t k = 0; k < epochs; ++k)
        if (p[static_cast<std::size_t>(k)] > 0) s.shifts[static_cast<std::size_t>(k * l + p[static_cast<std::size_t>(k)] - 1)] = h;
      out.push_back(std::move(s));
      return;
    }
    const std::int64_t steps = std::min(l, t - e * l);
    for (std::int64_t j = 1; j <= steps; ++j) {
      p[static_cast<std::size_t>(e)] = j;
      rec(e + 1, prob * pos);
    }
    const double none = 1.0 - static_cast<double>(steps) * pos;
    if (none > 1e-15) {
      p[static_cast<std::size_t>(e)] = 0;
      rec(e + 1, prob * none);
    }
  };
  rec(0, 1.0);
  return out;
}

/// The lemma's best value for one fixed sequence: from W_0, and from a gap D at EVERY tau.
double sequence_energy(double c, double D, const std::vector<double>& s) {
  double best = hsdp::div::shift_energy(c, 0.0, s);
  if (std::isfinite(D))
    for (std::size_t tau = 1; tau < s.size(); ++tau)
      best = std::min(best, hsdp::div::shift_energy(
                                c, D, std::vector<double>(s.begin() + static_cast<std::ptrdiff_t>(tau), s.end())));
  return best;
}

// Deliverable: no position sequence is worse than the sequence the bound uses, and the
// position average is at least the average over all sequences of their own bounds.
TEST(ShuffledBatches, EverySequenceOfSmallRunsIsCoveredExhaustively) {
  int configurations = 0, sequences = 0;
  for (std::int64_t l : {1, 2, 3, 4, 5, 6})
    for (std::int64_t E : {1, 2, 3, 4}) {
      if (l == 6 && E == 4) continue;  // 7^4 sequences x 24 windows: covered by l = 5
      for (std::int64_t extra : {0, 1})      // n = l b (+ b - 1 records left out per epoch)
        for (std::int64_t cut : {0, 1}) {    // whole epochs, or the last one a step short
          if (cut == 1 && l == 1) continue;
          const std::int64_t b = 2, n = l * b + extra, t = E * l - cut;
          for (double c : {1.0, 0.9, 0.6})
            for (double D : {kInf, 0.7}) {
              const double eta = 1.0, beta = 1.0;
              const double lambda = 1.0 - c;  // c = max(|1 - eta lambda|, |1 - eta beta|) = 1 - lambda
              const double s = 0.8;
              const auto run = smooth_run(hsdp::Sampling::shuffle, n, b, t, eta, s, beta, lambda, D);
              const double h = eta * 2.0 / static_cast<double>(b);
              const auto res = si()->evaluate(run, hsdp::Query::at_delta(1e-5));
              ASSERT_TRUE(res.applicable) << res.reason;
              const double mu_shipped = *detail(res, "mu");
              const auto seqs = all_sequences(n, b, t, h);
              double worst = 0.0, total = 0.0;
              std::vector<double> energies;
              for (const auto& q : seqs) {
                energies.push_back(sequence_energy(c, D, q.shifts));
                worst = std::max(worst, energies.back());
                total += q.probability;
              }
              ASSERT_NEAR(total, 1.0, 1e-12);
              // (a) the worst case: never below any sequence; equal without windows.
              EXPECT_GE(mu_shipped, std::sqrt(worst) / s * (1 - 1e-12))
                  << "l=" << l << " E=" << E << " n=" << n << " t=" << t << " c=" << c << " D=" << D;
              if (!std::isfinite(D)) EXPECT_NEAR(mu_shipped, std::sqrt(worst) / s, 1e-8);
              // (b) the position average: delta(eps) >= sum_p P(p) theta_eps(mu(p)).
              for (double eps : {0.0, 0.3, 1.0, 3.0}) {
                const auto at = si()->evaluate(run, hsdp::Query::at_epsilon(eps));
                double avg = 0.0;
                for (std::size_t i = 0; i < seqs.size(); ++i)
                  avg += seqs[i].probability * hsdp::div::theta(eps, std::sqrt(energies[i]) / s);
                EXPECT_GE(*at.delta, avg * (1 - 1e-9))
                    << "l=" << l << " E=" << E << " n=" << n << " t=" << t << " c=" << c << " eps=" << eps;
                // ... and never above the worst case alone.
                EXPECT_LE(*at.delta, hsdp::div::theta(eps, mu_shipped) * (1 + 1e-8) + 1e-300);
              }
              ++configurations;
              sequences += static_cast<int>(seqs.size());
            }
        }
    }
  EXPECT_GT(configurations, 400);
  EXPECT_GT(sequences, 50000);
}

TEST(ShuffledBatches, WorstCaseIsTheCyclicBound) {
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < 200; ++i) {
    const std::int64_t b = 1 + static_cast<std::int64_t>(6 * u(g));
    const std::int64_t l = 2 + static_cast<std::int64_t>(10 * u(g));
    const std::int64_t E = 1 + static_cast<std::int64_t>(30 * u(g));
    const double eta = 0.05 + u(g), beta = 1.0 / eta * (0.2 + 1.8 * u(g));
    const double lambda = u(g) < 0.4 ? 0.0 : beta * u(g);
    const double D = u(g) < 0.5 ? kInf : std::pow(10.0, 2 * u(g) - 1);
    const double s = std::pow(10.0, 2 * u(g) - 1);
    auto run = smooth_run(hsdp::Sampling::cyclic, b * l, b, E * l, eta, s, beta, lambda, D);
    const auto cyc = si()->evaluate(run, hsdp::Query::at_delta(1e-5));
    run.sampling = hsdp::Sampling::shuffle;
    const auto shu = si()->evaluate(run, hsdp::Query::at_delta(1e-5));
    ASSERT_TRUE(cyc.applicable && shu.applicable) << cyc.reason << shu.reason;
    // Same windows (whole epochs from a gap D) and the same worst sequence.
    EXPECT_NEAR(*detail(shu, "mu"), *detail(cyc, "mu"), 1e-8 * *detail(cyc, "mu"));
    EXPECT_LE(*shu.epsilon, *cyc.epsilon);
    EXPECT_LE(*detail(shu, "mu"), *detail(shu, "composition_mu") * (1 + 1e-8));
  }
}

// The README main job's run with --sampling shuffle (issue: composition-pld 9.76 and
// shifted-interpolation not applicable before; cyclic at the same noise 0.99994).
TEST(ShuffledBatches, MainJobRunIsCertifiedAtMostTheCyclicValue) {
  auto run = smooth_run(hsdp::Sampling::shuffle, 12000, 1500, 288, 3.96, 3.96 * 0.0163098763, 0.5,
                      0.0, 200.0);
  run.loss.lipschitz = std::sqrt(2.0);
  run.dimension = 785;
  const auto report = hsdp::account(run, hsdp::Query::at_delta(1e-5));
  ASSERT_TRUE(report.best);
  EXPECT_EQ(report.analyses[*report.best].name, "shifted-interpolation");
  const auto shu = si()->evaluate(run, hsdp::Query::at_delta(1e-5));
  run.sampling = hsdp::Sampling::cyclic;
  const auto cyc = si()->evaluate(run, hsdp::Query::at_delta(1e-5));
  EXPECT_NEAR(*cyc.epsilon, 0.9999359552, 1e-9);
  EXPECT_NEAR(*detail(shu, "worst_case_epsilon"), *cyc.epsilon, 1e-9);
  EXPECT_LE(*shu.epsilon, *cyc.epsilon);
  // c = 1, l = 8: the last-epoch classes j <= 4 have E = h^2 ((E-2)/l + 4/(l+1)), j >= 5
  // h^2 ((E-2)/l + 1/j + 1/(l-j+1)) (the taut string's closed form at c = 1, docs).
  const double h = 3.96 * 2 * std::sqrt(2.0) / 1500, s = 3.96 * 0.0163098763;
  const double base = 34.0 / 8.0;
  std::vector<double> mus;
  for (int j = 1; j <= 8; ++j)
    mus.push_back(h / s * std::sqrt(base + (j <= 4 ? 4.0 / 9.0 : 1.0 / j + 1.0 / (9 - j))));
  run.sampling = hsdp::Sampling::shuffle;
  for (double eps : {0.5, 0.9, 1.5}) {
    double avg = 0.0;
    for (double mu : mus) avg += hsdp::div::theta(eps, mu) / 8.0;
    const auto d = si()->evaluate(run, hsdp::Query::at_epsilon(eps));
    // Reported deltas are rounded up (1 + 1e-9, then 10 digits).
    EXPECT_GE(*d.delta, avg) << eps;
    EXPECT_LE(*d.delta, avg * (1 + 3e-9)) << eps;
  }
}

TEST(ShuffledBatches, ExtremesAreFiniteOrInfiniteNeverNan) {
  struct Case { std::int64_t n, b, t; double s, lambda, D; };
  const std::vector<Case> cases{
      {std::int64_t{1} << 40, 1, std::int64_t{1} << 40, 1.0, 0.0, kInf},  // l = 2^40, one epoch
      {1000, 10, std::int64_t{1} << 40, 0.01, 0.0, kInf},                 // 2^40 steps, c = 1
      {1000, 10, std::int64_t{1} << 40, 0.01, 1e-12, 3.0},                // c = 1 - 1e-12, windows
      {1000, 10, (std::int64_t{1} << 40) + 7, 0.01, 0.3, kInf},           // partial last epoch
      {1000, 999, 1000000, 1e-300, 0.0, kInf},                            // l = 1, tiny noise
      {1000, 3, 5000, 1e300, 0.0, 1.0},                                   // huge noise
      {7, 3, 5, 1.0, 0.999, kInf},                                        // c ~ 0, b not dividing n
  };
  for (const auto& cs : cases) {
    const auto run = smooth_run(hsdp::Sampling::shuffle, cs.n, cs.b, cs.t, 1.0, cs.s, 1.0, cs.lambda, cs.D);
    for (double delta : {1e-300, 1e-5, 0.5}) {
      const auto r = si()->evaluate(run, hsdp::Query::at_delta(delta));
      ASSERT_TRUE(r.applicable) << r.reason;
      ASSERT_TRUE(r.epsilon && !std::isnan(*r.epsilon)) << cs.n << " " << cs.t;
      EXPECT_GE(*r.epsilon, 0.0);
    }
    double last = kInf;
    for (double eps : {0.0, 1e-9, 1.0, 60.0, 700.0}) {
      const auto r = si()->evaluate(run, hsdp::Query::at_epsilon(eps));
      ASSERT_TRUE(r.delta && !std::isnan(*r.delta));
      EXPECT_LE(*r.delta, last);
      last = *r.delta;
    }
  }
  // Huge noise: nothing leaks; tiny noise: no finite guarantee at small delta.
  auto quiet = smooth_run(hsdp::Sampling::shuffle, 1000, 3, 5000, 1.0, 1e300, 1.0, 0.0, 1.0);
  EXPECT_EQ(*si()->evaluate(quiet, hsdp::Query::at_delta(1e-5)).epsilon, 0.0);
  auto loud = smooth_run(hsdp::Sampling::shuffle, 1000, 999, 1000000, 1.0, 1e-300, 1.0, 0.0, kInf);
  EXPECT_EQ(*si()->evaluate(loud, hsdp::Query::at_delta(1e-5)).epsilon, kInf);
}

// ---- An independent solver of the shift program (docs/analyses/shifted-interpolation.md):
// min sum a_k^2 over a in R^S subject to the gaps b_k(a) = c^k b_0 + sum_{i<=k} c^{k-i}
// (s_i - a_i) >= 0 for k < S and b_S(a) = 0. A convex QP: its minimiser solves the equality
// problem of its active set, and every feasible equality solution is >= the minimum, so the
// minimum over all 2^(S-1) active sets of the feasible minimum-norm solutions is the optimum
// (no taut string, no hull: Gaussian elimination in long double). Its a must come out >= 0
// (the sign constraint the docs drop).
struct Enumerated {
  long double energy = std::numeric_limits<long double>::infinity();
  long double min_a = 0;
};

Enumerated enumerate_program(double c, double gap, const std::vector<double>& s) {
  using ld = long double;
  const std::size_t S = s.size();
  // Row k (1-based) of the gap map: b_k = const_k - sum_{i<=k} c^{k-i} a_i.
  std::vector<std::vector<ld>> G(S + 1, std::vector<ld>(S, 0.0L));
  std::vector<ld> cst(S + 1, 0.0L);
  for (std::size_t k = 1; k <= S; ++k) {
    cst[k] = std::pow(static_cast<ld>(c), static_cast<ld>(k)) * gap;
    for (std::size_t i = 1; i <= k; ++i) {
      const ld w = std::pow(static_cast<ld>(c), static_cast<ld>(k - i));
      cst[k] += w * s[i - 1];
      G[k][i - 1] = w;
    }
  }
  Enumerated best;
  for (std::uint32_t mask = 0; mask < (1u << (S - 1)); ++mask) {
    std::vector<std::size_t> rows{S};
    for (std::size_t k = 1; k < S; ++k)
      if (mask >> (k - 1) & 1u) rows.push_back(k);
    // a = G_A^T y with (G_A G_A^T) y = cst_A: the minimum-norm solution of G_A a = cst_A.
    const std::size_t m = rows.size();
    std::vector<std::vector<ld>> M(m, std::vector<ld>(m + 1, 0.0L));
    for (std::size_t r = 0; r < m; ++r) {
      for (std::size_t q = 0; q < m; ++q)
        for (std::size_t i = 0; i < S; ++i) M[r][q] += G[rows[r]][i] * G[rows[q]][i];
      M[r][m] = cst[rows[r]];
    }
    bool singular = false;
    for (std::size_t col = 0; col < m && !singular; ++col) {
      std::size_t piv = col;
      for (std::size_t r = col + 1; r < m; ++r)
        if (std::abs(M[r][col]) > std::abs(M[piv][col])) piv = r;
      if (std::abs(M[piv][col]) < 1e-300L) { singular = true; break; }
      std::swap(M[col], M[piv]);
      for (std::size_t r = 0; r < m; ++r) {
        if (r == col) continue;
        const ld f = M[r][col] / M[col][col];
        for (std::size_t q = col; q <= m; ++q) M[r][q] -= f * M[col][q];
      }
    }
    if (singular) continue;
    std::vector<ld> a(S, 0.0L);
    for (std::size_t r = 0; r < m; ++r) {
      const ld y = M[r][m] / M[r][r];
      for (std::size_t i = 0; i < S; ++i) a[i] += G[rows[r]][i] * y;
    }
    bool feasible = true;
    for (std::size_t k = 1; k < S && feasible; ++k) {
      ld b = cst[k];
      for (std::size_t i = 0; i < S; ++i) b -= G[k][i] * a[i];
      if (b < -1e-12L * (1 + std::abs(cst[k]))) feasible = false;
    }
    if (!feasible) continue;
    ld e = 0;
    for (const ld x : a) e += x * x;
    if (e < best.energy) {
      best.energy = e;
      best.min_a = *std::min_element(a.begin(), a.end());
    }
  }
  return best;
}

TEST(ShiftProgram, AnIndependentActiveSetEnumerationAgrees) {
  std::mt19937_64 g(29);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int checked = 0;
  for (int i = 0; i < 1500; ++i) {
    const std::size_t S = 1 + static_cast<std::size_t>(10 * u(g));
    std::vector<double> s(S);
    for (auto& x : s) x = u(g) < 0.5 ? 0.0 : std::pow(10.0, 2 * u(g) - 1);
    const double pick = u(g);
    const double c = pick < 0.25 ? 1.0 : pick < 0.3 ? 0.0 : u(g);
    const double gap = u(g) < 0.5 ? 0.0 : std::pow(10.0, 2 * u(g) - 1);
    const auto ref = enumerate_program(c, gap, s);
    const double fast = hsdp::div::shift_energy(c, gap, s);
    ASSERT_TRUE(std::isfinite(static_cast<double>(ref.energy)));
    EXPECT_NEAR(fast, static_cast<double>(ref.energy), 1e-9 * static_cast<double>(ref.energy) + 1e-15)
        << "S=" << S << " c=" << c << " gap=" << gap;
    EXPECT_GE(fast, static_cast<double>(ref.energy) * (1 - 1e-12));  // never below the optimum
    EXPECT_GE(ref.min_a, -1e-9L);  // the optimum keeps every a_k >= 0
    ++checked;
  }
  EXPECT_EQ(checked, 1500);
  // The epoch-structured program (with a final shift of its own size) against the enumeration.
  for (int i = 0; i < 600; ++i) {
    const std::int64_t l = 1 + static_cast<std::int64_t>(4 * u(g));
    const std::int64_t J = static_cast<std::int64_t>(3 * u(g));
    const std::int64_t r = 1 + static_cast<std::int64_t>(static_cast<double>(l) * u(g));
    if (J * l + r > 10) continue;
    std::optional<std::int64_t> f;
    if (u(g) < 0.8) f = 1 + static_cast<std::int64_t>(static_cast<double>(r) * u(g));
    const double c = u(g) < 0.3 ? 1.0 : u(g);
    const double h = std::pow(10.0, 2 * u(g) - 1), hf = std::pow(10.0, 2 * u(g) - 1);
    const double gap = u(g) < 0.5 ? 0.0 : u(g);
    std::vector<double> s(static_cast<std::size_t>(J * l + r), 0.0);
    for (std::int64_t e = 1; e <= J; ++e) s[static_cast<std::size_t>(e * l - 1)] = h;
    if (f) s[static_cast<std::size_t>(J * l + *f - 1)] += hf;
    const auto ref = enumerate_program(c, gap, s);
    const double fast = hsdp::div::shift_energy_epochs(c, h, l, J, r, f, hf, gap);
    EXPECT_NEAR(fast, static_cast<double>(ref.energy), 1e-9 * static_cast<double>(ref.energy) + 1e-15)
        << "l=" << l << " J=" << J << " r=" << r << " c=" << c;
    EXPECT_GE(fast, static_cast<double>(ref.energy) * (1 - 1e-12));
  }
}

// The position average with more than 128 last-epoch positions is bucketed (each bucket at its
// last position). Its value against the unbucketed average, computed two independent ways: by
// shift_energy_epochs at every position, and by the closed form at c = 1 (docs: E_j = h^2
// ((E-2)/l + 1/j + 1/(l-j+1)) for j >= (l+1)/2, h^2 ((E-2)/l + 4/(l+1)) below).
TEST(ShuffledBatches, BucketedAverageAgainstEveryPosition) {
  const std::int64_t n = 600, b = 2, l = 300, E = 3;  // 300 positions: 128 buckets
  const double eta = 1.0, s = 0.05;
  const double h = eta * 2.0 / static_cast<double>(b);
  const auto run = smooth_run(hsdp::Sampling::shuffle, n, b, l * E, eta, s, 1.0, 0.0);
  const double p = static_cast<double>(b) / static_cast<double>(n);
  for (const double eps : {0.1, 0.5, 1.0, 2.0}) {
    long double by_program = 0, by_formula = 0;
    for (std::int64_t j = 1; j <= l; ++j) {
      const double e1 = hsdp::div::shift_energy_epochs(1.0, h, l, E - 1, l, j, 0.0);
      const double jd = static_cast<double>(j), ld_ = static_cast<double>(l), Ed = static_cast<double>(E);
      const double e2 = h * h * ((Ed - 2) / ld_ + (jd >= (ld_ + 1) / 2 ? 1 / jd + 1 / (ld_ - jd + 1) : 4 / (ld_ + 1)));
      EXPECT_NEAR(e1, e2, 1e-9 * e2) << "j=" << j;
      by_program += p * std::exp(hsdp::div::log_theta(eps, std::sqrt(e1) / s));
      by_formula += p * std::exp(hsdp::div::log_theta(eps, std::sqrt(e2) / s));
    }
    const auto r = si()->evaluate(run, hsdp::Query::at_epsilon(eps));
    ASSERT_TRUE(r.applicable) << r.reason;
    // An upper bound of the unbucketed average (each bucket at its worst position), and close
    // to it: the energies of neighbouring positions differ by O(h^2 / l^2).
    EXPECT_GE(*r.delta, static_cast<double>(by_program) * (1 - 1e-9));
    EXPECT_GE(*r.delta, static_cast<double>(by_formula) * (1 - 1e-9));
    EXPECT_LE(*r.delta, static_cast<double>(by_program) * 1.02) << "eps " << eps;
    EXPECT_EQ(detail(r, "position_classes").value_or(0), 128.0);
  }
}

// ---- The earlier epochs averaged by type (docs, "Shuffled batches", section 7).

/// Dense two-chain sequence: h1 at the last step of epochs 1..J1, h2 of epochs J1+1..J1+J2,
/// then the final shift at (J1 + J2) l + final_position.
std::vector<double> dense_two(std::int64_t l, std::int64_t J1, double h1, std::int64_t J2, double h2,
                              std::int64_t r, std::optional<std::int64_t> f, double hf) {
  std::vector<double> s(static_cast<std::size_t>((J1 + J2) * l + r), 0.0);
  for (std::int64_t e = 1; e <= J1 + J2; ++e) s[static_cast<std::size_t>(e * l - 1)] = e <= J1 ? h1 : h2;
  if (f) s[static_cast<std::size_t>((J1 + J2) * l + *f - 1)] += hf;
  return s;
}

TEST(ShiftProgram, TwoChainsEqualTheDenseProgram) {
  std::mt19937_64 g(38);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int checked = 0;
  for (int i = 0; i < 5000; ++i) {
    const std::int64_t l = 1 + static_cast<std::int64_t>(8 * u(g));
    const std::int64_t J1 = static_cast<std::int64_t>(25 * u(g)), J2 = static_cast<std::int64_t>(25 * u(g));
    const std::int64_t r = 1 + static_cast<std::int64_t>(static_cast<double>(l) * u(g));
    std::optional<std::int64_t> f;
    if (u(g) < 0.8) f = 1 + static_cast<std::int64_t>(static_cast<double>(r) * u(g));
    const double pick = u(g);
    const double c = pick < 0.2 ? 1.0 : pick < 0.3 ? 0.0 : pick < 0.5 ? 1 - 1e-6 * u(g) : u(g);
    const double h2 = std::pow(10.0, 2 * u(g) - 1);
    const double kind = u(g);  // h1 below, above, zero, equal
    const double h1 = kind < 0.3 ? h2 * u(g) : kind < 0.6 ? h2 * (1 + 20 * u(g)) : kind < 0.85 ? 0.0 : h2;
    const double hf = u(g) < 0.5 ? h2 : std::pow(10.0, 3 * u(g) - 1);
    const double gap = u(g) < 0.5 ? 0.0 : std::pow(10.0, 3 * u(g) - 1);
    const auto s = dense_two(l, J1, h1, J2, h2, r, f, hf);
    const double fast = hsdp::div::shift_energy_two_chains(c, l, J1, h1, J2, h2, r, f, hf, gap);
    const double exact = hsdp::div::shift_energy(c, gap, s);
    EXPECT_GE(fast, exact * (1 - 1e-13) - 1e-320) << "c=" << c << " l=" << l << " J1=" << J1 << " J2=" << J2;
    EXPECT_LE(fast, exact * (1 + 1e-10) + 1e-300) << "c=" << c << " l=" << l << " J1=" << J1 << " J2=" << J2
                                                  << " r=" << r << " h1=" << h1 << " h2=" << h2 << " gap=" << gap;
    // The affine counterpart against its direct sum.
    const double fa = hsdp::div::shift_energy_two_chains_affine(c, l, J1, h1, J2, h2, r, f, hf);
    long double gap_sum = 0.0L, weights = 0.0L;  // Horner: the Gaussian mean gap and variance
    for (const double x : s) {
      gap_sum = c * gap_sum + x;
      weights = static_cast<long double>(c) * c * weights + 1.0L;
    }
    const double ea = static_cast<double>(gap_sum * gap_sum / weights);
    EXPECT_GE(fa, ea * (1 - 1e-13) - 1e-320);
    EXPECT_LE(fa, ea * (1 + 1e-10) + 1e-300) << "c=" << c << " l=" << l << " J1=" << J1 << " J2=" << J2;
    ++checked;
  }
  EXPECT_EQ(checked, 5000);
  // One chain is the epoch program.
  for (double c : {1.0, 0.97, 0.5})
    EXPECT_EQ(hsdp::div::shift_energy_two_chains(c, 6, 0, 0.0, 9, 0.4, 4, 3, 0.7, 0.2),
              hsdp::div::shift_energy_epochs(c, 0.4, 6, 9, 4, 3, 0.7, 0.2));
  EXPECT_THROW(hsdp::div::shift_energy_two_chains(1.0, 4, 2, -1.0, 2, 1.0, 4, 1, 1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(hsdp::div::shift_energy_two_chains(1.0, 4, -1, 1.0, 2, 1.0, 4, 1, 1.0, 0.0), std::invalid_argument);
  // 2^40 epochs in each chain: O(1), finite, between the all-h1 and all-h2 programs.
  const std::int64_t big = std::int64_t{1} << 40;
  for (double c : {1.0, 1 - 1e-9, 0.9}) {
    const double mixed = hsdp::div::shift_energy_two_chains(c, 8, big, 0.5, big, 2.0, 8, 8, 2.0, 0.0);
    const double low = hsdp::div::shift_energy_epochs(c, 0.5, 8, 2 * big, 8, 8, 2.0, 0.0);
    const double high = hsdp::div::shift_energy_epochs(c, 2.0, 8, 2 * big, 8, 8, 2.0, 0.0);
    EXPECT_TRUE(std::isfinite(mixed));
    EXPECT_GE(mixed, low * (1 - 1e-12));
    EXPECT_LE(mixed, high * (1 + 1e-12));
  }
}

/// Every position sequence of a shuffled run, drop-last (n = l b + extra) or with the partial
/// batch of rp = n mod b records kept (epochs of l + 1 steps, the last over rp records: shift
/// 2 eta L / rp at probability rp/n). Shifts in units of 2 eta L.
std::vector<Sequence> all_sequences_typed(std::int64_t n, std::int64_t b, std::int64_t t, bool kept) {
  const std::int64_t l = n / b, rp = n % b, L = kept ? l + 1 : l, epochs = (t + L - 1) / L;
  const double pos = static_cast<double>(b) / static_cast<double>(n);
  std::vector<Sequence> out;
  std::vector<std::int64_t> p(static_cast<std::size_t>(epochs), 0);
  std::function<void(std::int64_t, double)> rec = [&](std::int64_t e, double prob) {
    if (e == epochs) {
      Sequence s{std::vector<double>(static_cast<std::size_t>(t), 0.0), prob};
      for (std::int64_t k = 0; k < epochs; ++k) {
        const std::int64_t j = p[static_cast<std::size_t>(k)];
        if (j > 0) s.shifts[static_cast<std::size_t>(k * L + j - 1)] = kept && j == L ? 1.0 / static_cast<double>(rp) : 1.0 / static_cast<double>(b);
      }
      out.push_back(std::move(s));
      return;
    }
    const std::int64_t steps = std::min(L, t - e * L);
    double used = 0.0;
    for (std::int64_t j = 1; j <= steps; ++j) {
      const double pj = kept && j == L ? static_cast<double>(rp) / static_cast<double>(n) : pos;
      p[static_cast<std::size_t>(e)] = j;
      rec(e + 1, prob * pj);
      used += pj;
    }
    if (1.0 - used > 1e-15) {
      p[static_cast<std::size_t>(e)] = 0;
      rec(e + 1, prob * (1.0 - used));
    }
  };
  rec(0, 1.0);
  return out;
}

/// The last epoch's classes of the shipped bound (as the docs define them; l <= 128 here, so
/// one class per position): {probability, final position or none, final shift}, shifts in
/// units of 2 eta L.
struct FinalClass {
  double weight;
  std::optional<std::int64_t> position;
  double shift;
};
std::vector<FinalClass> final_classes(std::int64_t n, std::int64_t b, std::int64_t L, std::int64_t r, bool kept) {
  std::vector<FinalClass> out;
  double used = 0.0;
  const std::int64_t rp = n % b;
  for (std::int64_t j = 1; j <= r; ++j) {
    const bool partial = kept && j == L;
    const double w = partial ? static_cast<double>(rp) / static_cast<double>(n) : static_cast<double>(b) / static_cast<double>(n);
    out.push_back({w, j, partial ? 1.0 / static_cast<double>(rp) : 1.0 / static_cast<double>(b)});
    used += w;
  }
  if (1.0 - used > 1e-12) out.push_back({1.0 - used, std::nullopt, 0.0});
  return out;
}

/// The dense program of a class, minimised over the shipped windows (from W_0, and from a gap
/// D at the start of each of the last J' + 1 epochs): the earlier epochs given as a vector of
/// per-epoch last-step shifts.
double class_energy(double c, double D, std::int64_t L, const std::vector<double>& earlier, std::int64_t r,
                    const FinalClass& fc) {
  const std::int64_t J = static_cast<std::int64_t>(earlier.size());
  std::vector<double> s(static_cast<std::size_t>(J * L + r), 0.0);
  for (std::int64_t e = 0; e < J; ++e) s[static_cast<std::size_t>(e * L + L - 1)] = earlier[static_cast<std::size_t>(e)];
  if (fc.position) s[static_cast<std::size_t>(J * L + *fc.position - 1)] += fc.shift;
  double best = hsdp::div::shift_energy(c, 0.0, s);
  if (std::isfinite(D))
    for (std::int64_t Jp = 0; Jp < J; ++Jp)
      best = std::min(best, hsdp::div::shift_energy(
                                c, D, std::vector<double>(s.begin() + static_cast<std::ptrdiff_t>((J - Jp) * L), s.end())));
  return best;
}

double binomial(std::int64_t J, double q, std::int64_t m) {
  return std::exp(std::lgamma(J + 1.0) - std::lgamma(m + 1.0) - std::lgamma(J - m + 1.0) +
                  (m > 0 ? m * std::log(q) : 0.0) + (J - m > 0 ? (J - m) * std::log1p(-q) : 0.0));
}

// Deliverable: the earlier-epoch average is valid (>= the exact average over all position
// sequences of their own bounds at every window), never above the last-epoch-only average it
// replaces, and equal to an independent dense computation of the class formula.
TEST(ShuffledBatches, EarlierEpochTypesAgainstEverySequence) {
  int configurations = 0, sequences = 0, lower = 0;
  for (const bool kept : {false, true})
    for (std::int64_t l : {1, 2, 3, 4})
      for (std::int64_t E : {2, 3, 4})
        for (std::int64_t cut : {0, 1}) {
          const std::int64_t L = kept ? l + 1 : l;
          if (cut == 1 && L == 1) continue;
          if (std::pow(static_cast<double>(L + 1), static_cast<double>(E)) > 2500) continue;
          const std::int64_t b = 3, n = l * b + (kept ? 1 + (l % 2) : 2), t = E * L - cut;
          const std::int64_t J = (t - 1) / L, r = t - J * L;
          for (double c : {1.0, 0.9, 0.6})
            for (double D : {kInf, 0.7}) {
              const double eta = 1.0, s = 0.8;
              auto run = smooth_run(hsdp::Sampling::shuffle, n, b, t, eta, s, 1.0, 1.0 - c, D);
              run.drop_last = !kept;
              const double unit = 2.0 * eta;  // shifts below in units of 2 eta L
              const auto seqs = all_sequences_typed(n, b, t, kept);
              std::vector<double> mus;
              const double Du = D / unit;  // the gap in the same units
              for (const auto& q : seqs) mus.push_back(std::sqrt(sequence_energy(c, Du, q.shifts)) * unit / s);
              // The class formula, densely: m strong earlier epochs last.
              const double hw = kept ? 1.0 / b : 0.0, hs = kept ? 1.0 / static_cast<double>(n % b) : 1.0 / b;
              const double q = kept ? static_cast<double>(n % b) / n : static_cast<double>(l * b) / n;
              const auto finals = final_classes(n, b, L, r, kept);
              std::vector<std::pair<double, double>> formula;  // weight, mu
              for (std::int64_t m = 0; m <= J; ++m) {
                std::vector<double> earlier(static_cast<std::size_t>(J), hw);
                for (std::int64_t e = J - m; e < J; ++e) earlier[static_cast<std::size_t>(e)] = hs;
                for (const auto& fc : finals)
                  formula.push_back({binomial(J, q, m) * fc.weight,
                                     std::sqrt(class_energy(c, Du, L, earlier, r, fc)) * unit / s});
              }
              // Today's: every earlier epoch at its worst (m = J), the last epoch averaged.
              std::vector<std::pair<double, double>> today;
              for (const auto& fc : finals)
                today.push_back({fc.weight, std::sqrt(class_energy(c, Du, L, std::vector<double>(static_cast<std::size_t>(J), hs), r, fc)) * unit / s});
              for (double eps : {0.0, 0.3, 1.0, 3.0}) {
                const auto at = si()->evaluate(run, hsdp::Query::at_epsilon(eps));
                ASSERT_TRUE(at.applicable) << at.reason;
                double exact = 0.0, dense_formula = 0.0, last_only = 0.0;
                for (std::size_t i = 0; i < seqs.size(); ++i) exact += seqs[i].probability * hsdp::div::theta(eps, mus[i]);
                for (const auto& [w, mu] : formula) dense_formula += w * hsdp::div::theta(eps, mu);
                for (const auto& [w, mu] : today) last_only += w * hsdp::div::theta(eps, mu);
                const std::string where = "kept=" + std::to_string(kept) + " l=" + std::to_string(l) +
                                          " E=" + std::to_string(E) + " t=" + std::to_string(t) +
                                          " c=" + std::to_string(c) + " D=" + std::to_string(D) +
                                          " eps=" + std::to_string(eps);
                EXPECT_GE(*at.delta, exact * (1 - 1e-9)) << where;
                EXPECT_GE(*at.delta, dense_formula * (1 - 1e-9)) << where;
                EXPECT_LE(*at.delta, dense_formula * (1 + 3e-9) + 1e-300) << where;
                EXPECT_LE(*at.delta, last_only * (1 + 3e-9) + 1e-300) << where;
                if (*at.delta < last_only * (1 - 1e-6)) ++lower;
              }
              const auto det = si()->evaluate(run, hsdp::Query::at_delta(1e-5));
              EXPECT_EQ(detail(det, "earlier_epoch_classes").value_or(0), static_cast<double>(J + 1));
              EXPECT_NEAR(detail(det, "strong_epoch_probability").value_or(0), q, 1e-15);
              ++configurations;
              sequences += static_cast<int>(seqs.size());
            }
        }
  EXPECT_GT(configurations, 150);
  EXPECT_GT(sequences, 25000);
  EXPECT_GT(lower, 300);  // the average gains on most of them
}

// Affine steps (strong convexity = smoothness, unbounded): the same checks with each
// sequence's exact Gaussian energy in place of the program's.
TEST(ShuffledBatches, EarlierEpochTypesWithAffineSteps) {
  int configurations = 0, lower = 0;
  for (const bool kept : {false, true})
    for (std::int64_t l : {1, 2, 3})
      for (std::int64_t E : {2, 3, 4}) {
        const std::int64_t L = kept ? l + 1 : l;
        if (std::pow(static_cast<double>(L + 1), static_cast<double>(E)) > 2500) continue;
        const std::int64_t b = 3, n = l * b + (kept ? 1 + (l % 2) : 2), t = E * L;
        const std::int64_t J = E - 1;
        for (double c : {0.95, 0.7}) {
          const double eta = 1.0, s = 0.5, unit = 2.0 * eta;
          auto run = smooth_run(hsdp::Sampling::shuffle, n, b, t, eta, s, 1.0 - c, 1.0 - c);
          run.drop_last = !kept;
          const auto seqs = all_sequences_typed(n, b, t, kept);
          const double hw = kept ? 1.0 / b : 0.0, hs = kept ? 1.0 / static_cast<double>(n % b) : 1.0 / b;
          const double q = kept ? static_cast<double>(n % b) / n : static_cast<double>(l * b) / n;
          const auto finals = final_classes(n, b, L, L, kept);
          auto affine = [&](const std::vector<double>& earlier, const FinalClass& fc) {
            std::vector<double> x(static_cast<std::size_t>(J * L + L), 0.0);
            for (std::int64_t e = 0; e < J; ++e) x[static_cast<std::size_t>(e * L + L - 1)] = earlier[static_cast<std::size_t>(e)];
            if (fc.position) x[static_cast<std::size_t>(J * L + *fc.position - 1)] += fc.shift;
            return std::sqrt(hsdp::div::shift_energy_affine(c, x)) * unit / s;
          };
          for (double eps : {0.0, 1.0, 3.0}) {
            double exact = 0.0, formula = 0.0, last_only = 0.0;
            for (const auto& sq : seqs)
              exact += sq.probability * hsdp::div::theta(eps, std::sqrt(hsdp::div::shift_energy_affine(c, sq.shifts)) * unit / s);
            for (std::int64_t m = 0; m <= J; ++m) {
              std::vector<double> earlier(static_cast<std::size_t>(J), hw);
              for (std::int64_t e = J - m; e < J; ++e) earlier[static_cast<std::size_t>(e)] = hs;
              for (const auto& fc : finals) formula += binomial(J, q, m) * fc.weight * hsdp::div::theta(eps, affine(earlier, fc));
            }
            for (const auto& fc : finals)
              last_only += fc.weight * hsdp::div::theta(eps, affine(std::vector<double>(static_cast<std::size_t>(J), hs), fc));
            const auto at = si()->evaluate(run, hsdp::Query::at_epsilon(eps));
            ASSERT_TRUE(at.applicable) << at.reason;
            EXPECT_GE(*at.delta, exact * (1 - 1e-9)) << kept << " " << l << " " << E << " " << c << " " << eps;
            EXPECT_GE(*at.delta, formula * (1 - 1e-9)) << kept << " " << l << " " << E << " " << c << " " << eps;
            EXPECT_LE(*at.delta, formula * (1 + 3e-9) + 1e-300) << kept << " " << l << " " << E << " " << c;
            EXPECT_LE(*at.delta, last_only * (1 + 3e-9) + 1e-300);
            if (*at.delta < last_only * (1 - 1e-6)) ++lower;
          }
          EXPECT_NE(si()->note(run).find("affine steps"), std::string::npos);
          ++configurations;
        }
      }
  EXPECT_GT(configurations, 20);
  EXPECT_GT(lower, 40);
}

// More strong-count values than classes: m is bucketed at quantiles (each bucket at its
// largest m). Against the unbucketed average over every m (binomial weights by lgamma, the
// class energies by the two-chain program, checked against the dense program at a few m).
TEST(ShuffledBatches, BucketedStrongCountAgainstEveryCount) {
  struct Case { std::int64_t n, b, J; bool kept; double lambda, D; };
  for (const Case& cs : {Case{41, 4, 300, false, 0.0, kInf}, Case{41, 4, 2000, true, 0.0, kInf},
                         Case{43, 4, 700, true, 0.02, kInf}, Case{103, 10, 400, false, 0.0, 30.0}}) {
    const std::int64_t l = cs.kept ? cs.n / cs.b + 1 : cs.n / cs.b, t = (cs.J + 1) * l;
    const double eta = 1.0, c = 1.0 - cs.lambda;
    auto run = smooth_run(hsdp::Sampling::shuffle, cs.n, cs.b, t, eta, 1.0, 1.0, cs.lambda, cs.D);
    run.drop_last = !cs.kept;
    // The noise that puts the worst case at mu = 4 (mu is proportional to 1/s): delta far from 0 and 1.
    const double s = *detail(si()->evaluate(run, hsdp::Query::at_delta(1e-5)), "mu") / 4.0;
    run.noise_std = hsdp::Schedule(s);
    const std::int64_t rp = cs.n % cs.b;
    const double hw = cs.kept ? 2.0 / cs.b : 0.0, hs = cs.kept ? 2.0 / static_cast<double>(rp) : 2.0 / cs.b;
    const double q = cs.kept ? static_cast<double>(rp) / cs.n : static_cast<double>(l * cs.b) / cs.n;
    auto finals = final_classes(cs.n, cs.b, l, l, cs.kept);
    for (auto& fc : finals) fc.shift *= 2.0;
    auto energy = [&](std::int64_t m, const FinalClass& fc) {
      double best = hsdp::div::shift_energy_two_chains(c, l, cs.J - m, hw, m, hs, l, fc.position, fc.shift, 0.0);
      if (std::isfinite(cs.D))
        for (double j = 0; j < static_cast<double>(cs.J); j = j < 64 ? j + 1 : std::floor(j * 1.15)) {
          const auto Jp = static_cast<std::int64_t>(j), strong = std::min(m, Jp);
          best = std::min(best, hsdp::div::shift_energy_two_chains(c, l, Jp - strong, hw, strong, hs, l,
                                                                   fc.position, fc.shift, cs.D));
        }
      return best;
    };
    // The two-chain program is the dense one here too.
    for (std::int64_t m : {std::int64_t{0}, cs.J / 3, cs.J}) {
      std::vector<double> s2(static_cast<std::size_t>(t), 0.0);
      for (std::int64_t e = 1; e <= cs.J; ++e) s2[static_cast<std::size_t>(e * l - 1)] = e <= cs.J - m ? hw : hs;
      s2[static_cast<std::size_t>(cs.J * l + l - 1)] += finals[l - 1].shift;
      const double a = hsdp::div::shift_energy_two_chains(c, l, cs.J - m, hw, m, hs, l, l, finals[l - 1].shift, 0.0);
      EXPECT_NEAR(a, hsdp::div::shift_energy(c, 0.0, s2), 1e-10 * a);
    }
    for (double eps : {0.5, 2.0}) {
      long double every = 0.0L, total = 0.0L;
      for (std::int64_t m = 0; m <= cs.J; ++m) {
        const double w = binomial(cs.J, q, m);
        total += w;
        if (w < 1e-30) continue;
        for (const auto& fc : finals) every += w * fc.weight * hsdp::div::theta(eps, std::sqrt(energy(m, fc)) / s);
      }
      ASSERT_NEAR(static_cast<double>(total), 1.0, 1e-9);
      const auto r = si()->evaluate(run, hsdp::Query::at_epsilon(eps));
      ASSERT_TRUE(r.applicable) << r.reason;
      EXPECT_GE(*r.delta, static_cast<double>(every) * (1 - 1e-9)) << cs.n << " " << cs.J << " eps " << eps;
      EXPECT_LE(*r.delta, static_cast<double>(every) * 1.03) << cs.n << " " << cs.J << " eps " << eps;
      // ... and below every earlier epoch at its worst.
      run.order_known = false;
      const auto det = si()->evaluate(run, hsdp::Query::at_delta(1e-5));
      EXPECT_GT(detail(det, "earlier_epoch_classes").value_or(0), 2.0);
      EXPECT_LE(detail(det, "earlier_epoch_classes").value_or(1e9), 65.0);
    }
  }
}

// Extremes of the earlier-epoch average: 2^40 earlier epochs, q within 1e-12 of 0 and of 1, a
// partial batch of one record (h_r = b h): finite, monotone in eps, never above the
// last-epoch-only average (every earlier epoch at its worst), and fast.
TEST(ShuffledBatches, EarlierEpochTypesExtremes) {
  struct Case { std::int64_t n, b, J; bool kept; double lambda; };
  const std::int64_t big = std::int64_t{1} << 40;
  const std::vector<Case> cases{
      {1001, 10, big, false, 0.0},                 // q = 0.999, 2^40 earlier epochs, c = 1
      {1003, 10, big, true, 1e-9},                 // q = 3/1003, c = 1 - 1e-9
      {big + 1, std::int64_t{1} << 20, 1000, true, 0.0},    // r_p = 1: q = 2^-40, h_r = 2^20 h
      {big + 1, 2, 4000, false, 0.01},                       // drop-last: q = 1 - 1/(2^40 + 1)
      {big + 1, std::int64_t{1} << 20, big >> 22, true, 0.0},  // r_p = 1 with many epochs
  };
  for (const auto& cs : cases) {
    const auto started = std::chrono::steady_clock::now();
    const std::int64_t l = cs.kept ? cs.n / cs.b + 1 : cs.n / cs.b, t = (cs.J + 1) * l;
    auto run = smooth_run(hsdp::Sampling::shuffle, cs.n, cs.b, t, 1.0, 1.0, 1.0, cs.lambda);
    run.drop_last = !cs.kept;
    // The noise that puts the worst case at mu = 3 (mu is proportional to 1/s).
    run.noise_std = hsdp::Schedule(*detail(si()->evaluate(run, hsdp::Query::at_delta(1e-5)), "mu") / 3.0);
    double last = kInf;
    for (double eps : {0.0, 0.5, 2.0, 10.0, 60.0, 700.0}) {
      const auto r = si()->evaluate(run, hsdp::Query::at_epsilon(eps));
      ASSERT_TRUE(r.applicable) << r.reason;
      ASSERT_TRUE(r.delta && !std::isnan(*r.delta));
      EXPECT_LE(*r.delta, last);
      last = *r.delta;
      auto known = run;
      known.order_known = true;  // the worst case: never below the average
      EXPECT_LE(*r.delta, *si()->evaluate(known, hsdp::Query::at_epsilon(eps)).delta * (1 + 1e-9) + 1e-300);
    }
    const auto e = si()->evaluate(run, hsdp::Query::at_delta(1e-5));
    ASSERT_TRUE(e.epsilon && std::isfinite(*e.epsilon)) << cs.n;
    EXPECT_LE(*e.epsilon, *detail(e, "worst_case_epsilon"));
    EXPECT_GT(detail(e, "earlier_epoch_classes").value_or(0), 0.0);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_LT(seconds, 1.0) << cs.n << " " << cs.J;
  }
}

}  // namespace
