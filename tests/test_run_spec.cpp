// RunSpec: how a run is stated, its key -> value map, and its resolution into a Run.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "hsdp/errors.hpp"
#include "hsdp/run_spec.hpp"

namespace {

using hsdp::FieldValues;
using hsdp::RunSpec;

std::string message(const RunSpec& spec) {
  try {
    spec.resolve();
  } catch (const hsdp::InvalidArgument& e) {
    return e.what();
  }
  return "resolved";
}

TEST(RunSpec, MapRoundTripKeepsWhatWasStatedInFieldOrder) {
  const FieldValues stated = {{"n", "1000"},          {"batch_size", "10"}, {"sampling", "poisson"},
                              {"eta", "0.5"},         {"sigma", "2"},       {"convention", "altschuler"},
                              {"lipschitz", "1"},     {"non_convex", ""},   {"diameter", "inf"},
                              {"adjacency", "remove"}};
  const RunSpec spec = RunSpec::from_map(stated);
  EXPECT_EQ(spec.to_map(), stated);
  EXPECT_EQ(RunSpec::from_map(spec.to_map()).to_map(), stated);
  // Numbers are written in their shortest round-trip form.
  RunSpec s;
  s.eta = 0.1;
  s.noise_std = 1.0 / 3.0;
  const FieldValues m = s.to_map();
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(std::stod(m[1].second), 1.0 / 3.0);
}

TEST(RunSpec, ResolveAppliesDefaultsAndTranslatesTheNoiseStatement) {
  RunSpec spec;
  spec.n = 100;
  spec.eta = 0.05;
  spec.sigma = 3;
  spec.convention = "journal";
  const hsdp::Run run = spec.resolve();
  EXPECT_EQ(run.steps, 100);
  EXPECT_EQ(run.batch_size, 1);
  EXPECT_EQ(run.sampling, hsdp::Sampling::cyclic);
  EXPECT_DOUBLE_EQ(run.noise_std.at(1), 0.05 * 3);
  EXPECT_TRUE(std::isinf(run.diameter));

  // DP-SGD units with a step-size schedule: std_t = eta_t z C / b at every step.
  RunSpec dp;
  dp.n = 100;
  dp.batch_size = 10;
  dp.steps = 4;
  dp.eta = 1.0;
  dp.eta_schedule = "inv-t";
  dp.noise_multiplier = 2;
  dp.clip = 0.5;
  const hsdp::Run r = dp.resolve();
  ASSERT_EQ(r.noise_std.size(), 4u);
  for (int t = 1; t <= 4; ++t) EXPECT_DOUBLE_EQ(r.noise_std.at(t), (1.0 / t) * 2 * 0.5 / 10);
  EXPECT_EQ(dp.noise_statement().unit, hsdp::NoiseUnit::multiplier);
}

TEST(RunSpec, ErrorsNameTheFieldInTheLibrarysTerms) {
  RunSpec spec;
  EXPECT_EQ(message(spec), "n = (missing): must be given: the dataset size, an integer >= 1 (or use example)");
  spec.n = 10;
  spec.eta = 0.1;
  spec.noise_std = 1;
  spec.sampling = "often";
  EXPECT_EQ(message(spec), "sampling = often: must be one of full, poisson, fixed, shuffle, cyclic");
  spec.sampling.reset();
  spec.sigma = 2;
  EXPECT_EQ(message(spec), "sigma = 2: must be absent when noise_std is given (give one of the two)");
  try {
    RunSpec::from_map({{"n", "ten"}});
    ADD_FAILURE() << "no error";
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_EQ(e.field(), "n");
    EXPECT_EQ(e.value(), "ten");
  }
  EXPECT_THROW(RunSpec::from_map({{"speed", "1"}}), hsdp::InvalidArgument);
}

TEST(RunSpec, PldGridFieldsResolveRoundTripAndNameThemselves) {
  // Stated: in the map after every other field, in the Run, and stated back by stating().
  const FieldValues stated = {{"n", "100"}, {"eta", "0.1"}, {"noise_std", "1"},
                              {"pld_interval", "0.0002"}, {"pld_cells", "80"}};
  const RunSpec spec = RunSpec::from_map(stated);
  EXPECT_EQ(spec.to_map(), stated);
  const hsdp::Run run = spec.resolve();
  EXPECT_EQ(run.pld_interval, 2e-4);
  EXPECT_EQ(run.pld_cells, 80.0);
  const RunSpec back = RunSpec::stating(run);
  EXPECT_EQ(back.pld_interval, 2e-4);
  EXPECT_EQ(back.pld_cells, 80.0);
  EXPECT_EQ(back.resolve().summary(), run.summary());
  // Not stated: absent from the Run (the analyses' defaults apply) and from its summary.
  RunSpec plain = RunSpec::from_map({{"n", "100"}, {"eta", "0.1"}, {"noise_std", "1"}});
  EXPECT_FALSE(plain.resolve().pld_interval.has_value());
  EXPECT_EQ(plain.resolve().summary().find("pld"), std::string::npos);
  // Out of div::validate's range: the error names the run field and the range.
  plain.pld_interval = 1.0;
  EXPECT_EQ(message(plain), "pld_interval = 1: must be in [1e-06, 0.5]");
  plain.pld_interval = 1e-7;
  EXPECT_EQ(message(plain), "pld_interval = 1e-07: must be in [1e-06, 0.5]");
  plain.pld_interval.reset();
  plain.pld_cells = std::nan("");
  EXPECT_EQ(message(plain), "pld_cells = nan: must be in [1, 1000]");
  try {
    plain.pld_cells = 0.0;
    plain.resolve();
    ADD_FAILURE() << "no error";
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_EQ(e.field(), "pld_cells");
  }
}

TEST(RunSpec, OneNameTablePerEnumPrintsAndParses) {
  for (const auto& [value, name] : hsdp::names<hsdp::Sampling>()) {
    EXPECT_EQ(hsdp::to_string(value), name);
    EXPECT_EQ(hsdp::parse_name<hsdp::Sampling>(name, "sampling"), value);
  }
  for (const auto& [value, name] : hsdp::names<hsdp::Convention>())
    EXPECT_EQ(hsdp::parse_convention(name), value);
  EXPECT_EQ(hsdp::to_string(hsdp::ScheduleShape::inv_sqrt), "inv-sqrt");
}

TEST(StatedQuery, DefaultsAndChecks) {
  EXPECT_EQ(*hsdp::stated_query({}, {}, {}).delta, 1e-5);
  EXPECT_EQ(*hsdp::stated_query(1.0, {}, {}).epsilon, 1.0);
  EXPECT_THROW(hsdp::stated_query({}, 2.0, {}), hsdp::InvalidArgument);
  EXPECT_THROW(hsdp::stated_query({}, {}, {0.5}), hsdp::InvalidArgument);
}

}  // namespace

