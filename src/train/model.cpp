#include "hsdp/train/model.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "hsdp/errors.hpp"
#include "hsdp/limits.hpp"

namespace hsdp::train {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// log(1 + e^{-z}) without overflow for either sign of z.
double log1pexp_neg(double z) { return z > 0 ? std::log1p(std::exp(-z)) : -z + std::log1p(std::exp(z)); }
// d/dz log(1 + e^{-z}) = -1 / (1 + e^{z}), in (-1, 0).
double logistic_slope(double z) {
  if (z >= 0) {
    const double e = std::exp(-z);
    return -e / (1.0 + e);
  }
  return -1.0 / (1.0 + std::exp(z));
}

// The Huber-smoothed hinge in the margin z = y s (width h): 0 for z >= 1, (1-z)^2/(2h) on
// (1-h, 1), 1 - z - h/2 below. Its slope lies in [-1, 0] and changes at rate <= 1/h.
double huber_value(double z, double h) {
  if (z >= 1) return 0.0;
  if (z > 1 - h) return (1 - z) * (1 - z) / (2 * h);
  return 1 - z - h / 2;
}
double huber_slope(double z, double h) {
  if (z >= 1) return 0.0;
  if (z > 1 - h) return -(1 - z) / h;
  return -1.0;
}

double norm2(const double* v, std::size_t n) {
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (std::size_t i = 0; i < n; ++i) s += v[i] * v[i];
  return s;
}
}  // namespace

std::string_view to_string(LossKind k) {
  switch (k) {
    case LossKind::logistic: return "logistic";
    case LossKind::squared: return "squared";
    case LossKind::huber: return "huber";
    case LossKind::softmax: return "softmax";
  }
  return "?";
}

data::LabelKind label_kind(LossKind k) {
  switch (k) {
    case LossKind::logistic:
    case LossKind::huber: return data::LabelKind::plus_minus_one;
    case LossKind::squared: return data::LabelKind::real;
    case LossKind::softmax: return data::LabelKind::classes;
  }
  return data::LabelKind::real;
}

LossKind parse_loss(std::string_view text, const Param& parameter) {
  for (auto k : {LossKind::logistic, LossKind::squared, LossKind::huber, LossKind::softmax})
    if (text == to_string(k)) return k;
  fail(parameter, text, "one of logistic, squared, huber, softmax");
}

std::string_view to_string(ConstraintKind k) {
  switch (k) {
    case ConstraintKind::none: return "none";
    case ConstraintKind::ball: return "ball";
    case ConstraintKind::box: return "box";
  }
  return "?";
}

void Constraint::validate() const {
  if (kind != ConstraintKind::none) require_positive(opt("radius"), radius);
}

double Constraint::diameter(std::size_t p) const {
  switch (kind) {
    case ConstraintKind::ball: return 2 * radius;
    case ConstraintKind::box: return 2 * radius * std::sqrt(static_cast<double>(p));
    case ConstraintKind::none: return kInf;
  }
  return kInf;
}

double Constraint::max_norm(std::size_t p) const {
  switch (kind) {
    case ConstraintKind::ball: return radius;
    case ConstraintKind::box: return radius * std::sqrt(static_cast<double>(p));
    case ConstraintKind::none: return kInf;
  }
  return kInf;
}

// ||v|| without overflow or underflow of the squares: noisy iterates reach 2^981 (noise stds
// up to 2^960, random::kGridNoiseMaxStd), whose squares are not doubles.
namespace {
double euclidean_norm(std::span<const double> v) {
  const double s = norm2(v.data(), v.size());
  if (std::isfinite(s) && s >= 0x1p-900) return std::sqrt(s);
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  if (m == 0 || !std::isfinite(m)) return m;
  double t = 0;
  for (double x : v) t += (x / m) * (x / m);
  return m * std::sqrt(t);
}
}  // namespace

