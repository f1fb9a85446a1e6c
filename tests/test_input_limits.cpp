// The limits of docs/data.md ("Limits") at and beyond each one, with small limits where the
// real ones would need gigabytes; the checks every text reader makes (byte-order mark, NUL
// bytes, carriage returns); the sign-checked unsigned parse and the overflow-safe count
// conversion; all-or-none output files; the model file's schema. The command-level cases
// are the catalogue (tests/cli/test_malformed_catalogue.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "data/io.hpp"
#include "fixtures.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/limits.hpp"
#include "hsdp/output_files.hpp"
#include "hsdp/run_spec.hpp"
#include "hsdp/train/model_io.hpp"
#include "hsdp/train/trainer.hpp"

namespace {

namespace fs = std::filesystem;
namespace hd = hsdp::data;
using nlohmann::json;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const hsdp::InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

hd::Dataset csv(const std::string& text, const hd::DataLimits& limits = {}) {
  std::istringstream in(text);
  hd::CsvOptions o;
  o.limits = limits;
  return hd::read_csv(in, "t.csv", o);
}

std::string records(int n, int d = 1) {
  std::string s;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < d; ++j) s += std::to_string(i + j) + ",";
    s += std::to_string(i % 2) + "\n";
  }
  return s;
}

fs::path temp_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("hsdp_limits_" + std::to_string(::getpid()) + "_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// ---- records, features, values, lines, file size: at the limit and one beyond

TEST(DataLimits, RecordsAtAndBeyond) {
  EXPECT_EQ(csv(records(5), {.records = 5}).n, 5u);
  EXPECT_EQ(error_of([] { csv(records(6), {.records = 5}); }),
            "t.csv:6:1: more than 5 records (the most hsdp reads from one file; docs/data.md \"Limits\")");
  std::istringstream svm("1 1:1\n0 1:2\n1 2:1\n");
  EXPECT_EQ(hd::read_libsvm(svm, "t.svm", 0, {.records = 3}).n, 3u);
  std::istringstream svm4("1 1:1\n0 1:2\n1 2:1\n0 1:1\n");
  EXPECT_EQ(error_of([&] { hd::read_libsvm(svm4, "t.svm", 0, {.records = 3}); }),
            "t.svm:4:1: more than 3 records (the most hsdp reads from one file; docs/data.md \"Limits\")");
}

TEST(DataLimits, FeaturesAtAndBeyond) {
  EXPECT_EQ(csv(records(2, 4), {.features = 4}).d, 4u);
  EXPECT_EQ(error_of([] { csv(records(2, 5), {.features = 4}); }),
            "t.csv:1:1: 5 features: more than 4 (the most hsdp reads; docs/data.md \"Limits\")");
  std::istringstream at("1 4:1\n0 1:1\n"), beyond("1 5:1\n0 1:1\n");
  EXPECT_EQ(hd::read_libsvm(at, "t.svm", 0, {.features = 4}).d, 4u);
  EXPECT_EQ(error_of([&] { hd::read_libsvm(beyond, "t.svm", 0, {.features = 4}); }),
            "t.svm:1:3: feature index 5: more than 4 features (the most hsdp reads; docs/data.md \"Limits\")");
}

TEST(DataLimits, ValuesAtAndBeyond) {
  EXPECT_EQ(csv(records(3, 2), {.values = 6}).n, 3u);
  EXPECT_EQ(error_of([] { csv(records(4, 2), {.values = 6}); }),
            "t.csv:4:1: more than 6 feature values (4 records x 2 features; docs/data.md \"Limits\")");
}

TEST(DataLimits, LineBytesAtAndBeyond) {
  const std::string line = "1,2,3,0";  // 7 bytes
  EXPECT_EQ(csv(line + "\n" + line + "\n", {.line_bytes = 7}).n, 2u);
  EXPECT_EQ(error_of([&] { csv(line + "\n" + line + "5\n", {.line_bytes = 7}); }),
            "t.csv:2:1: a line longer than 7 bytes (the longest line hsdp reads; docs/data.md \"Limits\")");
  // Read from a file, the line is refused before it is held whole.
  const fs::path dir = temp_dir("lines");
  write(dir / "a.csv", "1,2,0\n" + std::string(100000, '1') + ",0\n");
  hd::CsvOptions o;
  o.limits.line_bytes = 1000;
  EXPECT_EQ(error_of([&] { hd::read_csv((dir / "a.csv").string(), o); }),
            (dir / "a.csv").string() + ":2:1: a line longer than 1000 bytes (the longest line hsdp reads; "
                                       "docs/data.md \"Limits\")");
  fs::remove_all(dir);
}

TEST(DataLimits, FileBytesAtAndBeyond) {
  const fs::path dir = temp_dir("file");
  const std::string text = records(10);  // 40 bytes
  write(dir / "a.csv", text);
  hd::CsvOptions o;
  o.limits.file_bytes = text.size();
  EXPECT_EQ(hd::read_csv((dir / "a.csv").string(), o).n, 10u);
  o.limits.file_bytes = text.size() - 1;
  EXPECT_EQ(error_of([&] { hd::read_csv((dir / "a.csv").string(), o); }),
            (dir / "a.csv").string() + ": more than 39 bytes of data (the largest file hsdp reads; docs/data.md "
                                       "\"Limits\")");
  fs::remove_all(dir);
}

std::vector<std::uint8_t> idx(std::uint8_t type, const std::vector<std::uint32_t>& dims, std::size_t payload) {
  std::vector<std::uint8_t> out = {0, 0, type, static_cast<std::uint8_t>(dims.size())};
  for (const std::uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(d >> shift));
  out.resize(out.size() + payload, 1);
  return out;
}

TEST(DataLimits, IdxHeaderAtAndBeyondBeforeAnythingIsRead) {
  const auto labels3 = idx(0x08, {3}, 3);
  EXPECT_EQ(hd::read_idx(idx(0x08, {3, 2}, 6), labels3, "img", "lab", {.records = 3}).n, 3u);
  // Beyond: the header alone is an error (no data follows it; the labels file is not read).
  EXPECT_EQ(error_of([] { hd::read_idx(idx(0x08, {4, 2}, 0), idx(0x08, {1}, 0), "img", "lab", {.records = 3}); }),
            "img: byte 4: 4 records: more than 3 (the most hsdp reads from one file; docs/data.md \"Limits\")");
  EXPECT_EQ(hd::read_idx(idx(0x08, {3, 2, 2}, 12), labels3, "img", "lab", {.features = 4}).d, 4u);
  EXPECT_EQ(error_of([] { hd::read_idx(idx(0x08, {3, 5}, 0), idx(0x08, {3}, 0), "img", "lab", {.features = 4}); }),
            "img: byte 8: record size 5: more than 4 features (the most hsdp reads; docs/data.md \"Limits\")");
  // The real limits: a 16-byte header promising 2^24 + 1 records or features.
  EXPECT_NE(error_of([] { hd::read_idx(idx(0x08, {(1u << 24) + 1, 1}, 0), {}, "img", "lab"); }).find("16777217 records"),
            std::string::npos);
  EXPECT_NE(error_of([] { hd::read_idx(idx(0x08, {1, (1u << 24) + 1}, 0), {}, "img", "lab"); })
                .find("record size 16777217: more than 16777216 features"),
            std::string::npos);
}

TEST(DataLimits, StatedInOnePlace) {
  const hd::DataLimits d;
  EXPECT_EQ(d.records, std::uint64_t{1} << 24);
  EXPECT_EQ(d.features, std::uint64_t{1} << 24);
  EXPECT_EQ(d.values, std::uint64_t{1} << 28);
  EXPECT_EQ(d.line_bytes, std::uint64_t{1} << 28);
  EXPECT_EQ(d.file_bytes, std::uint64_t{1} << 34);
  EXPECT_EQ(hd::default_max_values, d.values);
  // 2^24 records of 16 features fill the value limit; a record of 2^24 features fits a line.
  EXPECT_EQ(hsdp::limits::records * 16, hsdp::limits::values);
  EXPECT_GE(hsdp::limits::line_bytes, hsdp::limits::features * 2);
}

// ---- the text checks

TEST(TextLines, ByteOrderMarkIsNotPartOfTheFirstRecord) {
  const hd::Dataset d = csv("\xef\xbb\xbf" "1,2,0\n3,4,1\n");
  EXPECT_EQ(d.n, 2u);  // not taken as a header
  EXPECT_EQ(d.x[0], 1.0);
  const fs::path dir = temp_dir("bom");
  write(dir / "a.csv", "\xef\xbb\xbf" "1,2,0\n3,4,1\n");
  EXPECT_EQ(hd::read_csv((dir / "a.csv").string()).n, 2u);
  write(dir / "a.svm", "\xef\xbb\xbf" "0 1:1\n1 1:2\n");
  const hd::Dataset s = hd::read_libsvm((dir / "a.svm").string());
  EXPECT_EQ(s.raw_labels[0], "0");
  // A file that is only a mark has no records.
  write(dir / "b.csv", "\xef\xbb\xbf");
  EXPECT_EQ(error_of([&] { hd::read_csv((dir / "b.csv").string()); }),
            (dir / "b.csv").string() + ":1:1: no records");
  // Only at the start of the file: elsewhere it is text (here, not a number).
  EXPECT_NE(error_of([] { csv("1,2,0\n\xef\xbb\xbf" "3,4,1\n"); }).find("t.csv:2:1: feature 0: '\\xef\\xbb\\xbf3'"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(TextLines, NulBytesAndLoneCarriageReturnsAreNamed) {
  EXPECT_NE(error_of([] { csv(std::string("1,2,0\n3,\0,1\n", 12)); }).find("t.csv:2:3: a NUL byte: not a text file"),
            std::string::npos);
  EXPECT_NE(error_of([] { csv("1,2,0\r3,4,1\r"); }).find("t.csv:1:6: a carriage return inside the line"),
            std::string::npos);
  EXPECT_EQ(csv("1,2,0\r\n3,4,1\r\n").n, 2u);  // CRLF is a line end
  // From a file, a NUL ends the reading at once (an endless binary stream is not buffered).
  const fs::path dir = temp_dir("nul");
  write(dir / "a.csv", std::string(10, 'x') + std::string(1, '\0') + std::string(100000, 'x'));
  EXPECT_EQ(error_of([&] { hd::read_csv((dir / "a.csv").string()); }),
            (dir / "a.csv").string() + ":1:11: a NUL byte: not a text file (binary IDX files are read with format = idx)");
  fs::remove_all(dir);
}

TEST(TextLines, DirectoriesAndMissingFilesNameTheField) {
  const fs::path dir = temp_dir("dir");
  hd::DataSource s;
  s.path = dir.string();
  EXPECT_EQ(error_of([&] { hd::read(s); }), "data = " + dir.string() + ": must be a readable file (it is a directory)");
  s.path = (dir / "missing.csv").string();
  s.path_field = "test_data";
  EXPECT_EQ(error_of([&] { hd::read(s); }),
            "test_data = " + s.path + ": must be a readable file (No such file or directory)");
  s.format = "idx";
  s.path = (dir / "images").string();
  write(s.path, "x");
  s.labels_path = (dir / "nothere").string();
  EXPECT_EQ(error_of([&] { hd::read(s); }),
            "labels = " + *s.labels_path + ": must be a readable file (No such file or directory)");
  fs::remove_all(dir);
}

// ---- the wide record: 4 x 200000 (the row-norm loop was quadratic in d: 70 s)

TEST(ScaleRows, WideRecordsMeetTheBoundExactly) {
  const std::size_t d = 200000;
  hd::Dataset data;
  data.n = 4;
  data.d = d;
  data.x.resize(4 * d);
  for (std::size_t k = 0; k < data.x.size(); ++k) data.x[k] = (k % 3 == 0) ? 0.5 : -1.0 - 1e-3 * static_cast<double>(k % 7);
  for (const double R : {1.0, 0.3, 1e-200, 1e150}) {
    hd::Dataset copy = data;
    hd::scale_rows_to_norm(copy, R);
    for (std::size_t i = 0; i < copy.n; ++i) {
      double plain = 0, scale = 0;
      for (std::size_t j = 0; j < d; ++j) {
        plain += copy.x[i * d + j] * copy.x[i * d + j];
        scale = std::max(scale, std::abs(copy.x[i * d + j]));
      }
      double rescaled = 0;
      for (std::size_t j = 0; j < d; ++j) rescaled += (copy.x[i * d + j] / scale) * (copy.x[i * d + j] / scale);
      if (std::isfinite(plain) && plain > 0) EXPECT_LE(std::sqrt(plain), R) << R;
      EXPECT_LE(scale * std::sqrt(rescaled), R) << R;
      // Scaled to R, not far below (a sum of d squares rounds by up to ~d ulps); a row
      // shorter than R is left as it was.
      double before = 0;
      for (std::size_t j = 0; j < d; ++j) before += data.x[i * d + j] * data.x[i * d + j];
      EXPECT_GT(scale * std::sqrt(rescaled), std::min(R, std::sqrt(before)) * (1 - 1e-9)) << R;
    }
  }
}

// ---- unsigned values and counts

TEST(ParseUnsigned, SignChecked) {
  EXPECT_EQ(hsdp::parse_unsigned("seed", "0"), 0u);
  EXPECT_EQ(hsdp::parse_unsigned("seed", "+5"), 5u);
  EXPECT_EQ(hsdp::parse_unsigned("seed", "18446744073709551615"), ~std::uint64_t{0});
  EXPECT_EQ(hsdp::parse_unsigned("column", "7", 7), 7u);
  for (const char* bad : {"-1", "18446744073709551616", "1.5", "1e3", "", "+", "+-1", " 1", "1 ", "0x10", "abc", "++1"})
    EXPECT_EQ(error_of([&] { hsdp::parse_unsigned("seed", bad); }),
              std::string("seed = ") + bad + ": must be an integer in [0, 18446744073709551615]")
        << bad;
  EXPECT_EQ(error_of([] { hsdp::parse_unsigned("column", "8", 7); }), "column = 8: must be an integer in [0, 7]");
}

TEST(CountFromReal, RoundsOrNamesTheStatedField) {
  EXPECT_EQ(hsdp::count_from_real("epochs", 2.0, 2.4, 0, 10, "T"), 2);
  EXPECT_EQ(hsdp::count_from_real("epochs", 2.0, 2.5, 0, 10, "T"), 3);  // half away from zero, as llround
  EXPECT_EQ(hsdp::count_from_real("epochs", 10.0, 10.4, 0, 10, "T"), 10);  // at the limit
  EXPECT_EQ(error_of([] { hsdp::count_from_real("epochs", 11.0, 10.5, 0, 10, "T = epochs"); }),
            "epochs = 11: must be such that T = epochs = 10.5 is in [0, 10]");
  for (const double bad : {1e30, 4e18, 9.3e18, std::numeric_limits<double>::infinity(), std::nan(""), -1.0})
    EXPECT_THROW(hsdp::count_from_real("epochs", bad, bad, 0, std::int64_t{1} << 40, "T"), hsdp::InvalidArgument) << bad;
}

TEST(TrainSteps, TheStepLimitAppliesToEpochs) {
  hsdp::train::TrainConfig c;
  c.loss.kind = hsdp::train::LossKind::logistic;
  c.noise_std = 1.0;
  c.batch_size = 1;
  c.batch_size_is_default = false;
  c.sampling = hsdp::Sampling::shuffle;
  c.epochs = std::ldexp(1.0, 30);  // n = 1024, b = 1: T = 2^40, the limit
  EXPECT_EQ(hsdp::train::planned_run(c, 1024, 3, 1).steps, hsdp::limits::steps);
  c.epochs = std::ldexp(1.0, 30) + 1.0 / 1024;  // T = 2^40 + 1
  EXPECT_NE(error_of([&] { hsdp::train::planned_run(c, 1024, 3, 1); }).find("epochs = 1073741824.0009766"),
            std::string::npos);
  for (const double epochs : {1e15, 1e30, 4e18}) {
    c.epochs = epochs;
    EXPECT_NE(error_of([&] { hsdp::train::planned_run(c, 1024, 3, 1); }).find("epochs = "), std::string::npos);
  }
  c.algorithm = hsdp::train::Algorithm::noisy_gd;
  c.epochs = 1e30;  // noisy-gd: T = epochs (1e30 was one step)
  EXPECT_NE(error_of([&] { hsdp::train::planned_run(c, 1024, 3, 1); }).find("T = epochs = 1e+30"), std::string::npos);
  c.epochs = 1e30;
  c.steps = hsdp::limits::steps + 1;
  EXPECT_NE(error_of([&] { hsdp::train::planned_run(c, 1024, 3, 1); }).find("steps = 1099511627777"),
            std::string::npos);
}

TEST(TrainConstants, AnOverflowingRecordNormIsNamed) {
  hsdp::train::LossSpec loss;
  const hsdp::train::Constraint ball;
  EXPECT_GT(hsdp::train::derive_constants(loss, 1e150, true, ball, 4).smoothness(), 0.0);
  EXPECT_NE(error_of([&] { hsdp::train::derive_constants(loss, 1e200, true, ball, 4); }).find("record_norm = 1e+200"),
            std::string::npos);
  loss.kind = hsdp::train::LossKind::huber;
  loss.huber_smoothing = 1e-308;
  EXPECT_NE(error_of([&] { hsdp::train::derive_constants(loss, 1e10, true, ball, 4); }).find("huber_smoothing"),
            std::string::npos);
}

TEST(NoiseStatement, AnOverflowingSigmaIsNamed) {
  hsdp::RunSpec s;
  s.n = 10;
  s.eta = 10.0;
  s.sigma = 1e308;
  s.convention = "journal";
  EXPECT_NE(error_of([&] { s.resolve(); }).find("sigma = 1e+308: must be such that the noise std per step is finite"),
            std::string::npos);
  hsdp::RunSpec e;
  e.example = true;
  e.convention = "bogus";
  EXPECT_EQ(error_of([&] { e.resolve(); }).rfind("convention = bogus: must be one of", 0), 0u);
  e.convention = "isit";  // a convention belongs to a stated sigma: not applied to the example's
  EXPECT_EQ(error_of([&] { e.resolve(); }), "convention = isit: must be used together with sigma");
  hsdp::RunSpec l;
  l.example = true;
  l.lipschitz = std::nan("");
  EXPECT_EQ(error_of([&] { l.resolve(); }), "lipschitz = nan: must be finite and > 0");
}

// ---- output files: all or none

TEST(OutputFiles, AllOrNone) {
  const fs::path dir = temp_dir("out");
  write(dir / "old.csv", "previous\n");
  fs::create_directory(dir / "plot");
  const std::string csv = (dir / "old.csv").string(), svg = (dir / "plot").string();
  EXPECT_EQ(error_of([&] { hsdp::write_files_atomically({{csv, "new\n", "csv"}, {svg, "<svg/>", "svg"}}); }),
            "svg = " + svg + ": must be a writable file path (it is a directory)");
  EXPECT_EQ(error_of([&] {
              hsdp::write_files_atomically({{csv, "new\n", "csv"}, {(dir / "no" / "p.svg").string(), "<svg/>", "svg"}});
            }).rfind("svg = " + (dir / "no" / "p.svg").string() + ": must be a writable file path", 0),
            0u);
  EXPECT_EQ(error_of([&] { hsdp::write_files_atomically({{csv, "a", "csv"}, {csv, "b", "svg"}}); }),
            "svg = " + csv + ": must be a file no other output of the command writes");
  // Nothing changed, nothing left behind.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"old.csv", "plot"}));
  std::ifstream in(csv);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "previous\n");
  // Success: both, whole, and no temporary or backup left.
  const std::string other = (dir / "b.svg").string();
  hsdp::write_files_atomically({{csv, "new\n", "csv"}, {other, "<svg/>", "svg"}});
  std::ifstream a(csv), b(other);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(a), {}), "new\n");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(b), {}), "<svg/>");
  std::size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 2u);
  fs::remove_all(dir);
}

