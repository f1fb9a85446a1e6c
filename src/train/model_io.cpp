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
#include <limits>
#include <map>
#include <optional>
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
  // Without a bias the intercept is 0 (hsdp train writes zeros): another value would be ignored.
  for (std::size_t k = 0; k < outputs && !bias; ++k)
    if (intercept[k] != 0.0)
      m.bad(fmt::format("intercept[{}]", k), show(intercept[k]), "0 when \"bias\" is false (the model has no intercept)");
  f.model = LinearModel::zeros(loss, d, bias);
  const std::size_t p = f.model.features();
  for (std::size_t k = 0; k < outputs; ++k) {
    const std::vector<double> row = m.numbers(w[k], fmt::format("weights[{}]", k), d);
    std::copy(row.begin(), row.end(), f.model.theta.begin() + static_cast<std::ptrdiff_t>(k * p));
    if (bias) f.model.theta[k * p + d] = intercept[k];
    // Every score w.x + b of a record with ||x|| <= R is finite (|w.x| <= ||w||_1 R), and so
    // is the squared loss's (score - y)^2: never "loss -nan".
    long double bound = std::abs(static_cast<long double>(intercept[k]));
    for (const double v : row) bound += std::abs(static_cast<long double>(v)) * f.record_norm;
    if (loss.kind == LossKind::squared) bound = (bound + loss.label_bound) * (bound + loss.label_bound);
    if (!(bound <= std::numeric_limits<double>::max()))
      m.bad(fmt::format("weights[{}]", k), fmt::format("values whose scores reach {}", static_cast<double>(bound)),
            fmt::format("such that every score{} of a record of norm <= record_norm = {} is a finite double",
                        loss.kind == LossKind::squared ? " (and the squared loss)" : "", show(f.record_norm)));
  }
  if (m.has("feature_scale")) f.feature_scale = m.numbers(j["feature_scale"], "feature_scale", d);
  if (m.has("feature_center")) f.feature_center = m.numbers(j["feature_center"], "feature_center", d);
  // The preparation (x - center) * scale stays finite at x = 0.
  for (std::size_t k = 0; k < f.feature_center.size() && !f.feature_scale.empty(); ++k)
    if (!std::isfinite(f.feature_center[k] * f.feature_scale[k]))
      m.bad(fmt::format("feature_center[{}]", k), show(f.feature_center[k]),
            fmt::format("such that (x - center) * feature_scale[{}] = {} is finite at x = 0", k, show(f.feature_scale[k])));

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
    const std::string& text = raw[k].get_ref<const std::string&>();
    // As a data file can write it: not empty, no control character (a NUL, a newline).
    const bool controls = std::any_of(text.begin(), text.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) == 0x7f;
    });
    if (text.empty() || controls)
      labels.bad(fmt::format("raw[{}]", k), Schema::shown(raw[k]),
                 "a label as a data file writes it: non-empty, without control characters");
    f.labels.raw.push_back(text);
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
  const auto v = read_real(text);  // not strtod: the C locale (Python's locale.setlocale) must not matter
  if (v) out = *v;
  return v.has_value();
}
}  // namespace

