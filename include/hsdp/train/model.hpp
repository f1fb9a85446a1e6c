// Linear models, their losses and constraint sets, and the loss-class constants the
// analyses need (docs/training.md derives each one).
//
// A model has `outputs` rows of `features()` weights: d input features plus, with a bias,
// one constant-1 feature. The constant feature is part of the record, so the record norm
// bound R that the constants use is the bound on the augmented record (x, 1):
// R_aug = sqrt(R_x^2 + 1) with a bias, R_x without.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hsdp/errors.hpp"
#include "hsdp/data/dataset.hpp"
#include "hsdp/data/readers.hpp"

namespace hsdp::train {

enum class LossKind {
  logistic,  ///< binary, y in {-1,+1}: log(1 + exp(-y s))
  squared,   ///< regression, |y| <= Y: (s - y)^2 / 2
  huber,     ///< binary, y in {-1,+1}: hinge max(0, 1 - y s) smoothed quadratically over width h
  softmax,   ///< k classes, y in 0..k-1: -log softmax(s)_y
};
std::string_view to_string(LossKind);
/// "logistic" | "squared" | "huber" | "softmax"; throws InvalidArgument naming `parameter`.
LossKind parse_loss(std::string_view text, const Param& parameter = opt("model"));
/// The labels a loss needs: {-1, +1} (logistic, huber), real (squared), class ids (softmax).
data::LabelKind label_kind(LossKind kind);

struct LossSpec {
  LossKind kind = LossKind::logistic;
  /// L2 regulariser lambda/2 ||theta||^2 added to every per-example loss (bias included,
  /// so the loss is lambda-strongly convex in every direction). >= 0.
  double l2 = 0.0;
  /// Smoothing width h of the Huber-smoothed hinge (> 0).
  double huber_smoothing = 0.5;
  /// Bound Y on |y| for the squared loss (> 0); labels outside are an error.
  double label_bound = 1.0;
  /// Number of classes k >= 2 of the softmax loss.
  std::size_t classes = 2;
};

enum class ConstraintKind { none, ball, box };
std::string_view to_string(ConstraintKind);

/// The constraint set W that every iterate is projected onto.
///  ball: {||theta||_2 <= radius}   box: [-radius, radius]^p   none: R^p.
struct Constraint {
  ConstraintKind kind = ConstraintKind::ball;
  double radius = 10.0;

  /// dia(W) for p parameters: 2r (ball), 2r sqrt(p) (box), inf (none).
  double diameter(std::size_t p) const;
  /// sup_{theta in W} ||theta||_2: r (ball), r sqrt(p) (box), inf (none).
  double max_norm(std::size_t p) const;
  /// Euclidean projection onto W, in place (exact: scaling for the ball, clamping per
  /// coordinate for the box).
  void project(std::span<double> theta) const;
  /// How far theta lies outside W: ||theta|| - r (ball), max_i |theta_i| - r (box); <= 0
  /// inside. 0 for none.
  double excess(std::span<const double> theta) const;
  void validate() const;
};

/// The constants of the loss class over records with ||(x, 1)|| <= R (bias) or ||x|| <= R.
struct LossConstants {
  double record_norm = 1.0;              ///< R of the augmented record
  /// Lipschitz constant of the data-dependent part of the per-example loss on W (the
  /// sensitivity of one record's gradient); nullopt when unbounded (squared loss on R^p).
  std::optional<double> lipschitz_data;
  double smoothness_data = 0.0;          ///< beta of the data-dependent part
  double l2 = 0.0;                       ///< lambda: adds to beta and is the strong convexity
  double smoothness() const { return smoothness_data + l2; }
  /// Lipschitz constant of the whole per-example loss (data part + regulariser) on W:
  /// L_data + lambda sup_W ||theta||; nullopt when unbounded.
  std::optional<double> lipschitz_total(const Constraint& w, std::size_t parameters) const;
  std::string derivation;                ///< one line per constant, for reports and docs
};

/// Derives L, beta, lambda (docs/training.md) for records with feature norm ||x|| <= R_x,
/// augmented by the constant-1 bias feature when `bias` (R^2 = R_x^2 + 1, computed as such
/// so that e.g. beta = R^2/4 is exact):
///   logistic L = R, beta = R^2/4;  huber L = R, beta = R^2/h;
///   squared  L = R (R sup_W||theta|| + Y), beta = R^2;  softmax L = sqrt(2) R, beta = R^2/2.
LossConstants derive_constants(const LossSpec& loss, double feature_norm, bool bias,
                               const Constraint& constraint, std::size_t parameters);

struct LinearModel {
  LossSpec loss;
  std::size_t d = 0;         ///< input features
  bool bias = true;
  std::size_t outputs = 1;   ///< 1, or k for softmax
  std::vector<double> theta; ///< outputs x features(), row-major

  std::size_t features() const { return d + (bias ? 1 : 0); }
  std::size_t parameters() const { return outputs * features(); }
  /// Zero weights of the right shape for `loss` on d features.
  static LinearModel zeros(const LossSpec& loss, std::size_t d, bool bias);

  /// Scores s_j = <theta_j, (x, 1)>, j < outputs.
  void scores(const double* x, double* s) const;
  /// Predicted label: +-1 (logistic, huber), the score (squared), the class id (softmax).
  double predict(const double* x) const;
  /// The data part of the per-example loss at (x, y).
  double loss_at(const double* x, double y) const;
};

/// Mean data loss and accuracy (classification) of a model on a dataset.
struct Evaluation {
  double loss = 0.0;                 ///< mean per-example loss (without the regulariser)
  std::optional<double> accuracy;    ///< fraction correct (classification losses)
};
Evaluation evaluate(const LinearModel& model, const data::Dataset& data);
/// The sums behind an Evaluation: the loss summed over the records, the number of correct
/// predictions and of records, so that parts held by several processes add up exactly to
/// the whole (evaluate() is evaluation_of(evaluation_sums())).
struct EvaluationSums {
  double loss = 0.0, correct = 0.0, records = 0.0;
};
EvaluationSums evaluation_sums(const LinearModel& model, const data::Dataset& data);
/// The means of `sums` (no accuracy for the squared loss; an empty Evaluation without records).
Evaluation evaluation_of(const LinearModel& model, const EvaluationSums& sums);

/// Checks that `data` suits `loss`: labels in {-1,+1} (logistic, huber; 0/1 is accepted
/// and read as -1/+1), |y| <= Y (squared), integers 0..k-1 (softmax), and every record
/// norm ||x|| <= record_norm (features only). Throws InvalidArgument naming the record.
void check_data(const data::Dataset& data, const LossSpec& loss, double record_norm);

/// The label as the binary losses use it: 0 is read as -1.
inline double binary_label(double y) { return y > 0 ? 1.0 : -1.0; }

/// d/ds of the data loss of a single-output model (logistic, huber, squared) at score s and
/// label y: the per-example gradient is this times (x, 1). 0 for softmax.
double loss_derivative(const LossSpec& loss, double s, double y);

/// Adds the per-example gradient of the data part of the loss at record (x, y) to `grad`
/// (size parameters()), with per-example clipping to norm `clip` when clip > 0. Returns
/// the factor by which clipping scaled it (1 when it did not act).
double add_example_gradient(const LinearModel& model, const double* x, double y, double clip,
                            double* grad);

}  // namespace hsdp::train
