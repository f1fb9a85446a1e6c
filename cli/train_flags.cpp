#include "train_flags.hpp"

#include <fmt/format.h>

#include "hsdp/errors.hpp"

namespace hsdp::cli {

void add_train_flags(CLI::App& sub, TrainFlags& o) {
  sub.add_option("--model", o.model, "Loss: logistic|squared|huber|softmax")->required();
  sub.add_option("--l2", o.l2, "L2 regulariser lambda (strong convexity)")->capture_default_str();
  sub.add_option("--huber-smoothing", o.huber_smoothing, "Smoothing width h of the huber hinge")->capture_default_str();
  sub.add_option("--label-bound", o.label_bound, "Squared loss: bound Y on |label|")->capture_default_str();
  sub.add_flag("--no-bias", o.no_bias, "No intercept");
  sub.add_option("--record-norm", o.record_norm,
                 "R: every record is scaled to ||x|| <= R (record-local; the bias adds 1 to R^2)")->capture_default_str();
  sub.add_option("--constraint", o.constraint, "Constraint set: ball|box|none")->capture_default_str();
  sub.add_option("--radius", o.radius, "Radius r of the ball (half-width of the box)")->capture_default_str();
  sub.add_option("--algorithm", o.algorithm, "noisy-sgd|noisy-gd|pnsgd|federated|online")->capture_default_str();
  sub.add_option("--sampling", o.sampling, "noisy-sgd batches: poisson|fixed|shuffle|cyclic|full (default poisson)");
  sub.add_option("--batch-size", o.batch_size, "Batch size b (users per round m for federated)");
  sub.add_option("--steps", o.steps, "Number of steps T");
  sub.add_option("--epochs", o.epochs, "Epochs (noisy-sgd: T = epochs n / b; noisy-gd: T = epochs, default 100)");
  sub.add_option("--eta", o.eta, "Step size (default 1/beta)");
  sub.add_option("--eta-schedule", o.eta_schedule, "constant|inv-sqrt|inv-t (default constant; online inv-sqrt)");
  sub.add_option("--noise", o.noise, "gaussian|laplace")->capture_default_str();
  sub.add_option("--sigma", o.sigma, "The algorithm's own noise parameter sigma (its paper's convention)");
  sub.add_option("--noise-std", o.noise_std, "Noise std in parameter space per step");
  sub.add_option("--release", o.release, "last|random-stop (default last; online random-stop)");
  sub.add_option("--clip", o.clip, "Per-example gradient clipping norm C (only the composition baseline stays valid)");
}

train::TrainConfig train_config(const TrainFlags& o) {
  using train::Algorithm;
  train::TrainConfig c;
  c.algorithm = train::parse_algorithm(o.algorithm);
  c.loss.kind = train::parse_loss(o.model);
  c.loss.l2 = require_nonnegative(opt("l2"), o.l2);
  c.loss.huber_smoothing = require_positive(opt("huber_smoothing"), o.huber_smoothing);
  c.loss.label_bound = require_positive(opt("label_bound"), o.label_bound);
  c.bias = !o.no_bias;
  c.record_norm = require_positive(opt("record_norm"), o.record_norm);
  c.constraint.kind = pick_choice<train::ConstraintKind>(
      opt("constraint"), o.constraint,
      {{"ball", train::ConstraintKind::ball}, {"box", train::ConstraintKind::box}, {"none", train::ConstraintKind::none}});
  c.constraint.radius = o.radius;
  c.constraint.validate();
  c.noise = pick_choice<NoiseKind>(opt("noise"), o.noise, {{"gaussian", NoiseKind::gaussian}, {"laplace", NoiseKind::laplace}});
  if (o.sampling) {
    if (c.algorithm != Algorithm::noisy_sgd)
      fail(opt("sampling"), *o.sampling, fmt::format("absent for {} (its batches are fixed by the paper)", error_field("algorithm", o.algorithm)));
    c.sampling = pick_choice<Sampling>(opt("sampling"), *o.sampling,
                                       {{"poisson", Sampling::poisson}, {"fixed", Sampling::fixed}, {"shuffle", Sampling::shuffle},
                                        {"cyclic", Sampling::cyclic}, {"full", Sampling::full}});
  }
  const bool default_one = c.algorithm == Algorithm::pnsgd || c.algorithm == Algorithm::online;
  const std::int64_t default_batch = default_one ? 1 : c.algorithm == Algorithm::federated ? 10 : 256;
  c.batch_size = o.batch_size.value_or(default_batch);
  c.steps = o.steps;
  if (o.epochs) c.epochs = *o.epochs;
  else if (c.algorithm == Algorithm::noisy_gd) c.epochs = 100;
  c.eta = o.eta;
  if (o.eta_schedule)
    c.eta_shape = pick_choice<ScheduleShape>(opt("eta_schedule"), *o.eta_schedule,
                                             {{"constant", ScheduleShape::constant}, {"inv-sqrt", ScheduleShape::inv_sqrt},
                                              {"inv-t", ScheduleShape::inv_t}});
  c.release = o.release ? pick_choice<Release>(opt("release"), *o.release,
                                               {{"last", Release::last}, {"random-stop", Release::random_stop}})
                        : (c.algorithm == Algorithm::online ? Release::random_stop : Release::last);
  c.sigma = o.sigma;
  c.noise_std = o.noise_std;
  c.clip = o.clip;
  return c;
}

}  // namespace hsdp::cli
