// IDX reader (the MNIST / Fashion-MNIST format, docs/data.md). Layout: two zero bytes, an
// element type code, the number of dimensions k, k big-endian uint32 sizes, then the
// elements in big-endian row-major order. Offsets in messages count decompressed bytes.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <optional>

#include "io.hpp"
#include "parts.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::data {
namespace {

using detail::fail_at_byte;

struct Idx {
  std::string name;
  detail::ByteSource* source = nullptr;
  std::uint64_t offset = 0;  // bytes consumed so far
  std::uint8_t type = 0;
  std::size_t element_size = 0;
  std::vector<std::uint64_t> dims;

  void read_exact(std::uint8_t* out, std::size_t size, std::string_view what) {
    const std::size_t got = source->read(out, size);
    if (got < size)
      fail_at_byte(name, offset + got, fmt::format("truncated: the data ends inside {}", what));
    offset += size;
  }

  void read_header() {
    std::uint8_t magic[4];
    read_exact(magic, 4, "the 4-byte magic number");
    if (magic[0] != 0 || magic[1] != 0)
      fail_at_byte(name, 0,
                   fmt::format("wrong magic number {:02x} {:02x} {:02x} {:02x}: an IDX file "
                               "starts with two zero bytes",
                               magic[0], magic[1], magic[2], magic[3]));
    type = magic[2];
    switch (type) {
      case 0x08: case 0x09: element_size = 1; break;
      case 0x0B: element_size = 2; break;
      case 0x0C: case 0x0D: element_size = 4; break;
      case 0x0E: element_size = 8; break;
      default:
        fail_at_byte(name, 2,
                     fmt::format("unknown IDX element type 0x{:02x} (must be 0x08, 0x09, "
                                 "0x0b, 0x0c, 0x0d or 0x0e)",
                                 type));
    }
    if (magic[3] == 0) fail_at_byte(name, 3, "zero dimensions (must be at least 1)");
    dims.resize(magic[3]);
    for (std::size_t k = 0; k < dims.size(); ++k) {
      std::uint8_t b[4];
      read_exact(b, 4, fmt::format("the size of dimension {}", k));
      dims[k] = (std::uint64_t{b[0]} << 24) | (std::uint64_t{b[1]} << 16) |
                (std::uint64_t{b[2]} << 8) | b[3];
      if (dims[k] == 0) fail_at_byte(name, offset - 4, fmt::format("dimension {} has size 0", k));
    }
  }

