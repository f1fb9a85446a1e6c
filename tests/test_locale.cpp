// Numbers are read and printed the same under any C locale (issue 37, docs/input.md "Numbers"):
// every parse goes through std::from_chars (hsdp::parse_real, hsdp::read_real) and every print
// through fmt without 'L'. A front end that sets a decimal-comma locale (Python's
// locale.setlocale(LC_ALL, "de_DE.UTF-8")) once made strtod read "1.5" as 1.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <clocale>
#include <cstdlib>
#include <cstring>
#include <string>

#include "hsdp/compare.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/train_spec.hpp"

namespace {

// A decimal-comma locale for the test's duration (scripts/install-deps.sh generates
// de_DE.UTF-8); skipped only when the system has none.
class DecimalComma : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_ = std::setlocale(LC_ALL, nullptr);
    for (const char* name : {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8", "nl_NL.UTF-8", "it_IT.UTF-8"})
      if (std::setlocale(LC_ALL, name) && std::strcmp(std::localeconv()->decimal_point, ",") == 0) return;
    std::setlocale(LC_ALL, previous_.c_str());
    GTEST_SKIP() << "no decimal-comma locale on this system (scripts/install-deps.sh generates de_DE.UTF-8)";
  }
  void TearDown() override { std::setlocale(LC_ALL, previous_.c_str()); }

 private:
  std::string previous_;
};

TEST_F(DecimalComma, TheLocaleBitesTheCLibrary) {
  // What the test guards against: strtod under this locale stops at the point.
  EXPECT_EQ(std::strtod("1.5", nullptr), 1.0);
  char printed[16];
  std::snprintf(printed, sizeof printed, "%g", 1.5);
  EXPECT_STREQ(printed, "1,5");
}

TEST_F(DecimalComma, ParsesWithAPoint) {
  EXPECT_EQ(hsdp::parse_real("x", "1.5"), 1.5);
  EXPECT_EQ(hsdp::parse_real("x", "-2.5e-3"), -2.5e-3);
  EXPECT_EQ(hsdp::parse_real("x", "+0.125"), 0.125);
  EXPECT_THROW(hsdp::parse_real("x", "1,5"), hsdp::InvalidArgument);
  EXPECT_EQ(hsdp::read_real("0.5"), 0.5);
  EXPECT_EQ(hsdp::read_real("1e-300"), 1e-300);
  EXPECT_FALSE(hsdp::read_real("0,5"));
  EXPECT_FALSE(hsdp::read_real("inf"));
  EXPECT_FALSE(hsdp::read_real("M"));
}

TEST_F(DecimalComma, PrintsWithAPoint) {
  EXPECT_EQ(hsdp::show(1.5), "1.5");
  EXPECT_EQ(hsdp::show(-2.5e-300), "-2.5e-300");
  try {
    hsdp::fail("delta", 1.5, "in (0, 1)");
  } catch (const hsdp::InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "delta = 1.5: must be in (0, 1)");
  }
}

TEST_F(DecimalComma, TrainingDefaultsReadAsWritten) {
  // std::stod read the table's "0.5" as 0: Python's huber loss complained about
  // `huber_smoothing = 0`, a keyword never typed.
  for (const auto& f : hsdp::train::TrainSpec::fields())
    if (f.name == "huber_smoothing") EXPECT_EQ(f.default_text(), "0.5");
  hsdp::train::TrainSpec spec;
  spec.model = "huber";
  spec.sigma = 1.0;
  EXPECT_EQ(spec.resolve().loss.huber_smoothing, 0.5);
}

TEST_F(DecimalComma, SweepPointsKeepTheirFraction) {
  // strtod rounded the middle point of 0.5 .. 2.5 to 1.
  const auto xs = hsdp::sweep_points(hsdp::CompareAxis::epsilon, 0.5, 2.5, 3, false);
  ASSERT_EQ(xs.size(), 3u);
  EXPECT_EQ(xs[1], 1.5);
  const auto ys = hsdp::sweep_points(hsdp::CompareAxis::noise, 0.1, 0.3, 5, false);
  EXPECT_EQ(ys[1], 0.15);
}

}  // namespace
