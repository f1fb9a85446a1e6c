// hsdp.Model and hsdp.load_model: the model files of `hsdp train --output` in Python,
// read and written by the library's model_io (read_json_file, model_from_json with its
// version-1 schema check, write_json_atomically), scored by the library's request for
// `hsdp predict` (records_for, predict, output_label). Also the records of numpy arrays
// that hsdp.train and a model's predict/evaluate read (dataset_from).
#include "model.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "call.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/provenance.hpp"
#include "hsdp/train/request.hpp"

namespace hsdp::python {

data::Dataset dataset_from(const Array& X, const LabelsArg* y, const char* xname, const char* yname) {
  if (X.ndim() != 2)
    fail(xname, fmt::format("an array with {} dimensions", X.ndim()), "a 2-D array (n records x d features)");
  if (y && y->ndim() != 1) fail(yname, fmt::format("an array with {} dimensions", y->ndim()), "a 1-D array of n labels");
  const auto n = static_cast<std::size_t>(X.shape(0));
  const auto d = static_cast<std::size_t>(X.shape(1));
  if (y && static_cast<std::size_t>(y->size()) != n)
    fail(yname, fmt::format("{} labels", y->size()), fmt::format("one label per row of {} ({} rows)", xname, n));
  if (n == 0) fail(xname, "(no rows)", "at least one record");
  if (d == 0) fail(xname, "(no columns)", "at least one feature");
  data::Dataset ds;
  ds.n = n;
  ds.d = d;
  ds.source = xname;
  ds.labels_source = yname;  // label messages name y[i]
  ds.origin_kind = data::Dataset::Origin::row;
  ds.x.resize(n * d);
  const auto xv = X.unchecked<2>();
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < d; ++j) {
      const double v = xv(static_cast<py::ssize_t>(i), static_cast<py::ssize_t>(j));
      if (!std::isfinite(v))
        fail(fmt::format("{}[{}, {}]", xname, i, j), v, "finite (every feature must be a finite number)");
      ds.x[i * d + j] = v;
    }
  ds.origin.reserve(n);
  for (std::size_t i = 0; i < n; ++i) ds.origin.push_back(i);
  if (!y) return ds;
  ds.raw_labels.reserve(n);
  if (y->texts) {
    for (std::size_t i = 0; i < n; ++i) {
      const std::string& text = (*y->texts)[i];
      // A file's label is never empty either (the readers refuse an empty label field).
      if (text.empty()) fail(fmt::format("{}[{}]", yname, i), "\"\"", "a non-empty label");
      ds.raw_labels.push_back(text);
    }
    return ds;
  }
  const auto yv = y->numbers.unchecked<1>();
  for (std::size_t i = 0; i < n; ++i) {
    const double v = yv(static_cast<py::ssize_t>(i));
    if (!std::isfinite(v)) fail(fmt::format("{}[{}]", yname, i), v, "finite");
    ds.raw_labels.push_back(show(v));
  }
  return ds;
}