  // Reads `count` elements as float64. `count` has been checked against max_values, but the
  // raw bytes are read in chunks so a header that promises more than the file holds fails
  // with "truncated" before any large allocation.
  std::vector<std::uint8_t> read_raw(std::uint64_t count) {
    std::vector<std::uint8_t> raw;
    const std::uint64_t total = count * element_size;
    const std::uint64_t start = offset;
    constexpr std::size_t chunk = std::size_t{1} << 20;
    while (raw.size() < total) {
      const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, total - raw.size()));
      const std::size_t old = raw.size();
      raw.resize(old + want);
      const std::size_t got = source->read(raw.data() + old, want);
      if (got < want)
        fail_at_byte(name, start + old + got,
                     fmt::format("truncated: the header declares {} values ({} bytes of data) "
                                 "but the data ends after {} bytes",
                                 count, total, old + got));
    }
    offset += total;
    return raw;
  }

  std::vector<double> read_values(std::uint64_t count) {
    const std::uint64_t start = offset;
    const std::vector<std::uint8_t> raw = read_raw(count);
    std::vector<double> out(static_cast<std::size_t>(count));
    const std::uint8_t* p = raw.data();
    for (std::size_t i = 0; i < out.size(); ++i, p += element_size) {
      double v = 0;
      switch (type) {
        case 0x08: v = p[0]; break;
        case 0x09: v = static_cast<std::int8_t>(p[0]); break;
        case 0x0B: v = static_cast<std::int16_t>(static_cast<std::uint16_t>((p[0] << 8) | p[1])); break;
        case 0x0C: v = static_cast<std::int32_t>(be32(p)); break;
        case 0x0D: v = std::bit_cast<float>(be32(p)); break;
        default: v = std::bit_cast<double>((std::uint64_t{be32(p)} << 32) | be32(p + 4)); break;
      }
      if (!std::isfinite(v))
        fail_at_byte(name, start + i * element_size,
                     fmt::format("value {} is not finite", i));
      out[i] = v;
    }
    return out;
  }

  // Elements [from, to) of the `count` the header declares, handed to `sink(raw, k, i)` in
  // chunks (k elements of raw bytes, the first being element i): the elements before and
  // after are passed over (a seek in a plain file), their bytes still counted, so a file
  // shorter or longer than its header says fails as when every element is read.
  template <typename Sink>
  void visit_range(std::uint64_t count, std::uint64_t from, std::uint64_t to, Sink sink) {
    const std::uint64_t total = count * element_size;
    const std::uint64_t start = offset;
    auto truncated = [&](std::uint64_t got) {
      fail_at_byte(name, start + got,
                   fmt::format("truncated: the header declares {} values ({} bytes of data) "
                               "but the data ends after {} bytes",
                               count, total, got));
    };
    const std::uint64_t before = from * element_size;
    if (const std::uint64_t got = source->skip(before); got < before) truncated(got);
    std::vector<std::uint8_t> raw;
    constexpr std::size_t chunk = std::size_t{1} << 20;
    const auto wanted = static_cast<std::size_t>(to - from);
    std::size_t done = 0;  // elements handed over
    while (done < wanted) {
      const std::size_t want = std::min<std::size_t>(chunk / element_size, wanted - done);
      raw.resize(want * element_size);
      const std::size_t got = source->read(raw.data(), raw.size());
      if (got < raw.size()) truncated(before + done * element_size + got);
      sink(raw.data(), want, from + done);
      done += want;
    }
    const std::uint64_t after = (count - to) * element_size;
    if (const std::uint64_t got = source->skip(after); got < after)
      truncated(to * element_size + got);
    offset += total;
  }

  // Elements [from, to) as float64 (each checked finite).
  std::vector<double> read_range(std::uint64_t count, std::uint64_t from, std::uint64_t to) {
    const std::uint64_t start = offset;
    std::vector<double> out;
    out.reserve(static_cast<std::size_t>(to - from));
    visit_range(count, from, to, [&](const std::uint8_t* raw, std::size_t k, std::uint64_t first) {
      for (std::size_t j = 0; j < k; ++j) {
        const double v = element(raw + j * element_size);
        if (!std::isfinite(v))
          fail_at_byte(name, start + (first + j) * element_size,
                       fmt::format("value {} is not finite", first + j));
        out.push_back(v);
      }
    });
    return out;
  }

  // Elements [from, to) of `count` into data's features in `storage` (auto: unsigned bytes
  // stay uint8, any other element type is float64), never through a float64 copy for uint8
  // or float32.
  void store(Dataset& data, std::uint64_t count, std::uint64_t from, std::uint64_t to,
             std::optional<FeatureStorage> storage) {
    data.storage = storage ? *storage : type == 0x08 ? FeatureStorage::uint8 : FeatureStorage::float64;
    const std::uint64_t start = offset;
    const auto size = static_cast<std::size_t>(to - from);
    switch (data.storage) {
      case FeatureStorage::uint8:
        if (type != 0x08)
          fail(opt("feature_storage"), "uint8",
               fmt::format("float64 or float32 for {}: its IDX elements are not unsigned bytes "
                           "(type 0x{:02x})",
                           name, type));
        data.x8.reserve(size);
        visit_range(count, from, to, [&](const std::uint8_t* raw, std::size_t k, std::uint64_t) {
          data.x8.insert(data.x8.end(), raw, raw + k);
        });
        return;
      case FeatureStorage::float32:
        data.x32.reserve(size);
        visit_range(count, from, to, [&](const std::uint8_t* raw, std::size_t k, std::uint64_t first) {
          for (std::size_t j = 0; j < k; ++j) {
            const double v = element(raw + j * element_size);
            const auto f = static_cast<float>(v);
            if (!std::isfinite(f))
              fail_at_byte(name, start + (first + j) * element_size,
                           std::isfinite(v)
                               ? fmt::format("value {} ({}) is outside the float32 range (feature "
                                             "storage float32)",
                                             first + j, v)
                               : fmt::format("value {} is not finite", first + j));
            data.x32.push_back(f);
          }
        });
        return;
      case FeatureStorage::float64:
        data.x = read_range(count, from, to);
        return;
    }
  }

  double element(const std::uint8_t* p) const {
    switch (type) {
      case 0x08: return p[0];
      case 0x09: return static_cast<std::int8_t>(p[0]);
      case 0x0B: return static_cast<std::int16_t>(static_cast<std::uint16_t>((p[0] << 8) | p[1]));
      case 0x0C: return static_cast<std::int32_t>(be32(p));
      case 0x0D: return std::bit_cast<float>(be32(p));
      default: return std::bit_cast<double>((std::uint64_t{be32(p)} << 32) | be32(p + 4));
    }
  }

  void expect_end() {
    std::uint8_t extra = 0;
    if (source->read(&extra, 1) != 0)
      fail_at_byte(name, offset, "unexpected data after the values the header declares");
  }

  static std::uint32_t be32(const std::uint8_t* p) {
    return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
           (std::uint32_t{p[2]} << 8) | p[3];
  }
};

