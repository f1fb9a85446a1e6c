// CSV, LIBSVM and IDX readers: valid input read exactly; every malformed input rejected
// with hsdp::InvalidArgument naming file:line:column (text) or file: byte offset (IDX).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"

// CsvOptions is written with designated initializers; GCC 12 warns about the omitted
// members although they have default member initializers.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace {

namespace hd = hsdp::data;
using Bytes = std::vector<std::uint8_t>;

const std::filesystem::path kData = std::filesystem::path(__FILE__).parent_path() / "data";

std::string data_file(const char* name) { return (kData / name).string(); }

// The message of the InvalidArgument `f` throws; fails the test if it throws nothing or
// something else.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const hsdp::InvalidArgument& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a different exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

hd::Dataset csv(const std::string& text, const hd::CsvOptions& options = {}) {
  std::istringstream in(text);
  return hd::read_csv(in, "t.csv", options);
}

hd::Dataset libsvm(const std::string& text, std::size_t dimension = 0,
                   std::size_t max_values = hd::default_max_values) {
  std::istringstream in(text);
  return hd::read_libsvm(in, "t.svm", dimension, {.values = max_values});
}

// ---------------------------------------------------------------------------------- CSV

TEST(Csv, ReadsRowsWithoutHeader) {
  const auto d = csv("1,2,0\n3.5,-4e-3,1\n");
  EXPECT_EQ(d.n, 2u);
  EXPECT_EQ(d.d, 2u);
  EXPECT_EQ(d.x, (std::vector<double>{1, 2, 3.5, -4e-3}));
  EXPECT_EQ(d.raw_labels, (std::vector<std::string>{"0", "1"}));
  EXPECT_TRUE(d.y.empty()) << "labels stay raw until map_labels";
  EXPECT_EQ(d.origin, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(d.source, "t.csv");
}

TEST(Csv, AutoDetectsHeaderAndKeepsTextLabels) {
  const auto d = csv("a,b,label\n1,2,M\n3,4,B\n");
  EXPECT_EQ(d.n, 2u);
  EXPECT_EQ(d.raw_labels, (std::vector<std::string>{"M", "B"}));
  EXPECT_EQ(d.origin, (std::vector<std::size_t>{2, 3}));
  // A text label alone does not make the first row a header.
  EXPECT_EQ(csv("1,2,M\n3,4,B\n").n, 2u);
  // Forced: an all-numeric first line can be a header, and a header can be refused.
  EXPECT_EQ(csv("1,2,3\n4,5,6\n", {.header = hd::CsvOptions::Header::present}).n, 1u);
  EXPECT_NE(error_of([] { csv("a,b,c\n1,2,3\n", {.header = hd::CsvOptions::Header::absent}); })
                .find("t.csv:1:1: feature 0: 'a' is not a number"),
            std::string::npos);
}

TEST(Csv, QuotedLabelAndTrimmedFields) {
  const auto d = csv("\"yes, really\" , 1 ,\t2\r\n\"no\" ,3,4\r\n", {.label_column = 0});
  EXPECT_EQ(d.n, 2u);
  EXPECT_EQ(d.d, 2u);
  EXPECT_EQ(d.raw_labels, (std::vector<std::string>{"yes, really", "no"}));
  EXPECT_EQ(d.x, (std::vector<double>{1, 2, 3, 4}));
  const auto e = csv("1;2;\"a \"\"b\"\"\"\n", {.delimiter = ';'});
  EXPECT_EQ(e.raw_labels, (std::vector<std::string>{"a \"b\""}));
  const auto t = csv("1\t2\tx\n", {.delimiter = '\t'});
  EXPECT_EQ(t.x, (std::vector<double>{1, 2}));
}

TEST(Csv, SkipLines) {
  const auto d = csv("preamble, anything\n\n1,2,0\n", {.skip_lines = 2});
  EXPECT_EQ(d.n, 1u);
  EXPECT_EQ(d.origin, (std::vector<std::size_t>{3}));
  EXPECT_NE(error_of([] { csv("1,2,0\n", {.skip_lines = 5}); }).find("skip_lines = 5"),
            std::string::npos);
}

TEST(Csv, ScikitLearnHeaderIsCheckedNotSkipped) {
  const auto d = csv("3,2,neg,pos\n1,2,0\n3,4,1\n5,6,1\n");
  EXPECT_EQ(d.n, 3u);
  EXPECT_EQ(d.d, 2u);
  EXPECT_EQ(error_of([] { csv("3,2,neg,pos\n1,2,0\n3,4,1\n"); }),
            "t.csv:1:1: the header declares 3 records but the file has 2");
  EXPECT_EQ(error_of([] { csv("1,2,neg,pos\n1,2,0\n3,4,1\n"); }),
            "t.csv:3:1: more records than the 1 declared by the header on line 1");
  EXPECT_EQ(error_of([] { csv("2,2,neg,pos\n1,2,0\n3,4,5,1\n"); }),
            "t.csv:3:7: 4 fields, expected 3 (as declared by the header on line 1)");
}

TEST(Csv, MalformedInputNamesLineAndColumn) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"1,2,0\n1,x,1\n", "t.csv:2:3: feature 1: 'x' is not a number (features must be finite "
                         "float64 numbers)"},
      {"1,2,0\n1,2\n", "t.csv:2:4: 2 fields, expected 3 (as in the first row)"},
      {"1,2,0\n1,2,3,4\n", "t.csv:2:7: 4 fields, expected 3 (as in the first row)"},
      {"1,2,0\n\n3,4,1\n", "t.csv:2:1: empty line (every line must be a record)"},
      {"1,2,0\n1,,1\n", "t.csv:2:3: feature 1: '' is empty"},
      {"1,2,0\n1,nan,1\n", "t.csv:2:3: feature 1: 'nan' is not finite"},
      {"1,2,0\n1,inf,1\n", "t.csv:2:3: feature 1: 'inf' is not finite"},
      {"1,2,0\n1,1e999,1\n", "t.csv:2:3: feature 1: '1e999' is out of the float64 range"},
      {"1,2,0\n1, 2 3,1\n", "t.csv:2:4: feature 1: '2 3' is not a number"},
      {"1,2,0\n1,2,\n", "t.csv:2:5: empty label"},
      {"1,\"2,0\n", "t.csv:1:3: unterminated quoted field"},
      {"1,\"2\"x,0\n", "t.csv:1:6: unexpected 'x' after a closing quote"},
      {"1,2\"3,0\n", "t.csv:1:4: quote inside an unquoted field"},
      {"1,2,0\n1,\"2\",0\n", "t.csv:2:3: feature 1: '2' is quoted text"},
      {"5\n", "t.csv:1:1: 1 field(s): a row needs at least one feature and a label"},
      {"", "t.csv:1:1: no records"},
      {"a,b,c\n", "t.csv:2:1: no records"},
      {"1,2,0\n1,2,0\x01\n", ""},  // a control byte in a label is kept, not an error
      {"1,2,0\n1,\xff,0\n", "t.csv:2:3: feature 1: '\\xff' is not a number"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    if (c.message.empty()) {
      EXPECT_NO_THROW(csv(c.text));
      continue;
    }
    const std::string message = error_of([&] { csv(c.text); });
    EXPECT_EQ(message.substr(0, c.message.size()), c.message) << message;
  }
}

