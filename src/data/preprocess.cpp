// Preprocessing that states its privacy cost, and the seeded train/test split
// (docs/data.md). Descriptions never contain data-dependent numbers unless the operation
// already leaks: a report that says "12 records were clipped" would itself leak.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::data {
namespace {

void require_shape(const Dataset& data) {
  if (data.stored_values() != data.n * data.d)
    fail("x.size()", std::to_string(data.stored_values()),
         fmt::format("n * d = {} * {} = {}", data.n, data.d, data.n * data.d));
}

// ||v||_2, never below either of two ways to compute it: the plain sqrt(sum v_j^2) a trainer
// is likely to use, and a rescaled sum that cannot overflow or underflow. The two can
// differ by an ulp, and the clipping bound must hold whichever one checks it.
double norm2(const double* v, std::size_t d) {
  double scale = 0;
  double plain = 0;
  for (std::size_t j = 0; j < d; ++j) {
    scale = std::max(scale, std::abs(v[j]));
    plain += v[j] * v[j];
  }
  if (scale == 0 || !std::isfinite(scale)) return scale;
  double sum = 0;
  for (std::size_t j = 0; j < d; ++j) {
    const double t = v[j] / scale;
    sum += t * t;
  }
  const double rescaled = scale * std::sqrt(sum);
  plain = std::sqrt(plain);
  return std::isfinite(plain) ? std::max(plain, rescaled) : rescaled;
}

// SplitMix64 (Steele, Lea & Flood 2014): fixed, portable, so a seed means the same split
// on every platform and standard library (std::shuffle's algorithm is unspecified).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound) without modulo bias (rejection of the short last block).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit = -bound % bound;  // 2^64 mod bound
    for (;;) {
      const std::uint64_t r = next();
      if (r >= limit) return r % bound;
    }
  }
};

// Scales one record from norm `norm` > R until its norm, computed by norm_of(), is at most R.
// scale(t) multiplies the record by t in (0, 1); nudge() moves it one ulp towards 0. The first
// factor is R / norm; rounding can leave the norm a few ulps above R. A few one-ulp nudges (the
// smallest change) settle a short record; a long one can be ~d ulps above (a sum of d squares
// rounds), and a pass per ulp was quadratic in d (4 records of 10^6 features never finished),
// so after kNudges passes each factor is R / norm shortened by 2^k ulps, k = 0, 1, 2, ...:
// O(log d) passes.
template <typename NormOf, typename Scale, typename Nudge>
void shrink_to_norm(double R, double norm, NormOf&& norm_of, Scale&& scale, Nudge&& nudge) {
  constexpr int kNudges = 4;
  scale(R / norm);
  for (int k = -kNudges; (norm = norm_of()) > R; ++k) {
    if (k < 0) nudge();
    else scale(R / norm * (1.0 - std::ldexp(1.0, std::min(k, 52) - 53)));
  }
}

Dataset subset(const Dataset& data, const std::vector<std::size_t>& rows) {
  Dataset out = Dataset::empty_like(data);
  out.n = rows.size();
  out.labels = data.labels;
  const bool mapped = data.y.size() == data.n;
  const bool raw = data.raw_labels.size() == data.n;
  const bool origin = data.origin.size() == data.n;
  const bool users = data.users.size() == data.n;
  for (const std::size_t i : rows) {
    out.append_features_of(data, i);
    if (mapped) out.y.push_back(data.y[i]);
    if (raw) out.raw_labels.push_back(data.raw_labels[i]);
    if (origin) out.origin.push_back(data.origin[i]);
    if (users) out.users.push_back(data.users[i]);
  }
  return out;
}

}  // namespace

Preprocessing scale_rows_to_norm(Dataset& data, double R) {
  require_positive("R", R);
  require_shape(data);
  if (data.compact()) {
    // Only r_i changes: x_il = r_i * (c_l * u_il) stays in the stored precision.
    if (data.row_scale.empty()) data.row_scale.assign(data.n, 1.0);
    std::vector<double> row(data.d);
    for (std::size_t i = 0; i < data.n; ++i) {
      data.effective_row(i, row.data());
      const double norm = norm2(row.data(), data.d);
      if (norm > R) {
        double& r = data.row_scale[i];
        shrink_to_norm(
            R, norm,
            [&] {
              data.effective_row(i, row.data());
              return norm2(row.data(), data.d);
            },
            [&](double t) { r *= t; }, [&] { r = std::nextafter(r, 0.0); });
      }
    }
  }
  for (std::size_t i = 0; i < data.n && !data.compact(); ++i) {
    double* row = data.row(i);
    const double norm = norm2(row, data.d);
    // Rounding can leave the norm an ulp above R; the bound must hold exactly, since the
    // analyses rely on ||x|| <= R (e.g. for the Lipschitz constant of the loss).
    if (norm > R)
      shrink_to_norm(
          R, norm, [&] { return norm2(row, data.d); },
          [&](double t) {
            for (std::size_t j = 0; j < data.d; ++j) row[j] *= t;
          },
          [&] {
            for (std::size_t j = 0; j < data.d; ++j) row[j] = std::nextafter(row[j], 0.0);
          });
  }
  return {fmt::format("every record scaled to L2 norm <= R = {} (x_i <- x_i * min(1, R / "
                      "||x_i||)); record-local, so it does not leak privacy",
                      show(R)),
          false};
}

