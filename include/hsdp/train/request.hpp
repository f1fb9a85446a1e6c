// The training request (`hsdp train`, hsdp.train; docs/architecture.md "One training
// request"): how the data are stated (DataSpec) and the run (TrainSpec, the noise target,
// the seed) go in; the prepared training and test records, the plan, the trained model and
// its privacy report come out. One function for every front end and every process layout
// (one process, data-parallel parts, federated clients): the front ends parse and print.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hsdp/data/dataset.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/data/shard.hpp"
#include "hsdp/field_use.hpp"
#include "hsdp/output_files.hpp"
#include "hsdp/train/model_io.hpp"
#include "hsdp/train/prepare.hpp"
#include "hsdp/train/train_spec.hpp"
#include "hsdp/train/trainer.hpp"

namespace hsdp::train {

/// How a data set is stated, field by field (the data flags of `hsdp train`, the data
/// keywords of hsdp.train; errors name these fields): which file and how to read it, which
/// records and labels, the split or the test files, the users, the public feature constants
/// and how the features are held.
struct DataSpec {
  /// The training file (plain or gzipped); with `records`, the name the outputs give them.
  std::string data;
  std::optional<std::string> format;         ///< csv (default) | libsvm | idx
  std::optional<std::string> labels;         ///< the IDX labels file of `data`
  std::optional<std::size_t> label_column;   ///< CSV: 0-based label column (default: the last)
  std::optional<std::string> positive;       ///< binary losses: the raw label that becomes +1
  std::vector<std::string> classes;          ///< keep only the records with these raw labels
  /// One user id per record of `data` (federated, user-level): a file, one id per line...
  std::optional<std::string> users;
  /// ...or the ids themselves (a front end holding them in memory).
  std::optional<std::vector<std::string>> user_ids;
  std::optional<std::string> test_data, test_labels;  ///< a separate test file (and its IDX labels)
  /// The fraction held out for testing when there is no test file, in (0, 1). Unset: 0.2
  /// for a file; records handed over in memory are not split (no test records).
  std::optional<double> test_fraction;
  std::optional<std::uint64_t> split_seed;   ///< default 1
  /// Public per-feature constants: multipliers (feature_scale), or ranges [min, max] mapped
  /// onto [-1, 1], stated in a file (feature_ranges, data::read_feature_ranges) or in memory
  /// (feature_range_values). At most one of them.
  std::vector<double> feature_scale;
  std::optional<std::string> feature_ranges;
  std::vector<data::FeatureRange> feature_range_values;
  std::string feature_storage = "auto";      ///< auto | float64 | float32 | uint8
  /// The training records handed over in memory (float64, labels as raw text) instead of
  /// read from `data`.
  std::optional<data::Dataset> records;
  /// Records to score only (records_for): `data` holds features and no labels (CSV: no label
  /// column, LIBSVM: no leading label, IDX: images without a labels file; `records`: no raw
  /// labels). Training needs labels: prepare_data refuses it.
  bool no_labels = false;

  /// "array" for records in memory, else the stated format or csv.
  std::string format_name() const { return records ? "array" : format.value_or("csv"); }
  /// The stated fields (library name -> value as text; lists joined by ','; a switch empty),
  /// in the order of the command's data flags: what the rule of field_use.hpp applies to.
  FieldValues to_map() const;
  /// The files the statement reads (data, labels, test_data, test_labels, users,
  /// feature_ranges; none for records in memory): what an output must not replace
  /// (refuse_outputs_over_inputs, output_files.hpp).
  std::vector<FileUse> input_files() const;
};

/// The request: the data, the training run, and the noise target.
struct TrainRequest {
  DataSpec data;
  TrainSpec run;
  /// A target epsilon (the noise calibrated for it at `delta`), or none (sigma, noise_std
  /// or no_noise in `run` / here).
  std::optional<double> epsilon;
  std::optional<double> delta;  ///< of the target and of the report; default 1e-5
  bool no_noise = false;
  std::optional<std::uint64_t> seed;

  /// The trainer's configuration (TrainSpec::resolve, then the noise target, delta and the
  /// seed), checked before any data are read. Every stated field is read by it or refused,
  /// naming it and why (field_use.hpp: the run's fields by TrainSpec's table, the request's
  /// and the data's by request_rules()). Throws InvalidArgument naming the field.
  TrainConfig resolve() const;