void Constraint::project(std::span<double> theta) const {
  if (kind == ConstraintKind::ball) {
    const double nrm = euclidean_norm(theta);
    if (nrm > radius && std::isfinite(nrm)) {
      const double f = radius / nrm;
      if (f >= std::numeric_limits<double>::min()) {
        for (double& v : theta) v *= f;
      } else {
        for (double& v : theta) v = v / nrm * radius;  // v / nrm in [-1, 1]: no subnormal factor
      }
    }
  } else if (kind == ConstraintKind::box) {
    for (double& v : theta) v = std::clamp(v, -radius, radius);
  }
}

double Constraint::excess(std::span<const double> theta) const {
  if (kind == ConstraintKind::ball) return euclidean_norm(theta) - radius;
  if (kind == ConstraintKind::box) {
    double m = 0;
    for (double v : theta) m = std::max(m, std::abs(v));
    return m - radius;
  }
  return 0.0;
}

std::optional<double> LossConstants::lipschitz_total(const Constraint& w,
                                                     std::size_t parameters) const {
  if (!lipschitz_data) return std::nullopt;
  if (l2 == 0) return lipschitz_data;
  const double m = w.max_norm(parameters);
  if (!std::isfinite(m)) return std::nullopt;
  return *lipschitz_data + l2 * m;
}

LossConstants derive_constants(const LossSpec& loss, double feature_norm, bool bias,
                               const Constraint& constraint, std::size_t parameters) {
  require_positive(opt("record_norm"), feature_norm);
  require_nonnegative(opt("l2"), loss.l2);
  // The bias is a constant-1 feature of the record: it counts in R.
  const double R2 = feature_norm * feature_norm + (bias ? 1.0 : 0.0);
  const double R = std::sqrt(R2);
  LossConstants c;
  c.record_norm = R;
  c.l2 = loss.l2;
  switch (loss.kind) {
    case LossKind::logistic:
      // grad = -y sigma(-y s) x with sigma in (0, 1): ||grad|| <= ||x|| <= R. Hessian
      // sigma(s)(1 - sigma(s)) x x^T with sigma(1 - sigma) <= 1/4: beta = R^2/4.
      c.lipschitz_data = R;
      c.smoothness_data = R2 / 4;
      c.derivation = fmt::format("logistic: L = R = {}; beta = R^2/4 = {}", show(R), show(c.smoothness_data));
      break;
    case LossKind::huber: {
      const double h = require_positive(opt("huber_smoothing"), loss.huber_smoothing);
      // |phi'| <= 1 and |phi''| <= 1/h in the margin: L = R, beta = R^2/h.
      c.lipschitz_data = R;
      c.smoothness_data = R2 / h;
      c.derivation = fmt::format("huber (h = {}): L = R = {}; beta = R^2/h = {}", show(h), show(R),
                                 show(c.smoothness_data));
      break;
    }
    case LossKind::squared: {
      const double Y = require_positive(opt("label_bound"), loss.label_bound);
      // grad = (<theta, x> - y) x: ||grad|| <= (R sup_W ||theta|| + Y) R; Hessian x x^T: R^2.
      const double m = constraint.max_norm(parameters);
      if (std::isfinite(m)) c.lipschitz_data = R2 * m + R * Y;
      c.smoothness_data = R2;
      c.derivation = std::isfinite(m)
                         ? fmt::format("squared (Y = {}): L = R (R sup_W||theta|| + Y) = {} (sup_W||theta|| = {}); "
                                       "beta = R^2 = {}",
                                       show(Y), show(*c.lipschitz_data), show(m), show(c.smoothness_data))
                         : fmt::format("squared (Y = {}): L unbounded on an unconstrained set; beta = R^2 = {}",
                                       show(Y), show(c.smoothness_data));
      break;
    }
    case LossKind::softmax:
      // grad_W = (p - e_y) x^T: ||p - e_y||^2 = (1 - p_y)^2 + sum_{j != y} p_j^2
      // <= 2 (1 - p_y)^2 <= 2, so L = sqrt(2) R. Hessian (diag(p) - p p^T) (x) x x^T; by
      // Gershgorin the eigenvalues of diag(p) - p p^T are <= 2 p_i (1 - p_i) <= 1/2, so
      // beta = R^2/2.
      c.lipschitz_data = std::sqrt(2.0) * R;
      c.smoothness_data = R2 / 2;
      c.derivation = fmt::format("softmax: L = sqrt(2) R = {}; beta = R^2/2 = {}",
                                 show(*c.lipschitz_data), show(c.smoothness_data));
      break;
  }
  if (c.l2 > 0)
    c.derivation += fmt::format("; l2 lambda = {} adds to beta (total {}) and is the strong convexity",
                                show(c.l2), show(c.smoothness()));
  // The step size 1/beta, the noise and every analysis are computed from these constants:
  // they must be finite, with 1/beta a normal number (a record norm of 1e200 made beta = inf,
  // hence eta = 0). The message names the stated field that made them overflow.
  const double beta = c.smoothness();
  const bool lipschitz_ok = !c.lipschitz_data || std::isfinite(*c.lipschitz_data);
  if (!std::isfinite(beta) || !(1.0 / beta >= std::numeric_limits<double>::min()) || !lipschitz_ok) {
    const std::string why = fmt::format("small enough that the loss's constants are finite, with 1/beta a "
                                        "normal number (here {})",
                                        c.derivation);
    constexpr double tiny = std::numeric_limits<double>::min();
    if (!std::isfinite(R2 / 4)) fail(opt("record_norm"), feature_norm, why);
    if (loss.kind == LossKind::huber && !std::isfinite(c.smoothness_data))
      fail(opt("huber_smoothing"), loss.huber_smoothing, why);
    if (!(1.0 / c.smoothness_data >= tiny)) fail(opt("record_norm"), feature_norm, why);
    if (!(1.0 / beta >= tiny)) fail(opt("l2"), loss.l2, why);
    fail(opt("radius"), constraint.radius, why);  // the squared loss's L = R (R r + Y)
  }
  return c;
}