// ---- the model file's schema

TEST(ModelSchema, WhatTrainWritesIsAccepted) {
  using hsdp::train::LossKind;
  for (const auto kind : {LossKind::logistic, LossKind::huber, LossKind::squared, LossKind::softmax}) {
    hsdp::train::LossSpec loss;
    loss.kind = kind;
    loss.classes = 3;
    hsdp::train::ModelFile f{hsdp::train::LinearModel::zeros(loss, 2, true), {}, {0.5, 2.0}, 1.5,
                             std::string(hd::to_string(hsdp::train::label_kind(kind))), {}};
    if (kind == LossKind::softmax) f.labels = {{"a", "b", "c"}, {0, 1, 2}};
    if (kind == LossKind::logistic || kind == LossKind::huber) f.labels = {{"-1", "+1"}, {-1, 1}};
    const json doc = {{"format", "hsdp-model"}, {"version", 1}, {"model", hsdp::train::to_json(f)}};
    const auto back = hsdp::train::model_from_json(doc, "m.json");
    EXPECT_EQ(back.model.parameters(), f.model.parameters());
    EXPECT_EQ(back.record_norm, 1.5);
    EXPECT_EQ(back.labels.raw, f.labels.raw);
  }
}

TEST(ModelSchema, VersionAndLimitsAreCheckedFirst) {
  hsdp::train::ModelFile f{hsdp::train::LinearModel::zeros({}, 3, true), {}, {}, 1.0, "plus-minus-one", {{"0", "1"}, {-1, 1}}};
  json doc = {{"format", "hsdp-model"}, {"version", 2}, {"model", hsdp::train::to_json(f)}};
  EXPECT_EQ(error_of([&] { hsdp::train::model_from_json(doc, "m.json"); }),
            "m.json: version = 2: must be 1 (the model file version this hsdp reads)");
  doc["version"] = 1;
  doc["model"]["features"] = hsdp::limits::features + 1;
  EXPECT_EQ(error_of([&] { hsdp::train::model_from_json(doc, "m.json"); }),
            "m.json: model.features = 16777217: must be an integer in [1, 16777216]");
  doc["model"]["features"] = -1;
  EXPECT_EQ(error_of([&] { hsdp::train::model_from_json(doc, "m.json"); }),
            "m.json: model.features = -1: must be an integer in [1, 16777216]");
  doc["model"]["features"] = 3;
  doc["model"]["labels"]["mapped"] = {1.0, 1.0};
  EXPECT_EQ(error_of([&] { hsdp::train::model_from_json(doc, "m.json"); }),
            "m.json: model.labels.mapped = [1.0,1.0]: must be -1 and +1, one label each");
}

}  // namespace
