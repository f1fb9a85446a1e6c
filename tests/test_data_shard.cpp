// Reading a file in K parts (data/shard.hpp): every split of a file into K = 1..7 parts gives
// the records of one read, in order, with the file's line numbers; lines straddling the byte
// boundaries, CRLF, a last line without newline, empty parts when K exceeds the lines, gzip;
// IDX plain and gzip; a malformed line reported by the part that holds it with its global
// line; labels, --classes and the split computed part by part as on the whole. The K
// processes are K threads whose collectives go through shared memory.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "hsdp/data/readers.hpp"
#include "hsdp/data/shard.hpp"
#include "hsdp/errors.hpp"
#include "thread_world.hpp"

namespace {

namespace hd = hsdp::data;
using Bytes = std::vector<std::uint8_t>;

using Threads = hsdp::testing::ThreadWorld;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("hsdp_shard_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

Bytes gzip(const std::string& in) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&s, static_cast<uLong>(in.size())) + 32);
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

// A file holding `text`, plain or gzipped; removed at the end of the scope.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text, bool gz) : path(temp_path(name + (gz ? ".gz" : ""))) {
    if (gz) {
      const Bytes b = gzip(text);
      write_file(path, std::string(b.begin(), b.end()));
    } else {
      write_file(path, text);
    }
  }
  ~TempFile() { std::filesystem::remove(path); }
};

// The parts of K processes concatenated: must be the one-process read.
void expect_parts_make_the_whole(const hd::DataSource& source, int K) {
  SCOPED_TRACE("K = " + std::to_string(K));
  const hd::Dataset whole = hd::read(source);
  Threads threads(K);
  const auto parts = threads.run<hd::Part>([&](const hd::Collectives& w) { return hd::read_part(source, w); });
  std::vector<double> x;
  std::vector<std::string> labels;
  std::vector<std::size_t> origin;
  std::size_t expected_first = 0;
  for (int r = 0; r < K; ++r) {
    ASSERT_TRUE(parts[static_cast<std::size_t>(r)]);
    const hd::Part& p = *parts[static_cast<std::size_t>(r)];
    EXPECT_EQ(p.rank, r);
    EXPECT_EQ(p.n(), whole.n);
    EXPECT_EQ(p.first(), expected_first);
    EXPECT_EQ(p.data.n, p.offsets[static_cast<std::size_t>(r) + 1] - p.first());
    EXPECT_EQ(p.data.d, whole.d);  // every part knows d, even an empty one
    EXPECT_EQ(p.data.source, whole.source);
    EXPECT_EQ(p.offsets, parts[0]->offsets);  // one layout
    expected_first += p.data.n;
    x.insert(x.end(), p.data.x.begin(), p.data.x.end());
    labels.insert(labels.end(), p.data.raw_labels.begin(), p.data.raw_labels.end());
    origin.insert(origin.end(), p.data.origin.begin(), p.data.origin.end());
  }
  EXPECT_EQ(x, whole.x);
  EXPECT_EQ(labels, whole.raw_labels);
  EXPECT_EQ(origin, whole.origin);
}

std::string csv_text() {
  // Lines of very different lengths, so that byte boundaries fall inside long lines.
  std::string t = "f1,f2,f3,label\r\n";
  for (int i = 0; i < 40; ++i) {
    t += std::to_string(i) + "," + std::string(static_cast<std::size_t>(i % 7 == 0 ? 30 : 1), '1') + "," +
         std::to_string(i * 0.5) + "," + (i % 3 == 0 ? "B" : "M") + (i % 5 == 0 ? "\r\n" : "\n");
  }
  t += "9,9,9,B";  // no newline at the end
  return t;
}

std::string libsvm_text() {
  std::string t = "# a comment line\n";
  for (int i = 0; i < 30; ++i) {
    t += (i % 2 ? "+1" : "-1");
    for (int j = 1; j <= 1 + i % 4; ++j) t += " " + std::to_string(j * 2) + ":" + std::to_string(0.1 * (i + j));
    if (i == 17) t += " 23:1";  // the largest index, in one part only
    t += i % 6 == 0 ? "  # trailing comment\r\n" : "\n";
  }
  return t;
}