TEST(Csv, BadOptions) {
  EXPECT_EQ(error_of([] { csv("1,2,0\n", {.label_column = 3}); }),
            "label_column = 3: must be in [0, 2]: the rows of t.csv have 3 fields (t.csv:1)");
  EXPECT_NE(error_of([] { csv("1,2,0\n", {.delimiter = '"'}); }).find("delimiter = '\"'"),
            std::string::npos);
}

TEST(Csv, ReadsPlainAndGzipFilesAlike) {
  const auto plain = hd::read_csv(data_file("valid.csv"));
  const auto gz = hd::read_csv(data_file("valid.csv.gz"));
  EXPECT_EQ(plain.n, 3u);
  EXPECT_EQ(plain.d, 2u);
  EXPECT_EQ(plain.raw_labels, (std::vector<std::string>{"M", "M", "B"}));
  EXPECT_EQ(plain.x, gz.x);
  EXPECT_EQ(plain.raw_labels, gz.raw_labels);
  EXPECT_EQ(plain.source, data_file("valid.csv"));
}

TEST(Csv, MalformedFilesNameFileLineColumn) {
  EXPECT_EQ(error_of([] { hd::read_csv(data_file("bad_number.csv")); }),
            data_file("bad_number.csv") +
                ":3:5: feature 1: '2.x5' is not a number (features must be finite float64 "
                "numbers)");
  EXPECT_EQ(error_of([] { hd::read_csv(data_file("ragged.csv")); }),
            data_file("ragged.csv") + ":3:6: 3 fields, expected 4 (as in the first row)");
  const std::string missing = error_of([] { hd::read_csv(data_file("no-such-file.csv")); });
  EXPECT_NE(missing.find("path = " + data_file("no-such-file.csv") + ": must be a readable file"), std::string::npos) << missing;
  EXPECT_NE(missing.find("No such file"), std::string::npos) << missing;
}

