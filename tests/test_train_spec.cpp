// TrainSpec: the table of its fields (the one source of the `hsdp train` flags and the
// Python keywords) and resolve(), which checks what the table says each field allows.
#include <gtest/gtest.h>

#include <set>
#include <tuple>
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
    const int members = (f.flag != nullptr) + (f.real != nullptr) + (f.word != nullptr) + (f.integer != nullptr);
    EXPECT_EQ(members, 1) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_EQ(f.is_switch(), f.flag != nullptr) << f.name;
    EXPECT_EQ(f.type == TrainField::Type::word, f.word != nullptr) << f.name;
    EXPECT_EQ(f.type == TrainField::Type::integer, f.integer != nullptr) << f.name;
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

TEST(TrainSpec, DefaultsAreTheTables) {
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
    if (!f.real || f.range == TrainField::Range::any) continue;
    ++checked;
    const bool positive = f.range == TrainField::Range::positive;
    EXPECT_EQ(f.allowed(), positive ? "> 0" : ">= 0") << f.name;
    auto set = [&](TrainSpec& s, double v) { s.*f.real = v; };
    TrainSpec s = stated();
    // The loss that reads the field (the rule refuses it for the others).
    if (f.name == "huber_smoothing") s.model = "huber";
    if (f.name == "label_bound") s.model = "squared";
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
      s.*f.word = value;
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

// Resolution reads the table's defaults: an unstated field is its default_text().
TEST(TrainSpec, UnstatedFieldsTakeTheTablesDefaults) {
  const hsdp::train::TrainConfig c = stated().resolve();
  EXPECT_EQ(hsdp::show(c.loss.l2), field("l2").default_text());
  EXPECT_EQ(hsdp::show(c.loss.huber_smoothing), field("huber_smoothing").default_text());
  EXPECT_EQ(hsdp::show(c.loss.label_bound), field("label_bound").default_text());
  EXPECT_EQ(c.constraint.kind, hsdp::train::ConstraintKind::ball);
  EXPECT_EQ(c.algorithm, hsdp::train::Algorithm::noisy_sgd);
  EXPECT_EQ(c.noise, hsdp::NoiseKind::gaussian);
  EXPECT_TRUE(c.bias);
}

// set() reads a field from its text as typed, and to_map() gives it back; a field holds a value
// exactly when it was stated.
TEST(TrainSpec, SetReadsTheTextAndToMapGivesTheStatement) {
  TrainSpec s;
  EXPECT_TRUE(s.to_map().empty());
  s.set("model", "huber");
  s.set("huber_smoothing", "0.25");
  s.set("batch_size", "+8");
  s.set("no_bias", "");
  const hsdp::FieldValues want = {{"model", "huber"}, {"huber_smoothing", "0.25"}, {"no_bias", ""}, {"batch_size", "8"}};
  EXPECT_EQ(s.to_map(), want);
  for (const auto& [name, text, shown] :
       std::vector<std::tuple<std::string, std::string, std::string>>{{"batch_size", "9223372036854775808", "9223372036854775808"},
                                                                    {"batch_size", "2.5", "2.5"},
                                                                    {"batch_size", "", "(empty)"},
                                                                    {"eta", "1e400", "1e400"},
                                                                    {"eta", "fast", "fast"},
                                                                    {"eta", "", "(empty)"},
                                                                    {"model", "", "(empty)"}}) {
    try {
      s.set(name, text);
      ADD_FAILURE() << name << " = " << text;
    } catch (const hsdp::InvalidArgument& e) {
      EXPECT_EQ(e.field(), name);
      EXPECT_EQ(e.value(), shown);
    }
  }
}

// The rule (field_use.hpp): a field the table says the resolved configuration does not read is
// refused when stated, naming it, and accepted where it is read. Each condition is checked
// both ways, so that a field can neither be silently ignored nor refused where it counts.
TEST(TrainSpec, EveryStatedFieldIsReadOrRefused) {
  struct Case {
    std::string field, value;
    std::vector<std::pair<std::string, std::string>> refused_with, read_with;
  };
  const std::vector<Case> cases = {
      {"huber_smoothing", "3", {{"model", "logistic"}}, {{"model", "huber"}}},
      {"huber_smoothing", "3", {{"model", "softmax"}}, {{"model", "huber"}}},
      {"label_bound", "2", {{"model", "logistic"}}, {{"model", "squared"}}},
      {"radius", "5", {{"constraint", "none"}}, {{"constraint", "box"}}},
      {"sampling", "poisson", {{"algorithm", "noisy-gd"}}, {{"algorithm", "noisy-sgd"}}},
      {"epochs", "3", {{"algorithm", "pnsgd"}}, {{"algorithm", "noisy-gd"}}},
      {"epochs", "3", {{"algorithm", "federated"}}, {{"algorithm", "noisy-sgd"}}},
      {"epochs", "3", {{"algorithm", "online"}}, {{"algorithm", "noisy-sgd"}}},
      {"epochs", "3", {{"steps", "5"}}, {{"eta", "0.5"}}},
  };
  for (const Case& c : cases) {
    auto spec = [&](const std::vector<std::pair<std::string, std::string>>& with) {
      TrainSpec s = stated();
      for (const auto& [name, text] : with) s.set(name, text);
      s.set(c.field, c.value);
      return s;
    };
    const auto e = error_of(spec(c.refused_with));
    EXPECT_EQ(e.field(), c.field);
    EXPECT_EQ(e.value(), c.value);
    EXPECT_EQ(e.range().rfind("absent: ", 0), 0u) << e.what();
    EXPECT_NO_THROW(spec(c.read_with).resolve()) << c.field;
  }
  // noise, sigma and noise_std: refused once the request trains without noise.
  for (const char* name : {"noise", "sigma", "noise_std"}) {
    TrainSpec s = stated();
    s.set(name, std::string(name) == "noise" ? "laplace" : "1");
    hsdp::train::TrainConfig c = s.resolve();
    EXPECT_NO_THROW(s.require_read(c));
    c.no_noise = true;
    EXPECT_THROW(s.require_read(c), hsdp::InvalidArgument) << name;
  }
}

}  // namespace
