#include <fmt/format.h>

#include "io.hpp"
#include "parts.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::data {

std::optional<FeatureStorage> parse_feature_storage(std::string_view text, const Param& parameter) {
  if (text == "auto") return std::nullopt;
  for (auto s : {FeatureStorage::float64, FeatureStorage::float32, FeatureStorage::uint8})
    if (text == to_string(s)) return s;
  fail(parameter, text, "one of auto, float64, float32, uint8");
}

namespace {

Dataset read_format(const DataSource& source) {
  const bool text = source.format == "csv" || source.format == "libsvm";
  if (text && source.storage == FeatureStorage::uint8)
    fail(opt("feature_storage"), "uint8",
         fmt::format("one of auto, float64, float32 for {} (uint8 is for IDX images)",
                     error_field("format", source.format)));
  if (text && source.labels_path)  // it would be ignored: the labels are in the file
    fail(opt(source.labels_field), *source.labels_path,
         fmt::format("given only with {} (a {} file holds its labels)", error_field("format", "idx"), source.format));
  const FeatureStorage text_storage = source.storage.value_or(FeatureStorage::float64);
  if (source.format == "csv") {
    CsvOptions options;
    options.label_column = source.label_column;
    options.labeled = source.labeled;
    options.storage = text_storage;
    options.limits = source.limits;
    return read_csv(source.path, options);
  }
  if (source.format == "libsvm")
    return read_libsvm(source.path, source.dimension, source.limits, text_storage, source.labeled);
  if (source.format == "idx" && !source.labeled) {
    if (source.labels_path)
      fail(opt(source.labels_field), *source.labels_path,
           fmt::format("absent when the images are read without labels ({})", error_field("no_labels")));
    return read_idx_images(source.path, source.limits, source.storage);
  }
  if (source.format == "idx") {
    if (!source.labels_path)
      fail(opt(source.labels_field), "(missing)",
           fmt::format("the IDX labels file for {}", error_field("format", "idx")));
    return read_idx(source.path, *source.labels_path, source.limits, source.storage);
  }
  fail(opt("format"), source.format, "one of csv, libsvm, idx");
}

}  // namespace

void detail::name_path_error(const InvalidArgument& e, const DataSource& source) {
  // A file that cannot be opened is named by the field the user named it with.
  if (e.field() != "path") throw e;
  const bool labels = source.labels_path && e.value() == *source.labels_path && e.value() != source.path;
  fail(opt(labels ? source.labels_field : source.path_field), e.value(), e.range());
}

Dataset read(const DataSource& source) {
  try {
    return read_format(source);
  } catch (const InvalidArgument& e) {
    detail::name_path_error(e, source);
  }
}

}  // namespace hsdp::data
