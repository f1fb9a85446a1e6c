#include "hsdp/train/model_io.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "hsdp/errors.hpp"
#include "hsdp/limits.hpp"
#include "hsdp/output_files.hpp"

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

namespace {

using nlohmann::json;

// The model file's schema, version 1 (docs/training.md "The model file"): every field checked
// for its type and range before anything is allocated, errors naming "<file>: model.<field>"
// with the value found (a model file is user input: it may be edited, truncated, or hostile).
class Schema {
 public:
  Schema(const json& object, const std::string& name, std::string prefix = "model.")
      : j_(object), name_(name), prefix_(std::move(prefix)) {}

  [[noreturn]] void bad(std::string_view field, const std::string& value, std::string_view range) const {
    fail(fmt::format("{}: {}{}", name_, prefix_, field), value, range);
  }
  static std::string shown(const json& v) {
    const std::string text = v.dump();
    return text.size() > 40 ? text.substr(0, 40) + "..." : text;
  }
  const json& at(std::string_view field) const {
    const auto it = j_.find(field);
    if (it == j_.end()) bad(field, "(missing)", "present in a model file written by hsdp train");
    return *it;
  }
  bool has(std::string_view field) const { return j_.contains(field); }

  std::string text(std::string_view field) const {
    const json& v = at(field);
    if (!v.is_string()) bad(field, shown(v), "a string");
    return v.get<std::string>();
  }
  bool flag(std::string_view field) const {
    const json& v = at(field);
    if (!v.is_boolean()) bad(field, shown(v), "true or false");
    return v.get<bool>();
  }
  // An integer in [lo, hi], compared before any conversion (-1 must not become 2^64 - 1).
  std::uint64_t count(std::string_view field, std::uint64_t lo, std::uint64_t hi) const {
    return count_of(at(field), field, lo, hi);
  }
  std::uint64_t count_of(const json& v, std::string_view field, std::uint64_t lo, std::uint64_t hi) const {
    const std::string range = lo == hi ? fmt::format("{} (for this loss)", lo) : fmt::format("an integer in [{}, {}]", lo, hi);
    if (v.is_number_unsigned() && v.get<std::uint64_t>() >= lo && v.get<std::uint64_t>() <= hi)
      return v.get<std::uint64_t>();
    if (v.is_number_integer() && v.get<std::int64_t>() >= 0 && static_cast<std::uint64_t>(v.get<std::int64_t>()) >= lo &&
        static_cast<std::uint64_t>(v.get<std::int64_t>()) <= hi)
      return static_cast<std::uint64_t>(v.get<std::int64_t>());
    bad(field, shown(v), range);
  }
  double number(const json& v, std::string_view field) const {
    if (!v.is_number()) bad(field, shown(v), "a finite number");
    const double x = v.get<double>();
    if (!std::isfinite(x)) bad(field, shown(v), "a finite number");
    return x;
  }
  double number(std::string_view field) const { return number(at(field), field); }
  // An array of `size` finite numbers.
  std::vector<double> numbers(const json& v, std::string_view field, std::size_t size) const {
    if (!v.is_array()) bad(field, shown(v), fmt::format("an array of {} numbers", size));
    if (v.size() != size) bad(field, fmt::format("{} values", v.size()), fmt::format("{} values", size));
    std::vector<double> out(size);
    for (std::size_t k = 0; k < size; ++k) out[k] = number(v[k], fmt::format("{}[{}]", field, k));
    return out;
  }

 private:
  const json& j_;
  const std::string& name_;
  std::string prefix_;
};

// The keys a version 1 model object may have.
constexpr std::array<std::string_view, 14> kModelKeys{"loss",   "features",    "bias",          "outputs", "weights",
                                                      "intercept", "feature_scale", "feature_center", "record_norm", "l2",
                                                      "huber_smoothing", "label_bound", "classes", "labels"};

}  // namespace

