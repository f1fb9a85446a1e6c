#include "hsdp/train/train_spec.hpp"

#include <fmt/format.h>

#include "hsdp/errors.hpp"

namespace hsdp::train {

TrainConfig TrainSpec::resolve() const {
  const TrainSpec& o = *this;
  TrainConfig c;
  c.algorithm = parse_algorithm(o.algorithm);
  c.loss.kind = parse_loss(o.model);
  c.loss.l2 = require_nonnegative(opt("l2"), o.l2);
  c.loss.huber_smoothing = require_positive(opt("huber_smoothing"), o.huber_smoothing);
  c.loss.label_bound = require_positive(opt("label_bound"), o.label_bound);
  c.bias = !o.no_bias;
  c.record_norm = require_positive(opt("record_norm"), o.record_norm);
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
                .radius = !o.radius};
  return c;
}

}  // namespace hsdp::train