LinearModel LinearModel::zeros(const LossSpec& loss, std::size_t d, bool bias) {
  // The limits of docs/data.md, before the weights are allocated (a model file can state any
  // shape; the readers and the label mapping check them first, naming the file).
  if (d > limits::features) fail("features", std::to_string(d), fmt::format("at most {}", limits::features));
  if (loss.kind == LossKind::softmax && (loss.classes < 2 || loss.classes > limits::classes))
    fail("classes", std::to_string(loss.classes), fmt::format("in [2, {}] for the softmax loss", limits::classes));
  LinearModel m;
  m.loss = loss;
  m.d = d;
  m.bias = bias;
  m.outputs = loss.kind == LossKind::softmax ? loss.classes : 1;
  if (m.parameters() > limits::parameters)
    fail("parameters", fmt::format("{} x {}", m.outputs, m.features()),
         fmt::format("at most {} (outputs x features; docs/data.md \"Limits\")", limits::parameters));
  m.theta.assign(m.parameters(), 0.0);
  return m;
}

void LinearModel::scores(const double* x, double* s) const {
  const std::size_t p = features();
  for (std::size_t j = 0; j < outputs; ++j) {
    const double* w = theta.data() + j * p;
    double acc = bias ? w[d] : 0.0;
#pragma omp simd reduction(+ : acc)
    for (std::size_t l = 0; l < d; ++l) acc += w[l] * x[l];
    s[j] = acc;
  }
}

double LinearModel::predict(const double* x) const {
  std::vector<double> s(outputs);
  scores(x, s.data());
  switch (loss.kind) {
    case LossKind::logistic:
    case LossKind::huber: return s[0] >= 0 ? 1.0 : -1.0;
    case LossKind::squared: return s[0];
    case LossKind::softmax:
      return static_cast<double>(std::max_element(s.begin(), s.end()) - s.begin());
  }
  return 0.0;
}

double LinearModel::loss_at(const double* x, double y) const {
  std::vector<double> s(outputs);
  scores(x, s.data());
  switch (loss.kind) {
    case LossKind::logistic: return log1pexp_neg(binary_label(y) * s[0]);
    case LossKind::huber: return huber_value(binary_label(y) * s[0], loss.huber_smoothing);
    case LossKind::squared: return 0.5 * (s[0] - y) * (s[0] - y);
    case LossKind::softmax: {
      const double mx = *std::max_element(s.begin(), s.end());
      double z = 0;
      for (double v : s) z += std::exp(v - mx);
      return mx + std::log(z) - s[static_cast<std::size_t>(y)];
    }
  }
  return 0.0;
}