ModelFile model_from_json(const nlohmann::json& doc, const std::string& name) {
  if (!doc.is_object() || !doc.contains("format"))
    fail(opt("model_file"), name, "a model file written by hsdp train (a JSON object with \"format\": \"hsdp-model\")");
  if (doc["format"] != "hsdp-model")
    fail(fmt::format("{}: format", name), Schema::shown(doc["format"]), "\"hsdp-model\" (a model file written by hsdp train)");
  // The version this hsdp reads: a file of another version is refused, never half-understood.
  constexpr std::int64_t kVersion = 1;
  const auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_integer() || version->get<std::int64_t>() != kVersion)
    fail(fmt::format("{}: version", name), version == doc.end() ? std::string("(missing)") : Schema::shown(*version),
         fmt::format("{} (the model file version this hsdp reads)", kVersion));
  if (!doc.contains("model") || !doc["model"].is_object())
    fail(fmt::format("{}: model", name), doc.contains("model") ? Schema::shown(doc["model"]) : "(missing)",
         "an object (the model's weights and how its records were prepared)");
  const json& j = doc["model"];
  const Schema m(j, name);
  for (const auto& [key, value] : j.items())
    if (std::find(kModelKeys.begin(), kModelKeys.end(), key) == kModelKeys.end())
      m.bad(key, Schema::shown(value), fmt::format("absent (not a field of a version {} model)", kVersion));

  ModelFile f;
  LossSpec loss;
  loss.kind = parse_loss(m.text("loss"), fmt::format("{}: model.loss", name));
  const std::uint64_t d = m.count("features", 1, limits::features);
  const bool bias = m.flag("bias");
  if (loss.kind == LossKind::softmax) {
    loss.classes = m.count("classes", 2, limits::classes);
  } else if (m.has("classes")) {
    m.bad("classes", Schema::shown(j["classes"]), "absent unless the loss is softmax");
  }
  const std::uint64_t outputs = loss.kind == LossKind::softmax ? loss.classes : 1;
  m.count("outputs", outputs, outputs);  // the loss's: 1, or one per class
  if (outputs * (d + (bias ? 1 : 0)) > limits::parameters)
    m.bad("features", std::to_string(d),
          fmt::format("such that the model has at most {} parameters (it would have {} x {}; docs/data.md "
                      "\"Limits\")",
                      limits::parameters, outputs, d + (bias ? 1 : 0)));
  loss.l2 = m.has("l2") ? m.number("l2") : 0.0;
  if (loss.l2 < 0) m.bad("l2", show(loss.l2), ">= 0");
  if (loss.kind == LossKind::huber) {
    loss.huber_smoothing = m.number("huber_smoothing");
    if (!(loss.huber_smoothing > 0)) m.bad("huber_smoothing", show(loss.huber_smoothing), "> 0");
  }
  if (loss.kind == LossKind::squared) {
    loss.label_bound = m.number("label_bound");
    if (!(loss.label_bound > 0)) m.bad("label_bound", show(loss.label_bound), "> 0");
  }
  f.record_norm = m.number("record_norm");
  if (!(f.record_norm > 0)) m.bad("record_norm", show(f.record_norm), "finite and > 0");

  // The weights: `outputs` rows of d numbers, and an intercept per output.
  const json& w = m.at("weights");
  if (!w.is_array() || w.size() != outputs)
    m.bad("weights", w.is_array() ? fmt::format("{} rows", w.size()) : Schema::shown(w),
          fmt::format("an array of {} rows (one per output)", outputs));
  const std::vector<double> intercept = m.numbers(m.at("intercept"), "intercept", outputs);
  f.model = LinearModel::zeros(loss, d, bias);
  const std::size_t p = f.model.features();
  for (std::size_t k = 0; k < outputs; ++k) {
    const std::vector<double> row = m.numbers(w[k], fmt::format("weights[{}]", k), d);
    std::copy(row.begin(), row.end(), f.model.theta.begin() + static_cast<std::ptrdiff_t>(k * p));
    if (bias) f.model.theta[k * p + d] = intercept[k];
  }
  if (m.has("feature_scale")) f.feature_scale = m.numbers(j["feature_scale"], "feature_scale", d);
  if (m.has("feature_center")) f.feature_center = m.numbers(j["feature_center"], "feature_center", d);

  // The label mapping: the kind the loss reads, raw labels distinct, mapped values the kind's.
  const json& l = m.at("labels");
  if (!l.is_object()) m.bad("labels", Schema::shown(l), "an object {\"kind\", \"raw\", \"mapped\"}");
  const Schema labels(l, name, "model.labels.");
  const std::string expected(data::to_string(label_kind(loss.kind)));
  f.label_kind = labels.text("kind");
  if (f.label_kind != expected)
    labels.bad("kind", Schema::shown(l["kind"]), fmt::format("\"{}\" for the {} loss", expected, to_string(loss.kind)));
  const json& raw = labels.at("raw");
  if (!raw.is_array()) labels.bad("raw", Schema::shown(raw), "an array of label texts");
  for (std::size_t k = 0; k < raw.size(); ++k) {
    if (!raw[k].is_string()) labels.bad(fmt::format("raw[{}]", k), Schema::shown(raw[k]), "a string (a label as written in the data)");
    f.labels.raw.push_back(raw[k].get<std::string>());
  }
  f.labels.mapped = labels.numbers(labels.at("mapped"), "mapped", f.labels.raw.size());
  for (std::size_t a = 0; a < f.labels.raw.size(); ++a)
    for (std::size_t b = 0; b < a; ++b)
      if (f.labels.raw[a] == f.labels.raw[b])
        labels.bad("raw", Schema::shown(raw), fmt::format("distinct labels ({} is repeated)", Schema::shown(raw[a])));
  std::vector<double> wanted;  // the mapped values of the kind, as a set
  if (f.label_kind == "plus-minus-one") wanted = {-1.0, 1.0};
  if (f.label_kind == "classes")
    for (std::size_t c = 0; c < loss.classes; ++c) wanted.push_back(static_cast<double>(c));
  std::vector<double> mapped = f.labels.mapped;
  std::sort(mapped.begin(), mapped.end());
  if (mapped != wanted)
    labels.bad("mapped", Schema::shown(labels.at("mapped")),
          f.label_kind == "plus-minus-one" ? std::string("-1 and +1, one label each")
          : f.label_kind == "classes"      ? fmt::format("the class ids 0..{}, one label each", loss.classes - 1)
                                           : std::string("empty (real labels are not mapped)"));
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