Preprocessing scale_features(Dataset& data, const std::vector<double>& public_scale) {
  require_shape(data);
  if (public_scale.size() != data.d)
    fail("public_scale.size()", std::to_string(public_scale.size()),
         fmt::format("the number of features d = {}", data.d));
  for (std::size_t j = 0; j < public_scale.size(); ++j)
    require_finite(fmt::format("public_scale[{}]", j), public_scale[j]);
  if (data.compact()) {
    // c_l <- c_l * public_scale[l]: the stored values stay as read.
    if (data.feature_scale.empty()) data.feature_scale.assign(data.d, 1.0);
    for (std::size_t j = 0; j < data.d; ++j) data.feature_scale[j] *= public_scale[j];
  }
  for (std::size_t i = 0; i < data.n && !data.compact(); ++i) {
    double* row = data.row(i);
    for (std::size_t j = 0; j < data.d; ++j) row[j] *= public_scale[j];
  }
  const bool uniform = std::all_of(public_scale.begin(), public_scale.end(),
                                   [&](double s) { return s == public_scale.front(); });
  std::string what;
  if (data.d > 0 && uniform) {
    what = fmt::format("every feature multiplied by the public constant {}",
                       show(public_scale.front()));
  } else {
    what = "feature j multiplied by the stated public constant public_scale[j] = [";
    for (std::size_t j = 0; j < public_scale.size() && j < 8; ++j)
      what += (j ? ", " : "") + show(public_scale[j]);
    what += public_scale.size() > 8 ? ", ...]" : "]";
  }
  return {what + "; the constants do not depend on the data, so it does not leak privacy",
          false};
}

Preprocessing center_features(Dataset& data, const std::vector<double>& public_center) {
  require_shape(data);
  if (data.compact())
    fail(opt("feature_storage"), std::string(to_string(data.storage)),
         "float64 to centre features on public constants (centring is not a scale, so compact "
         "storage cannot hold the result)");
  if (public_center.size() != data.d)
    fail("public_center.size()", std::to_string(public_center.size()),
         fmt::format("the number of features d = {}", data.d));
  for (std::size_t j = 0; j < public_center.size(); ++j)
    require_finite(fmt::format("public_center[{}]", j), public_center[j]);
  for (std::size_t i = 0; i < data.n; ++i) {
    double* row = data.row(i);
    for (std::size_t j = 0; j < data.d; ++j) row[j] -= public_center[j];
  }
  return {"features centred on stated public constants; the constants do not depend on the data, so it "
          "does not leak privacy",
          false};
}

Preprocessing standardize_from_data(Dataset& data) {
  require_shape(data);
  if (data.compact())
    fail("feature_storage", std::string(to_string(data.storage)),
         "float64 to standardise with the data's own statistics (centring is not a scale, so "
         "compact storage cannot hold the result)");
  if (data.n == 0) fail("n", "0", "at least 1 record");
  std::vector<double> mean(data.d, 0.0);
  std::vector<double> sd(data.d, 0.0);
  for (std::size_t i = 0; i < data.n; ++i)
    for (std::size_t j = 0; j < data.d; ++j) mean[j] += data.row(i)[j];
  for (auto& m : mean) m /= static_cast<double>(data.n);
  // Two passes: the one-pass formula loses everything to cancellation when |mean| >> sd.
  for (std::size_t i = 0; i < data.n; ++i)
    for (std::size_t j = 0; j < data.d; ++j) {
      const double t = data.row(i)[j] - mean[j];
      sd[j] += t * t;
    }
  for (auto& s : sd) s = std::sqrt(s / static_cast<double>(data.n));
  for (std::size_t i = 0; i < data.n; ++i) {
    double* row = data.row(i);
    for (std::size_t j = 0; j < data.d; ++j) {
      row[j] -= mean[j];
      if (sd[j] > 0) row[j] /= sd[j];
    }
  }
  return {"features standardised with the dataset's own per-feature mean and standard "
          "deviation. PRIVACY LEAK: these statistics depend on every record, so every "
          "trained model depends on all records through them, and no privacy analysis "
          "accounts for it; use scale_features with public constants (e.g. known value "
          "ranges) for a guarantee that holds",
          true};
}

std::pair<Dataset, Dataset> train_test_split(const Dataset& data, double test_fraction,
                                             std::uint64_t seed) {
  require_open(opt("test_fraction"), test_fraction, 0.0, 1.0);
  require_shape(data);
  // Each part keeps file order, so a split is easy to inspect and compare.
  const std::vector<bool> is_test = test_records(data.n, test_fraction, seed);
  std::vector<std::size_t> test, train;
  for (std::size_t i = 0; i < data.n; ++i) (is_test[i] ? test : train).push_back(i);
  return {subset(data, train), subset(data, test)};
}

std::vector<bool> test_records(std::size_t n, double test_fraction, std::uint64_t seed) {
  require_open(opt("test_fraction"), test_fraction, 0.0, 1.0);
  const auto n_test = static_cast<std::size_t>(count_from_real(opt("test_fraction"), test_fraction,
                                                               test_fraction * static_cast<double>(n), 0,
                                                               std::int64_t{1} << 53, "round(test_fraction * n)"));
  if (n_test == 0 || n_test >= n)
    fail(opt("test_fraction"), test_fraction,
         fmt::format("such that both parts are non-empty: round(test_fraction * n) in [1, {}] "
                     "with n = {}",
                     n == 0 ? 0 : n - 1, n));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  SplitMix64 rng{seed};
  for (std::size_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
  std::vector<bool> is_test(n, false);
  for (std::size_t k = 0; k < n_test; ++k) is_test[order[k]] = true;
  return is_test;
}

}  // namespace hsdp::data
