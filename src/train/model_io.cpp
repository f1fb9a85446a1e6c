#include "hsdp/train/model_io.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hsdp/errors.hpp"

namespace hsdp::train {

nlohmann::json to_json(const ModelFile& f) {
  const LinearModel& m = f.model;
  nlohmann::json j;
  j["loss"] = to_string(m.loss.kind);
  j["features"] = m.d;
  j["bias"] = m.bias;
  j["outputs"] = m.outputs;
  nlohmann::json w = nlohmann::json::array(), b = nlohmann::json::array();
  const std::size_t p = m.features();
  for (std::size_t k = 0; k < m.outputs; ++k) {
    w.push_back(std::vector<double>(m.theta.begin() + static_cast<std::ptrdiff_t>(k * p),
                                    m.theta.begin() + static_cast<std::ptrdiff_t>(k * p + m.d)));
    b.push_back(m.bias ? m.theta[k * p + m.d] : 0.0);
  }
  j["weights"] = w;
  j["intercept"] = b;
  if (!f.feature_center.empty()) j["feature_center"] = f.feature_center;
  if (!f.feature_scale.empty()) j["feature_scale"] = f.feature_scale;
  j["record_norm"] = f.record_norm;
  j["l2"] = m.loss.l2;
  if (m.loss.kind == LossKind::huber) j["huber_smoothing"] = m.loss.huber_smoothing;
  if (m.loss.kind == LossKind::squared) j["label_bound"] = m.loss.label_bound;
  if (m.loss.kind == LossKind::softmax) j["classes"] = m.loss.classes;
  j["labels"] = {{"kind", f.label_kind}, {"raw", f.labels.raw}, {"mapped", f.labels.mapped}};
  return j;
}

ModelFile model_from_json(const nlohmann::json& doc, const std::string& name) {
  auto bad = [&](const std::string& field, const std::string& what) -> void {
    fail(fmt::format("{}: model.{}", name, field), what, "as written by hsdp train");
  };
  if (!doc.is_object() || doc.value("format", "") != "hsdp-model" || !doc.contains("model"))
    fail(name, "(not an hsdp model file)", "a JSON file written by hsdp train (\"format\": \"hsdp-model\")");
  const auto& j = doc["model"];
  ModelFile f;
  try {
    LossSpec loss;
    loss.kind = parse_loss(j.at("loss").get<std::string>(), name + ": model.loss");
    loss.l2 = j.value("l2", 0.0);
    if (j.contains("huber_smoothing")) loss.huber_smoothing = j["huber_smoothing"].get<double>();
    if (j.contains("label_bound")) loss.label_bound = j["label_bound"].get<double>();
    if (j.contains("classes")) loss.classes = j["classes"].get<std::size_t>();
    const auto d = j.at("features").get<std::size_t>();
    const bool bias = j.at("bias").get<bool>();
    f.model = LinearModel::zeros(loss, d, bias);
    const auto& w = j.at("weights");
    const auto& b = j.at("intercept");
    if (!w.is_array() || w.size() != f.model.outputs) bad("weights", "wrong number of rows");
    if (!b.is_array() || b.size() != f.model.outputs) bad("intercept", "wrong length");
    const std::size_t p = f.model.features();
    for (std::size_t k = 0; k < f.model.outputs; ++k) {
      const auto row = w[k].get<std::vector<double>>();
      if (row.size() != d) bad("weights", fmt::format("row {} has {} values, not {}", k, row.size(), d));
      std::copy(row.begin(), row.end(), f.model.theta.begin() + static_cast<std::ptrdiff_t>(k * p));
      if (bias) f.model.theta[k * p + d] = b[k].get<double>();
    }
    f.record_norm = j.at("record_norm").get<double>();
    if (j.contains("feature_scale")) {
      f.feature_scale = j["feature_scale"].get<std::vector<double>>();
      if (f.feature_scale.size() != d) bad("feature_scale", "not one value per feature");
    }
    if (j.contains("feature_center")) {
      f.feature_center = j["feature_center"].get<std::vector<double>>();
      if (f.feature_center.size() != d) bad("feature_center", "not one value per feature");
    }
    const auto& l = j.at("labels");
    f.label_kind = l.at("kind").get<std::string>();
    f.labels.raw = l.at("raw").get<std::vector<std::string>>();
    f.labels.mapped = l.at("mapped").get<std::vector<double>>();
    if (f.labels.raw.size() != f.labels.mapped.size()) bad("labels", "raw and mapped differ in length");
  } catch (const nlohmann::json::exception& e) {
    fail(name, fmt::format("(malformed model: {})", e.what()), "a JSON file written by hsdp train");
  }
  return f;
}

namespace {
bool parse_number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}
}  // namespace

void apply_label_mapping(data::Dataset& data, std::string_view kind, const data::LabelMapping& mapping,
                         std::size_t first) {
  data.y.resize(data.n);
  auto where = [&](std::size_t i) {
    if (i < data.origin.size()) return fmt::format("label of record {} ({}:{})", first + i + 1, data.source, data.origin[i]);
    return fmt::format("label of record {}", first + i + 1);
  };
  if (data.raw_labels.size() != data.n)
    fail("labels", fmt::format("{} raw labels for {} records", data.raw_labels.size(), data.n), "one per record");
  for (std::size_t i = 0; i < data.n; ++i) {
    const std::string& raw = data.raw_labels[i];
    if (kind == "real") {
      if (!parse_number(raw, data.y[i])) fail(where(i), raw, "a finite number");
      continue;
    }
    bool found = false;
    double v = 0;
    const bool numeric = parse_number(raw, v);
    for (std::size_t k = 0; k < mapping.raw.size() && !found; ++k) {
      double w = 0;
      if (raw == mapping.raw[k] || (numeric && parse_number(mapping.raw[k], w) && w == v)) {
        data.y[i] = mapping.mapped[k];
        found = true;
      }
    }
    if (!found) fail(where(i), raw, fmt::format("one of the training labels ({})", mapping.describe()));
  }
  data.labels = mapping;
}

nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(opt("model_file"), path, "a readable file");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail(opt("model_file"), path, fmt::format("valid JSON ({})", e.what()));
  }
}

void write_json_atomically(const std::string& path, const nlohmann::json& document) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / (target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail(opt("output"), path, fmt::format("a writable location ({})", std::strerror(errno)));
  // mkstemp creates the file 0600; a model file is an ordinary output (0644 less umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  const std::string text = document.dump(2) + "\n";
  bool ok = true;
  std::size_t off = 0;
  while (ok && off < text.size()) {
    const ssize_t w = ::write(fd, text.data() + off, text.size() - off);
    if (w <= 0) ok = false; else off += static_cast<std::size_t>(w);
  }
  ok = (::fsync(fd) == 0) && ok;
  ok = (::close(fd) == 0) && ok;
  if (!ok || std::rename(tmpl.c_str(), path.c_str()) != 0) {
    std::remove(tmpl.c_str());
    fail(opt("output"), path, "a writable location (writing or renaming the file failed)");
  }
}

}  // namespace hsdp::train