TEST(Shard, LocateLinesPartitionsTheFile) {
  for (const bool gz : {false, true}) {
    const TempFile f("locate.csv", csv_text(), gz);
    const hd::Dataset whole = hd::read(hd::DataSource{f.path, "csv"});
    const std::size_t lines = whole.n + 1;  // the header too
    for (int K = 1; K <= 7; ++K) {
      std::uint64_t at = 0, counted = 0;
      for (int r = 0; r < K; ++r) {
        const hd::LineRange range = hd::locate_lines(f.path, r, K);
        EXPECT_EQ(range.gzip, gz);
        EXPECT_EQ(range.begin, at) << "K " << K << " r " << r;  // contiguous
        EXPECT_LE(range.begin, range.end);
        at = range.end;
        counted += range.lines;
      }
      EXPECT_EQ(at, csv_text().size());
      EXPECT_EQ(counted, lines);
    }
  }
}

TEST(Shard, CsvPartsMakeTheWholeForEveryK) {
  for (const bool gz : {false, true}) {
    const TempFile f("parts.csv", csv_text(), gz);
    for (int K = 1; K <= 7; ++K) expect_parts_make_the_whole({f.path, "csv"}, K);
  }
}

TEST(Shard, LibsvmPartsMakeTheWholeForEveryK) {
  for (const bool gz : {false, true}) {
    const TempFile f("parts.libsvm", libsvm_text(), gz);
    for (int K = 1; K <= 7; ++K) expect_parts_make_the_whole({f.path, "libsvm"}, K);
  }
}

TEST(Shard, MorePartsThanLinesLeavesSomeEmpty) {
  // Three records in 13 bytes: with K = 7 most ranges hold no line start.
  const TempFile f("tiny.csv", "1,2,a\n3,4,b\n5,6,a", false);
  for (int K = 4; K <= 7; ++K) expect_parts_make_the_whole({f.path, "csv"}, K);
  const TempFile g("tiny.libsvm", "1 1:1\n0 2:1\n", false);
  for (int K = 1; K <= 7; ++K) expect_parts_make_the_whole({g.path, "libsvm"}, K);
}

TEST(Shard, ScikitLearnHeaderCountsEveryPart) {
  const TempFile ok("sk.csv", "4,2,no,yes\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n", false);
  for (int K = 1; K <= 5; ++K) expect_parts_make_the_whole({ok.path, "csv"}, K);
  // One record more than declared: the part holding record 5 (line 6) says so, as one read.
  const TempFile more("more.csv", "4,2,no,yes\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n9,9,1\n", false);
  const std::string expected = more.path + ":6:1: more records than the 4 declared by the header on line 1";
  EXPECT_THROW(hd::read({more.path, "csv"}), hsdp::InvalidArgument);
  for (int K = 2; K <= 4; ++K) {
    Threads t(K);
    std::vector<std::string> errors;
    t.run<hd::Part>([&](const hd::Collectives& w) { return hd::read_part({more.path, "csv"}, w); }, &errors);
    EXPECT_EQ(std::count(errors.begin(), errors.end(), expected), 1) << K;
    for (const auto& e : errors) EXPECT_TRUE(e.empty() || e == expected) << e;
  }
}

TEST(Shard, MalformedLineIsNamedWithItsGlobalLineByItsHolder) {
  std::string text;
  for (int i = 1; i <= 60; ++i) text += i == 37 ? "1,oops,a\n" : std::to_string(i) + ",2," + (i % 2 ? "a" : "b") + "\n";
  for (const bool gz : {false, true}) {
    const TempFile f("bad.csv", text, gz);
    std::string one;
    try {
      hd::read({f.path, "csv"});
    } catch (const hsdp::InvalidArgument& e) {
      one = e.what();
    }
    ASSERT_NE(one.find(f.path + ":37:3: feature 1: 'oops'"), std::string::npos) << one;
    for (int K = 2; K <= 7; ++K) {
      Threads t(K);
      std::vector<std::string> errors;
      t.run<hd::Part>([&](const hd::Collectives& w) { return hd::read_part({f.path, "csv"}, w); }, &errors);
      // Exactly the process whose byte range holds line 37's first byte reports it.
      const std::size_t start = text.find("1,oops");
      // (the largest r with floor(r S / K) <= start)
      const auto k = static_cast<std::size_t>(K);
      const std::size_t holder = ((start + 1) * k + text.size() - 1) / text.size() - 1;
      for (std::size_t r = 0; r < errors.size(); ++r)
        EXPECT_EQ(errors[r], r == holder ? one : "") << "K " << K << " r " << r;
    }
  }
}