// The headers of both files, checked against the limits (before the labels, so that a header
// promising too much is named as such) and against each other; returns d. `part_n`: the
// records one process stores (checked against limits.values).
// `labels` null: an images file alone (read_idx_images).
std::uint64_t read_headers(Idx& images, Idx* labels, const DataLimits& limits,
                           std::uint64_t (*part_n)(std::uint64_t, int, int), int rank, int size) {
  const std::string& images_name = images.name;
  const std::uint64_t max_values = limits.values;
  images.read_header();
  if (images.dims.size() < 2)
    fail_at_byte(images_name, 3,
                 "1 dimension: an images file needs at least 2 (records x features)");
  const std::uint64_t n = images.dims[0];
  if (n > limits.records)
    fail_at_byte(images_name, 4,
                 fmt::format("{} records: more than {} (the most hsdp reads from one file; docs/data.md "
                             "\"Limits\")",
                             n, limits.records));
  std::uint64_t d = 1;
  for (std::size_t k = 1; k < images.dims.size(); ++k) {
    if (images.dims[k] > limits.features / d)
      fail_at_byte(images_name, 4 + 4 * k,
                   fmt::format("record size {}: more than {} features (the most hsdp reads; docs/data.md "
                               "\"Limits\")",
                               images.dims[k] * d, limits.features));
    d *= images.dims[k];
  }
  const std::uint64_t stored = part_n(n, rank, size);
  if (d > max_values || stored > max_values / d)
    fail_at_byte(images_name, 4,
                 fmt::format("{} records x {} values: more than {} values (docs/data.md \"Limits\")", stored, d,
                             max_values));
  if (!labels) return d;
  labels->read_header();
  if (labels->dims.size() != 1)
    fail_at_byte(labels->name, 3,
                 fmt::format("{} dimensions: a labels file has exactly 1", labels->dims.size()));
  if (labels->dims[0] != n)
    fail_at_byte(labels->name, 4,
                 fmt::format("{} labels, but {} has {} records", labels->dims[0], images_name, n));
  return d;
}

std::uint64_t all_records(std::uint64_t n, int, int) { return n; }
std::uint64_t first_record(std::uint64_t n, int rank, int size) {
  return n * static_cast<std::uint64_t>(rank) / static_cast<std::uint64_t>(size);
}
std::uint64_t part_records(std::uint64_t n, int rank, int size) {
  return first_record(n, rank + 1, size) - first_record(n, rank, size);
}

