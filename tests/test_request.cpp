// The training request (train/request.hpp): from a data file to the prepared records, the
// model and its document, one call for every front end and layout. Checked against the steps
// done by hand (read, labels, split, preparation, train, evaluate), records in memory (no
// split unless asked), a data-parallel layout of K threads (the model and evaluations of one
// process), public feature ranges (file format, the mapping onto [-1, 1], the model file and
// the records to score), and the errors, each naming its field.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "hsdp/data/readers.hpp"
#include "hsdp/errors.hpp"
#include "hsdp/train/prepare.hpp"
#include "hsdp/train/request.hpp"
#include "thread_world.hpp"

namespace {

using namespace hsdp;
using namespace hsdp::train;

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("hsdp_request_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// A file holding `text`, removed at the end of the scope.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text) : path(temp_path(name)) {
    std::ofstream(path) << text;
  }
  ~TempFile() { std::filesystem::remove(path); }
};

// n records, 3 positive features in [0, 10] and [100, 300] (different units, as documented
// data sets have) and a label B or M that depends on the first two.
std::string csv(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::string t = "a,b,c,label\n";
  for (std::size_t i = 0; i < n; ++i) {
    const double a = 10 * u(rng), b = 100 + 200 * u(rng), c = 10 * u(rng);
    t += fmt::format("{},{},{},{}\n", a, b, c, a / 10 + (b - 100) / 200 + 0.3 * u(rng) > 1.15 ? "M" : "B");
  }
  return t;
}

TrainRequest request_for(const std::string& path) {
  TrainRequest r;
  r.data.data = path;
  r.run.model = "logistic";
  r.run.batch_size = 16;
  r.run.epochs = 3;
  r.run.sampling = "cyclic";
  r.run.radius = 5;
  r.run.sigma = 0.5;
  r.seed = 11;
  return r;
}

TEST(Request, FileRequestIsTheStepsDoneByHand) {
  const TempFile f("by_hand.csv", csv(100, 1));
  TrainRequest request = request_for(f.path);
  request.data.feature_scale = {0.1, 0.005, 0.1};
  const TrainOutcome out = train_request(request);

  TrainConfig c = request.resolve();
  data::Dataset all = data::read({f.path, "csv"});
  const data::LabelKind kind = map_labels_for(all, c, std::nullopt);
  auto [train_set, test_set] = data::train_test_split(all, 0.2, 1);
  const Preparation prep = prepare_records(train_set, c, request.data.feature_scale);
  prepare_like(test_set, prep);
  const TrainResult by_hand = hsdp::train::train(train_set, c);

  EXPECT_EQ(out.result.model.theta, by_hand.model.theta);
  EXPECT_EQ(out.prepared.label_kind, kind);
  EXPECT_EQ(out.prepared.preparation.description, prep.description);
  EXPECT_EQ(out.prepared.split, "80 train / 20 test records (split fraction 0.2, split seed 1)");
  EXPECT_EQ(out.train_evaluation.loss, evaluate(by_hand.model, train_set).loss);
  ASSERT_TRUE(out.test_evaluation);
  EXPECT_EQ(*out.test_evaluation->accuracy, *evaluate(by_hand.model, test_set).accuracy);
  EXPECT_TRUE(out.lead);

  const nlohmann::json doc = to_json(out, "hsdp account --n 80 --json");
  EXPECT_EQ(doc["configuration"]["data"], f.path);
  EXPECT_EQ(doc["configuration"]["split"], out.prepared.split);
  EXPECT_EQ(doc["test_accuracy"].get<double>(), *out.test_evaluation->accuracy);
  EXPECT_EQ(doc["account_command"], "hsdp account --n 80 --json");
  EXPECT_EQ(doc["model"]["feature_scale"].get<std::vector<double>>(), prep.feature_scale);
  EXPECT_FALSE(doc["model"].contains("feature_center"));
  const std::string text = to_text(out, "hsdp account --n 80 --json", "m.json");
  EXPECT_NE(text.find("split: 80 train / 20 test records"), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("test accuracy {:.4f}", *out.test_evaluation->accuracy)), std::string::npos);
  EXPECT_NE(text.find("\nsame report: hsdp account --n 80 --json\nmodel written to m.json\n"), std::string::npos);
}

