// Where each field that leaves hsdp comes from (docs/training.md "What the model file holds",
// DESIGN.md "What leaves hsdp"): the one place that decides whether a field of a training
// document may go into an artifact meant for release. Every writer asks it: the model file
// (`hsdp train --output`, TrainResult.save, Model.save) holds only public inputs and the
// private outputs the certificate covers; `--json` (TrainResult.to_json) adds the rest under
// "not_private", for the data owner.
#pragma once

#include <span>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hsdp::train {

enum class Provenance {
  /// Stated by the user or derived from stated, public quantities only (sizes, bounds, public
  /// feature ranges, the label set, the noise calibrated from them): the same on every
  /// neighbouring data set.
  public_input,
  /// A private output the privacy report covers: the released weights.
  certified_output,
  /// A statistic of the records (the training records, or the held-out test records of the
  /// same owner): losses, accuracies, counts. Not covered by the report: never released.
  record_statistic,
  /// A value the mechanism keeps hidden and its certificate assumes hidden (the random
  /// stopping time): publishing it would void the report. Never released.
  secret_of_the_run,
};

std::string_view to_string(Provenance p);
/// Whether a field of this provenance may be written into an artifact meant for release.
bool releasable(Provenance p);

/// One field of a training document, named by its path ("train_loss", "model.weights",
/// "configuration.adjacency.records"), its provenance and why.
struct FieldProvenance {
  std::string_view field;
  Provenance provenance;
  std::string_view why;
};

/// Every field a training document may hold, with its provenance. The objects "model",
/// "configuration" and "configuration.adjacency" are read field by field; every other value
/// (e.g. "report") is one field.
std::span<const FieldProvenance> document_fields();
/// The entry of `field`, or nullptr when the table has none.
const FieldProvenance* find_provenance(std::string_view field);

/// The document for release: the fields of `document` that are releasable, in place. With
/// strict (a document hsdp has just written), a field without an entry is a logic_error (a
/// writer that adds a field must give it a provenance here); otherwise (a file read back,
/// perhaps of an older hsdp) such a field is dropped, as are the record statistics older
/// model files held.
nlohmann::json release_document(const nlohmann::json& document, bool strict = true);
/// The data owner's document (`hsdp train --json`): every field of `document`, and under
/// "not_private" {"about": what they are, "fields": the paths of the fields that are not
/// releasable}. Strict as release_document.
nlohmann::json owner_document(const nlohmann::json& document);

}  // namespace hsdp::train
