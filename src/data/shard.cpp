// Reading one process's part of a data file (include/hsdp/data/shard.hpp).
#include "hsdp/data/shard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <numeric>

#include "hsdp/errors.hpp"
#include "io.hpp"
#include "parts.hpp"

namespace hsdp::data {

namespace {

using detail::fail_at;

// floor(i S / K) without overflow.
std::uint64_t cut(std::uint64_t S, int i, int K) {
  const auto k = static_cast<std::uint64_t>(K);
  const auto r = static_cast<std::uint64_t>(i);
  return (S / k) * r + (S % k) * r / k;
}

void check_world(const Collectives& world) {
  if (world.size < 1 || world.rank < 0 || world.rank >= world.size)
    fail("rank", std::to_string(world.rank), fmt::format("in [0, {}) with size = {}", world.size, world.size));
}

// Buffered bytes of a source with the position counted, for scanning to newlines.
class Scanner {
 public:
  explicit Scanner(detail::ByteSource& src) : src_(src), buf_(1 << 16) {}
  std::uint64_t pos() const { return pos_; }
  void skip(std::uint64_t count) {
    const std::uint64_t buffered = std::min<std::uint64_t>(count, len_ - at_);
    at_ += static_cast<std::size_t>(buffered);
    pos_ += buffered;
    if (buffered < count) pos_ += src_.skip(count - buffered);
  }
  // Consumes bytes up to and including the next newline; false when the input ended first
  // (then everything up to the end was consumed). `any`: some byte was consumed.
  bool to_newline(bool& any) {
    any = false;
    for (;;) {
      if (at_ == len_) {
        len_ = src_.read(buf_.data(), buf_.size());
        at_ = 0;
        if (len_ == 0) return false;
      }
      any = true;
      const auto* start = buf_.data() + at_;
      const auto* nl = static_cast<const std::uint8_t*>(std::memchr(start, '\n', len_ - at_));
      if (nl == nullptr) {
        pos_ += len_ - at_;
        at_ = len_;
        continue;
      }
      const auto step = static_cast<std::size_t>(nl - start) + 1;
      at_ += step;
      pos_ += step;
      return true;
    }
  }

 private:
  detail::ByteSource& src_;
  std::vector<std::uint8_t> buf_;
  std::size_t at_ = 0, len_ = 0;
  std::uint64_t pos_ = 0;
};

// The lines of [range.begin, range.end) of the (decompressed) bytes of `path`, the first one
// being line `first_line` of the file.
std::unique_ptr<detail::LineSource> range_lines(const std::string& path, const LineRange& range,
                                                std::size_t first_line,
                                                std::unique_ptr<detail::ByteSource>& holder) {
  holder = detail::open_bytes(path);
  if (holder->skip(range.begin) < range.begin)
    throw InvalidArgument(fmt::format("{}: the file changed while it was read (shorter than {} bytes)", path, range.begin));
  return detail::byte_lines(std::make_unique<detail::LimitedBytes>(*holder, range.end - range.begin), path,
                            range.begin == 0 ? 1 : first_line);
}

// The first line of the file (its layout), if there is one.
std::optional<std::string> first_line(const std::string& path) {
  auto lines = detail::open_lines(path);
  std::string line;
  if (!lines->next(line)) return std::nullopt;
  return line;
}

// One allgather of a count: every process's, and the offsets.
std::vector<std::size_t> gather_offsets(std::uint64_t count, const Collectives& world) {
  return offsets_of(world.allgather(count));
}

std::uint64_t sum_of(const std::vector<std::uint64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::uint64_t{0});
}

}  // namespace

Collectives one_process() {
  Collectives c;
  c.allgather = [](std::uint64_t v) { return std::vector<std::uint64_t>{v}; };
  c.allgather_text = [](const std::string& s) { return std::vector<std::string>{s}; };
  c.sum = [](std::vector<double>&) {};
  return c;
}

std::vector<std::size_t> offsets_of(const std::vector<std::uint64_t>& counts) {
  std::vector<std::size_t> offsets{0};
  for (const auto c : counts) offsets.push_back(offsets.back() + static_cast<std::size_t>(c));
  return offsets;
}

LineRange locate_lines(const std::string& path, int rank, int size) {
  Collectives w;
  w.rank = rank;
  w.size = size;
  check_world(w);
  LineRange range;
  {
    auto bytes = detail::open_bytes(path);
    range.gzip = bytes->compressed();
    if (range.gzip) {
      range.size = bytes->skip(~std::uint64_t{0});  // decompressed once: its size
    } else {
      std::error_code ec;
      range.size = std::filesystem::file_size(path, ec);
      if (ec) throw InvalidArgument(fmt::format("{}: cannot read its size: {}", path, ec.message()));
    }
  }
  const std::uint64_t S = range.size;
  const std::uint64_t a = cut(S, rank, size), b = cut(S, rank + 1, size);
  auto bytes = detail::open_bytes(path);
  Scanner scan(*bytes);
  bool any = false;
  if (a > 0) {
    // The first line starting at or after a: after the first newline at or after a - 1.
    scan.skip(a - 1);
    scan.to_newline(any);
  }
  range.begin = std::min(scan.pos(), S);
  while (scan.pos() < b && scan.pos() < S) {
    scan.to_newline(any);
    ++range.lines;  // a line that starts in [a, b): ours, to its newline or the end
  }
  range.end = std::max(range.begin, std::min(scan.pos(), S));
  return range;
}