TEST(Csv, FileReaderAgreesWithStreamAcrossBufferBoundaries) {
  // The file path reads 64 KiB chunks (through the gzip decoder when compressed); lines
  // longer than a chunk and lines straddling chunk boundaries must come out whole.
  std::string text = "f0";
  for (int j = 1; j < 9000; ++j) text += ",f" + std::to_string(j);
  text += ",label\n";
  for (int i = 0; i < 40; ++i) {
    for (int j = 0; j < 9000; ++j) text += std::to_string((i * 9000 + j) % 977 * 0.5) + ",";
    text += i % 3 ? "a\r\n" : "b\n";
  }
  const auto dir = std::filesystem::temp_directory_path();
  const std::string plain = (dir / ("hsdp_test_long_" + std::to_string(::getpid()) + ".csv")).string();
  const std::string gz = plain + ".gz";
  std::ofstream(plain, std::ios::binary) << text;
  gzFile out = gzopen(gz.c_str(), "wb");
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(gzwrite(out, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  gzclose(out);
  ASSERT_GT(text.size(), 10u * 65536);
  const auto expected = csv(text);
  EXPECT_EQ(expected.n, 40u);
  EXPECT_EQ(expected.d, 9000u);
  for (const auto& path : {plain, gz}) {
    const auto d = hd::read_csv(path);
    EXPECT_EQ(d.x, expected.x) << path;
    EXPECT_EQ(d.raw_labels, expected.raw_labels) << path;
  }
  std::filesystem::remove(plain);
  std::filesystem::remove(gz);
}

// ------------------------------------------------------------------------------- LIBSVM

TEST(Libsvm, ReadsSparseRowsDensely) {
  const auto d = hd::read_libsvm(data_file("valid.libsvm"));
  EXPECT_EQ(d.n, 3u);
  EXPECT_EQ(d.d, 3u);
  EXPECT_EQ(d.x, (std::vector<double>{0.5, 0, -2, 0, 1, 0, 1, 2, 3}));
  EXPECT_EQ(d.raw_labels, (std::vector<std::string>{"+1", "-1", "+1"}));
  EXPECT_EQ(d.origin, (std::vector<std::size_t>{1, 2, 4}));
  const auto gz = hd::read_libsvm(data_file("valid.libsvm.gz"));
  EXPECT_EQ(gz.x, d.x);
  EXPECT_EQ(gz.raw_labels, d.raw_labels);
}

TEST(Libsvm, DimensionTrailingBlanksAndEmptyRows) {
  const auto d = libsvm("1 2:5 \t\n0\n", 4);
  EXPECT_EQ(d.d, 4u);
  EXPECT_EQ(d.x, (std::vector<double>{0, 5, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(error_of([] { libsvm("1 2:5\n0 5:1\n", 4); }),
            "t.svm:2:3: feature index 5: must be at most dimension = 4");
  EXPECT_EQ(error_of([] { libsvm("1\n0\n"); }),
            "t.svm:3:1: no feature index in the file: the dimension cannot be inferred (pass it)");
  EXPECT_EQ(error_of([] { libsvm("1 100000:1\n", 0, 1000); }),
            "t.svm: 1 records x 100000 features (largest index, line 1) = more than "
            "1000 values stored densely (docs/data.md \"Limits\")");
}

TEST(Libsvm, MalformedInputNamesLineAndColumn) {
  struct Case {
    std::string text;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"1 1:1 3:1\n0 4:1 2:1\n",
       "t.svm:2:7: feature index 2 after 4: indices must be strictly increasing"},
      {"1 1:0.5 1:1\n", "t.svm:1:9: duplicate feature index 1"},
      {"1 1:0.5\n-1 0:1\n", "t.svm:2:4: feature index 0: indices are 1-based (must be >= 1)"},
      {"1 -1:2\n", "t.svm:1:3: feature index '-1' is not a positive integer"},
      {"1 +1:2\n", "t.svm:1:3: feature index '+1' is not a positive integer"},
      {"1 :2\n", "t.svm:1:3: feature index '' is not a positive integer"},
      {"1 99999999999999999999:2\n",
       "t.svm:1:3: feature index '99999999999999999999' is out of range"},
      {"1 1:x\n", "t.svm:1:5: value 'x' of feature 1 is not a number"},
      {"1 1:\n", "t.svm:1:5: value '' of feature 1 is empty"},
      {"1 1:nan\n", "t.svm:1:5: value 'nan' of feature 1 is not finite"},
      {"1 1:2 3\n", "t.svm:1:7: expected <index>:<value>, found '3'"},
      {"1 qid:3 1:2\n", "t.svm:1:3: qid (svmlight ranking groups) is not supported"},
      {"1:2 3:4\n", "t.svm:1:1: expected a label before the features, found '1:2'"},
      {"1 1:2\n\n0 1:1\n", "t.svm:2:1: empty line (every line must be a record)"},
      {"1 1:2\n   # only a comment\n  \t\n", "t.svm:3:1: empty line"},
      {"", "t.svm:1:1: no records"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const std::string message = error_of([&] { libsvm(c.text); });
    EXPECT_EQ(message.substr(0, c.message.size()), c.message) << message;
  }
}

TEST(Libsvm, MalformedFilesNameFileLineColumn) {
  EXPECT_EQ(error_of([] { hd::read_libsvm(data_file("bad_index_order.libsvm")); }),
            data_file("bad_index_order.libsvm") +
                ":2:8: feature index 2 after 4: indices must be strictly increasing");
  EXPECT_EQ(error_of([] { hd::read_libsvm(data_file("duplicate_index.libsvm")); }),
            data_file("duplicate_index.libsvm") + ":1:10: duplicate feature index 1");
  EXPECT_EQ(error_of([] { hd::read_libsvm(data_file("zero_index.libsvm")); }),
            data_file("zero_index.libsvm") +
                ":2:4: feature index 0: indices are 1-based (must be >= 1)");
}

// ---------------------------------------------------------------------------------- IDX

Bytes idx(std::uint8_t type, const std::vector<std::uint32_t>& dims, const Bytes& payload) {
  Bytes out = {0, 0, type, static_cast<std::uint8_t>(dims.size())};
  for (const auto dim : dims)
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(dim >> shift));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

Bytes gzip(const Bytes& in) {
  z_stream s{};
  EXPECT_EQ(deflateInit2(&s, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  Bytes out(deflateBound(&s, static_cast<uLong>(in.size())) + 32);
  s.next_in = const_cast<Bytef*>(in.data());
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = out.data();
  s.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&s, Z_FINISH), Z_STREAM_END);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

const Bytes kImages = idx(0x08, {3, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255});
const Bytes kLabels = idx(0x08, {3}, {7, 0, 9});

std::string idx_error(const Bytes& images, const Bytes& labels) {
  return error_of([&] { hd::read_idx(images, labels, "img", "lab"); });
}

TEST(Idx, ReadsPlainAndGzipUnscaled) {
  for (const bool gz : {false, true}) {
    SCOPED_TRACE(gz);
    const auto d = gz ? hd::read_idx(gzip(kImages), gzip(kLabels), "img", "lab")
                      : hd::read_idx(kImages, kLabels, "img", "lab");
    EXPECT_EQ(d.n, 3u);
    EXPECT_EQ(d.d, 4u);
    // Unsigned-byte images stay uint8 by default (feature storage auto).
    EXPECT_EQ(d.storage, hd::FeatureStorage::uint8);
    EXPECT_TRUE(d.x.empty());
    EXPECT_EQ(d.x8, (std::vector<std::uint8_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255}));
    EXPECT_EQ(d.raw_labels, (std::vector<std::string>{"7", "0", "9"}));
    EXPECT_EQ(d.origin, (std::vector<std::size_t>{0, 1, 2}));
    EXPECT_EQ(d.source, "img");
  }
  // Concatenated gzip members are one stream, as gzip(1) reads them.
  Bytes two = gzip(Bytes(kImages.begin(), kImages.begin() + 10));
  const Bytes rest = gzip(Bytes(kImages.begin() + 10, kImages.end()));
  two.insert(two.end(), rest.begin(), rest.end());
  EXPECT_EQ(hd::read_idx(two, kLabels).x8, hd::read_idx(kImages, kLabels).x8);
  // float64 and float32 on request: the same values.
  const auto f64 = hd::read_idx(kImages, kLabels, "img", "lab", {}, hd::FeatureStorage::float64);
  EXPECT_EQ(f64.storage, hd::FeatureStorage::float64);
  EXPECT_EQ(f64.x, (std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255}));
  const auto f32 = hd::read_idx(kImages, kLabels, "img", "lab", {}, hd::FeatureStorage::float32);
  EXPECT_EQ(f32.storage, hd::FeatureStorage::float32);
  EXPECT_EQ(f32.x32, (std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 255}));
  EXPECT_TRUE(f32.x.empty());
}

TEST(Idx, ElementTypesAreBigEndian) {
  // int16 -2, int32 70000, float 1.5, double -0.25, int8 -3
  const auto i16 = hd::read_idx(idx(0x0B, {1, 1}, {0xff, 0xfe}), idx(0x0B, {1}, {0x01, 0x00}));
  EXPECT_EQ(i16.x, std::vector<double>{-2});
  EXPECT_EQ(i16.raw_labels, std::vector<std::string>{"256"});
  const auto i32 = hd::read_idx(idx(0x0C, {1, 1}, {0, 1, 0x11, 0x70}), idx(0x09, {1}, {0xfd}));
  EXPECT_EQ(i32.x, std::vector<double>{70000});
  EXPECT_EQ(i32.raw_labels, std::vector<std::string>{"-3"});
  const auto f = hd::read_idx(idx(0x0D, {1, 1}, {0x3f, 0xc0, 0, 0}),
                              idx(0x0E, {1}, {0xbf, 0xd0, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(f.x, std::vector<double>{1.5});
  EXPECT_EQ(f.raw_labels, std::vector<std::string>{"-0.25"});
}

TEST(Idx, MalformedInputNamesByteOffset) {
  Bytes bad_magic = kImages;
  bad_magic[1] = 8;
  EXPECT_EQ(idx_error(bad_magic, kLabels),
            "img: byte 0: wrong magic number 00 08 08 03: an IDX file starts with two zero bytes");
  Bytes bad_type = kImages;
  bad_type[2] = 0x0A;
  EXPECT_EQ(idx_error(bad_type, kLabels).substr(0, 43), "img: byte 2: unknown IDX element type 0x0a ");
  EXPECT_EQ(idx_error(Bytes(kImages.begin(), kImages.begin() + 9), kLabels),
            "img: byte 9: truncated: the data ends inside the size of dimension 1");
  EXPECT_EQ(idx_error(Bytes(kImages.begin(), kImages.end() - 1), kLabels),
            "img: byte 27: truncated: the header declares 12 values (12 bytes of data) but "
            "the data ends after 11 bytes");
  Bytes longer = kImages;
  longer.push_back(0);
  EXPECT_EQ(idx_error(longer, kLabels),
            "img: byte 28: unexpected data after the values the header declares");
  EXPECT_EQ(idx_error(kImages, idx(0x08, {2}, {0, 1})), "lab: byte 4: 2 labels, but img has 3 records");
  EXPECT_EQ(idx_error(kImages, idx(0x08, {3, 1}, {0, 1, 2})),
            "lab: byte 3: 2 dimensions: a labels file has exactly 1");
  EXPECT_EQ(idx_error(kLabels, kLabels),
            "img: byte 3: 1 dimension: an images file needs at least 2 (records x features)");
  EXPECT_EQ(idx_error(idx(0x08, {3, 0}, {}), kLabels), "img: byte 8: dimension 1 has size 0");
  EXPECT_EQ(idx_error(idx(0x0D, {1, 1}, {0x7f, 0xc0, 0, 0}), idx(0x08, {1}, {0})),
            "img: byte 12: value 0 is not finite");
  EXPECT_EQ(idx_error(idx(0x08, {60000, 60000, 60000}, {}), idx(0x08, {60000}, {})),
            "img: byte 12: record size 3600000000: more than 16777216 features (the most hsdp reads; "
            "docs/data.md \"Limits\")");
  EXPECT_EQ(error_of([] { hd::read_idx(kImages, kLabels, "img", "lab", {.values = 11}); }),
            "img: byte 4: 3 records x 4 values: more than 11 values (docs/data.md \"Limits\")");
  EXPECT_EQ(idx_error({}, kLabels),
            "img: byte 0: truncated: the data ends inside the 4-byte magic number");
}

TEST(Idx, MalformedGzipIsAnErrorNotAShortFile) {
  const Bytes gz = gzip(kImages);
  EXPECT_EQ(idx_error(Bytes(gz.begin(), gz.end() - 4), kLabels), "img: truncated gzip data");
  Bytes trailing = gz;
  trailing.push_back('x');
  EXPECT_EQ(idx_error(trailing, kLabels),
            "img: byte " + std::to_string(gz.size()) +
                ": data after the end of the gzip stream (not another gzip member)");
  Bytes corrupt = gz;
  corrupt[gz.size() - 6] ^= 0xff;  // the CRC-32 of the data
  EXPECT_EQ(idx_error(corrupt, kLabels), "img: invalid gzip data: incorrect data check");
}

TEST(Idx, ReadsFiles) {
  const auto d = hd::read_idx(data_file("tiny-images-idx3-ubyte.gz"),
                              data_file("tiny-labels-idx1-ubyte.gz"));
  EXPECT_EQ(d.n, 3u);
  EXPECT_EQ(d.d, 4u);
  EXPECT_EQ(d.x8[11], 11u);
  EXPECT_EQ(d.raw_labels, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(error_of([] {
              hd::read_idx(data_file("bad_magic-images-idx3-ubyte"),
                           data_file("tiny-labels-idx1-ubyte.gz"));
            }).substr(0, data_file("bad_magic-images-idx3-ubyte").size() + 37),
            data_file("bad_magic-images-idx3-ubyte") + ": byte 0: wrong magic number 01 00 08");
  EXPECT_EQ(error_of([] {
              hd::read_idx(data_file("truncated-images-idx3-ubyte.gz"),
                           data_file("tiny-labels-idx1-ubyte.gz"));
            }),
            data_file("truncated-images-idx3-ubyte.gz") +
                ": byte 23: truncated: the header declares 12 values (12 bytes of data) but "
                "the data ends after 7 bytes");
}

// ------------------------------------------------------------------- records without labels
// Records to score with a trained model (`hsdp predict --no-labels`): every CSV column a
// feature, LIBSVM lines of index:value alone, IDX images without a labels file.

TEST(Unlabeled, CsvEveryColumnIsAFeature) {
  const auto d = csv("1,2,3\n4,5,6\n", {.labeled = false});
  EXPECT_EQ(d.n, 2u);
  EXPECT_EQ(d.d, 3u);
  EXPECT_EQ(d.x, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(d.raw_labels.empty());
  EXPECT_EQ(d.origin, (std::vector<std::size_t>{1, 2}));
  // One column is one feature; a header is still detected (a field that is not a number).
  EXPECT_EQ(csv("7\n8\n", {.labeled = false}).x, (std::vector<double>{7, 8}));
  const auto h = csv("a,b\n1,2\n", {.labeled = false});
  EXPECT_EQ(h.n, 1u);
  EXPECT_EQ(h.d, 2u);
  // The same file read with labels: the last column is the label.
  EXPECT_EQ(csv("1,2,3\n4,5,6\n").d, 2u);
  // A text field in any column is not a feature.
  EXPECT_EQ(error_of([] { csv("1,2,3\n4,5,M\n", {.labeled = false}); }),
            "t.csv:2:5: feature 2: 'M' is not a number (features must be finite float64 numbers)");
  EXPECT_EQ(error_of([] { csv("1,2\n", {.label_column = 0, .labeled = false}); }),
            "label_column = 0: must be absent when the file has no label column (no_labels)");
  // A scikit-learn header declares rows that carry a label.
  EXPECT_EQ(error_of([] { csv("2,1,a,b\n1,0\n2,1\n", {.labeled = false}); }),
            "t.csv:1:1: a scikit-learn header \"n,d,class names\" (n = 2, d = 1): its rows have a label column, "
            "but the file is read without labels (no_labels)");
}

TEST(Unlabeled, LibsvmLinesOfIndexValue) {
  std::istringstream in("1:0.5 3:-2\n2:1 # a comment\n# only a comment\n1:0\n");
  const auto d = hd::read_libsvm(in, "t.svm", 0, {}, hd::FeatureStorage::float64, false);
  EXPECT_EQ(d.n, 3u);
  EXPECT_EQ(d.d, 3u);
  EXPECT_EQ(d.x, (std::vector<double>{0.5, 0, -2, 0, 1, 0, 0, 0, 0}));
  EXPECT_TRUE(d.raw_labels.empty());
  EXPECT_EQ(d.origin, (std::vector<std::size_t>{1, 2, 4}));
  auto unlabeled = [](const std::string& text) {
    std::istringstream s(text);
    hd::read_libsvm(s, "t.svm", 0, {}, hd::FeatureStorage::float64, false);
  };
  EXPECT_EQ(error_of([&] { unlabeled("1:1\n+1 2:1\n"); }), "t.svm:2:1: expected <index>:<value>, found '+1'");
  EXPECT_EQ(error_of([&] { unlabeled("1:1\n\n"); }),
            "t.svm:2:1: empty line (every line must be a record; a record of zeros is written 1:0)");
  // Read with labels, a line without one is named.
  EXPECT_EQ(error_of([] { libsvm("1:0.5 3:-2\n"); }), "t.svm:1:1: expected a label before the features, found '1:0.5'");
}

TEST(Unlabeled, IdxImagesWithoutLabels) {
  const auto images = data_file("tiny-images-idx3-ubyte.gz");
  const auto d = hd::read_idx_images(images);
  const auto with = hd::read_idx(images, data_file("tiny-labels-idx1-ubyte.gz"));
  EXPECT_EQ(d.n, 3u);
  EXPECT_EQ(d.d, 4u);
  EXPECT_EQ(d.x8, with.x8);
  EXPECT_TRUE(d.raw_labels.empty());
  EXPECT_EQ(d.origin, (std::vector<std::size_t>{0, 1, 2}));
  // The dispatch: a labels file with labeled = false is refused, none is needed.
  hd::DataSource source{.path = images, .format = "idx", .labeled = false};
  EXPECT_EQ(hd::read(source).x8, d.x8);
  source.labels_path = data_file("tiny-labels-idx1-ubyte.gz");
  EXPECT_EQ(error_of([&] { hd::read(source); }),
            "labels = " + *source.labels_path + ": must be absent when the images are read without labels (no_labels)");
  EXPECT_EQ(error_of([] { hd::read_idx_images(data_file("truncated-images-idx3-ubyte.gz")); }),
            data_file("truncated-images-idx3-ubyte.gz") +
                ": byte 23: truncated: the header declares 12 values (12 bytes of data) but the data ends after 7 bytes");
}

}  // namespace
