// LIBSVM / svmlight reader (docs/data.md): streaming, sparse while reading, dense at the end.
#include <fmt/format.h>

#include <cmath>

#include <charconv>
#include <cstdint>

#include "io.hpp"
#include "parts.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::data {
namespace {

using detail::fail_at;
using detail::quoted;

bool blank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

Dataset detail::read_libsvm_rows(LineSource& lines, const std::string& name, std::size_t dimension,
                                 std::size_t first_line, SparseRows& rows, FeatureStorage storage,
                                 const DataLimits& limits, bool labeled) {
  if (storage == FeatureStorage::uint8)
    fail(opt("feature_storage"), "uint8", "float64 or float32 for a LIBSVM file (uint8 is for IDX images)");
  Dataset data;
  data.source = name;
  // Sparse while reading: with dimension = 0, d is known only at the end.
  std::vector<std::size_t>& row_start = rows.row_start;
  std::vector<std::uint64_t>& index = rows.index;
  std::vector<double>& value = rows.value;
  std::uint64_t& max_index = rows.max_index;
  std::uint64_t& max_index_line = rows.max_index_line;
  row_start.assign(1, 0);

  std::string line;
  std::size_t lineno = first_line - 1;
  while (lines.next(line)) {
    ++lineno;
    std::string_view rest(line);
    if (const auto hash = rest.find('#'); hash != std::string_view::npos) {
      // A comment runs to the end of the line; a line that is only a comment is not a record.
      if (rest.find_first_not_of(" \t") == hash) continue;
      rest = rest.substr(0, hash);
    }
    std::size_t i = 0;
    auto token = [&]() -> std::pair<std::string_view, std::size_t> {
      while (i < rest.size() && blank(rest[i])) ++i;
      const std::size_t start = i;
      while (i < rest.size() && !blank(rest[i])) ++i;
      return {rest.substr(start, i - start), start + 1};
    };

    if (rest.find_first_not_of(" \t") == std::string_view::npos)
      fail_at(name, lineno, 1,
              labeled ? "empty line (every line must be a record)"
                      : "empty line (every line must be a record; a record of zeros is written 1:0)");
    if (data.n >= limits.records)
      fail_at(name, lineno, 1,
              fmt::format("more than {} records (the most hsdp reads from one file; docs/data.md \"Limits\")",
                          limits.records));
    if (labeled) {
      const auto [label, label_column] = token();
      if (label.find(':') != std::string_view::npos)
        fail_at(name, lineno, label_column,
                fmt::format("expected a label before the features, found {}", quoted(label)));
      data.raw_labels.emplace_back(label);
    }

    std::uint64_t previous = 0;
    for (;;) {
      const auto [tok, column] = token();
      if (tok.empty()) break;
      const auto colon = tok.find(':');
      if (colon == std::string_view::npos)
        fail_at(name, lineno, column,
                fmt::format("expected <index>:<value>, found {}", quoted(tok)));
      const auto idx_text = tok.substr(0, colon);
      const auto val_text = tok.substr(colon + 1);
      if (idx_text == "qid")
        fail_at(name, lineno, column, "qid (svmlight ranking groups) is not supported");
      std::uint64_t idx = 0;
      const auto* idx_end = idx_text.data() + idx_text.size();
      const auto [p, ec] = std::from_chars(idx_text.data(), idx_end, idx);
      if (idx_text.empty() || ec == std::errc::invalid_argument || p != idx_end)
        fail_at(name, lineno, column,
                fmt::format("feature index {} is not a positive integer", quoted(idx_text)));
      if (ec == std::errc::result_out_of_range)
        fail_at(name, lineno, column,
                fmt::format("feature index {} is out of range", quoted(idx_text)));
      if (idx == 0)
        fail_at(name, lineno, column, "feature index 0: indices are 1-based (must be >= 1)");
      if (idx == previous)
        fail_at(name, lineno, column, fmt::format("duplicate feature index {}", idx));
      if (idx < previous)
        fail_at(name, lineno, column,
                fmt::format("feature index {} after {}: indices must be strictly increasing",
                            idx, previous));
      if (dimension != 0 && idx > dimension)
        fail_at(name, lineno, column,
                fmt::format("feature index {}: must be at most dimension = {}", idx, dimension));
      if (idx > limits.features)
        fail_at(name, lineno, column,
                fmt::format("feature index {}: more than {} features (the most hsdp reads; docs/data.md "
                            "\"Limits\")",
                            idx, limits.features));
      if (index.size() >= limits.values)
        fail_at(name, lineno, column,
                fmt::format("more than {} feature values (docs/data.md \"Limits\")", limits.values));
      double v = 0;
      std::string why;
      if (!detail::parse_finite(val_text, v, &why))
        fail_at(name, lineno, column + colon + 1,
                fmt::format("value {} of feature {} is {} (features must be finite float64 "
                            "numbers)",
                            quoted(val_text), idx, why));
      if (storage == FeatureStorage::float32 && !std::isfinite(static_cast<float>(v)))
        fail_at(name, lineno, column + colon + 1,
                fmt::format("value {} of feature {} is outside the float32 range (feature "
                            "storage float32 holds |values| up to about 3.4e38)",
                            quoted(val_text), idx));
      previous = idx;
      index.push_back(idx);
      value.push_back(v);
      if (idx > max_index) {
        max_index = idx;
        max_index_line = lineno;
      }
    }
    row_start.push_back(index.size());
    data.origin.push_back(lineno);
    ++data.n;
  }
  rows.lines = lineno;
  return data;
}

void detail::densify(Dataset& data, const SparseRows& rows, std::size_t d, FeatureStorage storage) {
  data.d = d;
  data.storage = storage;
  if (storage == FeatureStorage::float32) {
    data.x32.assign(data.n * data.d, 0.0f);
    for (std::size_t r = 0; r < data.n; ++r)
      for (std::size_t k = rows.row_start[r]; k < rows.row_start[r + 1]; ++k)
        data.x32[r * data.d + (rows.index[k] - 1)] = static_cast<float>(rows.value[k]);
    return;
  }
  data.x.assign(data.n * data.d, 0.0);
  for (std::size_t r = 0; r < data.n; ++r)
    for (std::size_t k = rows.row_start[r]; k < rows.row_start[r + 1]; ++k)
      data.x[r * data.d + (rows.index[k] - 1)] = rows.value[k];
}

namespace {

Dataset read(detail::LineSource& lines, const std::string& name, std::size_t dimension,
             const DataLimits& limits, FeatureStorage storage, bool labeled) {
  const std::uint64_t max_values = limits.values;
  if (max_values == 0) fail("max_values", "0", "at least 1");
  detail::SparseRows rows;
  Dataset data = detail::read_libsvm_rows(lines, name, dimension, 1, rows, storage, limits, labeled);
  const std::size_t lineno = rows.lines;
  const std::uint64_t max_index = rows.max_index;
  const std::uint64_t max_index_line = rows.max_index_line;
  if (data.n == 0) fail_at(name, lineno + 1, 1, "no records");
  if (dimension == 0 && max_index == 0)
    fail_at(name, lineno + 1, 1,
            "no feature index in the file: the dimension cannot be inferred (pass it)");
  const std::uint64_t d = dimension != 0 ? dimension : max_index;
  if (d > max_values || data.n > max_values / d)
    throw InvalidArgument(fmt::format(
        "{}: {} records x {} features{} = more than {} values stored densely (docs/data.md \"Limits\")",
        name, data.n, d,
        dimension != 0 ? "" : fmt::format(" (largest index, line {})", max_index_line),
        max_values));
  detail::densify(data, rows, static_cast<std::size_t>(d), storage);
  return data;
}

}  // namespace

Dataset read_libsvm(std::istream& in, const std::string& name, std::size_t dimension,
                    const DataLimits& limits, FeatureStorage storage, bool labeled) {
  auto lines = detail::istream_lines(in, name, limits);
  return read(*lines, name, dimension, limits, storage, labeled);
}

Dataset read_libsvm(const std::string& path, std::size_t dimension, const DataLimits& limits,
                    FeatureStorage storage, bool labeled) {
  auto lines = detail::open_lines(path, limits);
  return read(*lines, path, dimension, limits, storage, labeled);
}

}  // namespace hsdp::data