std::optional<std::string> release_warning(const nlohmann::json& doc, const std::string& name) {
  // The warning is dropped only for the text of a run keyed from the operating system; any
  // other text is treated as seeded, and a value that is not text is refused (a list or a
  // number would otherwise drop the warning silently: docs/input.md "Model files").
  constexpr std::string_view kEntropy = "operating-system entropy";
  const auto it = doc.find("randomness");
  if (it == doc.end()) return std::nullopt;
  if (!it->is_string())
    fail(fmt::format("{}: randomness", name), it->dump(-1, ' ', true, nlohmann::json::error_handler_t::replace),
         fmt::format("the text hsdp train writes (\"seeded: ...\" or \"{} ...\")", kEntropy));
  const std::string text = it->get<std::string>();
  if (text.rfind(kEntropy, 0) == 0) return std::nullopt;
  return escape_controls(fmt::format(
      "warning: {} was trained with a seed ({}): anyone who knows the seed can regenerate its noise and "
      "subtract it, so its privacy report does not hold for a published model; train without a seed for a "
      "release (docs/security.md)",
      name, text.rfind("seeded", 0) == 0 ? text : fmt::format("its randomness reads \"{}\", treated as seeded", text)));
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

namespace {

// The most bytes a model file written by hsdp train can have for its model: 64 bytes a number
// (weights, intercept, feature constants), 64 KiB a label text, plus 4 MiB for the rest of the
// document (report, configuration). A larger file is refused: it holds something else.
std::uint64_t bytes_for(std::uint64_t features, std::uint64_t outputs, std::uint64_t labels) {
  const std::uint64_t numbers = outputs * (features + 2) + 2 * features;
  return (std::uint64_t{4} << 20) + 64 * numbers + (std::uint64_t{64} << 10) * labels;
}

// The top-level keys of a train document (to_json(TrainOutcome)); "format", "version" and
// "model" are what predict reads, the others are kept as they are (Model.save writes them back).
// "train_accuracy", "test_accuracy", "train_loss" and "test_loss" are statistics of the
// records that model files before issue 35 held (train/provenance.hpp): still read, ignored;
// "not_private" is the data owner's section of a `--json` document: read, ignored.
constexpr std::array<std::string_view, 12> kDocumentKeys{
    "format", "version", "model", "configuration", "train_accuracy", "test_accuracy", "train_loss", "test_loss",
    "randomness", "report", "account_command", "not_private"};
// Values outside "model" a document may hold (its report and configuration have ~10^3).
constexpr std::uint64_t kOtherValues = std::uint64_t{1} << 20;

// The parse of a model file, checked as the text is read, before anything large is held: every
// key known (top level and "model"), at most kOtherValues values besides the model, and the
// file no larger than its model needs (bytes_for, once its features and outputs are read).
class Keeper {
 public:
  Keeper(std::string path, std::optional<std::uint64_t> size) : path_(std::move(path)), size_(size) {}

  bool operator()(int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using E = nlohmann::json::parse_event_t;
    if (event == E::key && depth == 1) {
      top_ = parsed.get<std::string>();
      if (std::find(kDocumentKeys.begin(), kDocumentKeys.end(), top_) == kDocumentKeys.end())
        fail(fmt::format("{}: {}", path_, top_), "(present)",
             "absent (not a key of a model file written by hsdp train, version 1)");
      return true;
    }
    if (top_ != "model") {
      if (depth >= 1 && (event == E::value || event == E::object_end || event == E::array_end) && ++others_ > kOtherValues)
        fail(fmt::format("{}: {}", path_, top_), fmt::format("more than {} values", kOtherValues),
             "the report and configuration hsdp train writes (a few thousand values)");
      return true;
    }
    if (event == E::key && depth == 2) {
      key_ = parsed.get<std::string>();
      if (std::find(kModelKeys.begin(), kModelKeys.end(), key_) == kModelKeys.end())
        fail(fmt::format("{}: model.{}", path_, key_), "(present)", "absent (not a field of a version 1 model)");
    }
    if (event == E::value && depth == 2) {
      if ((key_ == "features" || key_ == "outputs" || key_ == "classes") && parsed.is_number_unsigned())
        counts_[key_] = parsed.get<std::uint64_t>();
      check_size();
    }
    return true;
  }

 private:
  void check_size() {
    if (!size_ || !counts_.count("features")) return;
    const std::uint64_t d = std::min<std::uint64_t>(counts_["features"], limits::features);
    std::uint64_t outputs = 1;
    if (counts_.count("outputs")) outputs = std::min<std::uint64_t>(counts_["outputs"], limits::classes);
    else if (counts_.count("classes")) outputs = std::min<std::uint64_t>(counts_["classes"], limits::classes);
    else return;  // not yet known
    const std::uint64_t allowed = bytes_for(d, outputs, std::max<std::uint64_t>(outputs, 2));
    if (*size_ > allowed)
      fail(opt("model_file"), path_,
           fmt::format("a model file of at most {} bytes for its model of {} features and {} output{} (it has {}: "
                       "docs/data.md \"Limits\")",
                       allowed, d, outputs, outputs == 1 ? "" : "s", *size_));
  }

  std::string path_;
  std::optional<std::uint64_t> size_;
  std::string top_, key_;
  std::uint64_t others_ = 0;
  std::map<std::string, std::uint64_t> counts_;
};

}  // namespace

nlohmann::json read_json_file(const std::string& path) {
  // Checked before it is read: a directory, and a file beyond the size limit.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    fail(opt("model_file"), path, fmt::format("a readable file ({})", std::strerror(errno)));
  if (S_ISDIR(st.st_mode)) fail(opt("model_file"), path, "a readable file (it is a directory)");
  const bool regular = S_ISREG(st.st_mode);
  if (regular && static_cast<std::uint64_t>(st.st_size) > limits::model_file_bytes)
    fail(opt("model_file"), path,
         fmt::format("a model file of at most {} bytes (it has {}; docs/data.md \"Limits\")", limits::model_file_bytes,
                     static_cast<std::uint64_t>(st.st_size)));
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(opt("model_file"), path, "a readable file");
  // A regular file is streamed into the parser; a pipe (no size) is read whole, capped.
  std::string text;
  if (!regular) {
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
      text.append(buffer, static_cast<std::size_t>(in.gcount()));
      if (text.size() > limits::model_file_bytes)
        fail(opt("model_file"), path,
             fmt::format("a model file of at most {} bytes (docs/data.md \"Limits\")", limits::model_file_bytes));
    }
  }
  Keeper keep(path, regular ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(st.st_size))
                            : std::optional<std::uint64_t>(text.size()));
  auto callback = [&keep](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    return keep(depth, event, parsed);
  };
  try {
    // A UTF-8 byte-order mark is skipped by the parser.
    return regular ? nlohmann::json::parse(in, callback) : nlohmann::json::parse(text, callback);
  } catch (const nlohmann::json::exception& e) {
    fail(opt("model_file"), path, fmt::format("valid JSON ({})", e.what()));
  }
}

void write_json_atomically(const std::string& path, const nlohmann::json& document) {
  write_file_atomically(path, document.dump(2) + "\n", "output");
}

}  // namespace hsdp::train
