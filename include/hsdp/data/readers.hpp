// Readers for CSV, LIBSVM/svmlight and IDX files, explicit label mapping, privacy-aware
// preprocessing and a seeded train/test split (docs/data.md).
//
// Every reader produces a Dataset whose labels are still raw text (Dataset::raw_labels);
// Dataset::y stays empty until map_labels() says how the text becomes numbers, so a label
// is never converted behind the user's back and the mapping can be reported
// ("B -> -1, M -> +1").
//
// Malformed input throws hsdp::InvalidArgument. Text formats name the place as
// "<file>:<line>:<column>: <what is wrong>" (line and column 1-based, column in bytes);
// IDX, being binary, names "<file>: byte <offset>: <what is wrong>". Nothing is silently
// skipped: blank lines, ragged rows, non-finite numbers and trailing bytes are errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hsdp/data/dataset.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/limits.hpp"

namespace hsdp::data {

// ---------------------------------------------------------------------------------------
// Readers. Paths may name plain or gzip-compressed files (detected by the gzip magic
// bytes, not by the name). CSV and LIBSVM are read line by line (streaming); features are
// float64 and must be finite. Text (CSV, LIBSVM, users files) may start with a UTF-8
// byte-order mark, which is not part of the first line; a NUL byte or a carriage return
// inside a line is an error naming file:line:column.

/// The largest input a reader accepts (docs/data.md "Limits"; the defaults are those of
/// hsdp/limits.hpp). Each is checked before anything of that size is stored: exceeding one
/// is an InvalidArgument naming the file (with the line, or the byte of an IDX header) and
/// the limit. Smaller values serve tests and callers with less memory.
struct DataLimits {
  std::uint64_t records = limits::records;        ///< n
  std::uint64_t features = limits::features;      ///< d (LIBSVM: the largest index)
  std::uint64_t values = limits::values;          ///< n * d stored densely
  std::uint64_t line_bytes = limits::line_bytes;  ///< one line of text
  std::uint64_t file_bytes = limits::file_bytes;  ///< the whole file, decompressed
};

struct CsvOptions {
  /// auto_detect: the first line (after skip_lines) is a header when one of its feature
  /// fields is not a number. auto_detect and present also recognise the scikit-learn header
  /// "n,d,name0,name1[,...]" (two integers and at least two class names, e.g.
  /// breast_cancer.csv: "569,30,malignant,benign"): then every row must have d + 1 fields
  /// and there must be exactly n rows.
  enum class Header { auto_detect, present, absent };
  Header header = Header::auto_detect;
  /// 0-based column holding the label; default: the last column.
  std::optional<std::size_t> label_column;
  /// false: the file has no label column, every field is a feature (records to score with a
  /// trained model; Dataset::raw_labels stays empty). label_column must then be unset, and a
  /// scikit-learn header (whose rows carry a label) is an error.
  bool labeled = true;
  /// Field separator; fields may be double-quoted ("a,b", "" for a quote inside).
  char delimiter = ',';
  /// Lines skipped before anything else (e.g. a preamble); they are not parsed.
  std::size_t skip_lines = 0;
  /// float64 (default) or float32 (a value float32 cannot hold finitely is an error naming
  /// file:line:column); uint8 is an error naming feature_storage.
  FeatureStorage storage = FeatureStorage::float64;
  DataLimits limits = {};
};

Dataset read_csv(const std::string& path, const CsvOptions& options = {});
/// `name` is used in messages and as Dataset::source.
Dataset read_csv(std::istream& in, const std::string& name, const CsvOptions& options = {});

/// The most values (n * d) a reader stores densely: 2^28 float64 = 2 GiB (DataLimits::values).
inline constexpr std::size_t default_max_values = limits::values;

/// LIBSVM / svmlight: "<label> <index>:<value> ..." with 1-based, strictly increasing
/// indices, an optional "# comment" at the end of a line, and whole-line "#" comments.
/// dimension = 0: d is the largest index seen; otherwise d = dimension and a larger index is
/// an error. Stored densely; an index beyond limits.features and n * d > limits.values are
/// errors (a sparse file can name a huge index in a few bytes).
/// storage: float64 or float32 (as CsvOptions::storage).
/// labeled = false: lines are "<index>:<value> ..." without a label (records to score with a
/// trained model; Dataset::raw_labels stays empty); a record of zeros is written "1:0" (an
/// empty line is an error, as with labels).
Dataset read_libsvm(const std::string& path, std::size_t dimension = 0, const DataLimits& limits = {},
                    FeatureStorage storage = FeatureStorage::float64, bool labeled = true);
Dataset read_libsvm(std::istream& in, const std::string& name, std::size_t dimension = 0,
                    const DataLimits& limits = {}, FeatureStorage storage = FeatureStorage::float64,
                    bool labeled = true);

/// IDX (the MNIST / Fashion-MNIST format), plain or gzipped: an images file of shape
/// n x d1 x ... (any IDX element type) and a labels file of shape n. Pixels are returned
/// *unscaled* (0..255 for the uint8 MNIST files); scale them yourself, e.g. with
/// scale_features() and the public constant 1/255. Raw labels are the integer text ("0".."9").
/// storage: nullopt (auto) keeps unsigned-byte images (type 0x08, as MNIST) as uint8 and
/// reads every other element type as float64; uint8 for another element type is an error
/// naming feature_storage; float32 rounds (a value outside the float32 range is an error).
/// A header declaring more records, features or values than `limits` is an error before
/// anything is stored (an IDX header can promise any size in 16 bytes).
Dataset read_idx(const std::string& images_path, const std::string& labels_path,
                 const DataLimits& limits = {}, std::optional<FeatureStorage> storage = std::nullopt);
/// An IDX images file without labels (records to score with a trained model;
/// Dataset::raw_labels stays empty), checked as read_idx checks it.
Dataset read_idx_images(const std::string& images_path, const DataLimits& limits = {},
                        std::optional<FeatureStorage> storage = std::nullopt);
/// The same from bytes in memory (plain or gzipped), for tests and fuzzers.
Dataset read_idx(std::span<const std::uint8_t> images, std::span<const std::uint8_t> labels,
                 const std::string& images_name = "images",
                 const std::string& labels_name = "labels",
                 const DataLimits& limits = {}, std::optional<FeatureStorage> storage = std::nullopt);

/// "auto" -> nullopt, "float64" | "float32" | "uint8" -> that storage; anything else throws
/// InvalidArgument naming `parameter` and the allowed values.
std::optional<FeatureStorage> parse_feature_storage(std::string_view text, const Param& parameter);

/// A data file named with its format, as a request states it (`hsdp train --data F --format
/// csv`, hsdp.read_csv): the one dispatch of every front end.
struct DataSource {
  std::string path;
  std::string format = "csv";                ///< csv | libsvm | idx
  std::optional<std::string> labels_path;    ///< the IDX labels file (idx only)
  std::string labels_field = "labels";       ///< the field naming labels_path, for messages
  std::optional<std::size_t> label_column;   ///< CSV: 0-based label column (default: last)
  std::size_t dimension = 0;                 ///< LIBSVM: d (0: the largest index seen)
  /// How the features are held (nullopt: auto = uint8 for unsigned-byte IDX images, float64
  /// otherwise); uint8 for a text format is an error naming feature_storage.
  std::optional<FeatureStorage> storage;
  std::string path_field = "data";           ///< the field naming path, for messages
  /// false: the file holds features only (CSV: no label column; LIBSVM: no leading label;
  /// IDX: images without a labels file, labels_path unset); raw_labels stays empty.
  bool labeled = true;
  DataLimits limits = {};
};
/// Reads `source` with the reader of its format. Throws InvalidArgument naming `format`
/// for an unknown format, the labels field when an IDX file comes without its labels (or a
/// labels file with another format, or with labeled = false), the path's field when a file
/// cannot be opened.
Dataset read(const DataSource& source);

// ---------------------------------------------------------------------------------------
// Labels.

enum class LabelKind {
  plus_minus_one,  ///< binary: positive -> +1, the other label -> -1
  zero_one,        ///< binary: positive -> 1, the other label -> 0
  classes,         ///< k distinct labels -> class ids 0..k-1 (numeric order if all labels
                   ///< are numbers, otherwise lexicographic)
  real,            ///< each label parsed as a finite number (regression); no mapping
};

/// "plus-minus-one", "zero-one", "classes", "real" (the name stored in model files).
std::string_view to_string(LabelKind kind);

/// Fills dataset.y and dataset.labels from dataset.raw_labels. For the binary kinds there
/// must be exactly 2 distinct labels (otherwise the error names those found). `positive`
/// names the label that becomes +1 / 1; without it, the larger label is positive (numeric
/// order if both are numbers, e.g. 0/1 or -1/+1; otherwise lexicographic, e.g. M over B).
/// `positive` is only allowed for the binary kinds.
void map_labels(Dataset& dataset, LabelKind kind,
                std::optional<std::string> positive = std::nullopt);

/// The distinct raw labels of `dataset` in the order of their first record (as written
/// there): a part's contribution to the labels of a data set read in parts (data/shard.hpp).
std::vector<std::string> label_summary(const Dataset& dataset);
/// map_labels for a part of a data set whose distinct raw labels, over all parts, are
/// `universe` (the parts' label_summary concatenated in file order): the mapping, and every
/// check, are those of map_labels on the whole data set; the part may be empty. `universe`
/// is not used for LabelKind::real.
void map_labels(Dataset& part, LabelKind kind, std::optional<std::string> positive,
                const std::vector<std::string>& universe);

// ---------------------------------------------------------------------------------------
// Preprocessing. Each call says what it did and whether it leaks privacy, so the report of
// a training run can state it. Record-local operations and operations with public constants
// do not leak; anything computed from the dataset itself does (the output then depends on
// every record, outside the privacy accounting).

struct Preprocessing {
  std::string description;
  bool leaks_privacy = false;
};

/// x_i <- x_i * min(1, R / ||x_i||_2): record-local, so it keeps privacy. R > 0, finite.
/// Compact storage: only the record factor r_i changes (dataset.hpp).
Preprocessing scale_rows_to_norm(Dataset& dataset, double R);
/// x_ij <- x_ij * public_scale[j] with user-stated public constants (size d, finite).
/// Compact storage: only the feature constants c_j change.
Preprocessing scale_features(Dataset& dataset, const std::vector<double>& public_scale);
/// A public range of a feature, [min, max] with min < max: what a data set's documentation
/// states about the values a feature takes (scikit-learn's descr/*.rst Min/Max tables, the
/// 0..255 of an 8-bit pixel). Never computed from the records.
struct FeatureRange {
  double min = 0, max = 1;
};
/// Reads public feature ranges: one range per non-blank line, "min max" (whitespace or a
/// comma between them), "#" starts a comment; one line states the range of every feature,
/// otherwise one line per feature in column order. Plain or gzip. A malformed line, or a
/// range with max <= min, throws InvalidArgument naming `field` and "path:line".
std::vector<FeatureRange> read_feature_ranges(const std::string& path, const Param& field);
/// x_ij <- (x_ij - public_center[j]) with user-stated public constants (size d, finite):
/// centring is not a scale, so float64 storage only (compact storage throws
/// InvalidArgument naming feature_storage).
Preprocessing center_features(Dataset& dataset, const std::vector<double>& public_center);
/// x_ij <- (x_ij - mean_j) / std_j with the dataset's own mean and standard deviation
/// (std 0 -> left centred only). Allowed, but leaks_privacy = true and the description says
/// why: the statistics depend on every record and are not covered by any privacy analysis.
/// float64 storage only (centring is not a scale): compact storage is an error naming
/// feature_storage.
Preprocessing standardize_from_data(Dataset& dataset);

// ---------------------------------------------------------------------------------------
// Subsets.

/// A uniformly random split (Fisher-Yates with a seeded 64-bit generator; the same seed
/// gives the same split on every platform). The test part has round(test_fraction * n)
/// records, test_fraction in (0, 1); both parts must be non-empty.
std::pair<Dataset, Dataset> train_test_split(const Dataset& dataset, double test_fraction,
                                             std::uint64_t seed);
/// Which of n records train_test_split puts in the test part (true) for this fraction and
/// seed: the split of a data set held in parts (data/shard.hpp), O(n) memory.
std::vector<bool> test_records(std::size_t n, double test_fraction, std::uint64_t seed);

/// The records whose raw label is one of raw_labels, in file order (e.g. two
/// Fashion-MNIST classes {"0", "6"}); labels compare as map_labels compares them (by value
/// when every label is a number, so "1" selects "+1"). The result's labels are unmapped (raw
/// text kept, y empty). Each requested label must occur in the dataset, once.
Dataset select_classes(const Dataset& dataset, const std::vector<std::string>& raw_labels);
/// The same for a part of a data set whose distinct raw labels are `universe` (as for
/// map_labels): checked against the whole data set, this part's records kept.
Dataset select_classes(const Dataset& part, const std::vector<std::string>& raw_labels,
                       const std::vector<std::string>& universe);

}  // namespace hsdp::data