namespace {

// The type the training labels come back as: integers when every raw label is one ("0",
// "-1", "+1"), numbers when every one is a finite number ("0.5"), text otherwise ("M").
enum class LabelType { integer, number, text };

bool integer_text(const std::string& s, std::int64_t& out) {
  const char* begin = s.data() + (!s.empty() && s[0] == '+' ? 1 : 0);
  const char* end = s.data() + s.size();
  const auto [p, ec] = std::from_chars(begin, end, out);
  return begin != end && ec == std::errc() && p == end;
}
bool number_text(const std::string& s, double& out) {
  const auto v = read_real(s);  // not strtod: locale.setlocale must not turn "0.5" into text
  if (v) out = *v;
  return v.has_value();
}

LabelType label_type(const std::vector<std::string>& raw) {
  LabelType t = LabelType::integer;
  for (const std::string& s : raw) {
    std::int64_t i = 0;
    double v = 0;
    if (integer_text(s, i)) continue;
    if (!number_text(s, v)) return LabelType::text;
    t = LabelType::number;
  }
  return t;
}

py::object typed_label(const std::string& text, LabelType t) {
  std::int64_t i = 0;
  double v = 0;
  if (t == LabelType::integer && integer_text(text, i)) return py::int_(i);
  if (t == LabelType::number && number_text(text, v)) return py::float_(v);
  return py::str(text);
}

// Model outputs as an array of the training labels' own values (train::output_label: the
// translation `hsdp predict --output` writes).
py::array labels_of(const train::ModelFile& mf, const std::vector<double>& outputs) {
  const auto n = static_cast<py::ssize_t>(outputs.size());
  if (mf.label_kind == "real") {
    py::array_t<double> out(n);
    std::copy(outputs.begin(), outputs.end(), out.mutable_data());
    return out;
  }
  const LabelType t = label_type(mf.labels.raw);
  if (t == LabelType::text) {
    py::list texts;
    for (const double o : outputs) texts.append(py::str(train::output_label(mf, o)));
    return py::module_::import("numpy").attr("array")(texts, py::arg("dtype") = "str");
  }
  if (t == LabelType::integer) {
    py::array_t<std::int64_t> out(n);
    auto o = out.mutable_unchecked<1>();
    for (py::ssize_t i = 0; i < n; ++i) integer_text(train::output_label(mf, outputs[i]), o(i));
    return out;
  }
  py::array_t<double> out(n);
  auto o = out.mutable_unchecked<1>();
  for (py::ssize_t i = 0; i < n; ++i) number_text(train::output_label(mf, outputs[i]), o(i));
  return out;
}

// The records of a data file to score, as `hsdp predict` reads them (the file's flags as
// keywords), read without the GIL.
data::Dataset file_records(const train::ModelFile& mf, const PathArg& data, const std::string& format,
                           const std::optional<PathArg>& labels, std::optional<py::int_> label_column,
                           std::vector<std::string> classes, bool no_labels, const std::string& feature_storage) {
  train::DataSpec spec;
  spec.data = data.path;
  if (given("format")) spec.format = format;  // stated only when typed (the rule: field_use.hpp)
  spec.labels = path_of(labels);
  if (const auto column = unsigned_keyword("label_column", label_column))
    spec.label_column = static_cast<std::size_t>(*column);
  spec.classes = std::move(classes);
  spec.no_labels = no_labels;
  spec.feature_storage = feature_storage;
  py::gil_scoped_release release_gil;
  return train::records_for(mf, std::move(spec));
}

py::object optional_array(const std::vector<double>& v) {
  if (v.empty()) return py::none();
  return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
}

}  // namespace

PyModel model_of(nlohmann::json document, const std::string& name) {
  PyModel m;
  m.file = train::model_from_json(document, name);
  // What is saved is the model this object holds (for a file written by hsdp train, the
  // same object, byte for byte), and only what may be released: the statistics of the records
  // an older model file (or a `--json` document) holds are dropped (train/provenance.hpp).
  document["model"] = train::to_json(m.file);
  m.document = train::release_document(document, /*strict=*/false);
  return m;
}

py::array predict_labels(const train::ModelFile& mf, const FeaturesArg& X) {
  train::DataSpec spec;
  spec.data = "X";
  spec.records = dataset_from(X.array, nullptr, "X", "y");
  spec.no_labels = true;
  return labels_of(mf, train::predict(mf.model, train::records_for(mf, std::move(spec))));
}

py::dict evaluation(const train::Evaluation& e) {
  py::dict d;
  d["loss"] = e.loss;
  d["accuracy"] = optional_float(e.accuracy);
  return d;
}

py::dict evaluate_arrays(const train::ModelFile& mf, const FeaturesArg& X, const LabelsArg& y) {
  train::DataSpec spec;
  spec.data = "X";
  spec.records = dataset_from(X.array, &y, "X", "y");
  return evaluation(train::evaluate(mf.model, train::records_for(mf, std::move(spec))));
}

py::array_t<double> theta_array(const train::LinearModel& m) {
  py::array_t<double> out({static_cast<py::ssize_t>(m.outputs), static_cast<py::ssize_t>(m.features())});
  std::copy(m.theta.begin(), m.theta.end(), out.mutable_data());
  return out;
}