TEST(Request, RecordsInMemoryAreNotSplitUnlessAsked) {
  const TempFile f("memory.csv", csv(60, 2));
  TrainRequest request = request_for("X");
  request.data.records = data::read({f.path, "csv"});
  const TrainOutcome all = train_request(request);
  EXPECT_EQ(all.prepared.split, "60 train records (no test records)");
  EXPECT_EQ(all.result.run.n, 60);
  EXPECT_FALSE(all.test_evaluation);
  const nlohmann::json doc = to_json(all, "");
  EXPECT_TRUE(doc.contains("train_accuracy"));
  EXPECT_FALSE(doc.contains("test_accuracy"));
  EXPECT_FALSE(doc.contains("test_loss"));
  EXPECT_NE(to_text(all, "").find(fmt::format("train accuracy {:.4f}  (train loss", *all.train_evaluation.accuracy)),
            std::string::npos);

  // Asked: the split of the same records read from the file.
  request.data.test_fraction = 0.25;
  const TrainOutcome split = train_request(request);
  TrainRequest from_file = request_for(f.path);
  from_file.data.test_fraction = 0.25;
  const TrainOutcome file = train_request(from_file);
  EXPECT_EQ(split.prepared.split, "45 train / 15 test records (split fraction 0.25, split seed 1)");
  EXPECT_EQ(split.result.model.theta, file.result.model.theta);
  EXPECT_EQ(split.test_evaluation->loss, file.test_evaluation->loss);
}

TEST(Request, DataParallelLayoutGivesTheModelOfOneProcess) {
  const TempFile f("parallel.csv", csv(90, 3));
  const TempFile test("parallel_test.csv", csv(30, 4));
  for (const bool test_file : {false, true}) {
    SCOPED_TRACE(test_file);
    TrainRequest request = request_for(f.path);
    if (test_file) request.data.test_data = test.path;
    const TrainOutcome one = train_request(request);
    for (int K : {2, 3}) {
      SCOPED_TRACE(K);
      hsdp::testing::ThreadWorld world(K);
      const auto outs = world.run_layout<TrainOutcome>([&](const Layout& l) { return train_request(request, l); });
      for (int r = 0; r < K; ++r) {
        const auto& o = outs[static_cast<std::size_t>(r)];
        ASSERT_TRUE(o);
        EXPECT_EQ(o->lead, r == 0);
        EXPECT_EQ(o->prepared.split, one.prepared.split);
        EXPECT_EQ(o->prepared.train.n(), one.prepared.train.n());
        // The same batches and noise; the gradient sums added in another order.
        ASSERT_EQ(o->result.model.theta.size(), one.result.model.theta.size());
        for (std::size_t j = 0; j < one.result.model.theta.size(); ++j)
          EXPECT_NEAR(o->result.model.theta[j], one.result.model.theta[j], 1e-12);
        EXPECT_EQ(*o->train_evaluation.accuracy, *one.train_evaluation.accuracy);
        EXPECT_EQ(*o->test_evaluation->accuracy, *one.test_evaluation->accuracy);
        EXPECT_NEAR(o->test_evaluation->loss, one.test_evaluation->loss, 1e-12);
      }
    }
  }
}