  /// The stated fields of the request besides the run's: the noise target, seed and the data's.
  FieldValues to_map() const;
};

/// The resolved request the data rules read: the configuration and the data statement.
struct ResolvedRequest {
  const TrainConfig& config;
  const DataSpec& data;
};
/// The read conditions of the request's own fields and of its data's (field_use.hpp), in the
/// order of the command's flags: a new field of DataSpec or TrainRequest declares itself here.
std::span<const ReadRule<ResolvedRequest>> request_rules();

/// The processes of a job and how they cooperate (train/distributed.hpp builds it under
/// mpirun; docs/distributed.md). size 1: one process, the hooks unused. size K > 1: the
/// federated algorithm runs with rank 0 as server and the others as clients (every process
/// reads the whole file); every other algorithm runs data-parallel, each process reading,
/// preparing and training on its part of the records.
struct Layout {
  int rank = 0, size = 1;
  data::Collectives collectives = data::one_process();  ///< the sharded read's
  TrainConfig::DataParallel data_parallel;               ///< offsets filled by the request
  TrainConfig::Federation federation;
};

/// This process's records, read and prepared: the same records, labels and preparation as
/// one process would hold, split by rank under a data-parallel layout.
struct PreparedData {
  data::Part train;
  data::Part test;               ///< no records (test.n() == 0) when the request has none
  data::LabelKind label_kind = data::LabelKind::real;
  Preparation preparation;
  /// "216 train / 54 test records (split fraction 0.2, split seed 1)" or the test file's.
  std::string split;
};

/// read -> users -> classes -> labels (for config's loss; softmax sets config.loss.classes)
/// -> split -> preparation (training records, at the plan's record norm when one is planned:
/// train/planner.hpp planned_record_norm; the test records as they were), one call
/// behind the layout's collectives. Throws InvalidArgument naming the field; under a
/// data-parallel layout, on the process that meets the error (the caller stops the job).
PreparedData prepare_data(DataSpec data, TrainConfig& config, const Layout& layout = {});

/// Every record of `data` trains, none is held out (the membership-inference audit's data: no
/// split, no test file): read -> classes -> labels -> preparation, in one process, as
/// prepare_data does it. Throws InvalidArgument naming the field.
PreparedData prepare_all_records(DataSpec data, TrainConfig& config);

/// What the request produced.
struct TrainOutcome {
  DataSpec data;           ///< as stated (without the records)
  PreparedData prepared;   ///< this process's records
  TrainResult result;      ///< the model, the run performed, its report, the plan
  /// The released model on the training and on the test records (every process's records);
  /// set on the lead process; test only when there are test records.
  Evaluation train_evaluation;
  std::optional<Evaluation> test_evaluation;
  /// The process that prints and writes (rank 0).
  bool lead = true;

  /// The model file's "model" object (everything predict needs).
  ModelFile model_file() const;
  /// Frees the prepared records' values, keeping what the document and the text read of
  /// them (n, d, storage, labels): for a front end that keeps the outcome.
  void drop_records();
};

/// What a front end shows while the request runs, on the lead process only: the
/// preparation's warning for the data owner (Preparation::warning), as soon as the records
/// are prepared, and the progress of training (step, steps).
struct Watch {
  std::function<void(const std::string&)> warning;
  std::function<void(std::int64_t, std::int64_t)> progress;
};

/// The request, from files (or records) to the trained model and its report.
TrainOutcome train_request(TrainRequest request, const Layout& layout = {}, Watch watch = {});

/// The document `hsdp train --json` prints, for the data owner (docs/training.md, "Output"):
/// every field, the statistics of the records and the secrets of the run listed under
/// "not_private" (train/provenance.hpp owner_document); `account_command` is the front
/// end's spelling of result.account_request.
nlohmann::json to_json(const TrainOutcome& outcome, const std::string& account_command);
/// The model file `hsdp train --output` writes, meant for release: public inputs and the
/// certified weights only (train/provenance.hpp release_document).
nlohmann::json model_document(const TrainOutcome& outcome, const std::string& account_command);
/// The text `hsdp train` prints; `written_to`: the file the model was written to.
std::string to_text(const TrainOutcome& outcome, const std::string& account_command,
                    const std::optional<std::string>& written_to = std::nullopt);

/// Records to score with a trained model (`hsdp predict`, TrainResult.evaluate): read from
/// data.data (or data.records), classes kept, labels through the model's mapping (a label it
/// was not trained on is an error naming the record), features and rows prepared as in
/// training. Only data, format, labels, label_column, classes, feature_storage, records and
/// no_labels are read from `data`. With no_labels the records have no labels (raw_labels
/// and y empty; classes must be empty). A file whose width says it has no labels while
/// no_labels is unset (a CSV with exactly the model's d columns, a LIBSVM line starting
/// with index:value, IDX images without a labels file) is an error saying so and naming
/// no_labels.
data::Dataset records_for(const ModelFile& model, DataSpec data);

/// The model's output for each record of `records` (prepared by records_for): +-1 (logistic,
/// huber), the class id (softmax), the score (squared), as LinearModel::predict.
std::vector<double> predict(const LinearModel& model, const data::Dataset& records);

}  // namespace hsdp::train