// labels_src null: the images alone (no labels).
Dataset read(detail::ByteSource& images_src, detail::ByteSource* labels_src,
             const std::string& images_name, const std::string& labels_name,
             const DataLimits& limits, std::optional<FeatureStorage> storage) {
  if (limits.values == 0) fail("max_values", "0", "at least 1");
  Idx images;
  images.name = images_name;
  images.source = &images_src;
  Idx labels;
  labels.name = labels_name;
  labels.source = labels_src;
  const std::uint64_t d = read_headers(images, labels_src ? &labels : nullptr, limits, all_records, 0, 1);
  const std::uint64_t n = images.dims[0];

  Dataset data;
  data.source = images_name;
  data.origin_kind = Dataset::Origin::item;
  data.n = static_cast<std::size_t>(n);
  data.d = static_cast<std::size_t>(d);
  images.store(data, n * d, 0, n * d, storage);
  images.expect_end();
  data.origin.reserve(data.n);
  if (!labels_src) {
    for (std::size_t i = 0; i < data.n; ++i) data.origin.push_back(i);
    return data;
  }
  data.labels_source = labels_name;
  const std::vector<double> y = labels.read_values(n);
  labels.expect_end();
  data.raw_labels.reserve(data.n);
  const bool integral = labels.type != 0x0D && labels.type != 0x0E;
  for (std::size_t i = 0; i < data.n; ++i) {
    data.raw_labels.push_back(integral ? std::to_string(static_cast<std::int64_t>(y[i]))
                                       : fmt::format("{}", y[i]));
    data.origin.push_back(i);
  }
  return data;
}

}  // namespace

Dataset detail::read_idx_records(const std::string& images_path, const std::string& labels_path,
                                 const DataLimits& limits, int rank, int size,
                                 std::optional<FeatureStorage> storage) {
  if (limits.values == 0) fail("max_values", "0", "at least 1");
  auto images_src = detail::open_bytes(images_path);
  auto labels_src = detail::open_bytes(labels_path);
  Idx images;
  images.name = images_path;
  images.source = images_src.get();
  Idx labels;
  labels.name = labels_path;
  labels.source = labels_src.get();
  const std::uint64_t d = read_headers(images, &labels, limits, part_records, rank, size);
  const std::uint64_t n = images.dims[0];
  const std::uint64_t first = first_record(n, rank, size);
  const std::uint64_t last = first_record(n, rank + 1, size);
  Dataset data;
  data.source = images_path;
  data.labels_source = labels_path;
  data.origin_kind = Dataset::Origin::item;
  data.n = static_cast<std::size_t>(last - first);
  data.d = static_cast<std::size_t>(d);
  images.store(data, n * d, first * d, last * d, storage);
  images.expect_end();
  const std::vector<double> y = labels.read_range(n, first, last);
  labels.expect_end();
  const bool integral = labels.type != 0x0D && labels.type != 0x0E;
  for (std::size_t i = 0; i < data.n; ++i) {
    data.raw_labels.push_back(integral ? std::to_string(static_cast<std::int64_t>(y[i]))
                                       : fmt::format("{}", y[i]));
    data.origin.push_back(static_cast<std::size_t>(first) + i);
  }
  return data;
}

Dataset read_idx(const std::string& images_path, const std::string& labels_path,
                 const DataLimits& limits, std::optional<FeatureStorage> storage) {
  auto images = detail::open_bytes(images_path);
  auto labels = detail::open_bytes(labels_path);
  return read(*images, labels.get(), images_path, labels_path, limits, storage);
}

Dataset read_idx_images(const std::string& images_path, const DataLimits& limits,
                        std::optional<FeatureStorage> storage) {
  auto images = detail::open_bytes(images_path);
  return read(*images, nullptr, images_path, "", limits, storage);
}

Dataset read_idx(std::span<const std::uint8_t> images, std::span<const std::uint8_t> labels,
                 const std::string& images_name, const std::string& labels_name,
                 const DataLimits& limits, std::optional<FeatureStorage> storage) {
  auto i = detail::memory_bytes(images, images_name);
  auto l = detail::memory_bytes(labels, labels_name);
  return read(*i, l.get(), images_name, labels_name, limits, storage);
}

}  // namespace hsdp::data