EvaluationSums evaluation_sums(const LinearModel& model, const data::Dataset& data) {
  const bool classify = model.loss.kind != LossKind::squared;
  const bool compact = data.compact();
  // Sums over fixed blocks of records, added in block order: the same bits whatever the
  // number of threads (a reduction over the threads' shares would change in the last ulp
  // with the thread count, e.g. once another library in the process sets it).
  constexpr std::size_t kBlock = 256;
  const std::size_t blocks = (data.n + kBlock - 1) / kBlock;
  std::vector<double> block_loss(blocks, 0.0);
  std::vector<std::size_t> block_correct(blocks, 0);
#pragma omp parallel for schedule(static) num_threads(std::clamp(omp_get_max_threads(), 1, limits::threads))
  for (std::size_t k = 0; k < blocks; ++k) {
    // Compact storage: the effective row, widened into a per-thread buffer.
    thread_local std::vector<double> buffer;
    double loss = 0;
    std::size_t correct = 0;
    for (std::size_t i = k * kBlock; i < std::min(data.n, (k + 1) * kBlock); ++i) {
      const double* x;
      if (compact) {
        buffer.resize(data.d);
        data.effective_row(i, buffer.data());
        x = buffer.data();
      } else {
        x = data.row(i);
      }
      loss += model.loss_at(x, data.y[i]);
      if (classify) {
        const double truth = model.loss.kind == LossKind::softmax ? data.y[i] : binary_label(data.y[i]);
        if (model.predict(x) == truth) ++correct;
      }
    }
    block_loss[k] = loss;
    block_correct[k] = correct;
  }
  double loss = 0;
  std::size_t correct = 0;
  for (std::size_t k = 0; k < blocks; ++k) {
    loss += block_loss[k];
    correct += block_correct[k];
  }
  return {loss, static_cast<double>(correct), static_cast<double>(data.n)};
}

Evaluation evaluation_of(const LinearModel& model, const EvaluationSums& sums) {
  Evaluation e;
  if (!(sums.records > 0)) return e;
  e.loss = sums.loss / sums.records;
  if (model.loss.kind != LossKind::squared) e.accuracy = sums.correct / sums.records;
  return e;
}

Evaluation evaluate(const LinearModel& model, const data::Dataset& data) {
  return evaluation_of(model, evaluation_sums(model, data));
}

void check_data(const data::Dataset& data, const LossSpec& loss, double record_norm) {
  if (data.n == 0) fail("data", "(no records)", "at least one record");
  if (data.y.size() != data.n)
    fail("labels", fmt::format("{} labels for {} records", data.y.size(), data.n),
         "one mapped label per record (map the labels first)");
  if (data.stored_values() != data.n * data.d)
    fail("features", fmt::format("{} values", data.stored_values()), fmt::format("n * d = {}", data.n * data.d));
  auto where = [&](std::size_t i) {
    if (i < data.origin.size()) return fmt::format("record {} ({}:{})", i + 1, data.source, data.origin[i]);
    return fmt::format("record {}", i + 1);
  };
  // A relative slack for rows scaled to exactly R (floating-point rounding of the scaling).
  const double limit2 = record_norm * record_norm * (1 + 1e-12);
  std::vector<double> buffer(data.compact() ? data.d : 0);
  for (std::size_t i = 0; i < data.n; ++i) {
    const double y = data.y[i];
    switch (loss.kind) {
      case LossKind::logistic:
      case LossKind::huber:
        if (!(y == 1 || y == -1 || y == 0))
          fail(fmt::format("label of {}", where(i)), y, "-1 or +1 (or 0/1) for a binary loss");
        break;
      case LossKind::squared:
        if (!(std::abs(y) <= loss.label_bound))
          fail(fmt::format("label of {}", where(i)), y,
               fmt::format("|y| <= {} Y = {}", error_field("label_bound"), show(loss.label_bound)));
        break;
      case LossKind::softmax:
        if (!(y >= 0 && y < static_cast<double>(loss.classes) && y == std::floor(y)))
          fail(fmt::format("label of {}", where(i)), y,
               fmt::format("a class id 0..{}", loss.classes - 1));
        break;
    }
    const double* x = data.compact() ? buffer.data() : data.row(i);
    if (data.compact()) data.effective_row(i, buffer.data());
    const double n2 = norm2(x, data.d);
    if (!(n2 <= limit2))
      fail(fmt::format("||x|| of {}", where(i)), std::sqrt(n2),
           fmt::format("<= the record norm bound R = {} (scale rows to norm R first)", show(record_norm)));
  }
}

