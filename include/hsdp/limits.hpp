// The largest inputs hsdp accepts (docs/data.md, "Limits"). Each is checked before the work
// or the allocation it bounds starts, with an InvalidArgument naming the field or the
// file:line:column and the limit, so that a huge or hostile input is a clear error in
// seconds, never a hang, an out-of-memory kill or a silently wrong run.
//
// They are design choices, sized for one machine: 2^28 stored feature values is 2 GiB of
// float64; a record's bookkeeping (its label text, its origin) costs ~48 bytes, so 2^24
// records cost under 1 GiB before any feature.
#pragma once

#include <cstdint>

namespace hsdp::limits {

/// Records n of one data file (or array).
inline constexpr std::uint64_t records = std::uint64_t{1} << 24;
/// Features d of a record.
inline constexpr std::uint64_t features = std::uint64_t{1} << 24;
/// Feature values n * d stored (2 GiB as float64).
inline constexpr std::uint64_t values = std::uint64_t{1} << 28;
/// Classes k of the softmax loss.
inline constexpr std::uint64_t classes = std::uint64_t{1} << 16;
/// Parameters of a model: outputs * (d + bias); 512 MiB of float64 each copy.
inline constexpr std::uint64_t parameters = std::uint64_t{1} << 26;
/// Steps T of a training run (explicit, or epochs * n / b).
inline constexpr std::int64_t steps = std::int64_t{1} << 40;
/// Bytes of one line of a text file (CSV, LIBSVM, users): a line of 2^24 features fits.
inline constexpr std::uint64_t line_bytes = std::uint64_t{1} << 28;
/// Bytes of a data file after decompression (16 GiB): enough for 2^28 values as text.
inline constexpr std::uint64_t file_bytes = std::uint64_t{1} << 34;
/// Bytes of a model file (4 GiB: a model of 2^26 parameters is under 2 GiB of JSON text). A
/// file is also refused beyond what its own model can take (model_io.cpp: 64 bytes a number,
/// plus 4 MiB for the rest of the document).
inline constexpr std::uint64_t model_file_bytes = std::uint64_t{1} << 32;
/// Threads of a parallel region: OMP_NUM_THREADS (or --threads) beyond it is capped (libgomp
/// crashes creating 10^6 threads).
inline constexpr int threads = 4096;

}  // namespace hsdp::limits
