// Feature storage of a Dataset (include/hsdp/data/dataset.hpp).
#include "hsdp/data/dataset.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "hsdp/errors.hpp"

namespace hsdp::data {

Dataset stored_as(Dataset ds, FeatureStorage storage) {
  if (storage == FeatureStorage::float64) return ds;
  if (ds.compact() || !ds.feature_scale.empty() || !ds.row_scale.empty())
    throw std::logic_error("stored_as: float64 records not yet scaled expected");
  const std::size_t d = ds.d;
  auto where = [&](std::size_t k) { return fmt::format("{}[{}, {}]", ds.source, k / d, k % d); };
  if (storage == FeatureStorage::float32) {
    ds.x32.resize(ds.x.size());
    for (std::size_t k = 0; k < ds.x.size(); ++k) {
      ds.x32[k] = static_cast<float>(ds.x[k]);
      if (!std::isfinite(ds.x32[k]))
        fail(where(k), ds.x[k], fmt::format("within the float32 range ({} float32)", error_field("feature_storage")));
    }
  } else {
    ds.x8.resize(ds.x.size());
    for (std::size_t k = 0; k < ds.x.size(); ++k) {
      const double v = ds.x[k];
      if (!(v >= 0 && v <= 255 && v == std::floor(v)))
        fail(where(k), v, fmt::format("an integer 0..255 ({} uint8)", error_field("feature_storage")));
      ds.x8[k] = static_cast<std::uint8_t>(v);
    }
  }
  ds.x.clear();
  ds.x.shrink_to_fit();
  ds.storage = storage;
  return ds;
}

std::string_view to_string(FeatureStorage storage) {
  switch (storage) {
    case FeatureStorage::float64: return "float64";
    case FeatureStorage::float32: return "float32";
    case FeatureStorage::uint8: return "uint8";
  }
  return "?";
}

std::size_t bytes_per_value(FeatureStorage storage) {
  switch (storage) {
    case FeatureStorage::float64: return 8;
    case FeatureStorage::float32: return 4;
    case FeatureStorage::uint8: return 1;
  }
  return 8;
}

void Dataset::compact_row_error() {
  throw std::logic_error(
      "Dataset::row() reads float64 storage only; this dataset stores its features compactly "
      "(use effective_row() or a storage-aware kernel)");
}

void Dataset::effective_row(std::size_t i, double* out) const {
  const double r = row_factor(i);
  const bool scaled = !feature_scale.empty();
  switch (storage) {
    case FeatureStorage::float64: {
      const double* u = x.data() + i * d;
      for (std::size_t l = 0; l < d; ++l) out[l] = u[l];
      return;
    }
    case FeatureStorage::float32: {
      const float* u = x32.data() + i * d;
      for (std::size_t l = 0; l < d; ++l)
        out[l] = r * ((scaled ? feature_scale[l] : 1.0) * static_cast<double>(u[l]));
      return;
    }
    case FeatureStorage::uint8: {
      const std::uint8_t* u = x8.data() + i * d;
      for (std::size_t l = 0; l < d; ++l)
        out[l] = r * ((scaled ? feature_scale[l] : 1.0) * static_cast<double>(u[l]));
      return;
    }
  }
}

std::size_t Dataset::stored_values() const {
  switch (storage) {
    case FeatureStorage::float64: return x.size();
    case FeatureStorage::float32: return x32.size();
    case FeatureStorage::uint8: return x8.size();
  }
  return 0;
}

void Dataset::append_features_of(const Dataset& from, std::size_t i) {
  if (from.storage != storage || from.d != d)
    throw std::logic_error("Dataset::append_features_of: a record of another shape or storage");
  switch (storage) {
    case FeatureStorage::float64:
      x.insert(x.end(), from.x.begin() + static_cast<std::ptrdiff_t>(i * d),
               from.x.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
      return;
    case FeatureStorage::float32:
      x32.insert(x32.end(), from.x32.begin() + static_cast<std::ptrdiff_t>(i * d),
                 from.x32.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
      break;
    case FeatureStorage::uint8:
      x8.insert(x8.end(), from.x8.begin() + static_cast<std::ptrdiff_t>(i * d),
                from.x8.begin() + static_cast<std::ptrdiff_t>((i + 1) * d));
      break;
  }
  // Compact: row_scale is either empty everywhere or one factor per record.
  if (!from.row_scale.empty()) {
    if (row_scale.empty() && d > 0 && stored_values() > d) row_scale.assign(stored_values() / d - 1, 1.0);
    row_scale.push_back(from.row_scale[i]);
  } else if (!row_scale.empty()) {
    row_scale.push_back(1.0);
  }
}

Dataset Dataset::empty_like(const Dataset& like) {
  Dataset out;
  out.d = like.d;
  out.storage = like.storage;
  out.feature_scale = like.feature_scale;
  out.source = like.source;
  out.origin_kind = like.origin_kind;
  out.labels_source = like.labels_source;
  return out;
}

std::string Dataset::label_place(std::size_t i) const {
  if (i >= origin.size()) return fmt::format("record {}", i + 1);
  switch (origin_kind) {
    case Origin::line: return fmt::format("{}:{}", label_file(), origin[i]);
    case Origin::item: return fmt::format("{}: item {}", label_file(), origin[i]);
    case Origin::row: return fmt::format("{}[{}]", label_file(), origin[i]);
  }
  return fmt::format("record {}", i + 1);
}

Dataset as_float64(const Dataset& data) {
  Dataset out = Dataset::empty_like(data);
  out.storage = FeatureStorage::float64;
  out.feature_scale.clear();
  out.n = data.n;
  out.x.resize(data.n * data.d);
  for (std::size_t i = 0; i < data.n; ++i) data.effective_row(i, out.x.data() + i * data.d);
  out.y = data.y;
  out.labels = data.labels;
  out.raw_labels = data.raw_labels;
  out.origin = data.origin;
  out.users = data.users;
  return out;
}

}  // namespace hsdp::data