namespace {

// A DP-SGD statement (Opacus' MNIST example): noise multiplier and clip, no step size.
RunSpec dp_sgd_without_eta() {
  RunSpec s;
  s.n = 60000;
  s.batch_size = 256;
  s.sampling = "poisson";
  s.noise_multiplier = 1.1;
  s.clip = 1;
  s.steps = 14062;
  return s;
}

TEST(RunSpec, WithoutEtaTheNoiseIsKeptPerUnitOfStep) {
  const hsdp::Run r = dp_sgd_without_eta().resolve();
  EXPECT_FALSE(r.eta_known);
  EXPECT_EQ(r.eta.at(1), 1.0);
  EXPECT_DOUBLE_EQ(r.noise_std.at(1), 1.1 * 1.0 / 256);  // z C / b per unit of eta
  EXPECT_NE(r.summary().find("eta=unknown"), std::string::npos) << r.summary();
  EXPECT_NE(r.summary().find("std=0.004296875*eta"), std::string::npos) << r.summary();
  // A sigma whose std is eta sigma: the same.
  RunSpec s;
  s.n = 100;
  s.sigma = 3;
  s.convention = "journal";
  EXPECT_DOUBLE_EQ(s.resolve().noise_std.at(1), 3.0);
  // Stated again (RunSpec::stating): no eta, the noise as a journal sigma; resolves to the run.
  const RunSpec again = RunSpec::stating(r);
  EXPECT_FALSE(again.eta.has_value());
  const hsdp::Run back = again.resolve();
  EXPECT_FALSE(back.eta_known);
  EXPECT_DOUBLE_EQ(back.noise_std.at(1), r.noise_std.at(1));
}

TEST(RunSpec, WithoutEtaAnAbsoluteNoiseIsAnError) {
  RunSpec s;
  s.n = 100;
  s.noise_std = 1;
  EXPECT_EQ(message(s).rfind("eta = (missing): must be given with noise_std: the step size", 0), 0u) << message(s);
  s.noise_std.reset();
  s.sigma = 1;
  s.convention = "chourasia";  // std sqrt(2 eta) sigma: not proportional to eta
  EXPECT_EQ(message(s).rfind("eta = (missing): must be given with convention = chourasia", 0), 0u) << message(s);
  s.convention = "journal";
  s.eta_schedule = "inv-sqrt";
  EXPECT_EQ(message(s), "eta = (missing): must be given with eta_schedule: its base value");
  // A run whose eta is unknown must hold the unit step (Run::validate).
  hsdp::Run r = dp_sgd_without_eta().resolve();
  r.eta = hsdp::Schedule(0.5);
  EXPECT_THROW(r.validate(), hsdp::InvalidArgument);
}

}  // namespace
