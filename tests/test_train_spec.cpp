// TrainSpec: the table of its fields (the one source of the `hsdp train` flags and the
// Python keywords) and resolve(), which checks what the table says each field allows.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/train/train_spec.hpp"

namespace {

using hsdp::train::TrainField;
using hsdp::train::TrainSpec;

const TrainField& field(std::string_view name) {
  for (const TrainField& f : TrainSpec::fields())
    if (f.name == name) return f;
  throw std::logic_error("no field " + std::string(name));
}

// A request that resolves: the model is the one field without a default.
TrainSpec stated() {
  TrainSpec s;
  s.model = "logistic";
  return s;
}

// The InvalidArgument of resolve(), or a failure when it resolves.
hsdp::InvalidArgument error_of(const TrainSpec& s) {
  try {
    s.resolve();
  } catch (const hsdp::InvalidArgument& e) {
    return e;
  }
  ADD_FAILURE() << "resolved";
  return hsdp::InvalidArgument("resolved");
}

TEST(TrainSpec, FieldsInTheOrderOfTheFlagsEachMemberOnce) {
  std::vector<std::string> names;
  for (const TrainField& f : TrainSpec::fields()) {
    names.emplace_back(f.name);
    const int members = (f.flag != nullptr) + (f.real != nullptr) + (f.word != nullptr) +
                        (f.optional_real != nullptr) + (f.optional_integer != nullptr) +
                        (f.optional_word != nullptr);
    EXPECT_EQ(members, 1) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_EQ(f.is_switch(), f.flag != nullptr) << f.name;
    EXPECT_EQ(f.type == TrainField::Type::word, f.word || f.optional_word) << f.name;
    EXPECT_EQ(f.type == TrainField::Type::integer, f.optional_integer != nullptr) << f.name;
  }
  const std::vector<std::string> expected = {
      "model", "l2",     "huber_smoothing", "label_bound",  "no_bias", "record_norm", "constraint",
      "radius", "algorithm", "sampling",    "drop_last",    "batch_size", "steps", "epochs", "eta",
      "eta_schedule", "noise", "sigma",     "noise_std",    "release", "clip", "adjacency", "order_known"};
  EXPECT_EQ(names, expected);
  // Each member of TrainSpec is one field: no two fields share a member.
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
}

TEST(TrainSpec, DefaultsAreThoseOfADefaultConstructedSpec) {
  EXPECT_TRUE(field("model").required);
  EXPECT_FALSE(field("model").has_default());
  EXPECT_EQ(field("model").default_text(), "");
  EXPECT_EQ(field("l2").default_text(), "0");
  EXPECT_EQ(field("huber_smoothing").default_text(), "0.5");
  EXPECT_EQ(field("label_bound").default_text(), "1");
  EXPECT_EQ(field("no_bias").default_text(), "false");
  EXPECT_EQ(field("constraint").default_text(), "ball");
  EXPECT_EQ(field("algorithm").default_text(), "noisy-sgd");
  EXPECT_EQ(field("noise").default_text(), "gaussian");
  // Optional fields: the trainer picks the value (batch size by algorithm, epochs, ...).
  // radius: 10, record_norm: 1, or the plan's choice with a target epsilon (docs/training.md).
  for (const char* name : {"record_norm", "radius", "sampling", "batch_size", "steps", "epochs", "eta", "eta_schedule", "sigma",
                           "noise_std", "release", "clip"}) {
    EXPECT_FALSE(field(name).has_default()) << name;
    EXPECT_EQ(field(name).default_text(), "") << name;
  }
}

TEST(TrainSpec, ResolveChecksTheRangeOfTheTable) {
  int checked = 0;
  for (const TrainField& f : TrainSpec::fields()) {
    if (!(f.real || f.optional_real) || f.range == TrainField::Range::any) continue;
    ++checked;
    const bool positive = f.range == TrainField::Range::positive;
    EXPECT_EQ(f.allowed(), positive ? "> 0" : ">= 0") << f.name;
    auto set = [&](TrainSpec& s, double v) {
      if (f.real) s.*f.real = v;
      else s.*f.optional_real = v;
    };
    TrainSpec s = stated();
    set(s, positive ? 0.0 : -1.0);
    const auto e = error_of(s);
    EXPECT_EQ(e.field(), f.name);
    EXPECT_EQ(e.range(), "finite and " + f.allowed()) << e.what();
    set(s, positive ? 1e-3 : 0.0);
    EXPECT_NO_THROW(s.resolve()) << f.name;
  }
  EXPECT_EQ(checked, 4);  // l2, huber_smoothing, label_bound, record_norm (optional: checked when stated)
  EXPECT_EQ(stated().resolve().record_norm, 1.0);  // unstated: 1 (the plan may choose it)
  EXPECT_TRUE(stated().resolve().unstated.record_norm);
}

TEST(TrainSpec, ResolveAcceptsExactlyTheChoicesOfTheTable) {
  int checked = 0;
  for (const TrainField& f : TrainSpec::fields()) {
    if (f.type != TrainField::Type::word) continue;
    ++checked;
    ASSERT_FALSE(f.choices.empty()) << f.name;
    std::vector<std::string> choices;
    std::string listed;
    for (std::size_t start = 0;;) {
      const std::size_t bar = f.choices.find('|', start);
      choices.emplace_back(f.choices.substr(start, bar - start));
      listed += (listed.empty() ? "" : ", ") + choices.back();
      if (bar == std::string_view::npos) break;
      start = bar + 1;
    }
    std::string allowed;
    for (const auto& c : choices) allowed += (allowed.empty() ? "" : " | ") + c;
    EXPECT_EQ(f.allowed(), allowed);
    auto state = [&](const std::string& value) {
      TrainSpec s = stated();
      if (f.word) s.*f.word = value;
      else s.*f.optional_word = value;
      return s;
    };
    for (const auto& c : choices) EXPECT_NO_THROW(state(c).resolve()) << f.name << " = " << c;
    const auto e = error_of(state("nonsense"));
    EXPECT_EQ(e.field(), f.name);
    EXPECT_EQ(e.range(), "one of " + listed) << e.what();
  }
  EXPECT_EQ(checked, 10);  // model, constraint, algorithm, sampling, drop_last, eta_schedule, noise, release,
                           // adjacency, order_known
}

}  // namespace
