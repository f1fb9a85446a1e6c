#include "train_flags.hpp"

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
  sub.add_option("--radius", o.radius, "Radius r of the ball (half-width of the box); default 10, planned with --epsilon");
  sub.add_option("--algorithm", o.algorithm, "noisy-sgd|noisy-gd|pnsgd|federated|online")->capture_default_str();
  sub.add_option("--sampling", o.sampling, "noisy-sgd batches: poisson|fixed|shuffle|cyclic|full (default poisson; planned with --epsilon)");
  sub.add_option("--batch-size", o.batch_size, "Batch size b (users per round m for federated; default min(256, n/4), planned with --epsilon)");
  sub.add_option("--steps", o.steps, "Number of steps T");
  sub.add_option("--epochs", o.epochs, "Epochs (noisy-sgd: T = epochs n / b, default 1; noisy-gd: T = epochs, default 100; planned with --epsilon)");
  sub.add_option("--eta", o.eta, "Step size (default 1/beta; planned with --epsilon: 1.98/beta)");
  sub.add_option("--eta-schedule", o.eta_schedule, "constant|inv-sqrt|inv-t (default constant; online inv-sqrt)");
  sub.add_option("--noise", o.noise, "gaussian|laplace")->capture_default_str();
  sub.add_option("--sigma", o.sigma, "The algorithm's own noise parameter sigma (its paper's convention)");
  sub.add_option("--noise-std", o.noise_std, "Noise std in parameter space per step");
  sub.add_option("--release", o.release, "last|random-stop|every (default last; online random-stop; every: accounted as if every iterate were published)");
  sub.add_option("--clip", o.clip, "Per-example gradient clipping norm C (only the composition baseline stays valid)");
}

}  // namespace hsdp::cli
