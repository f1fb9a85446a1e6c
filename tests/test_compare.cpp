// `hsdp compare` and the SVG writer: the plot is well-formed XML (checked with xmllint, an
// independent parser) and draws points where the axis mapping says; the CSV equals what
// `hsdp account` reports at the sampled points; the figure presets carry the papers' values
// (closed forms written out here, spot values of tests/test_figures.cpp); a file is replaced
// whole. The command itself (CSV equals `hsdp account`, bad input exits 2 and leaves no
// file) is tested in tests/cli/test_compare_cli.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "hsdp/accountant.hpp"
#include "hsdp/compare.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/output_files.hpp"
#include "hsdp/plot.hpp"
#include "output_reading.hpp"

namespace {

using hsdp::testing::Csv;
using hsdp::testing::Frame;
using hsdp::testing::cell_value;
using hsdp::testing::frame_of;
using hsdp::testing::has_comment;
using hsdp::testing::parse_csv;
using hsdp::testing::polylines;
using hsdp::testing::read;
using hsdp::testing::temp_path;
using hsdp::testing::well_formed_xml;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(Xmllint, IsAvailableAndRejectsBrokenXml) {
  // Guards the checks below: a missing xmllint (scripts/install-deps.sh installs
  // libxml2-utils) or one that accepts anything would make them meaningless.
  EXPECT_TRUE(well_formed_xml("<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"/>"));
  EXPECT_FALSE(well_formed_xml("<svg><text>a < b</text></svg>"));
  EXPECT_FALSE(well_formed_xml("<svg><g></svg>"));
}

TEST(Svg, EscapeCoversXmlSpecialsAndControls) {
  EXPECT_EQ(hsdp::svg::escape("a<b & \"c\" 'd' >"), "a&lt;b &amp; &quot;c&quot; &apos;d&apos; &gt;");
  EXPECT_EQ(hsdp::svg::escape(std::string("x\x01y\tz")), "xy\tz");
  EXPECT_EQ(hsdp::svg::escape("Rényi ε"), "Rényi ε");  // UTF-8 passes through
}

TEST(Svg, TicksAndLabels) {
  using hsdp::svg::ticks;
  const std::vector<double> lin = ticks(0, 1, false, 5);
  ASSERT_EQ(lin.size(), 6u);
  for (std::size_t i = 0; i < lin.size(); ++i) EXPECT_NEAR(lin[i], 0.2 * i, 1e-15);
  EXPECT_EQ(ticks(0, 1000, false, 5), (std::vector<double>{0, 200, 400, 600, 800, 1000}));
  // 20 decades, about 6 ticks: stride 5 decades, at multiples of the stride.
  const auto wide = ticks(1e-20, 1, true, 6);
  ASSERT_EQ(wide.size(), 5u);
  for (std::size_t i = 0; i < wide.size(); ++i)
    EXPECT_NEAR(std::log10(wide[i]), -20.0 + 5.0 * i, 1e-12);
  // Two decades: 1, 2, 5 x 10^k.
  const auto narrow = ticks(1, 100, true, 6);
  const std::vector<double> want = {1, 2, 5, 10, 20, 50, 100};
  ASSERT_EQ(narrow.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(narrow[i], want[i], 1e-12 * want[i]);
  EXPECT_EQ(hsdp::svg::tick_label(1e-5), "1e-5");
  EXPECT_EQ(hsdp::svg::tick_label(1e6), "1e6");
  EXPECT_EQ(hsdp::svg::tick_label(2.5e-7), "2.5e-7");
  EXPECT_EQ(hsdp::svg::tick_label(0.5), "0.5");
  EXPECT_EQ(hsdp::svg::tick_label(20), "20");
  EXPECT_EQ(hsdp::svg::tick_label(0), "0");
}

TEST(Svg, LinearAxesMapDataToTheFrame) {
  // xs 0..10 and ys 0..1 are nice bounds already: the first point is the frame's bottom-left
  // corner, the last its top-right corner, the middle one its centre.
  hsdp::svg::LinePlot p{"t", "x", "y", false, false, {{"s", {0, 5, 10}, {0, 0.5, 1}}}};
  const std::string svg = hsdp::svg::render(p);
  ASSERT_TRUE(well_formed_xml(svg));
  const Frame f = frame_of(svg);
  const auto lines = polylines(svg);
  ASSERT_EQ(lines.size(), 1u);
  ASSERT_EQ(lines[0].size(), 3u);
  EXPECT_NEAR(lines[0][0].first, f.x, 0.01);
  EXPECT_NEAR(lines[0][0].second, f.y + f.h, 0.01);
  EXPECT_NEAR(lines[0][1].first, f.x + f.w / 2, 0.01);
  EXPECT_NEAR(lines[0][1].second, f.y + f.h / 2, 0.01);
  EXPECT_NEAR(lines[0][2].first, f.x + f.w, 0.01);
  EXPECT_NEAR(lines[0][2].second, f.y, 0.01);
}

TEST(Svg, LogAxesGapsDashesAndEscapedText) {
  // y from 1e-3 to 10 on a log axis: 1e-1 sits half-way up (2 of 4 decades); x = 1, 10, 100
  // on a log axis are equally spaced. inf and NaN split the series (never drawn as a value);
  // y = 0 cannot be drawn on a log axis either.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  hsdp::svg::LinePlot p;
  p.title = "eps < 1 & \"delta\"";
  p.x_label = "steps <T>";
  p.y_label = "delta";
  p.log_x = true;
  p.log_y = true;
  p.series.push_back({"upper", {1, 10, 100}, {1e-3, 1e-1, 10}, false});
  p.series.push_back({"lower 'bound' (lower)", {1, 2, 3, 4, 5, 6}, {1, 2, kInf, 3, nan, 0}, true});
  p.notes = {"x: not applicable: needs <something>"};
  const std::string svg = hsdp::svg::render(p);
  ASSERT_TRUE(well_formed_xml(svg));
  EXPECT_NE(svg.find("eps &lt; 1 &amp; &quot;delta&quot;"), std::string::npos);
  EXPECT_NE(svg.find("lower &apos;bound&apos; (lower)"), std::string::npos);
  EXPECT_NE(svg.find("needs &lt;something&gt;"), std::string::npos);
  EXPECT_NE(svg.find("steps &lt;T&gt; (log scale)"), std::string::npos);
  const Frame f = frame_of(svg);
  const auto lines = polylines(svg);
  // series 1: one polyline; series 2: (1,2) a polyline, (4) a lone dot, (6: y = 0) nothing.
  ASSERT_EQ(lines.size(), 2u);
  ASSERT_EQ(lines[0].size(), 3u);
  EXPECT_NEAR(lines[0][1].first, f.x + f.w / 2, 0.01);
  EXPECT_NEAR(lines[0][1].second, f.y + f.h / 2, 0.01);
  EXPECT_NEAR(lines[0][0].second, f.y + f.h, 0.01);
  EXPECT_NEAR(lines[0][2].second, f.y, 0.01);
  EXPECT_EQ(lines[1].size(), 2u);
  EXPECT_NE(svg.find("<circle"), std::string::npos);
  // The dashed series and its legend entry carry the dash pattern; the solid one does not.
  std::size_t dashes = 0;
  for (std::size_t pos = 0; (pos = svg.find("stroke-dasharray", pos)) != std::string::npos; ++pos) ++dashes;
  EXPECT_EQ(dashes, 2u);
  // Decade ticks 1e-3 .. 10 and 1 .. 100.
  for (const char* label : {">0.001<", ">0.01<", ">0.1<", ">1<", ">10<", ">100<"})
    EXPECT_NE(svg.find(label), std::string::npos) << label;
}

TEST(Svg, EmptyPlotRendersAndBadSeriesIsRejected) {
  hsdp::svg::LinePlot p{"nothing", "x", "y", false, true, {{"all inf", {1, 2}, {kInf, kInf}}}};
  const std::string svg = hsdp::svg::render(p);
  EXPECT_TRUE(well_formed_xml(svg));
  EXPECT_NE(svg.find("no data"), std::string::npos);
  hsdp::svg::LinePlot bad{"t", "x", "y", false, false, {{"s", {1, 2, 3}, {1, 2}}}};
  try {
    hsdp::svg::render(bad);
    ADD_FAILURE() << "mismatched series accepted";
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("series 's'"), std::string::npos) << e.what();
  }
  bad.series.clear();
  bad.width = 10;
  EXPECT_THROW(hsdp::svg::render(bad), hsdp::InvalidArgument);
}

// ---- sweeps -------------------------------------------------------------------------------

TEST(Sweep, PointsSpacingRoundingAndErrors) {
  using hsdp::CompareAxis;
  EXPECT_EQ(hsdp::sweep_points(CompareAxis::steps, 1, 1000, 4, true), (std::vector<double>{1, 10, 100, 1000}));
  EXPECT_EQ(hsdp::sweep_points(CompareAxis::steps, 1, 3, 10, false), (std::vector<double>{1, 2, 3}));
  const auto eps = hsdp::sweep_points(CompareAxis::epsilon, 0, 1, 11, false);
  ASSERT_EQ(eps.size(), 11u);
  EXPECT_EQ(eps[3], 0.3);  // the decimal, not 0.30000000000000004
  EXPECT_EQ(eps[7], 0.7);
  auto message = [](auto f) {
    try {
      f();
    } catch (const hsdp::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message([] { hsdp::sweep_points(CompareAxis::steps, 10, 5, 5, false); }).find("to = 5"),
            std::string::npos);
  EXPECT_NE(message([] { hsdp::sweep_points(CompareAxis::delta, 0, 0.5, 5, false); }).find("from = 0"),
            std::string::npos);
  EXPECT_NE(message([] { hsdp::sweep_points(CompareAxis::steps, 1, 5, 1, false); }).find("points = 1"),
            std::string::npos);
  EXPECT_NE(message([] { hsdp::sweep_points(CompareAxis::noise, 0, 5, 5, false); }).find("from"),
            std::string::npos);
  EXPECT_NE(message([] { hsdp::sweep_points(CompareAxis::epsilon, 0, 5, 5, true); }).find("log_x"),
            std::string::npos);
  EXPECT_NE(message([] { hsdp::parse_compare_axis("time"); }).find("x = time"), std::string::npos);
}

// The journal Fig. 2 run of `--example` (n = 100, eta = 0.05, journal sigma 3, L = beta = 1, D = 1).
hsdp::Run example_run() {
  hsdp::Run run;
  run.n = 100;
  run.steps = 100;
  run.batch_size = 1;
  run.eta = hsdp::Schedule(0.05);
  run.noise_std = hsdp::Schedule(0.15);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 1.0;
  run.diameter = 1.0;
  run.validate();
  return run;
}

TEST(Compare, EqualsAccountAtEverySweepPoint) {
  const hsdp::Run base = example_run();
  for (const auto axis : {hsdp::CompareAxis::steps, hsdp::CompareAxis::noise}) {
    hsdp::CompareSpec spec;
    spec.axis = axis;
    spec.xs = axis == hsdp::CompareAxis::steps ? hsdp::sweep_points(axis, 1, 400, 6, true)
                                               : hsdp::sweep_points(axis, 0.05, 1.0, 5, false);
    spec.query = hsdp::Query::at_delta(1e-6);
    spec.variants.push_back({"", [&](double x) { return hsdp::vary(base, axis, x); }});
    const hsdp::Comparison c = hsdp::compare(spec);
    ASSERT_EQ(c.curves.size(), hsdp::all_analyses().size());
    std::size_t compared = 0;
    for (std::size_t i = 0; i < c.xs.size(); ++i) {
      const hsdp::Report report = hsdp::account(hsdp::vary(base, axis, c.xs[i]), spec.query);
      ASSERT_EQ(report.analyses.size(), c.curves.size());
      for (std::size_t k = 0; k < c.curves.size(); ++k) {
        const auto& r = report.analyses[k];
        ASSERT_EQ(c.curves[k].analysis, r.name);
        ASSERT_EQ(c.curves[k].ys[i].has_value(), r.applicable) << r.name;
        if (r.applicable) {
          EXPECT_EQ(*c.curves[k].ys[i], *r.epsilon) << r.name << " at x = " << c.xs[i];
          ++compared;
        } else {
          EXPECT_EQ(c.curves[k].reasons[i], r.reason);
        }
      }
    }
    EXPECT_GE(compared, 2 * c.xs.size());  // at least two analyses apply everywhere
  }
}

TEST(Compare, CsvListsLeftOutCurvesAndDrawsLowerBoundsDashed) {
  // Full-batch GD: langevin and langevin-lower apply, the batch-1 analyses do not.
  hsdp::Run run;
  run.n = 50;
  run.steps = 10;
  run.batch_size = 50;
  run.sampling = hsdp::Sampling::full;
  run.eta = hsdp::Schedule(0.1);
  run.noise_std = hsdp::Schedule(0.2);
  run.loss.lipschitz = 1.0;
  run.loss.smoothness = 1.0;
  run.loss.strong_convexity = 0.5;
  run.diameter = kInf;
  run.validate();
  hsdp::CompareSpec spec;
  spec.axis = hsdp::CompareAxis::steps;
  spec.xs = {1, 5, 10, 50};
  spec.variants.push_back({"", [&](double x) { return hsdp::vary(run, spec.axis, x); },
                           {hsdp::find_analysis("langevin"), hsdp::find_analysis("langevin-lower"),
                            hsdp::find_analysis("balle-mixing")}});
  const hsdp::Comparison c = hsdp::compare(spec);
  const Csv csv = parse_csv(hsdp::to_csv(c));
  ASSERT_EQ(csv.header, (std::vector<std::string>{"steps", "langevin", "langevin-lower (lower)"}));
  ASSERT_EQ(csv.rows.size(), 4u);
  EXPECT_TRUE(has_comment(csv, "# balle-mixing: not applicable: "));
  EXPECT_TRUE(has_comment(csv, "# query: delta = 1e-05"));
  for (const auto& row : csv.rows) EXPECT_LE(cell_value(row[2]), cell_value(row[1]));  // lower <= upper
  const auto plot = hsdp::to_plot(c);
  ASSERT_EQ(plot.series.size(), 2u);
  EXPECT_FALSE(plot.series[0].dashed);
  EXPECT_TRUE(plot.series[1].dashed);
  bool noted = false;
  for (const auto& n : plot.notes) noted |= n.rfind("balle-mixing: not applicable: ", 0) == 0;
  EXPECT_TRUE(noted);
  EXPECT_TRUE(well_formed_xml(hsdp::svg::render(plot)));
}

// ---- figure presets -----------------------------------------------------------------------

TEST(Figures, EveryPresetRendersWithAllItsCurves) {
  const std::map<std::string, std::size_t> curves = {
      {"journal-fig2", 8}, {"isit-fig2", 6}, {"isit-fig3", 6},
      {"langevin-fig1", 12}, {"federated-fig2", 3}, {"noisy-sgd-fig1", 2},
      {"shifted-interpolation-ncgd", 5}};
  ASSERT_EQ(hsdp::figure_names().size(), curves.size());
  for (const auto& name : hsdp::figure_names()) {
    const hsdp::Comparison c = hsdp::compare(hsdp::figure(name, 6));
    EXPECT_EQ(c.xs.size(), 6u) << name;
    ASSERT_EQ(c.curves.size(), curves.at(name)) << name;
    for (const auto& curve : c.curves)
      for (std::size_t i = 0; i < c.xs.size(); ++i)
        EXPECT_TRUE(curve.ys[i].has_value()) << name << " " << curve.label << " x " << c.xs[i] << ": "
                                             << curve.reasons[i];
    const std::string svg = hsdp::svg::render(hsdp::to_plot(c));
    EXPECT_TRUE(well_formed_xml(svg)) << name;
    EXPECT_EQ(polylines(svg).size(), curves.at(name)) << name;
  }
  EXPECT_THROW(hsdp::figure("journal-fig9"), hsdp::InvalidArgument);
}

TEST(Figures, LangevinFig1IsTheCaptionFormula) {
  // Caption: ours alpha S^2 / (lambda sigma^2 n^2) (1 - e^{-lambda eta K / 2}), baseline
  // alpha S^2 eta K / (4 sigma^2 n^2); S = 4, n = 5000, eta = sigma = 0.02. The `langevin`
  // analysis reports the smaller of Cor. 1 and Thm 1 (= the baseline's expression).
  const hsdp::Comparison c = hsdp::compare(hsdp::figure("langevin-fig1", 25));
  const double S = 4, n = 5000, eta = 0.02, sigma = 0.02;
  std::size_t checked = 0;
  for (const auto& curve : c.curves) {
    const std::smatch m = [&] {
      std::smatch r;
      std::regex_search(curve.label, r, std::regex(R"(alpha=(\d+)(, lambda=(\d+))?)"));
      return r;
    }();
    ASSERT_FALSE(m.empty()) << curve.label;
    const double alpha = std::stod(m[1]);
    for (std::size_t i = 0; i < c.xs.size(); ++i) {
      const double K = c.xs[i];
      const double base = alpha * S * S * eta * K / (4 * sigma * sigma * n * n);
      double want = base;
      if (curve.analysis == "langevin") {
        const double lambda = std::stod(m[3]);
        want = std::min(base, alpha * S * S / (lambda * sigma * sigma * n * n) *
                                  (1 - std::exp(-lambda * eta * K / 2)));
      } else {
        EXPECT_EQ(curve.analysis, "composition-rdp");
        EXPECT_TRUE(curve.dashed);
      }
      const double got = curve.ys[i].value();
      EXPECT_GE(got, want * (1 - 1e-12)) << curve.label << " K " << K;  // rounded up
      EXPECT_LE(got, want * (1 + 1e-8)) << curve.label << " K " << K;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 12u * c.xs.size());
}

double value_at(const hsdp::Comparison& c, const std::string& label, double x) {
  for (const auto& curve : c.curves)
    if (curve.label == label)
      for (std::size_t i = 0; i < c.xs.size(); ++i)
        if (c.xs[i] == x) return curve.ys[i].value();
  ADD_FAILURE() << label << " at " << x;
  return std::nan("");
}

TEST(Figures, IsitAndJournalSpotValues) {
  // The values of tests/test_figures.cpp (mpmath): isit Fig. 2 Thm 4 at i = 39, eps = 1:
  // 0.01611293535; (15) at i = 20, eps = 1: 7.438546486e-05; journal Fig. 2 Cor. 1 at
  // eta = 0.05, sigma = 3, eps = 2: 5.918e-4, below (23) there.
  const hsdp::Comparison isit = hsdp::compare(hsdp::figure("isit-fig2"));
  EXPECT_NEAR(value_at(isit, "contraction-per-index, i=39", 1.0), 0.01611293535, 1e-10);
  EXPECT_NEAR(value_at(isit, "balle-mixing (15), i=20", 1.0), 7.438546486e-05, 1e-13);
  for (const double eps : isit.xs)
    for (const char* i : {"1", "20", "39"})
      EXPECT_LT(value_at(isit, std::string("contraction-per-index, i=") + i, eps),
                value_at(isit, std::string("balle-mixing (15), i=") + i, eps))
          << "i " << i << " eps " << eps;  // "our approach outperforms [12]"
  const hsdp::Comparison journal = hsdp::compare(hsdp::figure("journal-fig2", 60));
  EXPECT_NEAR(value_at(journal, "contraction-random-stop, eta=0.05, sigma=3", 2.0), 5.918e-4, 1e-6);
  for (const double eps : journal.xs)
    if (eps >= 2)
      for (const char* eta : {"0.05", "0.1"})
        EXPECT_LT(value_at(journal, std::string("contraction-random-stop, eta=") + eta + ", sigma=3", eps),
                  value_at(journal, "pabi-feldman (23), sigma=3", eps))
            << eta << " " << eps;
}

TEST(Figures, FederatedDeltaFallsWithTheSamplingRate) {
  // Fig. 2: "the more users are involved in each iteration, the higher the privacy".
  const hsdp::Comparison c = hsdp::compare(hsdp::figure("federated-fig2", 11));
  for (const double eps : c.xs) {
    EXPECT_GT(value_at(c, "federated, q=0.1", eps), value_at(c, "federated, q=0.2", eps)) << eps;
    EXPECT_GT(value_at(c, "federated, q=0.2", eps), value_at(c, "federated, q=0.3", eps)) << eps;
  }
}

TEST(Figures, NoisySgdFlattensAfterTBarWhileCompositionGrowsLinearly) {
  const hsdp::Comparison c = hsdp::compare(hsdp::figure("noisy-sgd-fig1", 21));  // T = 1, 101, ..., 2000
  ASSERT_EQ(c.xs[10], 1001);
  ASSERT_EQ(c.xs[20], 2000);
  const double sr1000 = value_at(c, "shifted-renyi", 1001), sr2000 = value_at(c, "shifted-renyi", 2000);
  const double co1000 = value_at(c, "composition-rdp", 1001), co2000 = value_at(c, "composition-rdp", 2000);
  EXPECT_NEAR(sr2000, sr1000, 1e-12 * sr1000);        // flat beyond T-bar = 200
  EXPECT_NEAR(co2000 / co1000, 2000.0 / 1001.0, 1e-6);  // linear in T
  EXPECT_LT(sr2000, co2000 / 4);
  // Below T-bar the two agree (same per-step subsampled-Gaussian cost): T = 101.
  EXPECT_NEAR(value_at(c, "shifted-renyi", 101), value_at(c, "composition-rdp", 101),
              0.01 * value_at(c, "composition-rdp", 101));
}

TEST(CompareCli, AtomicWriteReplacesAnExistingFileWhole) {
  const std::string path = temp_path("replace.csv");
  {
    std::ofstream out(path);
    out << std::string(100000, 'x');
  }
  hsdp::write_file_atomically(path, "a,b\n1,2\n", "csv");
  EXPECT_EQ(read(path), "a,b\n1,2\n");
  std::remove(path.c_str());
  EXPECT_THROW(hsdp::write_file_atomically("", "x", "csv"), hsdp::InvalidArgument);
}

}  // namespace
