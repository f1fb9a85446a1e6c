// An in-memory dataset: n records of d features (dense, row-major) and a label per record.
// The readers (CSV, LIBSVM, IDX) produce it; the trainer consumes it.
//
// Feature storage (docs/data.md, "Feature storage"): the features are held as float64 (x),
// float32 (x32) or uint8 (x8). Compact storage keeps the values as read, u_il, plus a
// public per-feature scale c_l (feature_scale) and a per-record factor r_i (row_scale); the
// feature the models see is x_il = r_i * (c_l * u_il), computed in float64 where it is used,
// so preprocessing never materialises doubles. float64 storage applies preprocessing in
// place and keeps feature_scale and row_scale empty.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hsdp::data {

/// How a Dataset holds its features.
enum class FeatureStorage { float64, float32, uint8 };
/// "float64" | "float32" | "uint8".
std::string_view to_string(FeatureStorage storage);
/// Bytes per stored feature value: 8, 4, 1.
std::size_t bytes_per_value(FeatureStorage storage);

/// How labels were mapped to the numbers the models use, reported to the user
/// (e.g. "B -> -1, M -> +1" or "0..9 -> class ids 0..9").
struct LabelMapping {
  std::vector<std::string> raw;  ///< the raw label text, in the order of `mapped`
  std::vector<double> mapped;    ///< the value each raw label became
  std::string describe() const;  ///< "raw1 -> v1, raw2 -> v2, ..."
};

struct Dataset {
  std::size_t n = 0;          ///< records
  std::size_t d = 0;          ///< features per record
  FeatureStorage storage = FeatureStorage::float64;
  std::vector<double> x;      ///< float64 storage: n * d, row-major, record i is x[i*d .. i*d + d)
  std::vector<float> x32;     ///< float32 storage: n * d, row-major
  std::vector<std::uint8_t> x8;  ///< uint8 storage: n * d, row-major
  /// Compact storage: the public per-feature constant c_l (size d; empty: every c_l = 1).
  std::vector<double> feature_scale;
  /// Compact storage: the per-record factor r_i (size n; empty: every r_i = 1).
  std::vector<double> row_scale;
  std::vector<double> y;      ///< n labels (binary: -1/+1 or 0/1; classes: 0..k-1; regression: real)
  LabelMapping labels;        ///< empty for regression targets
  std::string source;         ///< file the data came from (for messages and reports)
  /// The label text of each record as read (readers/readers.hpp). y stays empty until
  /// map_labels() turns this text into numbers explicitly.
  std::vector<std::string> raw_labels;
  /// Where each record came from: its 1-based line (CSV, LIBSVM) or 0-based item index
  /// (IDX, rows of an array), so later errors about a record can name it (label_place).
  std::vector<std::size_t> origin;
  /// What `origin` counts: lines of a text file, items of an IDX file, rows of an array.
  enum class Origin { line, item, row };
  Origin origin_kind = Origin::line;
  /// Where the labels came from when not from `source`: an IDX labels file, Python's y.
  std::string labels_source;
  /// The user each record belongs to (federated training with several records per user,
  /// docs/distributed.md "Federated training"); any text. Empty: every record is its own user.
  /// Like `origin`, it follows the records through class selection and the train/test split.
  std::vector<std::string> users;

  bool compact() const { return storage != FeatureStorage::float64; }
  /// Record i as float64 values. Only for float64 storage: on compact storage it throws
  /// std::logic_error (use effective_row, or the storage-aware kernels).
  const double* row(std::size_t i) const {
    if (compact()) [[unlikely]] compact_row_error();
    return x.data() + i * d;
  }
  double* row(std::size_t i) {
    if (compact()) [[unlikely]] compact_row_error();
    return x.data() + i * d;
  }
  /// The effective features of record i, x_il = r_i * (c_l * u_il), into out[0 .. d), for
  /// any storage.
  void effective_row(std::size_t i, double* out) const;
  /// r_i (1 when row_scale is empty).
  double row_factor(std::size_t i) const { return row_scale.empty() ? 1.0 : row_scale[i]; }
  /// c_l (1 when feature_scale is empty).
  double feature_factor(std::size_t l) const { return feature_scale.empty() ? 1.0 : feature_scale[l]; }
  /// Values stored (the size of x, x32 or x8, whichever the storage uses).
  std::size_t stored_values() const;
  /// Bytes of stored feature values per record (d * bytes_per_value).
  std::size_t record_bytes() const { return d * bytes_per_value(storage); }
  /// Appends the features of record i of `from` (same d and storage, the same
  /// feature_scale) as a new last record: the stored values and, for compact storage, r_i.
  /// Does not touch n, y, labels or origin.
  void append_features_of(const Dataset& from, std::size_t i);
  /// An empty dataset with the d, storage, feature_scale and sources of `like`.
  static Dataset empty_like(const Dataset& like);
  /// The file (or array) the labels came from: labels_source, else source.
  const std::string& label_file() const { return labels_source.empty() ? source : labels_source; }
  /// Where the label of record i is, as a user finds it: "data.csv:12" (file:line),
  /// "labels.idx: item 3", "y[3]"; "record i + 1" when its origin is unknown.
  std::string label_place(std::size_t i) const;

 private:
  [[noreturn]] static void compact_row_error();
};

/// `data` (float64 storage, nothing scaled yet, e.g. an array handed over by a front end)
/// held as `storage`: float32 needs every value within the float32 range, uint8 integers
/// 0..255; an offending value throws InvalidArgument naming "<source>[i, j]" (0-based) and
/// feature_storage. float64 returns `data` unchanged.
Dataset stored_as(Dataset data, FeatureStorage storage);

/// A float64 copy of `data` (the effective features materialised, scales applied; labels,
/// origin and source kept). For the few places that need doubles (e.g. the membership
/// audit's canary); the trainer reads compact storage directly.
Dataset as_float64(const Dataset& data);

}  // namespace hsdp::data