namespace {
Part read_part_of(const DataSource& source, const Collectives& world);
}  // namespace

Part read_part(const DataSource& source, const Collectives& world) {
  try {
    return read_part_of(source, world);
  } catch (const InvalidArgument& e) {
    detail::name_path_error(e, source);
  }
}

namespace {

Part read_part_of(const DataSource& source, const Collectives& world) {
  check_world(world);
  Part part;
  part.rank = world.rank;
  if (source.format == "idx") {
    if (!source.labels_path)
      fail(opt(source.labels_field), "(missing)",
           fmt::format("the IDX labels file for {}", error_field("format", "idx")));
    part.data = detail::read_idx_records(source.path, *source.labels_path, source.limits,
                                         world.rank, world.size, source.storage);
    part.offsets = gather_offsets(part.data.n, world);
    return part;
  }
  if (source.format != "csv" && source.format != "libsvm")
    fail(opt("format"), source.format, "one of csv, libsvm, idx");
  // As data::read: text formats hold float64 or float32.
  if (source.storage == FeatureStorage::uint8)
    fail(opt("feature_storage"), "uint8",
         fmt::format("one of auto, float64, float32 for {} (uint8 is for IDX images)",
                     error_field("format", source.format)));
  const FeatureStorage text_storage = source.storage.value_or(FeatureStorage::float64);

  // The own lines, and their numbers: the lines of the ranges before this one.
  const LineRange range = locate_lines(source.path, world.rank, world.size);
  const std::vector<std::uint64_t> lines = world.allgather(range.lines);
  const std::uint64_t before = std::accumulate(lines.begin(), lines.begin() + world.rank, std::uint64_t{0});
  const std::uint64_t total_lines = sum_of(lines);
  std::unique_ptr<detail::ByteSource> holder;
  auto own = range_lines(source.path, range, static_cast<std::size_t>(before) + 1, holder);
  const std::string& name = source.path;

  if (source.format == "csv") {
    CsvOptions options;
    options.label_column = source.label_column;
    options.storage = text_storage;
    options.limits = source.limits;
    detail::CsvPart info;
    info.first_line = static_cast<std::size_t>(before) + 1;
    info.owns_line_one = range.begin == 0 && range.end > 0;
    if (!info.owns_line_one) info.line_one = first_line(source.path);
    part.data = detail::read_csv_lines(*own, name, options, &info);
    part.offsets = gather_offsets(part.data.n, world);
    const std::size_t n = part.n();
    if (n == 0) fail_at(name, static_cast<std::size_t>(total_lines) + 1, 1, "no records");
    if (info.layout_failed) return part;  // the process holding line 1 reports it
    if (info.declared && n != info.declared_n) {
      // As in one process: the first record past the declared count is named by its holder.
      if (n > info.declared_n) {
        if (info.declared_n >= part.first() && info.declared_n < part.first() + part.data.n)
          fail_at(name, part.data.origin[info.declared_n - part.first()], 1,
                  fmt::format("more records than the {} declared by the header on line {}",
                              info.declared_n, info.header_line));
      } else {
        fail_at(name, info.header_line, 1,
                fmt::format("the header declares {} records but the file has {}", info.declared_n, n));
      }
    }
    return part;
  }

  // LIBSVM: d is the largest index of all parts unless stated.
  detail::SparseRows rows;
  part.data = detail::read_libsvm_rows(*own, name, source.dimension, static_cast<std::size_t>(before) + 1, rows,
                                       text_storage, source.limits);
  part.offsets = gather_offsets(part.data.n, world);
  const std::vector<std::uint64_t> largest = world.allgather(rows.max_index);
  const std::uint64_t max_index = *std::max_element(largest.begin(), largest.end());
  if (part.n() == 0) fail_at(name, static_cast<std::size_t>(total_lines) + 1, 1, "no records");
  if (source.dimension == 0 && max_index == 0)
    fail_at(name, static_cast<std::size_t>(total_lines) + 1, 1,
            "no feature index in the file: the dimension cannot be inferred (pass it)");
  const std::uint64_t d = source.dimension != 0 ? source.dimension : max_index;
  if (d > source.limits.values || part.data.n > source.limits.values / d)
    throw InvalidArgument(fmt::format(
        "{}: {} records x {} features = more than {} values stored densely by process {} (docs/data.md "
        "\"Limits\")",
        name, part.data.n, d, source.limits.values, world.rank));
  detail::densify(part.data, rows, static_cast<std::size_t>(d), text_storage);
  return part;
}

}  // namespace

