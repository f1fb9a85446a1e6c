// The readers' entry points for reading one process's part of a file (data/shard.hpp,
// src/data/shard.cpp); implementation detail of src/data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io.hpp"
#include "hsdp/data/readers.hpp"

namespace hsdp::data::detail {

struct CsvPart {
  // in
  std::size_t first_line = 1;            ///< the number of the first line of the source
  bool owns_line_one = true;             ///< the source starts with the file's line 1
  std::optional<std::string> line_one;   ///< otherwise: the file's line 1 (the layout)
  // out
  bool layout_failed = false;  ///< line 1 gives no layout (its holder reports why)
  bool declared = false;       ///< a scikit-learn header declared the record count
  std::size_t declared_n = 0, header_line = 0;
  std::size_t lines = 0;  ///< the number of the last line read
};
/// CSV lines; with `part`, as described there (else the whole file, every check).
Dataset read_csv_lines(LineSource& lines, const std::string& name, const CsvOptions& options,
                       CsvPart* part = nullptr);

/// LIBSVM rows as read (sparse), and the largest index with its line.
struct SparseRows {
  std::vector<std::size_t> row_start;
  std::vector<std::uint64_t> index;  ///< 1-based
  std::vector<double> value;
  std::uint64_t max_index = 0, max_index_line = 0;
  std::size_t lines = 0;  ///< the number of the last line read
};
/// Reads LIBSVM lines numbered from first_line; the Dataset has n, labels, origin (no x, d).
/// labeled = false: no line starts with a label (read_libsvm).
Dataset read_libsvm_rows(LineSource& lines, const std::string& name, std::size_t dimension,
                         std::size_t first_line, SparseRows& rows,
                         FeatureStorage storage = FeatureStorage::float64, const DataLimits& limits = {},
                         bool labeled = true);
/// Stores the rows densely with d features, as float64 or float32 (`storage`).
void densify(Dataset& data, const SparseRows& rows, std::size_t d,
             FeatureStorage storage = FeatureStorage::float64);

/// IDX records [first, last) of the files (every record's bytes are checked for truncation
/// and trailing data as when reading all); origin holds the item indices.
Dataset read_idx_records(const std::string& images_path, const std::string& labels_path,
                         const DataLimits& limits, int rank, int size,
                         std::optional<FeatureStorage> storage = std::nullopt);

/// Rethrows `e`; an error opening a file (field "path") renamed to the field of `source` that
/// named that file (path_field or labels_field).
[[noreturn]] void name_path_error(const InvalidArgument& e, const DataSource& source);

}  // namespace hsdp::data::detail
