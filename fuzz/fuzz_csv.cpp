// libFuzzer target for the CSV reader (scripts/fuzz.sh). The first byte picks the options
// (header mode, label column, delimiter), the rest is the file. hsdp::InvalidArgument is
// the expected answer to malformed input; any other exception, a crash, a sanitizer report
// or a Dataset that breaks its invariants is a bug.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hd = hsdp::data;

// Invariants every reader's result must satisfy; abort() makes libFuzzer report the input.
void check(const hd::Dataset& d) {
  if (d.n == 0 || d.x.size() != d.n * d.d || d.raw_labels.size() != d.n ||
      d.origin.size() != d.n || !d.y.empty())
    std::abort();
  for (const double v : d.x)
    if (!std::isfinite(v)) std::abort();
  for (const auto& label : d.raw_labels)
    if (label.empty()) std::abort();
}

// Labels and preprocessing on whatever was read: only InvalidArgument may come out.
void exercise(hd::Dataset d) {
  try {
    hd::map_labels(d, hd::LabelKind::classes);
    if (d.y.size() != d.n) std::abort();
  } catch (const hsdp::InvalidArgument&) {
  }
  try {
    hd::map_labels(d, hd::LabelKind::real);
  } catch (const hsdp::InvalidArgument&) {
  }
  hd::scale_rows_to_norm(d, 1.0);
  for (std::size_t i = 0; i < d.n; ++i) {
    double s = 0;
    for (std::size_t j = 0; j < d.d; ++j) s += d.row(i)[j] * d.row(i)[j];
    if (std::sqrt(s) > 1.0) std::abort();
  }
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  hd::CsvOptions options;
  const std::uint8_t pick = data[0];
  options.header = static_cast<hd::CsvOptions::Header>(pick % 3);
  if ((pick >> 2) & 1) options.label_column = (pick >> 3) & 3;
  options.delimiter = (pick >> 5) & 1 ? ';' : ',';
  options.skip_lines = (pick >> 6) & 1;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  try {
    const hd::Dataset d = hd::read_csv(in, "fuzz.csv", options);
    check(d);
    exercise(d);
  } catch (const hsdp::InvalidArgument&) {
  }
  return 0;
}