py::array_t<double> weights_array(const train::LinearModel& m) {
  py::array_t<double> w({static_cast<py::ssize_t>(m.outputs), static_cast<py::ssize_t>(m.d)});
  auto wv = w.mutable_unchecked<2>();
  for (std::size_t k = 0; k < m.outputs; ++k)
    for (std::size_t j = 0; j < m.d; ++j)
      wv(static_cast<py::ssize_t>(k), static_cast<py::ssize_t>(j)) = m.theta[k * m.features() + j];
  return w;
}

py::object intercept_of(const train::LinearModel& m) {
  if (!m.bias) return py::none();
  std::vector<double> b;
  for (std::size_t k = 0; k < m.outputs; ++k) b.push_back(m.theta[k * m.features() + m.d]);
  return py::cast(b);
}

void bind_model(py::module_& m) {
  py::class_<PyModel>(m, "Model",
                      "A trained linear model as a model file holds it: hsdp.load_model(path) reads one written "
                      "by `hsdp train --output` (or by Model.save / TrainResult.save), TrainResult.model is the "
                      "one of a training result. It predicts and evaluates as `hsdp predict` does (the same "
                      "feature constants, record norm and label mapping) and saves the same document.")
      .def_property_readonly("loss", [](const PyModel& p) { return std::string(train::to_string(p.file.model.loss.kind)); },
                             "The loss the model was trained with: logistic, huber, squared or softmax.")
      .def_property_readonly("features", [](const PyModel& p) { return p.file.model.d; }, "d, the features of a record.")
      .def_property_readonly("bias", [](const PyModel& p) { return p.file.model.bias; }, "True when the model has an intercept.")
      .def_property_readonly("outputs", [](const PyModel& p) { return p.file.model.outputs; },
                             "Scores per record: 1, or one per class (softmax).")
      .def_property_readonly("theta", [](const PyModel& p) { return theta_array(p.file.model); },
                             "Weights, outputs x (d + bias): the last column is the intercept when bias.")
      .def_property_readonly("weights", [](const PyModel& p) { return weights_array(p.file.model); },
                             "The weights without the intercept, outputs x d.")
      .def_property_readonly("intercept", [](const PyModel& p) { return intercept_of(p.file.model); },
                             "The intercept of each output (None without bias).")
      .def_property_readonly("feature_center", [](const PyModel& p) { return optional_array(p.file.feature_center); },
                             "The public per-feature constants the features are centred on first (None: none).")
      .def_property_readonly("feature_scale", [](const PyModel& p) { return optional_array(p.file.feature_scale); },
                             "The public per-feature multipliers applied next (None: none).")
      .def_property_readonly("record_norm", [](const PyModel& p) { return p.file.record_norm; },
                             "Records are scaled to norm at most record_norm before scoring, as in training.")
      .def_property_readonly("l2", [](const PyModel& p) { return p.file.model.loss.l2; }, "The l2 regularisation of training.")
      .def_property_readonly("label_kind", [](const PyModel& p) { return p.file.label_kind; },
                             "How labels were mapped: plus-minus-one, classes or real.")
      .def_property_readonly("labels", [](const PyModel& p) { return p.file.labels.describe(); },
                             "The label mapping as text (\"B -> -1, M -> +1\"; empty for real labels).")
      .def_property_readonly("label_mapping", [](const PyModel& p) {
        py::dict d;
        const LabelType t = label_type(p.file.labels.raw);
        for (std::size_t k = 0; k < p.file.labels.raw.size(); ++k)
          d[typed_label(p.file.labels.raw[k], t)] = p.file.labels.mapped[k];
        return d;
      }, "The training labels, in their own values, -> the number the model uses ({'B': -1.0, 'M': 1.0}).")
      .def("predict", [](const PyModel& p, const FeaturesArg& X) { return predict_labels(p.file, X); }, py::arg("X"),
           "Predicted labels for the rows of X (n x d) in the training labels' own values (0/1, -1/+1, class "
           "labels, or str such as 'M'/'B'); scores for the squared loss.")
      .def("evaluate", [](const PyModel& p, const FeaturesArg& X, const LabelsArg& y) { return evaluate_arrays(p.file, X, y); },
           py::arg("X"), py::arg("y"),
           "{'loss': mean data loss, 'accuracy': fraction correct or None} on (X, y), y in the training labels' values.")
      .def("predict_file",
           [](const PyModel& p, const PathArg& data, const std::string& format, std::optional<PathArg> labels,
              std::optional<py::int_> label_column, std::vector<std::string> classes, bool no_labels,
              const std::string& feature_storage) {
             const data::Dataset records = file_records(p.file, data, format, labels, label_column,
                                                        std::move(classes), no_labels, feature_storage);
             return labels_of(p.file, train::predict(p.file.model, records));
           },
           py::arg("data"), py::kw_only(), py::arg("format") = "csv", py::arg("labels") = py::none(),
           py::arg("label_column") = py::none(), py::arg("classes") = std::vector<std::string>{},
           py::arg("no_labels") = false, py::arg("feature_storage") = "auto",
           "Predicted labels for the records of a data file, read as `hsdp predict --data` reads it (format: csv | "
           "libsvm | idx; labels: the IDX labels file; label_column, classes). no_labels=True: the file has no "
           "labels (CSV: every column is a feature; LIBSVM: lines of index:value; IDX: images without a labels "
           "file), as `hsdp predict --no-labels`.")
      .def("evaluate_file",
           [](const PyModel& p, const PathArg& data, const std::string& format, std::optional<PathArg> labels,
              std::optional<py::int_> label_column, std::vector<std::string> classes, const std::string& feature_storage) {
             const data::Dataset records = file_records(p.file, data, format, labels, label_column,
                                                        std::move(classes), false, feature_storage);
             return evaluation(train::evaluate(p.file.model, records));
           },
           py::arg("data"), py::kw_only(), py::arg("format") = "csv", py::arg("labels") = py::none(),
           py::arg("label_column") = py::none(), py::arg("classes") = std::vector<std::string>{},
           py::arg("feature_storage") = "auto",
           "{'loss', 'accuracy'} on a labelled data file, as `hsdp predict --data` reports them.")
      .def("save", [](const PyModel& p, const PathArg& output) { train::write_json_atomically(output.path, p.document); },
           py::arg("output"),
           "Writes the model file (the document `hsdp train --output` writes; a file read by load_model is written "
           "back byte for byte). The file is replaced atomically: a failure leaves no half-written file.")
      .def("to_json", [](const PyModel& p, int indent) { return p.document.dump(indent); }, py::arg("indent") = 2,
           "The model file's document as JSON text.")
      .def("to_dict", [](const PyModel& p) { return to_python(p.document); }, "The model file's document as Python objects.")
      .def("model_json", [](const PyModel& p, int indent) { return p.document["model"].dump(indent); },
           py::arg("indent") = 2, "The \"model\" object of the model file.")
      .def("__repr__", [](const PyModel& p) {
        return fmt::format("<hsdp.Model {} loss, {} features, {} parameters{}>", train::to_string(p.file.model.loss.kind),
                           p.file.model.d, p.file.model.parameters(),
                           p.file.labels.raw.empty() ? std::string() : ", labels " + p.file.labels.describe());
      });

  m.def(
      "load_model",
      [](const PathArg& model_file) {
        nlohmann::json document = train::read_json_file(model_file.path);
        if (const auto warning = train::release_warning(document, model_file.path))
          if (PyErr_WarnEx(PyExc_UserWarning, warning->c_str(), 1) < 0) throw py::error_already_set();
        return model_of(std::move(document), model_file.path);
      },
      py::arg("model_file"),
      R"doc(Read a model file written by `hsdp train --output` (or Model.save, TrainResult.save) as
`hsdp predict --model-file` reads it: the file's schema is checked (version 1; every field's type
and range), errors name the file and the field. Returns an hsdp.Model.)doc");
}

}  // namespace hsdp::python
