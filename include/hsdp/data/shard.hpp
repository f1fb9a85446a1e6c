// Reading a data file as one of K processes: each process reads, parses and stores only its
// part of the records (docs/distributed.md, "Reading the shards"). The processes talk only
// through the Collectives their caller supplies (MPI in src/train/distributed.cpp, threads in
// the tests), so this layer knows nothing of MPI.
//
// Process r holds the records [offsets[r], offsets[r+1]) of the file, in file order:
//  - plain CSV / LIBSVM: the bytes [r S / K, (r+1) S / K) of the file, extended to whole
//    lines (a line belongs to the process whose byte range holds its first byte); the line
//    numbers in messages are the file's (an exclusive prefix sum of the lines per range);
//  - gzip CSV / LIBSVM: the same ranges of the decompressed bytes; a gzip stream cannot seek,
//    so every process decompresses the file up to the end of its range (and once whole, to
//    learn its size): memory scales with n / K, reading does not;
//  - IDX: records [r n / K, (r+1) n / K) directly (fixed-size records): a plain file is
//    read at its offsets, a gzip file is streamed and only the own records are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "hsdp/data/dataset.hpp"
#include "hsdp/data/readers.hpp"

namespace hsdp::data {

/// How the K processes of a sharded read exchange what they must agree on. Every process
/// calls the hooks in the same order (they are collectives).
struct Collectives {
  int rank = 0;
  int size = 1;
  /// Every process's value, indexed by rank (MPI_Allgather).
  std::function<std::vector<std::uint64_t>(std::uint64_t)> allgather;
  /// Every process's text, indexed by rank (MPI_Allgatherv).
  std::function<std::vector<std::string>(const std::string&)> allgather_text;
  /// The elementwise sum over the processes, in place; the same result on every process
  /// (MPI_Allreduce).
  std::function<void(std::vector<double>&)> sum;
};

/// Collectives of a single process (rank 0 of 1): each hook returns its own argument.
Collectives one_process();

/// This process's part of a data set held by `offsets.size() - 1` processes.
struct Part {
  /// The records [offsets[rank], offsets[rank+1]) in file order; d, the source name and the
  /// label mapping are those of the whole data set; origin holds the file's line numbers
  /// (text) or item indices (IDX).
  Dataset data;
  int rank = 0;
  std::vector<std::size_t> offsets{0, 0};
  std::size_t n() const { return offsets.back(); }
  std::size_t first() const { return offsets[static_cast<std::size_t>(rank)]; }
};

/// The offsets of parts holding counts[r] records each (an exclusive prefix sum, K + 1
/// entries).
std::vector<std::size_t> offsets_of(const std::vector<std::uint64_t>& counts);

/// The whole lines of the byte range [rank S / size, (rank+1) S / size) of a text file of S
/// bytes (decompressed bytes for gzip): [begin, end) starts at a line start (or S) and ends
/// after the last line that starts inside the range; `lines` counts the lines in it as the
/// line reader returns them (the text after a last newline is one more line).
struct LineRange {
  std::uint64_t begin = 0, end = 0;
  std::uint64_t lines = 0;
  std::uint64_t size = 0;  ///< S
  bool gzip = false;
};
LineRange locate_lines(const std::string& path, int rank, int size);

/// Reads this process's part of `source` (csv, libsvm or idx, plain or gzip); the same
/// records, labels and errors (file:line, with the file's line numbers) as read() on the
/// whole file, split by rank. Collectives: the line counts (text), the record counts, the
/// largest LIBSVM index (d when not stated). Throws InvalidArgument on the process that
/// holds a malformed line; the others go on to their next collective (the caller stops the
/// job).
Part read_part(const DataSource& source, const Collectives& world);

/// The distinct raw labels of all parts, in file order of their first record, each as first
/// written (one allgather): what map_labels and select_classes need to treat a part as the
/// whole data set.
std::vector<std::string> gather_labels(const Dataset& part, const Collectives& world);

/// select_classes on the whole data set, done part by part: the checks use the labels of
/// every part (gather_labels), the records kept are this part's, and the offsets are those
/// of the selection (one allgather of the counts).
Part select_classes(const Part& part, const std::vector<std::string>& raw_labels,
                    const Collectives& world);

/// The parts of train_test_split(whole, test_fraction, seed) that this part holds: the same
/// permutation of the n records (computed by every process from n and the seed: O(n)
/// memory), each part's train and test records in file order, with their offsets. The train
/// records stay where they are (moved forward), the test records are copied out. No
/// collective.
std::pair<Part, Part> train_test_split(Part part, double test_fraction, std::uint64_t seed);

}  // namespace hsdp::data
