#include "hsdp/train/train_spec.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "hsdp/errors.hpp"

namespace hsdp::train {

namespace {

using Range = TrainField::Range;
using Type = TrainField::Type;

TrainField sw(TrainField f, bool TrainSpec::*m) {
  f.type = Type::switch_;
  f.flag = m;
  return f;
}
TrainField re(TrainField f, std::optional<double> TrainSpec::*m, Range range = Range::any,
              std::string_view default_value = {}, ReadCondition<TrainConfig> unread = nullptr) {
  f.type = Type::real;
  f.real = m;
  f.range = range;
  f.default_value = default_value;
  f.unread = unread;
  return f;
}
TrainField in(TrainField f, std::optional<std::int64_t> TrainSpec::*m) {
  f.type = Type::integer;
  f.integer = m;
  return f;
}
TrainField wd(TrainField f, std::optional<std::string> TrainSpec::*m, std::string_view choices,
              std::string_view default_value = {}, ReadCondition<TrainConfig> unread = nullptr) {
  f.type = Type::word;
  f.word = m;
  f.choices = choices;
  f.default_value = default_value;
  f.unread = unread;
  return f;
}
TrainField required(TrainField f) {
  f.required = true;
  return f;
}
TrainField read_when(TrainField f, ReadCondition<TrainConfig> unread) {
  f.unread = unread;
  return f;
}

// ---- when a resolved configuration does not read a field (TrainField::unread)

std::optional<std::string> unless_huber(const TrainConfig& c) {
  if (c.loss.kind == LossKind::huber) return std::nullopt;
  return fmt::format("only {} reads it (the smoothing of the huber hinge)", error_field("model", "huber"));
}
std::optional<std::string> unless_squared(const TrainConfig& c) {
  if (c.loss.kind == LossKind::squared) return std::nullopt;
  return fmt::format("only {} reads it (the bound on |label| of the squared loss)", error_field("model", "squared"));
}
std::optional<std::string> unless_constrained(const TrainConfig& c) {
  if (c.constraint.kind != ConstraintKind::none) return std::nullopt;
  return fmt::format("{} has no constraint set to give a radius", error_field("constraint", "none"));
}
std::optional<std::string> unless_noisy_sgd(const TrainConfig& c) {
  if (c.algorithm == Algorithm::noisy_sgd) return std::nullopt;
  return fmt::format("{} forms its batches as its paper does", error_field("algorithm", to_string(c.algorithm)));
}
std::optional<std::string> unless_shuffled(const TrainConfig& c) {
  if (const auto why = unless_noisy_sgd(c)) return why;
  if (c.unstated.sampling || c.sampling == Sampling::shuffle) return std::nullopt;
  return fmt::format("only {} reads it (the order of every other batching has no partial last batch; sampling = {})",
                     error_field("sampling", "shuffle"), to_string(c.sampling));
}
std::optional<std::string> unless_epochs_count(const TrainConfig& c) {
  if (c.steps)
    return fmt::format("{} states the length (give one of {} and {})", error_field("steps", std::to_string(*c.steps)),
                       error_field("steps"), error_field("epochs"));
  if (c.algorithm == Algorithm::noisy_sgd || c.algorithm == Algorithm::noisy_gd) return std::nullopt;
  return fmt::format("{} makes one pass over the records (its length is {}, by default the whole pass)",
                     error_field("algorithm", to_string(c.algorithm)), error_field("steps"));
}
std::optional<std::string> unless_noise(const TrainConfig& c) {
  if (!c.no_noise) return std::nullopt;
  return fmt::format("{} trains without noise", error_field("no_noise"));
}

// The order of this table is the order of the command's flags (`hsdp train --help`).
const std::vector<TrainField>& table() {
  static const std::vector<TrainField> fields = {
      required(wd({"model", "Loss: logistic|squared|huber|softmax"}, &TrainSpec::model, "logistic|squared|huber|softmax")),
      re({"l2", "L2 regulariser lambda (strong convexity)"}, &TrainSpec::l2, Range::nonnegative, "0"),
      re({"huber_smoothing", "Smoothing width h of the huber hinge"}, &TrainSpec::huber_smoothing, Range::positive,
         "0.5", unless_huber),
      re({"label_bound", "Squared loss: bound Y on |label|"}, &TrainSpec::label_bound, Range::positive, "1",
         unless_squared),
      sw({"no_bias", "No intercept"}, &TrainSpec::no_bias),
      re({"record_norm", "R: every record is scaled to ||x|| <= R (record-local; the bias adds 1 to R^2); "
                         "default 1, planned with a target epsilon"},
         &TrainSpec::record_norm, Range::positive),
      wd({"constraint", "Constraint set: ball|box|none"}, &TrainSpec::constraint, "ball|box|none", "ball"),
      re({"radius", "Radius r of the ball (half-width of the box); default 10, planned with a target epsilon"},
         &TrainSpec::radius, Range::any, {}, unless_constrained),
      wd({"algorithm", "noisy-sgd|noisy-gd|pnsgd|federated|online"}, &TrainSpec::algorithm,
         "noisy-sgd|noisy-gd|pnsgd|federated|online", "noisy-sgd"),
      wd({"sampling", "noisy-sgd batches: poisson|fixed|shuffle|cyclic|full (default poisson; planned with a target epsilon)"},
         &TrainSpec::sampling, "poisson|fixed|shuffle|cyclic|full", {}, unless_noisy_sgd),
      wd({"drop_last", "shuffle: true drops the n mod b records left after the last full batch of each epoch; false "
                       "keeps them as a smaller last batch (PyTorch's DataLoader default); default true"},
         &TrainSpec::drop_last, "true|false", {}, unless_shuffled),
      in({"batch_size", "Batch size b (users per round m for federated; default min(256, n/4), planned with a target epsilon)"}, &TrainSpec::batch_size),
      in({"steps", "Number of steps T"}, &TrainSpec::steps),
      re({"epochs", "Epochs (noisy-sgd: T = epochs n / b, default 1; noisy-gd: T = epochs, default 100; planned with a target epsilon)"},
         &TrainSpec::epochs, Range::any, {}, unless_epochs_count),
      re({"eta", "Step size (default 1/beta; planned with a target epsilon: 1.98/beta)"}, &TrainSpec::eta),
      wd({"eta_schedule", "constant|inv-sqrt|inv-t (default constant; online inv-sqrt)"},
         &TrainSpec::eta_schedule, "constant|inv-sqrt|inv-t"),
      wd({"noise", "gaussian|laplace"}, &TrainSpec::noise, "gaussian|laplace", "gaussian", unless_noise),
      read_when(re({"sigma", "The algorithm's own noise parameter sigma (its paper's convention)"}, &TrainSpec::sigma),
                unless_noise),
      read_when(re({"noise_std", "Noise std in parameter space per step"}, &TrainSpec::noise_std), unless_noise),
      wd({"release", "last|random-stop|every (default last; online random-stop; every: accounted as if "
                     "every iterate were published)"},
         &TrainSpec::release, "last|random-stop|every"),
      re({"clip", "Per-example gradient clipping norm C (only the composition baseline stays valid)"},
         &TrainSpec::clip),
      wd({"adjacency", "Neighbouring datasets of the target and the report: replace (one record replaced, default; "
                       "the report shows add/remove-one beside it) | remove (one added or removed: Opacus' and "
                       "dp_accounting's)"},
         &TrainSpec::adjacency, "replace|remove"),
      wd({"order_known", "true: the batch order is public (an order log or seed published with the model): shuffled "
                         "batches certified at their worst position, Poisson and fixed-size batches without "
                         "amplification; default true for a seeded run, false otherwise"},
         &TrainSpec::order_known, "true|false"),
  };
  return fields;
}

const TrainField& field_named(std::string_view name) {
  for (const TrainField& f : table())
    if (f.name == name) return f;
  throw std::logic_error(fmt::format("TrainSpec: no field {}", name));
}

// The table's default of an unstated field.
double default_real(std::string_view name) {
  const TrainField& f = field_named(name);
  return parse_real(f.name, f.default_value);  // not std::stod: "0.5" is 0 under a decimal-comma locale
}
std::string default_word(std::string_view name) { return std::string(field_named(name).default_value); }

// The names of a '|'-separated list of choices, as pick_choice lists them ("a, b, c").
std::string listed(std::string_view choices, std::string_view separator) {
  std::string out;
  for (const char c : choices) {
    if (c == '|') out += separator;
    else out += c;
  }
  return out;
}

}  // namespace

std::span<const TrainField> TrainSpec::fields() { return table(); }

std::string TrainField::default_text() const {
  if (!has_default()) return "";
  if (flag) return "false";
  if (real) return show(parse_real(name, default_value));
  return std::string(default_value);
}

std::string TrainField::allowed() const {
  switch (range) {
    case Range::positive: return "> 0";
    case Range::nonnegative: return ">= 0";
    case Range::any: break;
  }
  return listed(choices, " | ");
}

FieldValues TrainSpec::to_map() const {
  FieldValues out;
  for (const TrainField& f : fields()) {
    const std::string name(f.name);
    if (f.flag && this->*f.flag) out.emplace_back(name, "");
    if (f.real && this->*f.real) out.emplace_back(name, show(*(this->*f.real)));
    if (f.integer && this->*f.integer) out.emplace_back(name, std::to_string(*(this->*f.integer)));
    if (f.word && this->*f.word) out.emplace_back(name, *(this->*f.word));
  }
  return out;
}

void TrainSpec::set(std::string_view name, std::string_view text) {
  const TrainField* f = nullptr;
  for (const TrainField& candidate : fields())
    if (candidate.name == name) f = &candidate;
  if (!f) fail("training field", name, "a field of a training run (TrainSpec::fields())");
  const Param field = opt(name);
  if (f->flag) {
    if (!text.empty()) fail(field, text, "empty (a switch)");
    this->*f->flag = true;
  } else if (f->real) {
    this->*f->real = parse_real(field, text);
  } else if (f->integer) {
    this->*f->integer = parse_integer(field, text);
  } else {
    if (text.empty()) refuse_empty(name, "one of " + listed(f->choices, ", "));
    this->*f->word = std::string(text);
  }
}

void TrainSpec::require_read(const TrainConfig& config) const {
  std::vector<ReadRule<TrainConfig>> rules;
  for (const TrainField& f : fields()) rules.push_back({f.name, f.unread});
  hsdp::require_read<TrainConfig>(to_map(), rules, config);
}

TrainConfig TrainSpec::resolve() const {
  const TrainSpec& o = *this;
  TrainConfig c;
  // A word stated empty (model="", `--noise ''`) names its field, never reads as unstated.
  for (const TrainField& f : fields())
    if (f.word && o.*f.word && (o.*f.word)->empty()) refuse_empty(f.name, "one of " + listed(f.choices, ", "));
  if (!o.model) fail(opt("model"), "(missing)", "given: one of " + listed(field_named("model").choices, ", "));
  c.algorithm = parse_algorithm(o.algorithm.value_or(default_word("algorithm")));
  c.loss.kind = parse_loss(*o.model);
  // The real fields with a range in the table (stated ones), in its order.
  for (const TrainField& f : fields()) {
    if (f.range == Range::any || !f.real || !(o.*f.real)) continue;
    const double v = *(o.*f.real);
    if (f.range == Range::positive) require_positive(opt(f.name), v);
    else require_nonnegative(opt(f.name), v);
  }
  c.loss.l2 = o.l2.value_or(default_real("l2"));
  c.loss.huber_smoothing = o.huber_smoothing.value_or(default_real("huber_smoothing"));
  c.loss.label_bound = o.label_bound.value_or(default_real("label_bound"));
  c.bias = !o.no_bias;
  c.record_norm = o.record_norm.value_or(1.0);
  c.constraint.kind = pick_choice<ConstraintKind>(
      opt("constraint"), o.constraint.value_or(default_word("constraint")),
      {{"ball", ConstraintKind::ball}, {"box", ConstraintKind::box}, {"none", ConstraintKind::none}});
  c.constraint.radius = o.radius.value_or(10.0);
  if (o.radius) require_positive(opt("radius"), *o.radius);
  c.constraint.validate();
  c.noise = pick_choice<NoiseKind>(opt("noise"), o.noise.value_or(default_word("noise")),
                                   {{"gaussian", NoiseKind::gaussian}, {"laplace", NoiseKind::laplace}});
  if (o.sampling)
    c.sampling = pick_choice<Sampling>(opt("sampling"), *o.sampling,
                                       {{"poisson", Sampling::poisson}, {"fixed", Sampling::fixed}, {"shuffle", Sampling::shuffle},
                                        {"cyclic", Sampling::cyclic}, {"full", Sampling::full}});
  if (o.drop_last) {
    c.drop_last = pick_choice<bool>(opt("drop_last"), *o.drop_last, {{"true", true}, {"false", false}});
    if (!c.drop_last && o.sampling && c.sampling != Sampling::shuffle)
      fail(opt("drop_last"), *o.drop_last,
           fmt::format("stated only with {} (only a shuffled epoch leaves a partial last batch; sampling = {})",
                       error_field("sampling", "shuffle"), *o.sampling));
  }
  if (o.adjacency)
    c.adjacency = pick_choice<Adjacency>(opt("adjacency"), *o.adjacency,
                                         {{"replace", Adjacency::replace}, {"remove", Adjacency::remove}});
  if (o.order_known)
    c.order_known = pick_choice<bool>(opt("order_known"), *o.order_known, {{"true", true}, {"false", false}});
  const bool default_one = c.algorithm == Algorithm::pnsgd || c.algorithm == Algorithm::online;
  const std::int64_t default_batch = default_one ? 1 : c.algorithm == Algorithm::federated ? 10 : 256;
  c.batch_size = o.batch_size.value_or(default_batch);
  c.batch_size_is_default = !o.batch_size;
  c.steps = o.steps;
  if (o.epochs) c.epochs = *o.epochs;
  else if (c.algorithm == Algorithm::noisy_gd) c.epochs = 100;
  c.eta = o.eta;
  if (o.eta_schedule)
    c.eta_shape = pick_choice<ScheduleShape>(opt("eta_schedule"), *o.eta_schedule,
                                             {{"constant", ScheduleShape::constant}, {"inv-sqrt", ScheduleShape::inv_sqrt},
                                              {"inv-t", ScheduleShape::inv_t}});
  c.release = o.release ? pick_choice<Release>(opt("release"), *o.release,
                                               {{"last", Release::last}, {"random-stop", Release::random_stop},
                                                {"every", Release::every}})
                        : (c.algorithm == Algorithm::online ? Release::random_stop : Release::last);
  c.sigma = o.sigma;
  c.noise_std = o.noise_std;
  c.clip = o.clip;
  c.unstated = {.sampling = !o.sampling,
                .batch_size = !o.batch_size,
                .length = !o.epochs && !o.steps,
                .eta = !o.eta,
                .radius = !o.radius,
                .record_norm = !o.record_norm};
  c.from_statement = true;
  // The fields this configuration does not read (the noise target's are the request's: it
  // applies the rule again once no_noise is known).
  require_read(c);
  return c;
}

}  // namespace hsdp::train
