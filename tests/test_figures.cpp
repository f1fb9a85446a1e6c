// The comparisons drawn in the papers' figures, through the public registry:
//   journal Fig. 2  contraction-random-stop (Cor. 1 / Thm 5 (17)) vs pabi-feldman ((22), (23))
//   isit Fig. 2     contraction-per-index (Thm 4) vs balle-mixing (Prop. 1 (15)), rho = 0
//   isit Fig. 3     the same with strong convexity (M < 1)
// Only orderings the papers state, or that were verified at these exact points with an
// independent mpmath computation (30 digits; /tmp scripts described in
// docs/analyses/comparisons.md), are asserted; each test names its points.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hsdp/analysis/analysis.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/run.hpp"

namespace {

using RunT = hsdp::Run;  // `Run` alone clashes with testing::Test::Run
using hsdp::Schedule;

hsdp::AnalysisPtr get(const char* name) { return hsdp::find_analysis(name); }

// The contraction analyses are written in parallel; while the tree still links a
// placeholder for one, its figure comparisons are skipped (never committed that way).
bool placeholder(const hsdp::AnalysisPtr& a) { return a->citation() == "(placeholder)"; }
#define SKIP_IF_PLACEHOLDER(a) \
  if (placeholder(a)) GTEST_SKIP() << (a)->name() << " is still a placeholder"

std::optional<double> detail(const hsdp::AnalysisResult& r, const std::string& name) {
  for (const auto& d : r.details)
    if (d.name == name) return d.value;
  return std::nullopt;
}

double delta_at(const hsdp::AnalysisPtr& a, const RunT& run, double eps) {
  const auto r = a->evaluate(run, hsdp::Query::at_epsilon(eps));
  EXPECT_TRUE(r.applicable) << a->name() << ": " << r.reason;
  return r.delta.value_or(1.0);
}

/// PNSGD with batch 1 over n records in the journal/isit convention (noise eta * sigma).
RunT pnsgd(std::int64_t n, double eta, double sigma, double L, double beta, double rho, double D,
           hsdp::Release release) {
  RunT run;
  run.n = n;
  run.steps = n;
  run.batch_size = 1;
  run.sampling = hsdp::Sampling::cyclic;
  run.eta = Schedule(eta);
  run.noise_std = Schedule(hsdp::noise_std_from_sigma(hsdp::Convention::journal, sigma, eta, 1));
  run.loss.lipschitz = L;
  run.loss.smoothness = beta;
  run.loss.strong_convexity = rho;
  run.diameter = D;
  run.release = release;
  run.validate();
  return run;
}

// ---- journal Fig. 2: L = 1, beta = 1, n = 100 (diameter 1, Cor. 1), random stop.
RunT journal_fig2(double eta, double sigma) {
  return pnsgd(100, eta, sigma, 1.0, 1.0, 0.0, 1.0, hsdp::Release::random_stop);
}

TEST(JournalFig2, ContractionBeatsFeldmanForSigmaAtLeast3AndEpsAtLeast2) {
  // "for the reasonable range of eta in (0.05, 0.1) our technique results in tighter
  // privacy parameters than [53] for all eps >= 2 as long as sigma >= 3."
  // Points: eta in {0.05, 0.1}, sigma in {3, 4, 5}, eps in {2, 3, 4, 6}. Compared with
  // hsdp's pabi-feldman (H_n) and with the journal's own (22)/(23) (printed log n, the
  // smaller and so harder comparison). The closest point is eta = 0.05, sigma = 3,
  // eps = 2: (17) at the worst index 5.918e-4 vs (23) with log n 1.297e-3 (mpmath).
  const auto rs = get("contraction-random-stop");
  SKIP_IF_PLACEHOLDER(rs);
  const auto pabi = get("pabi-feldman");
  for (double eta : {0.05, 0.1})
    for (double sigma : {3.0, 4.0, 5.0})
      for (double eps : {2.0, 3.0, 4.0, 6.0}) {
        const RunT run = journal_fig2(eta, sigma);
        const double ours = delta_at(rs, run, eps);
        const auto p = pabi->evaluate(run, hsdp::Query::at_epsilon(eps));
        const std::string where = "eta " + std::to_string(eta) + " sigma " + std::to_string(sigma) +
                                  " eps " + std::to_string(eps);
        EXPECT_LT(ours, *p.delta) << where;
        EXPECT_LT(ours, *detail(p, "delta_22_log_n")) << where;
        EXPECT_LT(ours, *detail(p, "delta_23_log_n")) << where;
      }
}

TEST(JournalFig2, ClosedForm20AloneDoesNotCarryTheClaimAtTheEdge) {
  // At eta = 0.05, sigma = 3, eps = 2 the closed form (20) is 2.943e-3, above (23) with
  // the printed log n (1.297e-3, mpmath): the statement above holds for the exact sum (17)
  // (5.918e-4), not for (20). Checked only if contraction-random-stop reports (20).
  const auto rs = get("contraction-random-stop");
  SKIP_IF_PLACEHOLDER(rs);
  const RunT run = journal_fig2(0.05, 3.0);
  const auto r = rs->evaluate(run, hsdp::Query::at_epsilon(2.0));
  EXPECT_NEAR(*r.delta, 5.918e-4, 1e-6);
  const auto p = get("pabi-feldman")->evaluate(run, hsdp::Query::at_epsilon(2.0));
  if (auto eq20 = detail(r, "journal_eq_20")) {
    EXPECT_NEAR(*eq20, 2.943e-3, 2e-6);
    EXPECT_GT(*eq20, *detail(p, "delta_23_log_n"));
  }
}

TEST(JournalFig2, FeldmanWinsAtSmallSigma) {
  // The claim is restricted to sigma >= 3 / "sufficiently large eps": at sigma = 1 the RDP
  // route is better for eps <= 4 (verified: eta = 0.1, eps = 2: (17) 0.3319 vs (23)
  // 0.0741 with H_n; eps = 4: 0.0849 vs 0.0241). At eps = 6 they cross: (17) 0.00997 vs
  // (23) 0.01002 with H_n (0.00884 with the printed log n), so no ordering is asserted there.
  const auto rs = get("contraction-random-stop");
  SKIP_IF_PLACEHOLDER(rs);
  const auto pabi = get("pabi-feldman");
  for (double eta : {0.05, 0.1})
    for (double eps : {0.5, 1.0, 2.0, 4.0}) {
      const RunT run = journal_fig2(eta, 1.0);
      EXPECT_LT(delta_at(pabi, run, eps), delta_at(rs, run, eps)) << eta << " " << eps;
    }
}

TEST(JournalFig2, LargerEtaAndLargerSigmaHelpTheContractionBound) {
  // "the larger the value of eta, the stronger the privacy guarantee" (Cor. 1 depends on
  // eta, [53] does not), and the improvement over [53] grows with sigma.
  const auto rs = get("contraction-random-stop");
  SKIP_IF_PLACEHOLDER(rs);
  const auto pabi = get("pabi-feldman");
  for (double sigma : {2.0, 3.0, 4.0, 5.0})
    for (double eps : {1.0, 2.0, 4.0}) {
      EXPECT_LT(delta_at(rs, journal_fig2(0.1, sigma), eps), delta_at(rs, journal_fig2(0.05, sigma), eps));
      EXPECT_DOUBLE_EQ(delta_at(pabi, journal_fig2(0.1, sigma), eps),
                       delta_at(pabi, journal_fig2(0.05, sigma), eps));
    }
  for (double eps : {2.0, 4.0}) {
    double previous_ratio = 0;
    for (double sigma : {3.0, 4.0, 5.0}) {
      const double ratio = delta_at(pabi, journal_fig2(0.1, sigma), eps) /
                           delta_at(rs, journal_fig2(0.1, sigma), eps);
      EXPECT_GT(ratio, previous_ratio) << sigma << " " << eps;
      previous_ratio = ratio;
    }
  }
}

// ---- isit Fig. 2: sigma = 2, L = 1, beta = 0.5, eta = 0.5, rho = 0, D = 1, n = 40.
TEST(IsitFig2, Theorem4BeatsProposition1) {
  // "As clearly seen, our approach outperforms [12]". Points: i in {1, 20, 39},
  // eps in {0.25, 0.5, 1, 2, 3, 5}; verified against both (15) (the paper's curve) and
  // hsdp's better conversion (e.g. i = 39, eps = 1: Thm 4 0.01611, (15) 0.8825,
  // optimal conversion 0.2468; i = 1, eps = 5: 3.30e-250 vs 2.32e-211 vs 4.38e-214).
  const auto pi = get("contraction-per-index");
  SKIP_IF_PLACEHOLDER(pi);
  const auto balle = get("balle-mixing");
  RunT run = pnsgd(40, 0.5, 2.0, 1.0, 0.5, 0.0, 1.0, hsdp::Release::last);
  for (std::int64_t i : {1, 20, 39}) {
    run.index = i;
    for (double eps : {0.25, 0.5, 1.0, 2.0, 3.0, 5.0}) {
      const auto c = pi->evaluate(run, hsdp::Query::at_epsilon(eps));
      const auto b = balle->evaluate(run, hsdp::Query::at_epsilon(eps));
      ASSERT_TRUE(c.applicable) << c.reason;
      EXPECT_EQ(*c.index, i);
      EXPECT_EQ(*b.index, i);
      EXPECT_LT(*c.delta, *detail(b, "delta_15")) << "i " << i << " eps " << eps;
      EXPECT_LT(*c.delta, *b.delta) << "i " << i << " eps " << eps;
    }
  }
  // Spot values (mpmath): Thm 4 at i = 39, eps = 1 and (15) at i = 20, eps = 1.
  run.index = 39;
  EXPECT_NEAR(delta_at(pi, run, 1.0), 0.01611293535, 1e-9);
  run.index = 20;
  const auto b = balle->evaluate(run, hsdp::Query::at_epsilon(1.0));
  EXPECT_NEAR(*detail(b, "delta_15"), 7.438546486e-05, 1e-12);
  EXPECT_NEAR(*b.delta, 1.336131908e-06, 1e-13);
}

// ---- isit Fig. 3: sigma = 1, rho = 0.4, eta = 0.7, L = 1, beta = 0.3, D = 1, n = 40.
TEST(IsitFig3, PrintedParametersAreInconsistent) {
  // rho = 0.4 > beta = 0.3: no function is 0.4-strongly convex and 0.3-smooth. hsdp
  // refuses the run. M = sqrt(1 - 2 eta beta rho / (beta + rho)) and eta < 2/(beta + rho)
  // are symmetric in (beta, rho), so the figure's numbers are those of beta = 0.4,
  // rho = 0.3, a consistent loss class; the tests below use that.
  EXPECT_THROW(pnsgd(40, 0.7, 1.0, 1.0, 0.3, 0.4, 1.0, hsdp::Release::last), hsdp::InvalidArgument);
}

RunT isit_fig3(std::int64_t i) {
  RunT run = pnsgd(40, 0.7, 1.0, 1.0, 0.4, 0.3, 1.0, hsdp::Release::last);
  run.index = i;
  return run;
}

TEST(IsitFig3, Theorem4WinsAtSmallEpsAndForLateRecords) {
  // "Theorem 4 provides better privacy in the high privacy region (i.e., small eps) as well
  // as for the individuals who appear later in the dataset for all privacy region."
  // Small eps: i in {20, 30, 39}, eps in {0.25, 0.5} (i = 20, eps = 0.5: 1.955e-10 vs
  // (15) 1.84e-5 vs optimal conversion 7.10e-7). Late record: i = 39, eps in {0.25 .. 5}
  // (eps = 5: 2.747e-6 vs 0.1364 vs 0.0536).
  const auto pi = get("contraction-per-index");
  SKIP_IF_PLACEHOLDER(pi);
  const auto balle = get("balle-mixing");
  auto check = [&](std::int64_t i, double eps) {
    const RunT run = isit_fig3(i);
    const auto c = pi->evaluate(run, hsdp::Query::at_epsilon(eps));
    const auto b = balle->evaluate(run, hsdp::Query::at_epsilon(eps));
    EXPECT_LT(*c.delta, *detail(b, "delta_15_printed_kappa")) << "i " << i << " eps " << eps;
    EXPECT_LT(*c.delta, *b.delta) << "i " << i << " eps " << eps;
  };
  for (std::int64_t i : {20, 30, 39})
    for (double eps : {0.25, 0.5}) check(i, eps);
  for (double eps : {1.0, 1.5, 2.0, 3.0, 4.0, 5.0}) check(39, eps);
}

TEST(IsitFig3, Proposition1WinsForEarlierRecordsAtLargerEps) {
  // The flip side the figure shows (verified): i = 20, eps in {1, 2, 3}
  // (eps = 1: Thm 4 3.348e-14 vs optimal conversion 1.0e-19, (15) 7.0e-20) and i = 30,
  // eps in {3, 4} (eps = 3: 1.859e-20 vs 2.94e-21).
  const auto pi = get("contraction-per-index");
  SKIP_IF_PLACEHOLDER(pi);
  const auto balle = get("balle-mixing");
  for (auto [i, eps] : std::vector<std::pair<std::int64_t, double>>{{20, 1.0}, {20, 2.0}, {20, 3.0},
                                                                      {30, 3.0}, {30, 4.0}}) {
    const RunT run = isit_fig3(i);
    EXPECT_LT(delta_at(balle, run, eps), delta_at(pi, run, eps)) << "i " << i << " eps " << eps;
  }
}

}  // namespace
