#include "hsdp/train/train_spec.hpp"

#include <fmt/format.h>

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
TrainField re(TrainField f, double TrainSpec::*m, Range range = Range::any) {
  f.type = Type::real;
  f.real = m;
  f.range = range;
  return f;
}
TrainField re(TrainField f, std::optional<double> TrainSpec::*m, Range range = Range::any) {
  f.type = Type::real;
  f.optional_real = m;
  f.range = range;
  return f;
}
TrainField in(TrainField f, std::optional<std::int64_t> TrainSpec::*m) {
  f.type = Type::integer;
  f.optional_integer = m;
  return f;
}
TrainField wd(TrainField f, std::string TrainSpec::*m, std::string_view choices, bool required = false) {
  f.type = Type::word;
  f.word = m;
  f.choices = choices;
  f.required = required;
  return f;
}
TrainField wd(TrainField f, std::optional<std::string> TrainSpec::*m, std::string_view choices) {
  f.type = Type::word;
  f.optional_word = m;
  f.choices = choices;
  return f;
}

// The order of this table is the order of the command's flags (`hsdp train --help`).
const std::vector<TrainField>& table() {
  static const std::vector<TrainField> fields = {
      wd({"model", "Loss: logistic|squared|huber|softmax"}, &TrainSpec::model,
         "logistic|squared|huber|softmax", true),
      re({"l2", "L2 regulariser lambda (strong convexity)"}, &TrainSpec::l2, Range::nonnegative),
      re({"huber_smoothing", "Smoothing width h of the huber hinge"}, &TrainSpec::huber_smoothing,
         Range::positive),
      re({"label_bound", "Squared loss: bound Y on |label|"}, &TrainSpec::label_bound, Range::positive),
      sw({"no_bias", "No intercept"}, &TrainSpec::no_bias),
      re({"record_norm", "R: every record is scaled to ||x|| <= R (record-local; the bias adds 1 to R^2); "
                         "default 1, planned with a target epsilon"},
         &TrainSpec::record_norm, Range::positive),
      wd({"constraint", "Constraint set: ball|box|none"}, &TrainSpec::constraint, "ball|box|none"),
      re({"radius", "Radius r of the ball (half-width of the box); default 10, planned with a target epsilon"}, &TrainSpec::radius),
      wd({"algorithm", "noisy-sgd|noisy-gd|pnsgd|federated|online"}, &TrainSpec::algorithm,
         "noisy-sgd|noisy-gd|pnsgd|federated|online"),
      wd({"sampling", "noisy-sgd batches: poisson|fixed|shuffle|cyclic|full (default poisson; planned with a target epsilon)"},
         &TrainSpec::sampling, "poisson|fixed|shuffle|cyclic|full"),
      wd({"drop_last", "shuffle: true drops the n mod b records left after the last full batch of each epoch; false "
                       "keeps them as a smaller last batch (PyTorch's DataLoader default); default true"},
         &TrainSpec::drop_last, "true|false"),
      in({"batch_size", "Batch size b (users per round m for federated; default min(256, n/4), planned with a target epsilon)"}, &TrainSpec::batch_size),
      in({"steps", "Number of steps T"}, &TrainSpec::steps),
      re({"epochs", "Epochs (noisy-sgd: T = epochs n / b, default 1; noisy-gd: T = epochs, default 100; planned with a target epsilon)"},
         &TrainSpec::epochs),
      re({"eta", "Step size (default 1/beta; planned with a target epsilon: 1.98/beta)"}, &TrainSpec::eta),
      wd({"eta_schedule", "constant|inv-sqrt|inv-t (default constant; online inv-sqrt)"},
         &TrainSpec::eta_schedule, "constant|inv-sqrt|inv-t"),
      wd({"noise", "gaussian|laplace"}, &TrainSpec::noise, "gaussian|laplace"),
      re({"sigma", "The algorithm's own noise parameter sigma (its paper's convention)"}, &TrainSpec::sigma),
      re({"noise_std", "Noise std in parameter space per step"}, &TrainSpec::noise_std),
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
  const TrainSpec defaults;
  if (flag) return defaults.*flag ? "true" : "false";
  if (real) return show(defaults.*real);
  return defaults.*word;
}

std::string TrainField::allowed() const {
  switch (range) {
    case Range::positive: return "> 0";
    case Range::nonnegative: return ">= 0";
    case Range::any: break;
  }
  return listed(choices, " | ");
}

TrainConfig TrainSpec::resolve() const {
  const TrainSpec& o = *this;
  TrainConfig c;
  c.algorithm = parse_algorithm(o.algorithm);
  c.loss.kind = parse_loss(o.model);
  // The real fields with a range in the table (stated ones, for an optional field), in its order.
  for (const TrainField& f : fields()) {
    if (f.range == Range::any || !(f.real || (f.optional_real && o.*f.optional_real))) continue;
    const double v = f.real ? o.*f.real : *(o.*f.optional_real);
    if (f.range == Range::positive) require_positive(opt(f.name), v);
    else require_nonnegative(opt(f.name), v);
  }
  c.loss.l2 = o.l2;
  c.loss.huber_smoothing = o.huber_smoothing;
  c.loss.label_bound = o.label_bound;
  c.bias = !o.no_bias;
  c.record_norm = o.record_norm.value_or(1.0);
  c.constraint.kind = pick_choice<ConstraintKind>(
      opt("constraint"), o.constraint,
      {{"ball", ConstraintKind::ball}, {"box", ConstraintKind::box}, {"none", ConstraintKind::none}});
  c.constraint.radius = o.radius.value_or(10.0);
  c.constraint.validate();
  c.noise = pick_choice<NoiseKind>(opt("noise"), o.noise, {{"gaussian", NoiseKind::gaussian}, {"laplace", NoiseKind::laplace}});
  if (o.sampling) {
    if (c.algorithm != Algorithm::noisy_sgd)
      fail(opt("sampling"), *o.sampling, fmt::format("absent for {} (its batches are fixed by the paper)", error_field("algorithm", o.algorithm)));
    c.sampling = pick_choice<Sampling>(opt("sampling"), *o.sampling,
                                       {{"poisson", Sampling::poisson}, {"fixed", Sampling::fixed}, {"shuffle", Sampling::shuffle},
                                        {"cyclic", Sampling::cyclic}, {"full", Sampling::full}});
  }
  if (o.drop_last) {
    c.drop_last = pick_choice<bool>(opt("drop_last"), *o.drop_last, {{"true", true}, {"false", false}});
    if (!c.drop_last && c.algorithm != Algorithm::noisy_sgd)
      fail(opt("drop_last"), *o.drop_last,
           fmt::format("absent for {} (its batches are fixed by the paper)", error_field("algorithm", o.algorithm)));
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
  return c;
}

}  // namespace hsdp::train
