// hsdp.train: the keywords become the library's training request (include/hsdp/train/
// request.hpp), the same request `hsdp train` makes from its flags, from a data file or from
// numpy arrays; the result carries the privacy report of the run performed and writes the
// command's document and text. Also hsdp.audit_mia and hsdp.read_csv.
#include <fmt/format.h>

#include "field_names.hpp"  // cli/: the "same report" line is an `hsdp account` command
#include <pybind11/numpy.h>

#include <cmath>
#include <variant>

#include "call.hpp"
#include "common.hpp"
#include "model.hpp"
#include "hsdp/audit/mia.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/model_io.hpp"
#include "hsdp/train/prepare.hpp"
#include "hsdp/train/request.hpp"
#include "hsdp/train/train_spec.hpp"
#include "hsdp/train/trainer.hpp"

namespace hsdp::python {

namespace {

// The result of hsdp.train: the library's outcome of the request (its prepared records
// dropped: only their shape, storage and labels are kept), and the model file it wrote.
struct PyTrainResult {
  train::TrainOutcome outcome;
  std::optional<std::string> written_to;
  const train::TrainResult& result() const { return outcome.result; }
  const train::Preparation& preparation() const { return outcome.prepared.preparation; }
  std::string account_command() const { return cli::command_line("account", outcome.result.account_request) + " --json"; }
};

// A training field's Python keyword: its library name, except no_bias, stated as bias.
std::string keyword_of(const train::TrainField& f) {
  return f.name == "no_bias" ? "bias" : std::string(f.name);
}

// The training run as this call states it (TrainSpec::fields(), one keyword each): a field
// holds a value exactly when the caller passed its keyword (None: not stated), whatever default
// the signature shows (python/src/call.hpp, given()). bias=False states no_bias.
train::TrainSpec stated_run() {
  train::TrainSpec f;
  for (const train::TrainField& field : train::TrainSpec::fields()) {
    const std::string keyword = keyword_of(field);
    const py::object v = given_value(keyword.c_str());
    if (!v || v.is_none()) continue;
    if (field.flag) {
      if (!v.cast<bool>()) f.*field.flag = true;
    } else if (field.real) {
      f.*field.real = v.cast<double>();
    } else if (field.integer) {
      f.*field.integer = v.cast<std::int64_t>();
    } else if (field.choices == "true|false") {
      f.*field.word = std::string(v.cast<bool>() ? "true" : "false");  // stated as True / False
    } else {
      f.*field.word = v.cast<std::string>();
    }
  }
  if (!f.model) f.model = "logistic";  // the keyword's default
  return f;
}

using Users = std::variant<PathArg, std::vector<std::string>>;
using Ranges = std::variant<PathArg, std::vector<std::pair<double, double>>>;

// The public feature ranges stated as a file or as (min, max) pairs.
void state_ranges(train::DataSpec& d, const std::optional<Ranges>& feature_ranges) {
  if (!feature_ranges) return;
  if (const auto* path = std::get_if<PathArg>(&*feature_ranges)) {
    d.feature_ranges = path->path;
  } else {
    for (const auto& [lo, hi] : std::get<1>(*feature_ranges)) d.feature_range_values.push_back({lo, hi});
    if (d.feature_range_values.empty()) fail(opt("feature_ranges"), "[]", "one (min, max), or one per feature");
  }
}

// hsdp.train: the keywords as the library's training request (train/request.hpp), from a
// data file (data=..., as `hsdp train --data`) or from arrays X, y (the records handed over
// in memory: not split unless test_fraction is given); the request runs without the GIL. The
// training run's keywords are read as stated (stated_run): their typed parameters here only
// check the types.
PyTrainResult train_like_cli(std::optional<FeaturesArg> X, std::optional<LabelsArg> y, std::optional<PathArg> data,
                             const std::string& format, std::optional<PathArg> labels,
                             std::optional<py::int_> label_column, std::vector<std::string> classes,
                             std::optional<PathArg> test_data, std::optional<PathArg> test_labels,
                             std::optional<double> test_fraction, const py::int_& split_seed,
                             const std::string&, const std::string&, double, double, double, bool,
                             std::optional<double>, const std::string&, std::optional<double>,
                             std::optional<std::string>, std::optional<std::int64_t>, std::optional<std::int64_t>,
                             std::optional<double>, std::optional<double>, std::optional<std::string>,
                             const std::string&, std::optional<double>, std::optional<double>,
                             std::optional<double> epsilon, std::optional<double> delta, bool no_noise,
                             std::optional<std::string>, std::optional<double>,
                             std::optional<bool>, std::optional<bool>, std::optional<std::string>,
                             std::optional<py::int_> seed, std::optional<std::string> positive,
                             std::vector<double> feature_scale, std::optional<Ranges> feature_ranges,
                             std::optional<Users> users, const std::string& feature_storage,
                             std::optional<PathArg> output) {
  train::TrainRequest request;
  request.run = stated_run();
  request.epsilon = epsilon;
  request.delta = delta;
  request.no_noise = no_noise;
  request.seed = unsigned_keyword("seed", seed);

  train::DataSpec& d = request.data;
  if (X || y) {
    if (!X) fail("X", "(missing)", "the records of y, one row each");
    if (!y) fail("y", "(missing)", "one label per row of X");
    if (data) fail(opt("data"), data->path, "absent when the arrays X and y are given");
    d.records = dataset_from(X->array, &*y, "X", "y");
    d.data = "X";
  } else if (data) {
    d.data = data->path;
  } else {
    fail(opt("data"), "(missing)", "a data file, or the arrays X and y");
  }
  if (given("format")) d.format = format;
  d.labels = path_of(labels);
  if (const auto column = unsigned_keyword("label_column", label_column))
    d.label_column = static_cast<std::size_t>(*column);
  d.positive = std::move(positive);
  d.classes = std::move(classes);
  d.test_data = path_of(test_data);
  d.test_labels = path_of(test_labels);
  d.test_fraction = test_fraction;
  if (given("split_seed")) d.split_seed = *unsigned_keyword("split_seed", split_seed);
  d.feature_scale = std::move(feature_scale);
  state_ranges(d, feature_ranges);
  if (users) {
    if (auto* path = std::get_if<PathArg>(&*users)) d.users = path->path;
    else d.user_ids = std::get<1>(std::move(*users));
  }
  d.feature_storage = feature_storage;
  request.resolve();  // every field checked (and the rule applied) before the data are read
  if (output) refuse_outputs_over_inputs({{output->path, "output"}}, d.input_files());  // before any work

  PyTrainResult out;
  {
    py::gil_scoped_release release_gil;
    out.outcome = train::train_request(std::move(request));
  }
  out.outcome.drop_records();
  const std::string& warning = out.preparation().warning;
  if (!warning.empty() && PyErr_WarnEx(PyExc_UserWarning, warning.c_str(), 1) != 0) throw py::error_already_set();
  if (output) {
    train::write_json_atomically(output->path, train::model_document(out.outcome, out.account_command()));
    out.written_to = output->path;
  }
  return out;
}

// hsdp.audit_mia: `hsdp audit mia` on numpy arrays, by the same library request
// (audit::MiaRequest, audit::mia_request). The records are prepared as for hsdp.train (labels
// mapped, public feature constants, rows scaled to the record norm); the preparation and
// the 2N trainings run without the GIL. Returns the same JSON document as the command.
py::object audit_mia_like_cli(const FeaturesArg& X, const LabelsArg& y, const std::string&, const std::string&, double,
                              double, double, bool, std::optional<double>, const std::string&, std::optional<double>,
                              std::optional<std::string>, std::optional<std::int64_t>, std::optional<std::int64_t>,
                              std::optional<double>, std::optional<double>, std::optional<std::string>,
                              const std::string&, std::optional<double>, std::optional<double>,
                              std::optional<double> epsilon, double delta, std::optional<std::string>,
                              std::optional<double>, std::optional<bool>, std::optional<bool>, std::optional<std::string>,
                              std::optional<std::string> positive,
                              std::vector<double> feature_scale, std::optional<Ranges> feature_ranges, std::int64_t trials,
                              double confidence, std::optional<py::int_> seed, std::optional<std::int64_t> canary_index,
                              std::int64_t threads) {
  // The library's request (audit::MiaRequest), checked as `hsdp audit mia` checks it.
  audit::MiaRequest request;
  static_cast<train::TrainSpec&>(request) = stated_run();
  request.epsilon = epsilon;
  request.delta = delta;
  request.confidence = confidence;
  request.trials = trials;
  request.threads = threads;
  request.seed = unsigned_keyword("seed", seed);
  request.canary_index = canary_index;
  request.data.positive = std::move(positive);
  request.data.feature_scale = std::move(feature_scale);
  state_ranges(request.data, feature_ranges);
  request.data.data = "X";
  request.resolve();  // the request's errors before the arrays'
  request.data.records = dataset_from(X.array, &y, "X", "y");
  nlohmann::json j;
  {
    py::gil_scoped_release release_gil;
    j = audit::to_json(audit::mia_request(request).result);
  }
  return to_python(j);
}

const char* python_type(const train::TrainField& f) {
  if (f.choices == "true|false") return "bool";  // stated as True / False in Python
  switch (f.type) {
    case train::TrainField::Type::switch_: return "bool";
    case train::TrainField::Type::integer: return "int";
    case train::TrainField::Type::real: return "float";
    case train::TrainField::Type::word: return "str";
  }
  return "object";
}

// The keyword list of hsdp.train's docstring: one line per field of the training request,
// from its table (TrainSpec::fields(), the flags of `hsdp train`).
std::string train_keywords_doc() {
  std::string out = "Keywords of the training run (the flags of `hsdp train`):\n";
  for (const train::TrainField& f : train::TrainSpec::fields()) {
    const bool bias = f.name == "no_bias";
    std::string head = fmt::format("{} ({}", keyword_of(f), python_type(f));
    if (bias) head += ", default True";
    else if (f.type == train::TrainField::Type::word && f.has_default() && f.choices != "true|false")
      head += fmt::format(", default \"{}\"", f.default_text());
    else if (f.has_default()) head += ", default " + f.default_text();
    if (f.type != train::TrainField::Type::word && !f.allowed().empty()) head += ", " + f.allowed();
    head += ")";
    out += fmt::format("  {:<41} {}\n", head, bias ? std::string_view("Fit an intercept (False: none)") : f.help);
  }
  return out;
}

// The table as Python sees it (hsdp._train_fields): each field's keyword, type, default as
// text (None: none), allowed values and help. The tests hold hsdp.train's and
// hsdp.audit_mia's keywords to it.
py::list train_fields() {
  py::list out;
  for (const train::TrainField& f : train::TrainSpec::fields()) {
    py::dict d;
    d["keyword"] = keyword_of(f);
    d["field"] = std::string(f.name);
    d["type"] = python_type(f);
    d["required"] = f.required;
    d["default"] = f.has_default() ? py::object(py::str(f.default_text())) : py::object(py::none());
    d["allowed"] = f.allowed();
    d["help"] = std::string(f.help);
    out.append(d);
  }
  return out;
}

}  // namespace

void bind_train(py::module_& m) {
  // The docstring: what hsdp.train does, then its keywords, the training run's from the
  // table of TrainSpec's fields.
  static const std::string train_doc =
      R"doc(Train a linear model with one of the papers' noisy iterations: the request of `hsdp train`.

From a data file, as the command: hsdp.train(data="heart_scale", format="libsvm", model="logistic",
epsilon=1) reads, selects classes, maps labels, splits (test_fraction 0.2, split_seed 1, or
test_data) and prepares the records exactly as `hsdp train --data heart_scale --format libsvm
--model logistic --epsilon 1` does; result.text() and result.to_json() are its output byte for
byte, and output="model.json" writes its model file.
From arrays: hsdp.train(X, y, ...) with X an n x d float64 array (C-contiguous or strided; other
numeric dtypes are converted) and y n labels (binary losses: two distinct values, the larger ->
+1 unless `positive`; softmax: class labels -> ids 0..k-1 in numeric order; squared: real
values); the records are all training records unless test_fraction is given.
Features are first centred and scaled by public constants (feature_scale: multipliers, one value
or one per feature; or feature_ranges: (min, max) per feature, or a file of them, mapped onto
[-1, 1]), then rows are scaled to ||x|| <= record_norm (record-local, keeps privacy);
predict/evaluate do the same. Noise: sigma (the algorithm's paper convention), noise_std, a
target epsilon (with delta) to calibrate, or no_noise. With a target epsilon, the keywords left
unset among sampling, batch_size, epochs/steps, eta and radius are planned from public
quantities (docs/training.md "The plan"); result.plan says what and why. seed makes the run
reproducible (the same seed gives the same model as the CLI's --seed on the same records). The
result carries the privacy report of the run performed.

)doc" + train_keywords_doc() +
      R"doc(
of the data (the data flags of `hsdp train`): data (str: a file; or X, y), format (csv | libsvm |
idx), labels (the IDX labels file), label_column (int, CSV), classes (list of raw labels to
keep), test_data, test_labels, test_fraction (float in (0, 1); default 0.2 for a file, no split
for arrays), split_seed (int), positive (str), feature_scale (list), feature_ranges (a file of
"min max" lines, or a list of (min, max)), users (a file of user ids, or a list of str: one user
id per record; algorithm='federated' with several records per user, n = the number of users,
user-level adjacency; result.user_level states it), feature_storage (str: auto | float64 |
float32 | uint8; how the features are held while training, as `hsdp train --feature-storage`:
auto keeps an array's float64, float32 rounds, uint8 needs integers 0..255 -- the feature_scale
and record scaling are then applied as float64 factors, never materialised; arithmetic is
float64 either way);
and of the request: epsilon, delta (a target epsilon to calibrate sigma, and the delta of the
report, default 1e-5), no_noise (bool), seed (int), output (str: write the model file).)doc";
  m.attr("_train_fields") = train_fields();

  py::class_<PyTrainResult>(m, "TrainResult", "A trained linear model and the privacy report of the run performed.")
      .def_property_readonly("theta", [](const PyTrainResult& r) { return theta_array(r.result().model); },
                             "Weights, outputs x (d + bias): the last column is the intercept when bias.")
      .def_property_readonly("weights", [](const PyTrainResult& r) { return weights_array(r.result().model); },
                             "The weights without the intercept, outputs x d.")
      .def_property_readonly("intercept", [](const PyTrainResult& r) { return intercept_of(r.result().model); },
                             "The intercept of each output (None without bias).")
      .def_property_readonly("run", [](const PyTrainResult& r) { return PyRun{r.result().run, std::nullopt}; },
                             "The run performed (noise as actually used).")
      .def_property_readonly("report", [](const PyTrainResult& r) -> py::object {
        if (!r.result().report) return py::none();
        return py::cast(*r.result().report);
      }, "The accountant on `run` (epsilon at the delta asked), None without noise.")
      .def_property_readonly("epsilon", [](const PyTrainResult& r) -> py::object {
        if (!r.result().report) return py::float_(std::numeric_limits<double>::infinity());
        const auto& rep = *r.result().report;
        return py::float_(rep.best ? *rep.analyses[*rep.best].epsilon : std::numeric_limits<double>::infinity());
      }, "The report's best epsilon (inf without noise or without an applicable analysis).")
      .def_property_readonly("seeded", [](const PyTrainResult& r) { return r.result().seeded; }, "True when the run was given a seed (reproducible).")
      .def_property_readonly("feature_storage", [](const PyTrainResult& r) {
        return std::string(data::to_string(r.outcome.prepared.train.data.storage)); },
                             "How the training features were held: float64, float32 or uint8.")
      .def_property_readonly("convention", [](const PyTrainResult& r) { return std::string(to_string(r.result().convention)); }, "The paper convention of sigma.")
      .def_property_readonly("sigma", [](const PyTrainResult& r) { return r.result().sigma; }, "The noise parameter sigma used, in its convention.")
      .def_property_readonly("released_step", [](const PyTrainResult& r) { return r.result().released_step; }, "The step whose iterate was released: T, or the random stopping time.")
      .def_property_readonly("batch_order", [](const PyTrainResult& r) { return r.result().batch_order; },
                             "How the batches were drawn (the model file's configuration.batch_order).")
      .def_property_readonly("clipping_acts", [](const PyTrainResult& r) { return r.result().clipping_acts; }, "True when clipping can change a gradient (the clip norm is below the gradient bound).")
      .def_property_readonly("clipped_examples", [](const PyTrainResult& r) { return r.result().clipped_examples; }, "Per-example gradients that clipping shortened.")
      .def_property_readonly("max_constraint_excess", [](const PyTrainResult& r) { return r.result().max_constraint_excess; }, "The largest constraint excess of an iterate after projection (<= 0 up to rounding).")
      .def_property_readonly("uses", [](const PyTrainResult& r) {
        return py::array_t<std::int64_t>(static_cast<py::ssize_t>(r.result().uses.size()), r.result().uses.data());
      }, "How often each record (each user, with users) entered a batch.")
      .def_property_readonly("user_level", [](const PyTrainResult& r) -> py::object {
        if (!r.result().user_level) return py::none();
        const train::UserLevel& u = *r.result().user_level;
        py::dict d;
        d["unit"] = "user";
        d["users"] = u.users;
        d["records"] = u.records;
        d["description"] = u.description;
        d["message_norm_bound"] = u.message_bound ? py::cast(*u.message_bound) : py::none();
        d["sensitivity"] = u.sensitivity ? py::cast(*u.sensitivity) : py::none();
        return d;
      }, "With users: the user-level adjacency (users, records, message norm bound, sensitivity "
         "2 eta L / m), as `hsdp train --users` states it; None otherwise.")
      .def_property_readonly("notes", [](const PyTrainResult& r) { return r.result().notes; }, "Remarks on the run (what the trainer enforced or chose).")
      .def_property_readonly("plan", [](const PyTrainResult& r) -> py::object {
        if (r.result().plan_summary.empty()) return py::none();
        py::dict d;
        d["summary"] = r.result().plan_summary;
        d["chosen"] = r.result().plan_chosen;
        py::dict candidates;
        for (const auto& [sampling, std] : r.result().plan_candidates) candidates[py::str(sampling)] = std;
        d["candidates"] = candidates;
        return d;
      }, "What the plan chose from public quantities (with a target epsilon and fields left unset), "
         "or None: {'summary', 'chosen': the keywords it set, 'candidates': batch policy -> noise std}.")
      .def_property_readonly("account_command", [](const PyTrainResult& r) { return r.account_command(); },
                             "The `hsdp account` command that reproduces the report.")
      .def_property_readonly("labels", [](const PyTrainResult& r) { return r.outcome.prepared.train.data.labels.describe(); },
                             "How the labels were mapped (e.g. \"-1 -> -1, 1 -> +1\").")
      .def_property_readonly("preprocessing", [](const PyTrainResult& r) { return r.preparation().description; },
                             "How the features were prepared (public feature constants, record norm).")
      .def_property_readonly("warning", [](const PyTrainResult& r) { return r.preparation().warning; },
                             "For the data owner (also issued as a UserWarning): set when a few features dominate "
                             "the records' norms; never part of the model document.")
      .def_property_readonly("split", [](const PyTrainResult& r) { return r.outcome.prepared.split; },
                             "The training and test records (\"455 train / 114 test records (split fraction 0.2, "
                             "split seed 1)\"; arrays: \"569 train records (no test records)\").")
      .def_property_readonly("train_evaluation", [](const PyTrainResult& r) { return evaluation(r.outcome.train_evaluation); },
                             "The released model on the training records: {'loss', 'accuracy'}.")
      .def_property_readonly("test_evaluation", [](const PyTrainResult& r) -> py::object {
        if (!r.outcome.test_evaluation) return py::none();
        return evaluation(*r.outcome.test_evaluation);
      }, "The released model on the test records (held out or the test file), None without test records.")
      .def_property_readonly("constants", [](const PyTrainResult& r) {
        py::dict d;
        d["record_norm_with_bias"] = r.result().constants.record_norm;
        d["lipschitz_data"] = optional_float(r.result().constants.lipschitz_data);
        d["smoothness"] = r.result().constants.smoothness();
        d["strong_convexity"] = r.result().constants.l2;
        d["derivation"] = r.result().constants.derivation;
        return d;
      }, "The loss-class constants the run was accounted with.")
      .def("model_json", [](const PyTrainResult& r, int indent) {
        return train::to_json(r.outcome.model_file()).dump(indent);
      }, py::arg("indent") = 2, "The \"model\" object of the model file `hsdp train` writes.")
      .def("to_json", [](const PyTrainResult& r, int indent) {
        return train::to_json(r.outcome, r.account_command()).dump(indent);
      }, py::arg("indent") = 2,
         "The document `hsdp train --json` prints, byte for byte, for the data owner: the model file's fields and "
         "the statistics of the training and test records (accuracies, losses, counts), which \"not_private\" "
         "lists: the model file (save(), model_document()) never holds them.")
      .def("to_dict", [](const PyTrainResult& r) { return to_python(train::to_json(r.outcome, r.account_command())); },
           "The document of to_json() as Python objects.")
      .def("model_document", [](const PyTrainResult& r) {
        return to_python(train::model_document(r.outcome, r.account_command()));
      }, "The model file save() writes (`hsdp train --output`), as Python objects: public inputs and the certified "
         "weights only, no statistic of the records.")
      .def("text", [](const PyTrainResult& r) { return train::to_text(r.outcome, r.account_command(), r.written_to); },
           "The text `hsdp train` prints for the same request, byte for byte.")
      .def("predict", [](const PyTrainResult& r, const FeaturesArg& X) { return predict_labels(r.outcome.model_file(), X); },
           py::arg("X"),
           "Predicted labels for the rows of X in the training labels' own values (0/1 when y was 0/1, 'M'/'B' "
           "when y was text; class labels for softmax), scores for the squared loss: as `hsdp predict --output`.")
      .def("evaluate", [](const PyTrainResult& r, const FeaturesArg& X, const LabelsArg& y) {
        return evaluate_arrays(r.outcome.model_file(), X, y);
      }, py::arg("X"), py::arg("y"), "{'loss': mean data loss, 'accuracy': fraction correct or None}.")
      .def_property_readonly("model", [](const PyTrainResult& r) {
        return model_of(train::model_document(r.outcome, r.account_command()), "model");
      }, "The trained model as an hsdp.Model: what hsdp.load_model reads from the file save() writes.")
      .def("save", [](const PyTrainResult& r, const PathArg& output) {
        refuse_outputs_over_inputs({{output.path, "output"}}, r.outcome.data.input_files());
        train::write_json_atomically(output.path, train::model_document(r.outcome, r.account_command()));
      }, py::arg("output"),
         "Writes the model file, the document `hsdp train --output` writes (model_document(): no statistic of "
         "the records); replaced atomically.")
      .def("__repr__", [](const PyTrainResult& r) {
        return fmt::format("<hsdp.TrainResult {} parameters, released step {} of {}, epsilon={} under {}>",
                           r.result().model.parameters(), r.result().released_step, r.result().run.steps,
                           r.result().report && r.result().report->best
                               ? show(*r.result().report->analyses[*r.result().report->best].epsilon)
                               : std::string("inf"),
                           adjacency_words(r.result().run.adjacency, r.result().user_level.has_value()));
      });

  m.def("train", &train_like_cli, py::arg("X") = py::none(), py::arg("y") = py::none(), py::kw_only(),
        py::arg("data") = py::none(), py::arg("format") = "csv", py::arg("labels") = py::none(),
        py::arg("label_column") = py::none(), py::arg("classes") = std::vector<std::string>{},
        py::arg("test_data") = py::none(), py::arg("test_labels") = py::none(),
        py::arg("test_fraction") = py::none(), py::arg("split_seed") = 1,
        py::arg("model") = "logistic",
        py::arg("algorithm") = "noisy-sgd", py::arg("l2") = 0.0, py::arg("huber_smoothing") = 0.5,
        py::arg("label_bound") = 1.0, py::arg("bias") = true, py::arg("record_norm") = py::none(),
        py::arg("constraint") = "ball", py::arg("radius") = py::none(), py::arg("sampling") = py::none(),
        py::arg("batch_size") = py::none(), py::arg("steps") = py::none(), py::arg("epochs") = py::none(),
        py::arg("eta") = py::none(), py::arg("eta_schedule") = py::none(), py::arg("noise") = "gaussian",
        py::arg("sigma") = py::none(), py::arg("noise_std") = py::none(), py::arg("epsilon") = py::none(),
        py::arg("delta") = py::none(), py::arg("no_noise") = false, py::arg("release") = py::none(),
        py::arg("clip") = py::none(), py::arg("drop_last") = py::none(), py::arg("order_known") = py::none(),
        py::arg("adjacency") = py::none(), py::arg("seed") = py::none(), py::arg("positive") = py::none(),
        py::arg("feature_scale") = std::vector<double>{}, py::arg("feature_ranges") = py::none(),
        py::arg("users") = py::none(), py::arg("feature_storage") = "auto", py::arg("output") = py::none(),
        train_doc.c_str());

  m.def("audit_mia", &audit_mia_like_cli, py::arg("X"), py::arg("y"), py::kw_only(),
        py::arg("model") = "logistic", py::arg("algorithm") = "noisy-sgd", py::arg("l2") = 0.0,
        py::arg("huber_smoothing") = 0.5, py::arg("label_bound") = 1.0, py::arg("bias") = true,
        py::arg("record_norm") = py::none(), py::arg("constraint") = "ball", py::arg("radius") = py::none(),
        py::arg("sampling") = py::none(), py::arg("batch_size") = py::none(), py::arg("steps") = py::none(),
        py::arg("epochs") = py::none(), py::arg("eta") = py::none(), py::arg("eta_schedule") = py::none(),
        py::arg("noise") = "gaussian", py::arg("sigma") = py::none(), py::arg("noise_std") = py::none(),
        py::arg("epsilon") = py::none(), py::arg("delta") = 1e-5, py::arg("release") = py::none(), py::arg("clip") = py::none(),
        py::arg("drop_last") = py::none(), py::arg("order_known") = py::none(), py::arg("adjacency") = py::none(),
        py::arg("positive") = py::none(), py::arg("feature_scale") = std::vector<double>{},
        py::arg("feature_ranges") = py::none(), py::arg("trials") = 200, py::arg("confidence") = 0.95, py::arg("seed") = py::none(),
        py::arg("canary_index") = py::none(), py::arg("threads") = 0,
        R"doc(Membership-inference audit (`hsdp audit mia`) on numpy arrays: trains `trials` models
on (X, y) and `trials` on the same records with one replaced by a canary, scores each by the
canary's loss, and returns the command's JSON document as a dict: "empirical" (a lower bound
on epsilon at `delta`, holding with probability >= `confidence`), "certified" (the best
analysis of the same run), and the seeds of every training (reproducible with `seed`).)doc");

  m.def(
      "read_csv",
      [](const PathArg& path, const std::string& labels, std::optional<std::string> positive,
         std::optional<py::int_> label_column) {
        data::CsvOptions co;
        if (const auto column = unsigned_keyword("label_column", label_column))
          co.label_column = static_cast<std::size_t>(*column);
        data::Dataset ds = data::read_csv(path.path, co);
        const data::LabelKind kind = pick_choice<data::LabelKind>(
            "labels", labels,
            {{"plus-minus-one", data::LabelKind::plus_minus_one}, {"zero-one", data::LabelKind::zero_one},
             {"classes", data::LabelKind::classes}, {"real", data::LabelKind::real}});
        data::map_labels(ds, kind, positive);
        py::array_t<double> X({static_cast<py::ssize_t>(ds.n), static_cast<py::ssize_t>(ds.d)});
        std::copy(ds.x.begin(), ds.x.end(), X.mutable_data());  // read_csv: float64 storage
        py::array_t<double> y(static_cast<py::ssize_t>(ds.n));
        std::copy(ds.y.begin(), ds.y.end(), y.mutable_data());
        return py::make_tuple(X, y, ds.labels.describe());
      },
      py::arg("path"), py::arg("labels") = "plus-minus-one", py::arg("positive") = py::none(),
      py::arg("label_column") = py::none(),
      R"doc(Read a CSV file (plain or gzipped) as `hsdp train` reads it: returns (X, y, mapping) with
X an n x d float64 array, y the mapped labels (labels: plus-minus-one | zero-one | classes |
real) and a description of the mapping. Malformed files raise ValueError naming file:line:column.)doc");
}

}  // namespace hsdp::python