TEST(Shard, EmptyFileHasNoRecords) {
  const TempFile f("empty.libsvm", "", false);
  Threads t(3);
  std::vector<std::string> errors;
  t.run<hd::Part>([&](const hd::Collectives& w) { return hd::read_part({f.path, "libsvm"}, w); }, &errors);
  for (const auto& e : errors) EXPECT_EQ(e, f.path + ":1:1: no records");
  const TempFile g("empty.csv", "", false);
  Threads t2(4);
  t2.run<hd::Part>([&](const hd::Collectives& w) { return hd::read_part({g.path, "csv"}, w); }, &errors);
  for (const auto& e : errors) EXPECT_EQ(e, g.path + ":1:1: no records");
}

TEST(Shard, BadFirstLineIsReportedByItsHolderOnly) {
  // A blank line 1: the process holding it says so; the others, lacking a layout, read
  // nothing and wait in their next collective (under MPI the job stops with the holder's
  // message; tests/mpi checks the whole job).
  const TempFile f("blank.csv", "\n1,2,a\n3,4,b\n5,6,a\n7,8,b\n", false);
  const std::string expected = f.path + ":1:1: empty line (every line must be a record)";
  for (int K = 2; K <= 4; ++K) {
    Threads t(K);
    std::vector<std::string> errors;
    t.run<hd::Part>([&](const hd::Collectives& w) { return hd::read_part({f.path, "csv"}, w); }, &errors);
    EXPECT_EQ(errors[0], expected);
  }
}

// ------------------------------------------------------------------------------------ IDX

std::string idx_bytes(std::uint8_t type, const std::vector<std::uint32_t>& dims, const Bytes& payload) {
  std::string out = {0, 0, static_cast<char>(type), static_cast<char>(dims.size())};
  for (const auto dim : dims)
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>((dim >> shift) & 0xff));
  out.append(payload.begin(), payload.end());
  return out;
}

TEST(Shard, IdxPartsMakeTheWholeForEveryK) {
  // 11 records of 2 x 3 pixels.
  Bytes pixels(11 * 6), labels(11);
  for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = static_cast<std::uint8_t>(i * 7 % 256);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::uint8_t>(i % 3);
  for (const bool gz : {false, true}) {
    const TempFile images("images.idx", idx_bytes(0x08, {11, 2, 3}, pixels), gz);
    const TempFile labs("labels.idx", idx_bytes(0x08, {11}, labels), gz);
    for (int K = 1; K <= 7; ++K) expect_parts_make_the_whole({images.path, "idx", labs.path}, K);
    for (int K = 12; K <= 13; ++K) expect_parts_make_the_whole({images.path, "idx", labs.path}, K);
  }
}

TEST(Shard, IdxShortOrLongFileFailsInEveryPart) {
  Bytes pixels(5 * 4, 1), labels(5, 1);
  const TempFile labs("labels5.idx", idx_bytes(0x08, {5}, labels), false);
  for (const bool gz : {false, true}) {
    std::string shorter = idx_bytes(0x08, {5, 4}, pixels);
    shorter.pop_back();
    const TempFile cut("short.idx", shorter, gz);
    const TempFile longer("long.idx", idx_bytes(0x08, {5, 4}, pixels) + "x", gz);
    for (int K = 1; K <= 3; ++K) {
      Threads t(K);
      std::vector<std::string> errors;
      t.run<hd::Part>([&](const hd::Collectives& w) { return hd::read_part({cut.path, "idx", labs.path}, w); }, &errors);
      for (const auto& e : errors)
        EXPECT_NE(e.find("truncated: the header declares 20 values (20 bytes of data) but the data ends after 19 bytes"),
                  std::string::npos) << e;
      Threads t2(K);
      t2.run<hd::Part>([&](const hd::Collectives& w) { return hd::read_part({longer.path, "idx", labs.path}, w); }, &errors);
      for (const auto& e : errors)
        EXPECT_NE(e.find("byte 32: unexpected data after the values the header declares"), std::string::npos) << e;
    }
  }
}