TEST(Request, ErrorsNameTheirFields) {
  const TempFile f("errors.csv", csv(40, 5));
  auto field_of = [](TrainRequest r, const Layout& l = {}) -> std::string {
    try {
      train_request(std::move(r), l);
    } catch (const InvalidArgument& e) {
      return e.field();
    }
    return "(no error)";
  };
  TrainRequest r = request_for(f.path);
  r.run.sigma.reset();
  EXPECT_EQ(field_of(r), "epsilon");  // no noise stated: before any data are read
  r = request_for(f.path);
  r.data.test_fraction = 1.0;
  EXPECT_EQ(field_of(r), "test_fraction");
  r = request_for(f.path);
  r.data.feature_storage = "int4";
  EXPECT_EQ(field_of(r), "feature_storage");
  r = request_for(f.path);
  r.data.test_data = "/nonexistent/test.csv";
  EXPECT_NE(field_of(r), "(no error)");
  const TempFile wide("wide.csv", "1,2,3,4,B\n5,6,7,8,M\n");
  r.data.test_data = wide.path;
  EXPECT_EQ(field_of(r), "test_data");  // 4 features, not 3
  r = request_for(f.path);
  r.data.user_ids = std::vector<std::string>(40, "u");
  EXPECT_EQ(field_of(r), "users");  // users are federated's
  hsdp::testing::ThreadWorld world(2);
  std::vector<std::string> errors;
  world.run_layout<int>(
      [&](const Layout& l) {
        train_request(r, l);
        return 0;
      },
      &errors);
  for (const auto& e : errors) EXPECT_EQ(e.rfind("users = 40 ids: must be absent", 0), 0u) << e;
}

