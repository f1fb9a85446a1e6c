#include <fmt/format.h>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::data {

Dataset read(const DataSource& source) {
  if (source.format == "csv") {
    CsvOptions options;
    options.label_column = source.label_column;
    return read_csv(source.path, options);
  }
  if (source.format == "libsvm") return read_libsvm(source.path, source.dimension);
  if (source.format == "idx") {
    if (!source.labels_path)
      fail(opt(source.labels_field), "(missing)",
           fmt::format("the IDX labels file for {}", error_field("format", "idx")));
    return read_idx(source.path, *source.labels_path);
  }
  fail(opt("format"), source.format, "one of csv, libsvm, idx");
}

}  // namespace hsdp::data
