// libFuzzer target for the IDX reader (scripts/fuzz.sh). Input layout: a 2-byte big-endian
// length k, then k bytes of the images file, then the labels file (either may be gzipped).
// Only hsdp::InvalidArgument may escape; max_values is kept small so a header promising a
// huge array is an error, not a huge allocation.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hd = hsdp::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t k = std::min<std::size_t>((std::size_t{data[0]} << 8) | data[1], size - 2);
  const std::span<const std::uint8_t> images(data + 2, k);
  const std::span<const std::uint8_t> labels(data + 2 + k, size - 2 - k);
  try {
    hd::Dataset d = hd::read_idx(images, labels, "images", "labels", {.values = std::size_t{1} << 20});
    // Unsigned-byte images are held as uint8 (feature storage auto), the rest as float64.
    if (d.n == 0 || d.d == 0 || d.stored_values() != d.n * d.d || d.raw_labels.size() != d.n ||
        d.origin.size() != d.n || (d.storage == hd::FeatureStorage::uint8) == d.x8.empty())
      std::abort();
    for (const double v : d.x)
      if (!std::isfinite(v)) std::abort();
    try {
      hd::map_labels(d, hd::LabelKind::classes);
      auto two = hd::select_classes(d, {d.raw_labels.front()});
      if (two.n == 0 || two.n > d.n) std::abort();
    } catch (const hsdp::InvalidArgument&) {
    }
  } catch (const hsdp::InvalidArgument&) {
  }
  return 0;
}
