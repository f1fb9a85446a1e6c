// An in-memory dataset: n records of d float64 features (dense, row-major) and a label
// per record. The readers (CSV, LIBSVM, IDX) produce it; the trainer consumes it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace hsdp::data {

/// How raw labels were mapped to the numbers the models use, reported to the user
/// (e.g. "B -> -1, M -> +1" or "0..9 -> class ids 0..9").
struct LabelMapping {
  std::vector<std::string> raw;  ///< the raw label text, in the order of `mapped`
  std::vector<double> mapped;    ///< the value each raw label became
  std::string describe() const;  ///< "raw1 -> v1, raw2 -> v2, ..."
};

struct Dataset {
  std::size_t n = 0;          ///< records
  std::size_t d = 0;          ///< features per record
  std::vector<double> x;      ///< n * d, row-major: record i is x[i*d .. i*d + d)
  std::vector<double> y;      ///< n labels (binary: -1/+1 or 0/1; classes: 0..k-1; regression: real)
  LabelMapping labels;        ///< empty for regression targets
  std::string source;         ///< file the data came from (for messages and reports)
  /// The label text of each record as read (readers/readers.hpp). y stays empty until
  /// map_labels() turns this text into numbers explicitly.
  std::vector<std::string> raw_labels;
  /// Where each record came from: its 1-based line (CSV, LIBSVM) or 0-based item index
  /// (IDX), so later errors about a record can name it.
  std::vector<std::size_t> origin;
  /// The user each record belongs to (federated training with several records per user,
  /// docs/distributed.md "Federated training"); any text. Empty: every record is its own user.
  /// Like `origin`, it follows the records through class selection and the train/test split.
  std::vector<std::string> users;

  const double* row(std::size_t i) const { return x.data() + i * d; }
  double* row(std::size_t i) { return x.data() + i * d; }
};

}  // namespace hsdp::data