std::vector<std::string> gather_labels(const Dataset& part, const Collectives& world) {
  // Labels are single-line text: one per line.
  std::string mine;
  for (const auto& label : label_summary(part)) mine += label + '\n';
  std::vector<std::string> out;
  for (const auto& text : world.allgather_text(mine)) {
    std::size_t start = 0;
    for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
      out.push_back(text.substr(start, nl - start));
  }
  return out;
}

Part select_classes(const Part& part, const std::vector<std::string>& raw_labels,
                    const Collectives& world) {
  Part out;
  out.rank = part.rank;
  out.data = select_classes(part.data, raw_labels, gather_labels(part.data, world));
  out.offsets = gather_offsets(out.data.n, world);
  return out;
}

std::pair<Part, Part> train_test_split(Part part, double test_fraction, std::uint64_t seed) {
  const std::vector<bool> is_test = test_records(part.n(), test_fraction, seed);
  const std::size_t K = part.offsets.size() - 1;
  std::vector<std::size_t> train_offsets{0};
  Part test;
  test.rank = part.rank;
  test.offsets.assign(1, 0);
  for (std::size_t r = 0; r < K; ++r) {
    std::size_t t = 0;
    for (std::size_t g = part.offsets[r]; g < part.offsets[r + 1]; ++g) t += is_test[g] ? 1 : 0;
    test.offsets.push_back(test.offsets.back() + t);
    train_offsets.push_back(train_offsets.back() + (part.offsets[r + 1] - part.offsets[r] - t));
  }
  // The test records are copied out; the train records move forward in place (so the peak is
  // the part plus its test records, not two copies of the part).
  Dataset& data = part.data;
  const std::size_t first = part.first();
  const std::size_t d = data.d;
  Dataset& to = test.data;
  to = Dataset::empty_like(data);
  to.labels = data.labels;
  const std::size_t held = test.offsets[static_cast<std::size_t>(part.rank) + 1] - test.offsets[static_cast<std::size_t>(part.rank)];
  to.x.reserve(data.storage == FeatureStorage::float64 ? held * d : 0);
  to.x32.reserve(data.storage == FeatureStorage::float32 ? held * d : 0);
  to.x8.reserve(data.storage == FeatureStorage::uint8 ? held * d : 0);
  // Record i's stored values (and r_i) moved to record k <= i, in the data's own storage.
  auto move_features = [&](std::size_t i, std::size_t k) {
    switch (data.storage) {
      case FeatureStorage::float64:
        std::copy_n(data.x.begin() + static_cast<std::ptrdiff_t>(i * d), d, data.x.begin() + static_cast<std::ptrdiff_t>(k * d));
        break;
      case FeatureStorage::float32:
        std::copy_n(data.x32.begin() + static_cast<std::ptrdiff_t>(i * d), d, data.x32.begin() + static_cast<std::ptrdiff_t>(k * d));
        break;
      case FeatureStorage::uint8:
        std::copy_n(data.x8.begin() + static_cast<std::ptrdiff_t>(i * d), d, data.x8.begin() + static_cast<std::ptrdiff_t>(k * d));
        break;
    }
    if (!data.row_scale.empty()) data.row_scale[k] = data.row_scale[i];
  };
  const bool mapped = data.y.size() == data.n;
  const bool raw = data.raw_labels.size() == data.n;
  const bool origin = data.origin.size() == data.n;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < data.n; ++i) {
    if (is_test[first + i]) {
      to.append_features_of(data, i);
      if (mapped) to.y.push_back(data.y[i]);
      if (raw) to.raw_labels.push_back(std::move(data.raw_labels[i]));
      if (origin) to.origin.push_back(data.origin[i]);
      ++to.n;
      continue;
    }
    if (kept != i) {
      move_features(i, kept);
      if (mapped) data.y[kept] = data.y[i];
      if (raw) data.raw_labels[kept] = std::move(data.raw_labels[i]);
      if (origin) data.origin[kept] = data.origin[i];
    }
    ++kept;
  }
  data.n = kept;
  switch (data.storage) {
    case FeatureStorage::float64: data.x.resize(kept * d); break;
    case FeatureStorage::float32: data.x32.resize(kept * d); break;
    case FeatureStorage::uint8: data.x8.resize(kept * d); break;
  }
  if (!data.row_scale.empty()) data.row_scale.resize(kept);
  if (mapped) data.y.resize(kept);
  if (raw) data.raw_labels.resize(kept);
  if (origin) data.origin.resize(kept);
  part.offsets = std::move(train_offsets);
  return {std::move(part), std::move(test)};
}

}  // namespace hsdp::data
