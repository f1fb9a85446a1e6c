// The generator of the malformed-input catalogue (tests/cli/test_malformed_catalogue.cpp):
// small valid inputs of every kind hsdp reads (CSV, LIBSVM, IDX, gzip, users files, model
// files), and the writers that turn them into bad ones. Everything is generated in the test's
// own directory when the case runs, so no large or malformed file is kept in git.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace hsdp::testing::bad {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

inline void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline void write(const fs::path& path, const Bytes& bytes) {
  write(path, std::string(bytes.begin(), bytes.end()));
}

inline std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// `text` compressed as one gzip member (deflate level 1: the catalogue's large cases stay fast).
inline Bytes gzip(const std::string& text, int level = 6) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  Bytes out(deflateBound(&z, static_cast<uLong>(text.size())) + 64);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/// `line` repeated `count` times, compressed as it is produced (a gzip "bomb": a few kilobytes
/// that decompress to count * line.size() bytes).
inline Bytes gzip_repeated(const std::string& line, std::uint64_t count) {
  z_stream z{};
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("deflateInit2");
  std::string block;
  const std::uint64_t per_block = std::max<std::uint64_t>(1, (1u << 20) / line.size());
  for (std::uint64_t i = 0; i < per_block; ++i) block += line;
  Bytes out;
  Bytes buffer(1 << 16);
  std::uint64_t left = count;
  for (;;) {
    const std::uint64_t lines = std::min(left, per_block);
    left -= lines;
    z.next_in = reinterpret_cast<Bytef*>(block.data());
    z.avail_in = static_cast<uInt>(lines * line.size());
    const int flush = left == 0 ? Z_FINISH : Z_NO_FLUSH;
    int rc = Z_OK;
    do {
      z.next_out = buffer.data();
      z.avail_out = static_cast<uInt>(buffer.size());
      rc = deflate(&z, flush);
      out.insert(out.end(), buffer.data(), buffer.data() + (buffer.size() - z.avail_out));
    } while (z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    if (left == 0) break;
  }
  deflateEnd(&z);
  return out;
}

/// An IDX file: magic 00 00 type ndim, the big-endian sizes, then `payload` as given.
inline Bytes idx(std::uint8_t type, const std::vector<std::uint32_t>& dims, const Bytes& payload) {
  Bytes out = {0, 0, type, static_cast<std::uint8_t>(dims.size())};
  for (const std::uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(d >> shift));
  out.insert(out.end(), payload.begin(), payload.end());
  return out;
}

// ---- the valid inputs every case directory starts with

/// good.csv: 40 records, 3 features, label 0/1 in the last column, no header.
inline std::string good_csv() {
  std::string s;
  for (int i = 0; i < 40; ++i) {
    const int label = i % 2;
    s += std::to_string(0.1 * (i % 7) + (label ? 0.5 : -0.5)) + "," + std::to_string(0.05 * (i % 5)) + "," +
         std::to_string(label ? 1.0 : -1.0) + "," + std::to_string(label) + "\n";
  }
  return s;
}

/// good.libsvm: the same 40 records.
inline std::string good_libsvm() {
  std::string s;
  for (int i = 0; i < 40; ++i) {
    const int label = i % 2;
    s += std::string(label ? "+1" : "-1") + " 1:" + std::to_string(0.1 * (i % 7) + (label ? 0.5 : -0.5)) +
         " 2:" + std::to_string(0.05 * (i % 5) + 0.01) + " 3:" + (label ? "1" : "-1") + "\n";
  }
  return s;
}

/// images.idx / labels.idx: 40 records of 2 x 2 unsigned bytes, labels 0/1.
inline Bytes good_images() {
  Bytes px;
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < 4; ++j) px.push_back(static_cast<std::uint8_t>((i % 2) * 128 + 10 * j + i));
  return idx(0x08, {40, 2, 2}, px);
}
inline Bytes good_labels() {
  Bytes y;
  for (int i = 0; i < 40; ++i) y.push_back(static_cast<std::uint8_t>(i % 2));
  return idx(0x08, {40}, y);
}

/// users.txt: one user id per record of good.csv (4 records per user).
inline std::string good_users() {
  std::string s;
  for (int i = 0; i < 40; ++i) s += "user" + std::to_string(i / 4) + "\n";
  return s;
}

/// model.json: a logistic model of good.csv's 3 features, as `hsdp train --output` writes it.
inline nlohmann::json good_model() {
  using nlohmann::json;
  json m;
  m["loss"] = "logistic";
  m["features"] = 3;
  m["bias"] = true;
  m["outputs"] = 1;
  m["weights"] = json::array({json::array({0.5, -0.25, 0.125})});
  m["intercept"] = json::array({0.1});
  m["record_norm"] = 1.0;
  m["l2"] = 0.0;
  m["labels"] = {{"kind", "plus-minus-one"}, {"raw", {"0", "1"}}, {"mapped", {-1.0, 1.0}}};
  return {{"format", "hsdp-model"}, {"version", 1}, {"model", m}};
}

/// softmax.json: a 3-class softmax model of 3 features.
inline nlohmann::json good_softmax_model() {
  using nlohmann::json;
  json doc = good_model();
  json& m = doc["model"];
  m["loss"] = "softmax";
  m["outputs"] = 3;
  m["classes"] = 3;
  m["weights"] = json::array({json::array({0.5, 0, 0}), json::array({0, 0.5, 0}), json::array({0, 0, 0.5})});
  m["intercept"] = json::array({0, 0, 0});
  m["labels"] = {{"kind", "classes"}, {"raw", {"0", "1", "2"}}, {"mapped", {0.0, 1.0, 2.0}}};
  return doc;
}

/// Writes the valid inputs into `dir`, and existing.out: an earlier output of the user that
/// no failing command may change.
inline void write_good_inputs(const fs::path& dir) {
  write(dir / "good.csv", good_csv());
  write(dir / "good.libsvm", good_libsvm());
  write(dir / "images.idx", good_images());
  write(dir / "labels.idx", good_labels());
  write(dir / "users.txt", good_users());
  write(dir / "model.json", good_model().dump(2) + "\n");
  write(dir / "softmax.json", good_softmax_model().dump(2) + "\n");
  write(dir / "existing.out", std::string("an earlier result that must survive\n"));
}

}  // namespace hsdp::testing::bad
