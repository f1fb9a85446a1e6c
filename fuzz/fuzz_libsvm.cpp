// libFuzzer target for the LIBSVM reader (scripts/fuzz.sh). The first byte picks the
// dimension (0: inferred), the rest is the file. Only hsdp::InvalidArgument may escape the
// reader; max_values is kept small so a huge index is an error, not a huge allocation.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

namespace hd = hsdp::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t dimension = data[0] % 8 == 0 ? 0 : data[0];
  std::istringstream in(std::string(reinterpret_cast<const char*>(data + 1), size - 1));
  try {
    hd::Dataset d = hd::read_libsvm(in, "fuzz.svm", dimension, {.values = std::size_t{1} << 20});
    if (d.n == 0 || d.d == 0 || d.x.size() != d.n * d.d || d.raw_labels.size() != d.n ||
        d.origin.size() != d.n || (dimension != 0 && d.d != dimension))
      std::abort();
    for (const double v : d.x)
      if (!std::isfinite(v)) std::abort();
    try {
      hd::map_labels(d, hd::LabelKind::plus_minus_one);
      for (const double y : d.y)
        if (y != 1.0 && y != -1.0) std::abort();
      auto [train, test] = hd::train_test_split(d, 0.5, size);
      if (train.n + test.n != d.n) std::abort();
    } catch (const hsdp::InvalidArgument&) {
    }
  } catch (const hsdp::InvalidArgument&) {
  }
  return 0;
}