TEST(FeatureRanges, FileFormat) {
  const TempFile f("ranges.txt", "# documented\n0 16\n\n-1.5, 2.5  # comma and comment\n");
  const auto ranges = data::read_feature_ranges(f.path, opt("feature_ranges"));
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].min, 0);
  EXPECT_EQ(ranges[0].max, 16);
  EXPECT_EQ(ranges[1].min, -1.5);
  EXPECT_EQ(ranges[1].max, 2.5);
  for (const auto& [text, where] : std::vector<std::pair<std::string, std::string>>{
           {"0 1\n2\n", ":2: 1 values"},
           {"0 1\n3 2\n", ":2: min 3 max 2"},
           {"0 x\n", ":1: 'x' (not a number)"},
           {"# nothing\n", "no ranges"}}) {
    const TempFile bad("bad_ranges.txt", text);
    try {
      data::read_feature_ranges(bad.path, opt("feature_ranges"));
      ADD_FAILURE() << text;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.field(), "feature_ranges");
      EXPECT_NE(std::string(e.what()).find(where), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(data::read_feature_ranges("/nonexistent/ranges.txt", opt("feature_ranges")), InvalidArgument);
}

TEST(FeatureRanges, MappedOntoMinusOneToOneAndKeptForScoring) {
  // The features 2, 150, 10 in ranges [0, 10], [100, 300], [0, 10]: -0.6, -0.5, 1; record norm
  // 10 leaves the row as it is.
  const TempFile f("mapped.csv", "2,150,10,B\n4,300,0,M\n8,100,5,M\n6,200,2,B\n5,250,7,M\n");
  const TempFile r("mapped_ranges.txt", "0 10\n100 300\n0 10\n");
  TrainRequest request = request_for(f.path);
  request.run.record_norm = 10;
  request.run.batch_size = 2;
  request.data.test_fraction = 0.4;
  request.data.feature_ranges = r.path;
  const TrainOutcome out = train_request(request);
  const Preparation& p = out.prepared.preparation;
  EXPECT_EQ(p.feature_center, (std::vector<double>{5, 200, 5}));
  EXPECT_EQ(p.feature_scale, (std::vector<double>{0.2, 0.01, 0.2}));
  EXPECT_NE(p.description.find("[0, 10], [100, 300], [0, 10]] onto [-1, 1]"), std::string::npos) << p.description;
  EXPECT_EQ(out.prepared.train.data.storage, data::FeatureStorage::float64);
  data::Dataset all = data::read({f.path, "csv"});
  std::vector<double> row(3);
  const data::Dataset& train_set = out.prepared.train.data;
  for (std::size_t i = 0; i < train_set.n; ++i) {
    const std::size_t line = train_set.origin[i];  // 1-based line = record
    train_set.effective_row(i, row.data());
    const double* x = all.row(line - 1);
    EXPECT_DOUBLE_EQ(row[0], (x[0] - 5) * 0.2);
    EXPECT_DOUBLE_EQ(row[1], (x[1] - 200) * 0.01);
    EXPECT_DOUBLE_EQ(row[2], (x[2] - 5) * 0.2);
  }
  // The model file keeps the constants; the records to score are prepared the same way.
  const ModelFile mf = model_from_json(to_json(out, ""), "m.json");
  EXPECT_EQ(mf.feature_center, p.feature_center);
  EXPECT_EQ(mf.feature_scale, p.feature_scale);
  DataSpec score;
  score.data = f.path;
  const data::Dataset scored = records_for(mf, score);
  for (std::size_t i = 0; i < scored.n; ++i) EXPECT_DOUBLE_EQ(scored.row(i)[1], (all.row(i)[1] - 200) * 0.01);
  // One line for every feature.
  const TempFile one("one_range.txt", "0 300\n");
  request.data.feature_ranges = one.path;
  EXPECT_EQ(train_request(request).prepared.preparation.feature_center, (std::vector<double>(3, 150)));
  // The same constants in memory.
  request.data.feature_ranges.reset();
  request.data.feature_range_values = {{0, 10}, {100, 300}, {0, 10}};
  EXPECT_EQ(train_request(request).result.model.theta, out.result.model.theta);
}

TEST(FeatureRanges, Errors) {
  const TempFile f("range_errors.csv", csv(30, 6));
  const TempFile two("two_ranges.txt", "0 1\n0 1\n");
  auto message = [](TrainRequest r) -> std::string {
    try {
      train_request(std::move(r));
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "(no error)";
  };
  TrainRequest r = request_for(f.path);
  r.data.feature_ranges = two.path;
  EXPECT_NE(message(r).find("one range, or one per feature (d = 3)"), std::string::npos) << message(r);
  r.data.feature_scale = {1.0};
  EXPECT_NE(message(r).find("absent when"), std::string::npos) << message(r);
  r.data.feature_scale.clear();
  r.data.feature_storage = "float32";  // centring needs float64
  EXPECT_NE(message(r).find("feature_storage = float32"), std::string::npos) << message(r);
}

// Scoring records without labels (`hsdp predict --no-labels`, Model.predict_file): the same
// prepared records and predictions as the labelled file, the outputs as the training labels'
// text; a file whose width says it has no labels is told so.
TEST(Score, UnlabeledFileGivesTheLabelledFilesPredictions) {
  const std::string text = csv(60, 3);
  const TempFile f("score.csv", text);
  TrainRequest request = request_for(f.path);
  request.data.feature_scale = {0.1, 0.005, 0.1};
  const TrainOutcome out = train_request(request);
  const ModelFile mf = out.model_file();
  // The same records without the label column (nor the header's "label").
  std::string features;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\n', at);
    const std::string line = text.substr(at, end - at);
    features += line.substr(0, line.rfind(',')) + "\n";
    at = end + 1;
  }
  const TempFile g("score_features.csv", features);
  DataSpec labelled;
  labelled.data = f.path;
  DataSpec unlabelled;
  unlabelled.data = g.path;
  unlabelled.no_labels = true;
  const data::Dataset a = records_for(mf, labelled), b = records_for(mf, unlabelled);
  ASSERT_EQ(a.n, 60u);
  ASSERT_EQ(b.n, 60u);
  EXPECT_TRUE(b.raw_labels.empty());
  EXPECT_TRUE(b.y.empty());
  EXPECT_EQ(b.x, a.x);  // prepared alike (feature scale, record norm)
  const std::vector<double> pa = predict(mf.model, a), pb = predict(mf.model, b);
  EXPECT_EQ(pa, pb);
  // Outputs are -1/+1, shown as the raw labels B/M (positive: the larger, M).
  std::size_t correct = 0;
  for (std::size_t i = 0; i < a.n; ++i) {
    const double p = pa[i];
    ASSERT_TRUE(p == 1.0 || p == -1.0);
    EXPECT_EQ(output_label(mf, p), p > 0 ? "M" : "B");
    correct += output_label(mf, p) == a.raw_labels[i] ? 1 : 0;
  }
  EXPECT_EQ(static_cast<double>(correct) / 60.0, *evaluate(mf.model, a).accuracy);
  EXPECT_THROW(output_label(mf, 0.5), std::logic_error);
  // A real-valued model shows its score.
  ModelFile real = mf;
  real.label_kind = "real";
  EXPECT_EQ(output_label(real, 0.25), "0.25");

  // Without no_labels, the file of 3 columns for a 3-feature model seems to have no labels.
  DataSpec missing;
  missing.data = g.path;
  try {
    records_for(mf, missing);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.field(), "data");
    EXPECT_NE(std::string(e.what()).find("it has 3 columns, as many as the model has features: it seems to have no "
                                         "label column; no_labels scores a file without labels"),
              std::string::npos)
        << e.what();
  }
  // With no_labels, a file with a numeric label column has one column too many (a text label
  // column is named by the reader: "feature 3: 'B' is not a number"); classes need labels.
  std::string numeric;
  for (std::size_t at = 0; at < features.size();) {
    const std::size_t end = features.find('\n', at);
    numeric += features.substr(at, end - at) + (at == 0 ? ",label\n" : ",1\n");
    at = end + 1;
  }
  const TempFile h("score_numeric.csv", numeric);
  try {
    records_for(mf, DataSpec{.data = h.path, .no_labels = true});
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("it has 4 columns, one more than the model has features"), std::string::npos)
        << e.what();
  }
  DataSpec classes = unlabelled;
  classes.classes = {"M"};
  EXPECT_THROW(records_for(mf, classes), InvalidArgument);
  // Training needs labels.
  TrainRequest unlabelled_training = request;
  unlabelled_training.data.no_labels = true;
  EXPECT_THROW(train_request(unlabelled_training), InvalidArgument);
}