std::optional<std::string> release_warning(const nlohmann::json& doc, const std::string& name) {
  const auto it = doc.find("randomness");
  if (it == doc.end() || !it->is_string()) return std::nullopt;
  const std::string text = it->get<std::string>();
  if (text.rfind("seeded", 0) != 0) return std::nullopt;
  return fmt::format(
      "warning: {} was trained with a seed ({}): anyone who knows the seed can regenerate its noise and "
      "subtract it, so its privacy report does not hold for a published model; train without a seed for a "
      "release (docs/security.md)",
      name, text);
}

std::string output_label(const ModelFile& f, double output) {
  if (f.label_kind == "real") return fmt::format("{}", output);
  for (std::size_t k = 0; k < f.labels.mapped.size(); ++k)
    if (f.labels.mapped[k] == output) return f.labels.raw[k];
  throw std::logic_error(fmt::format("model output {} is not a mapped label ({})", output, f.labels.describe()));
}

void apply_label_mapping(data::Dataset& data, std::string_view kind, const data::LabelMapping& mapping,
                         std::size_t first) {
  data.y.resize(data.n);
  auto where = [&](std::size_t i) {
    if (i < data.origin.size()) return fmt::format("label of record {} ({})", first + i + 1, data.label_place(i));
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
  // Checked before it is read: a directory, and a file beyond the size limit (a JSON parser
  // holds ~10x the text in memory).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    fail(opt("model_file"), path, fmt::format("a readable file ({})", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) fail(opt("model_file"), path, "a readable file (it is a directory)");
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > limits::model_file_bytes)
    fail(opt("model_file"), path,
         fmt::format("a model file of at most {} bytes (it has {}; docs/data.md \"Limits\")", limits::model_file_bytes,
                     static_cast<std::uint64_t>(st.st_size)));
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(opt("model_file"), path, "a readable file");
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {  // a pipe has no size: capped as read
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > limits::model_file_bytes)
      fail(opt("model_file"), path,
           fmt::format("a model file of at most {} bytes (docs/data.md \"Limits\")", limits::model_file_bytes));
  }
  try {
    return nlohmann::json::parse(text);  // a UTF-8 byte-order mark is skipped by the parser
  } catch (const nlohmann::json::exception& e) {
    fail(opt("model_file"), path, fmt::format("valid JSON ({})", e.what()));
  }
}

void write_json_atomically(const std::string& path, const nlohmann::json& document) {
  write_file_atomically(path, document.dump(2) + "\n", "output");
}

}  // namespace hsdp::train