// ------------------------------------------------------------------- labels, classes, split

TEST(Shard, LabelsClassesAndSplitPartByPartEqualTheWhole) {
  // Numeric labels written differently ("+1", "1", "1.0" are one label, shown as first
  // written); the first occurrence of "1" is in a late part.
  std::string text;
  const char* labels[] = {"-1", "2", "-1", "3", "+1", "1.0", "2", "1", "3", "-1"};
  for (int i = 0; i < 50; ++i) text += std::to_string(i) + "," + std::to_string(i % 7) + "," + labels[i % 10] + "\n";
  const TempFile f("labels.csv", text, false);
  const hd::Dataset whole = hd::read({f.path, "csv"});
  hd::Dataset mapped = whole;
  hd::map_labels(mapped, hd::LabelKind::classes);
  const hd::Dataset chosen = hd::select_classes(whole, {"1", "3"});
  hd::Dataset chosen_mapped = chosen;
  hd::map_labels(chosen_mapped, hd::LabelKind::plus_minus_one, std::string("3"));
  const auto [train, test] = hd::train_test_split(chosen_mapped, 0.3, 5);
  for (int K = 1; K <= 6; ++K) {
    SCOPED_TRACE(K);
    Threads t(K);
    struct Out {
      hd::Part all, chosen, train, test;
    };
    const auto outs = t.run<Out>([&](const hd::Collectives& w) {
      Out o;
      o.all = hd::read_part({f.path, "csv"}, w);
      o.chosen = hd::select_classes(o.all, {"1", "3"}, w);
      hd::map_labels(o.all.data, hd::LabelKind::classes, std::nullopt, hd::gather_labels(o.all.data, w));
      hd::map_labels(o.chosen.data, hd::LabelKind::plus_minus_one, std::string("3"),
                     hd::gather_labels(o.chosen.data, w));
      std::tie(o.train, o.test) = hd::train_test_split(o.chosen, 0.3, 5);
      return o;
    });
    std::vector<double> y, chosen_x, train_y, train_x, test_x;
    std::size_t train_first = 0;
    for (const auto& o : outs) {
      ASSERT_TRUE(o);
      EXPECT_EQ(o->all.data.labels.describe(), mapped.labels.describe());
      EXPECT_EQ(o->chosen.data.labels.describe(), chosen_mapped.labels.describe());
      EXPECT_EQ(o->chosen.n(), chosen.n);
      EXPECT_EQ(o->train.n(), train.n);
      EXPECT_EQ(o->test.n(), test.n);
      EXPECT_EQ(o->train.first(), train_first);
      train_first += o->train.data.n;
      y.insert(y.end(), o->all.data.y.begin(), o->all.data.y.end());
      chosen_x.insert(chosen_x.end(), o->chosen.data.x.begin(), o->chosen.data.x.end());
      train_y.insert(train_y.end(), o->train.data.y.begin(), o->train.data.y.end());
      train_x.insert(train_x.end(), o->train.data.x.begin(), o->train.data.x.end());
      test_x.insert(test_x.end(), o->test.data.x.begin(), o->test.data.x.end());
    }
    EXPECT_EQ(y, mapped.y);
    EXPECT_EQ(chosen_x, chosen.x);
    EXPECT_EQ(train_y, train.y);
    EXPECT_EQ(train_x, train.x);
    EXPECT_EQ(test_x, test.x);
  }
}

TEST(Shard, ClassErrorsAreThoseOfTheWhole) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += std::to_string(i) + "," + (i < 15 ? "cat" : "dog") + "\n";
  const TempFile f("cats.csv", text, false);
  std::string one;
  try {
    hd::select_classes(hd::read({f.path, "csv"}), {"cat", "cow"});
  } catch (const hsdp::InvalidArgument& e) {
    one = e.what();
  }
  ASSERT_NE(one, "");
  Threads t(3);
  std::vector<std::string> errors;
  t.run<hd::Part>([&](const hd::Collectives& w) { return hd::select_classes(hd::read_part({f.path, "csv"}, w), {"cat", "cow"}, w); },
                  &errors);
  for (const auto& e : errors) EXPECT_EQ(e, one);  // "dog" is in the last part only, and named
  EXPECT_NE(one.find("'dog'"), std::string::npos) << one;
}

}  // namespace
