// The provenance of every field of a training document (include/hsdp/train/provenance.hpp).
#include "hsdp/train/provenance.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hsdp::train {

namespace {

constexpr Provenance P = Provenance::public_input;
constexpr Provenance C = Provenance::certified_output;
constexpr Provenance S = Provenance::record_statistic;
constexpr Provenance H = Provenance::secret_of_the_run;

// One row per field a writer may emit (request.cpp to_json). A new field needs a row: the
// writers refuse a field without one (release_document, strict), and the suite lists them
// (tests/test_provenance.cpp).
constexpr FieldProvenance kFields[] = {
    {"format", P, "the file's format name"},
    {"version", P, "the schema version"},
    {"randomness", P, "how the generator was keyed (seeded or operating-system entropy), not a draw"},
    {"report", P, "the accountant on the run's public constants (n, b, T, noise, L, beta, D)"},
    {"account_command", P, "the report's run as an `hsdp account` command"},
    {"train_accuracy", S, "accuracy on the training records: their statistic, not covered by the report"},
    {"train_loss", S, "mean loss on the training records: with n - 1 of them it gives the last record's loss"},
    {"test_accuracy", S, "accuracy on the held-out test records, private data of the same owner"},
    {"test_loss", S, "mean loss on the held-out test records, private data of the same owner"},
    {"model.loss", P, "stated"},
    {"model.features", P, "the records' width d as the data format gives it (the schema, not a value)"},
    {"model.bias", P, "stated"},
    {"model.outputs", P, "1, or the number of classes of the label set"},
    {"model.weights", C, "the released iterate: what the report certifies"},
    {"model.intercept", C, "the released iterate's bias coordinate: what the report certifies"},
    {"model.feature_center", P, "stated public feature ranges"},
    {"model.feature_scale", P, "stated public feature constants or ranges"},
    {"model.record_norm", P, "stated, or planned from public quantities"},
    {"model.l2", P, "stated"},
    {"model.huber_smoothing", P, "stated"},
    {"model.label_bound", P, "stated"},
    {"model.classes", P, "the size of the label set (configuration.label_set says where it came from)"},
    {"model.labels", P, "the label set and its mapping (configuration.label_set says where it came from)"},
    {"configuration.data", P, "the data file's name as typed"},
    {"configuration.format", P, "stated"},
    {"configuration.feature_storage", P, "stated, or from the format (uint8 for IDX bytes)"},
    {"configuration.algorithm", P, "stated"},
    {"configuration.convention", P, "the algorithm's noise convention"},
    {"configuration.sigma", P, "stated, or calibrated from the public run"},
    {"configuration.constraint", P, "stated, or planned"},
    {"configuration.constants", P, "derived from the stated loss, record norm and constraint"},
    {"configuration.target", P, "stated"},
    {"configuration.plan", P, "planned from public quantities (n, L, beta, epsilon, delta)"},
    {"configuration.adjacency", P, "the object, field by field"},
    {"configuration.adjacency.unit", P, "user-level adjacency"},
    {"configuration.adjacency.users", P, "the run's n (users), a public constant of the run"},
    {"configuration.adjacency.message_norm_bound", P, "derived from the stated constants"},
    {"configuration.adjacency.sensitivity", P, "derived from the stated constants"},
    {"configuration.adjacency.records", S, "the number of records the users hold"},
    {"configuration.adjacency.description", S, "states the number of records the users hold"},
    {"configuration.released_step", P, "T, the last step (a public constant)"},
    {"configuration.stopping_time", H,
     "the random stopping time: drawn hidden, and the random-stop analyses assume it hidden"},
    {"configuration.public_constants", P, "the run's n, b, T and Poisson rate, fixed once before training"},
    {"configuration.batch_order", P, "the batch policy and its public constants"},
    {"configuration.preprocessing", P, "public feature constants and the record norm"},
    {"configuration.split", S, "the numbers of training and held-out test records"},
    {"configuration.labels", P, "the label mapping as text (configuration.label_set says where it came from)"},
    {"configuration.label_set", P, "whether the label set was stated or read from the records and declared public"},
    {"configuration.notes", P, "remarks on the configuration (constants, calibration, clipping)"},
};

// The objects read field by field.
bool container(std::string_view path) {
  return path == "model" || path == "configuration" || path == "configuration.adjacency";
}

std::string joined(std::string_view prefix, const std::string& key) {
  return prefix.empty() ? key : fmt::format("{}.{}", prefix, key);
}

// Copies the releasable fields of `in` (at `prefix`) into `out`, the others into `held`.
void split(const nlohmann::json& in, std::string_view prefix, bool strict, nlohmann::json& out, nlohmann::json* held) {
  for (const auto& [key, value] : in.items()) {
    const std::string path = joined(prefix, key);
    if (container(path) && value.is_object()) {
      nlohmann::json inner = nlohmann::json::object();
      split(value, path, strict, inner, held);
      out[key] = std::move(inner);
      continue;
    }
    const FieldProvenance* f = find_provenance(path);
    if (!f) {
      if (path == "not_private") continue;  // an owner document read back: never released
      if (strict) throw std::logic_error(fmt::format("training document field {} has no provenance (provenance.cpp)", path));
      continue;  // a file of another hsdp: what is not known to be releasable is not released
    }
    if (releasable(f->provenance)) out[key] = value;
    else if (held) (*held)[path] = value;
  }
}

}  // namespace

std::string_view to_string(Provenance p) {
  switch (p) {
    case Provenance::public_input: return "public input";
    case Provenance::certified_output: return "private output covered by the certificate";
    case Provenance::record_statistic: return "statistic of the records";
    case Provenance::secret_of_the_run: return "secret of the run";
  }
  return "?";
}

bool releasable(Provenance p) { return p == Provenance::public_input || p == Provenance::certified_output; }

std::span<const FieldProvenance> document_fields() {
  return kFields;
}

const FieldProvenance* find_provenance(std::string_view field) {
  for (const FieldProvenance& f : document_fields())
    if (f.field == field) return &f;
  return nullptr;
}

nlohmann::json release_document(const nlohmann::json& document, bool strict) {
  nlohmann::json out = nlohmann::json::object();
  split(document, "", strict, out, nullptr);
  return out;
}

nlohmann::json owner_document(const nlohmann::json& document) {
  nlohmann::json kept = nlohmann::json::object(), held = nlohmann::json::object();
  split(document, "", true, kept, &held);  // every field asked (strict)
  nlohmann::json out = document;
  if (!held.empty()) {
    nlohmann::json fields = nlohmann::json::array();
    for (const auto& [path, value] : held.items()) fields.push_back(path);
    out["not_private"] = {
        {"about", "not private: statistics of the training records (and of the held-out test records, private "
                  "data of the same owner) and secrets of the run, shown to the data owner; not covered by the "
                  "privacy report and never written into the model file"},
        {"fields", std::move(fields)}};
  }
  return out;
}

}  // namespace hsdp::train