double loss_derivative(const LossSpec& loss, double s, double y) {
  switch (loss.kind) {
    case LossKind::logistic: {
      const double yy = binary_label(y);
      return yy * logistic_slope(yy * s);
    }
    case LossKind::huber: {
      const double yy = binary_label(y);
      return yy * huber_slope(yy * s, loss.huber_smoothing);
    }
    case LossKind::squared: return s - y;
    case LossKind::softmax: return 0.0;
  }
  return 0.0;
}

double add_example_gradient(const LinearModel& model, const double* x, double y, double clip,
                            double* grad) {
  const std::size_t d = model.d, p = model.features();
  if (model.outputs == 1) {
    const double* w = model.theta.data();
    double s = model.bias ? w[d] : 0.0;
    // simd reduction: lets the compiler keep several partial sums (a single running sum
    // is latency-bound and would keep the fused pass below memory bandwidth).
#pragma omp simd reduction(+ : s)
    for (std::size_t l = 0; l < d; ++l) s += w[l] * x[l];
    double c = 0;
    switch (model.loss.kind) {
      case LossKind::logistic: {
        const double yy = binary_label(y);
        c = yy * logistic_slope(yy * s);
        break;
      }
      case LossKind::huber: {
        const double yy = binary_label(y);
        c = yy * huber_slope(yy * s, model.loss.huber_smoothing);
        break;
      }
      case LossKind::squared: c = s - y; break;
      case LossKind::softmax: break;
    }
    double factor = 1.0;
    if (clip > 0 && c != 0) {
      // ||grad|| = |c| ||(x, 1)||.
      const double gn = std::abs(c) * std::sqrt(norm2(x, d) + (model.bias ? 1.0 : 0.0));
      if (gn > clip) factor = clip / gn;
    }
    c *= factor;
    for (std::size_t l = 0; l < d; ++l) grad[l] += c * x[l];
    if (model.bias) grad[d] += c;
    return factor;
  }
  // Softmax: grad_j = (p_j - [j = y]) (x, 1).
  const std::size_t k = model.outputs;
  double sbuf[64];
  std::vector<double> sheap;
  double* s = sbuf;
  if (k > 64) {
    sheap.resize(k);
    s = sheap.data();
  }
  model.scores(x, s);
  const double mx = *std::max_element(s, s + k);
  double z = 0;
  for (std::size_t j = 0; j < k; ++j) z += (s[j] = std::exp(s[j] - mx));
  const std::size_t label = static_cast<std::size_t>(y);
  double cn2 = 0;
  for (std::size_t j = 0; j < k; ++j) {
    s[j] = s[j] / z - (j == label ? 1.0 : 0.0);
    cn2 += s[j] * s[j];
  }
  double factor = 1.0;
  if (clip > 0) {
    const double gn = std::sqrt(cn2 * (norm2(x, d) + (model.bias ? 1.0 : 0.0)));
    if (gn > clip) factor = clip / gn;
  }
  for (std::size_t j = 0; j < k; ++j) {
    const double c = s[j] * factor;
    double* g = grad + j * p;
    for (std::size_t l = 0; l < d; ++l) g[l] += c * x[l];
    if (model.bias) g[d] += c;
  }
  return factor;
}

}  // namespace hsdp::train