TEST(Score, UnlabeledLibsvmAndIdx) {
  // A 2-feature model on LIBSVM records, then its lines without the labels.
  const TempFile f("score.svm", "+1 1:1 2:0.5\n-1 1:-1\n+1 2:1\n-1 1:-0.5 2:-1\n+1 1:0.8 2:0.9\n-1 1:-0.7 2:0.1\n");
  const TempFile g("score_nolabels.svm", "1:1 2:0.5\n1:-1\n2:1\n1:-0.5 2:-1\n1:0.8 2:0.9\n1:-0.7 2:0.1\n");
  TrainRequest request = request_for(f.path);
  request.data.format = "libsvm";
  request.data.test_fraction = 0.5;
  request.run.batch_size = 1;
  const ModelFile mf = train_request(request).model_file();
  DataSpec with{.data = f.path, .format = "libsvm"};
  DataSpec without{.data = g.path, .format = "libsvm", .no_labels = true};
  EXPECT_EQ(predict(mf.model, records_for(mf, with)), predict(mf.model, records_for(mf, without)));
  with.data = g.path;
  try {
    records_for(mf, with);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), g.path + ":1:1: expected a label before the features, found '1:1' (the file "
                                              "seems to have no labels: no_labels scores such a file)");
  }
  // IDX images without their labels file: refused unless no_labels says so.
  DataSpec idx{.data = f.path, .format = "idx"};
  try {
    records_for(mf, idx);
    ADD_FAILURE() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.field(), "labels");
    EXPECT_NE(std::string(e.what()).find("or no_labels to score images without labels"), std::string::npos) << e.what();
  }
}

}  // namespace
