// `hsdp train` and `hsdp predict` end to end on scikit-learn's copies of breast_cancer and
// iris (installed by scripts/install-deps.sh as python3-sklearn).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cli_runner.hpp"
#include "hsdp/train/provenance.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/train/model_io.hpp"

namespace {

using hsdp::testing::run_cli;
using nlohmann::json;

const std::string kData = "/usr/lib/python3/dist-packages/sklearn/datasets/data/";
const std::string kBreastCancer = kData + "breast_cancer.csv";

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "hsdp_train_" + std::to_string(::getpid()) + "_" + name;
}

json parse(const std::string& text) { return json::parse(text); }

TEST(TrainCli, TargetReportEqualsAccountAndModelFile) {
  ASSERT_TRUE(std::filesystem::exists(kBreastCancer)) << "run scripts/install-deps.sh (python3-sklearn)";
  const std::string model = temp_path("model.json");
  std::filesystem::remove(model);
  const auto r = run_cli("train --data " + kBreastCancer +
                         " --format csv --model logistic --algorithm noisy-gd --steps 200 --radius 100"
                         " --epsilon 5 --delta 1e-5 --seed 3 --json --output " + model);
  ASSERT_EQ(r.status, 0) << r.err;
  // No progress bar when stderr is not a terminal; only the feature-scale hint for these raw
  // features (printed for the data owner, never in the document).
  EXPECT_EQ(r.err.find("progress"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.rfind("warning: for the data owner", 0), 0u) << r.err;
  const json out = parse(r.out);
  EXPECT_GT(out["train_accuracy"].get<double>(), 0.6);
  EXPECT_GT(out["test_accuracy"].get<double>(), 0.6);
  EXPECT_EQ(out["randomness"], "seeded: for experiments, not for release (ChaCha20 keyed from the seed)");
  const json& report = out["report"];
  EXPECT_LE(report["best"]["epsilon"].get<double>(), 5.0);
  EXPECT_EQ(report["query"]["delta"].get<double>(), 1e-5);
  EXPECT_EQ(report["run"]["n"], 455);
  EXPECT_EQ(report["run"]["steps"], 200);
  EXPECT_EQ(report["run"]["sampling"], "full");
  // The model file holds the same document without the records' statistics, which --json
  // lists for the data owner (train/provenance.hpp).
  std::ifstream in(model);
  ASSERT_TRUE(in.good());
  const json file = json::parse(in);
  EXPECT_EQ(file, hsdp::train::release_document(out));
  EXPECT_FALSE(file.contains("train_accuracy"));
  EXPECT_FALSE(file.contains("not_private"));
  EXPECT_EQ(out["not_private"]["fields"].size(), 5u);
  // `hsdp account` on the printed parameters gives the same report, key for key.
  std::string cmd = out["account_command"].get<std::string>();
  ASSERT_EQ(cmd.rfind("hsdp account ", 0), 0u);
  const auto a = run_cli(cmd.substr(5));
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(parse(a.out), report);
}

// A step-size schedule (online GD, eta/sqrt(t)) and a random stop reproduce too.
TEST(TrainCli, OnlineScheduleReportEqualsAccount) {
  ASSERT_TRUE(std::filesystem::exists(kBreastCancer));
  const auto r = run_cli("train --data " + kBreastCancer + " --model logistic --algorithm online --eta 1 --sigma 1 --seed 1 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = parse(r.out);
  EXPECT_EQ(out["report"]["run"]["release"], "random-stop");
  EXPECT_EQ(out["report"]["run"]["steps"], 455);
  EXPECT_EQ(out["report"]["run"]["eta"].size(), 455u);  // the schedule, step by step
  EXPECT_DOUBLE_EQ(out["report"]["run"]["eta"][3].get<double>(), 0.5);  // 1/sqrt(4)
  const std::string cmd = out["account_command"].get<std::string>();
  EXPECT_NE(cmd.find("--eta-schedule inv-sqrt"), std::string::npos);
  const auto a = run_cli(cmd.substr(5));
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(parse(a.out), out["report"]);
}

TEST(TrainCli, PredictScoresTheSavedModelLikeTheLibrary) {
  ASSERT_TRUE(std::filesystem::exists(kBreastCancer));
  const std::string model = temp_path("predict_model.json"), preds = temp_path("preds.csv");
  auto r = run_cli("train --data " + kBreastCancer +
                   " --model logistic --algorithm noisy-sgd --sampling shuffle --batch-size 32 --epochs 4 --feature-scale 0.01"
                   " --sigma 0.5 --seed 5 --output " + model);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("train accuracy"), std::string::npos);
  EXPECT_NE(r.out.find("privacy report of the run performed (noise: seeded: for experiments, not for release"),
            std::string::npos);
  r = run_cli("predict --model-file " + model + " --data " + kBreastCancer + " --json --output " + preds);
  ASSERT_EQ(r.status, 0) << r.err;
  const json p = parse(r.out);
  EXPECT_EQ(p["records"], 569);
  // Independently: load the file, see the records as training did, evaluate.
  std::ifstream in(model);
  const auto mf = hsdp::train::model_from_json(json::parse(in), model);
  ASSERT_EQ(mf.feature_scale, std::vector<double>(30, 0.01));
  auto d = hsdp::data::read_csv(kBreastCancer);
  hsdp::train::apply_label_mapping(d, mf.label_kind, mf.labels);
  if (!mf.feature_scale.empty()) hsdp::data::scale_features(d, mf.feature_scale);
  hsdp::data::scale_rows_to_norm(d, mf.record_norm);
  const auto e = hsdp::train::evaluate(mf.model, d);
  EXPECT_DOUBLE_EQ(p["accuracy"].get<double>(), *e.accuracy);
  EXPECT_DOUBLE_EQ(p["loss"].get<double>(), e.loss);
  std::ifstream pf(preds);
  std::string line;
  int lines = 0;
  while (std::getline(pf, line)) ++lines;
  EXPECT_EQ(lines, 570);  // header + one per record
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `hsdp predict --no-labels`: a file of features only gets the labelled file's predictions
// (in the training labels' own text, here 0/1); without the flag the error says the file
// seems to have no label column and names the flag.
TEST(TrainCli, PredictWithoutLabels) {
  ASSERT_TRUE(std::filesystem::exists(kBreastCancer));
  const std::string model = temp_path("nolabels_model.json"), features = temp_path("features.csv"),
                    with = temp_path("with_labels.out"), without = temp_path("without_labels.out");
  auto r = run_cli("train --data " + kBreastCancer +
                   " --model logistic --feature-ranges " + HSDP_SOURCE_DIR +
                   "/data/feature-ranges/breast_cancer.txt --epsilon 1 --seed 1 --output " + model);
  ASSERT_EQ(r.status, 0) << r.err;
  // breast_cancer.csv without its header line and its label column (the last).
  std::ifstream in(kBreastCancer);
  std::string line, text, labels;
  std::getline(in, line);
  while (std::getline(in, line)) {
    text += line.substr(0, line.rfind(',')) + "\n";
    labels += line.substr(line.rfind(',') + 1) + "\n";
  }
  std::ofstream(features) << text;

  r = run_cli("predict --model-file " + model + " --data " + kBreastCancer + " --output " + with);
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_cli("predict --model-file " + model + " --data " + features + " --no-labels --output " + without + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json p = parse(r.out);
  EXPECT_EQ(p["records"], 569);
  EXPECT_EQ(p["labels"], false);
  EXPECT_FALSE(p.contains("accuracy"));
  EXPECT_FALSE(p.contains("loss"));
  // The same predictions, record by record; the labelled file adds the label column.
  const std::string a = read_text(with), b = read_text(without);
  ASSERT_EQ(b.rfind("record,prediction\n1,", 0), 0u) << b.substr(0, 40);
  std::string expected = "record,prediction\n";
  std::size_t at = a.find('\n') + 1;
  int zeros = 0, ones = 0;
  while (at < a.size()) {
    const std::size_t end = a.find('\n', at);
    const std::string row = a.substr(at, end - at);
    expected += row.substr(0, row.rfind(',')) + "\n";
    const std::string prediction = row.substr(row.find(',') + 1, row.rfind(',') - row.find(',') - 1);
    ASSERT_TRUE(prediction == "0" || prediction == "1") << row;  // the training labels, not -1/+1
    (prediction == "0" ? zeros : ones) += 1;
    at = end + 1;
  }
  EXPECT_EQ(b, expected);
  EXPECT_GT(zeros, 0);
  EXPECT_GT(ones, 0);
  r = run_cli("predict --model-file " + model + " --data " + features + " --no-labels --output " + without);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "569 records of " + features + " (no labels)\npredictions written to " + without + "\n");

  // Without the flag: the file seems to have no label column.
  r = run_cli("predict --model-file " + model + " --data " + features);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--data = " + features + ": must be a file with the model's d = 30 features per record besides "
                       "the label (it has 30 columns, as many as the model has features: it seems to have no label "
                       "column; --no-labels scores a file without labels)"),
            std::string::npos)
      << r.err;
  // With the flag but the labelled file: one column too many (the scikit-learn header says so).
  r = run_cli("predict --model-file " + model + " --data " + kBreastCancer + " --no-labels --output " + without);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("its rows have a label column, but the file is read without labels (--no-labels)"), std::string::npos)
      << r.err;
  EXPECT_EQ(read_text(without), b);  // untouched by the error
  // No labels: only predictions, so --output is needed; no class to select.
  r = run_cli("predict --model-file " + model + " --data " + features + " --no-labels");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--output"), std::string::npos) << r.err;
  r = run_cli("predict --model-file " + model + " --data " + features + " --no-labels --classes 1 --output " + without);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--classes = 1: must be absent: --no-labels"), std::string::npos) << r.err;
  for (const auto& f : {model, features, with, without}) std::filesystem::remove(f);
}

// IDX images without their labels file: the labelled predictions; without the flag, the
// missing labels file names it.
TEST(TrainCli, PredictIdxImagesWithoutLabels) {
  const std::string data = std::string(HSDP_SOURCE_DIR) + "/tests/data/";
  const std::string images = data + "tiny-images-idx3-ubyte.gz", labels = data + "tiny-labels-idx1-ubyte.gz";
  const std::string model = temp_path("idx_model.json"), with = temp_path("idx_with.out"),
                    without = temp_path("idx_without.out");
  auto r = run_cli("train --format idx --data " + images + " --labels " + labels +
                   " --test-data " + images + " --test-labels " + labels +
                   " --model softmax --no-noise --algorithm noisy-gd --steps 50 --eta 1 --feature-scale 0.05 --seed 1"
                   " --output " + model);
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_cli("predict --model-file " + model + " --format idx --data " + images + " --labels " + labels + " --output " + with);
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_cli("predict --model-file " + model + " --format idx --data " + images + " --no-labels --output " + without);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "3 records of " + images + " (no labels)\npredictions written to " + without + "\n");
  // The labelled file: record,prediction,label with the labels 0, 1, 2; the other: the same
  // predictions (class labels, not class ids shifted), without the label column.
  const std::string a = read_text(with), b = read_text(without);
  std::string expected = "record,prediction\n";
  std::size_t at = a.find('\n') + 1;
  while (at < a.size()) {
    const std::size_t end = a.find('\n', at);
    const std::string row = a.substr(at, end - at);
    expected += row.substr(0, row.rfind(',')) + "\n";
    at = end + 1;
  }
  EXPECT_EQ(b, expected);
  EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 4);
  r = run_cli("predict --model-file " + model + " --format idx --data " + images + " --output " + without);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--labels = (missing): must be the IDX labels file for --format idx, or --no-labels to score "
                       "images without labels"),
            std::string::npos)
      << r.err;
  r = run_cli("predict --model-file " + model + " --format idx --data " + images + " --labels " + labels +
              " --no-labels --output " + without);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("must be absent when the images are read without labels (--no-labels)"), std::string::npos) << r.err;
  for (const auto& f : {model, with, without}) std::filesystem::remove(f);
}

// The shipped public feature ranges (data/feature-ranges/, docs/data.md): each feature mapped
// onto [-1, 1] before the record norm; the model file keeps the centre and scale, and predict
// on the test part of the split sees the records as training did (its accuracy is the
// document's test accuracy). A malformed ranges file names the flag and its line.
TEST(TrainCli, FeatureRangesFileAndPredict) {
  ASSERT_TRUE(std::filesystem::exists(kBreastCancer));
  const std::string ranges = std::string(HSDP_SOURCE_DIR) + "/data/feature-ranges/breast_cancer.txt";
  const std::string model = temp_path("ranges_model.json"), test = temp_path("ranges_test.csv");
  auto r = run_cli("train --data " + kBreastCancer + " --feature-ranges " + ranges +
                   " --model logistic --epsilon 1 --seed 3 --json --output " + model);
  ASSERT_EQ(r.status, 0) << r.err;
  const json doc = parse(r.out);
  const auto center = doc["model"]["feature_center"].get<std::vector<double>>();
  const auto scale = doc["model"]["feature_scale"].get<std::vector<double>>();
  ASSERT_EQ(center.size(), 30u);
  EXPECT_DOUBLE_EQ(center[0], (6.981 + 28.11) / 2);  // radius (mean): [6.981, 28.11]
  EXPECT_DOUBLE_EQ(scale[0], 2 / (28.11 - 6.981));
  EXPECT_NE(doc["configuration"]["preprocessing"].get<std::string>().find("[6.981, 28.11]"), std::string::npos);
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;  // the features are comparable now
  // The test part of the split (split seed 1, fraction 0.2), as a file of its own.
  auto all = hsdp::data::read_csv(kBreastCancer);
  const auto parts = hsdp::data::train_test_split(all, 0.2, 1);
  {
    std::ifstream in(kBreastCancer);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::ofstream out(test);
    for (const std::size_t origin : parts.second.origin) out << lines[origin - 1] << "\n";
  }
  r = run_cli("predict --model-file " + model + " --data " + test + " --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(parse(r.out)["records"], 114);
  EXPECT_EQ(parse(r.out)["accuracy"].get<double>(), doc["test_accuracy"].get<double>());

  const std::string bad = temp_path("bad_ranges.txt");
  std::ofstream(bad) << "0 1\n2 1\n";
  r = run_cli("train --data " + kBreastCancer + " --feature-ranges " + bad + " --model logistic --sigma 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--feature-ranges = " + bad + ":2: min 2 max 1: must be min < max on every line"),
            std::string::npos)
      << r.err;
  r = run_cli("train --data " + kBreastCancer + " --feature-ranges " + ranges + " --feature-scale 2 --model logistic --sigma 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--feature-ranges = (given): must be absent when --feature-scale is given"), std::string::npos)
      << r.err;
}

TEST(TrainCli, SoftmaxOnIrisAndSquaredLoss) {
  const std::string iris = kData + "iris.csv";
  ASSERT_TRUE(std::filesystem::exists(iris));
  auto r = run_cli("train --data " + iris +
                   " --model softmax --algorithm noisy-gd --steps 1500 --record-norm 10 --radius 50"
                   " --epsilon 1000 --delta 1e-5 --seed 1 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  json out = parse(r.out);
  EXPECT_GT(out["train_accuracy"].get<double>(), 0.8);
  EXPECT_EQ(out["model"]["outputs"], 3);
  EXPECT_EQ(out["report"]["run"]["dimension"], 15);  // 3 x (4 + 1)
  EXPECT_DOUBLE_EQ(out["report"]["run"]["lipschitz"].get<double>(), std::sqrt(2.0 * 101.0));  // sqrt(2) R
  r = run_cli("train --data " + kBreastCancer +
              " --model squared --constraint box --radius 2 --algorithm pnsgd --sigma 1 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  out = parse(r.out);
  EXPECT_EQ(out["randomness"], "operating-system entropy (ChaCha20 keyed with 256 bits from getrandom)");  // no --seed
  EXPECT_FALSE(out.contains("train_accuracy"));
  EXPECT_TRUE(out.contains("train_loss"));
  EXPECT_TRUE(out.contains("test_loss"));
  // L = R (R sup_W ||theta|| + Y) with R^2 = 2, sup ||theta|| = 2 sqrt(31), Y = 1.
  const double R = std::sqrt(2.0);
  EXPECT_NEAR(out["report"]["run"]["lipschitz"].get<double>(), R * (R * 2 * std::sqrt(31.0) + 1), 1e-9);
  EXPECT_EQ(out["report"]["run"]["sampling"], "cyclic");
  EXPECT_EQ(out["report"]["run"]["batch_size"], 1);
}

// LIBSVM input (liblinear's heart_scale), the huber loss and the non-private baseline:
// no noise, no report; predict reads the same format and agrees with the train/test
// accuracies printed by train (0.847 / 0.833 at this split).
TEST(TrainCli, LibsvmHuberNoNoiseBaseline) {
  const std::string heart = "/usr/share/doc/liblinear-tools/examples/heart_scale";
  ASSERT_TRUE(std::filesystem::exists(heart)) << "run scripts/install-deps.sh (liblinear-tools)";
  const std::string model = temp_path("heart.json");
  auto r = run_cli("train --data " + heart + " --format libsvm --model huber --algorithm noisy-gd --steps 500"
                   " --no-noise --json --output " + model);
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = parse(r.out);
  EXPECT_TRUE(out["report"].is_null());
  EXPECT_GT(out["train_accuracy"].get<double>(), 0.8);
  EXPECT_GT(out["test_accuracy"].get<double>(), 0.75);
  EXPECT_EQ(out["model"]["huber_smoothing"], 0.5);
  r = run_cli("predict --model-file " + model + " --data " + heart + " --format libsvm --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json p = parse(r.out);
  EXPECT_EQ(p["records"], 270);
  // 270 = 216 train + 54 test records: the overall accuracy is their weighted mean.
  EXPECT_NEAR(p["accuracy"].get<double>(),
              (216 * out["train_accuracy"].get<double>() + 54 * out["test_accuracy"].get<double>()) / 270, 1e-12);
}

TEST(TrainCli, BadInputExitsTwoAndWritesNothing) {
  ASSERT_TRUE(std::filesystem::exists(kBreastCancer));
  const std::string model = temp_path("never.json");
  std::filesystem::remove(model);
  auto r = run_cli("train --data " + kBreastCancer + " --model nonsense --sigma 1 --output " + model);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--model"), std::string::npos) << r.err;
  r = run_cli("train --data " + kBreastCancer + " --model logistic --radius -1 --sigma 1 --output " + model);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--radius"), std::string::npos) << r.err;
  r = run_cli("train --data " + kBreastCancer + " --model logistic --output " + model);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--epsilon"), std::string::npos) << r.err;
  r = run_cli("train --data " + kBreastCancer + " --model logistic --epsilon 1 --delta 2 --output " + model);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--delta"), std::string::npos) << r.err;
  r = run_cli("train --data /nonexistent.csv --model logistic --sigma 1 --output " + model);
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(std::filesystem::exists(model));
  r = run_cli("predict --model-file /nonexistent.json --data " + kBreastCancer);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--model-file"), std::string::npos) << r.err;
}

}  // namespace

// --release every: the same algorithm, accounted and calibrated as if every iterate were
// published (composition only). On cyclic batches with an L2 term the last iterate needs
// several times less noise for the same target, and the report says which accounting.
TEST(TrainCli, ReleaseEveryCalibratesForCompositionOnly) {
  const std::string heart = "/usr/share/doc/liblinear-tools/examples/heart_scale";
  ASSERT_TRUE(std::filesystem::exists(heart)) << "run scripts/install-deps.sh (liblinear-tools)";
  double sigma[2] = {0, 0};
  int k = 0;
  for (const char* release : {"last", "every"}) {
    const auto r = run_cli("train --data " + heart +
                           " --format libsvm --model logistic --sampling cyclic --batch-size 27"
                           " --epochs 20 --l2 0.05 --epsilon 1 --delta 1e-5 --seed 1 --json"
                           " --release " + std::string(release));
    ASSERT_EQ(r.status, 0) << r.err;
    const json out = parse(r.out);
    const json& report = out["report"];
    EXPECT_EQ(report["run"]["release"], release);
    EXPECT_LE(report["best"]["epsilon"].get<double>(), 1.0);
    const std::string best = report["best"]["name"];
    if (std::string(release) == "every")
      EXPECT_EQ(best.rfind("composition-", 0), 0u) << best;
    else
      EXPECT_EQ(best, "shifted-interpolation");
    sigma[k++] = out["configuration"]["sigma"].get<double>();
  }
  EXPECT_GT(sigma[1], 3 * sigma[0]);
}

// The first command a new user types works: --delta defaults to 1e-5 with --epsilon, the
// default batch size fits a small training set (216 records), and raw features dominated by
// two of them get a warning to the data owner (stderr only, never in the model document).
TEST(TrainCli, FirstCommandDefaults) {
  const std::string heart = "/usr/share/doc/liblinear-tools/examples/heart_scale";
  ASSERT_TRUE(std::filesystem::exists(heart)) << "run scripts/install-deps.sh (liblinear-tools)";
  const auto r = run_cli("train --data " + heart + " --format libsvm --model logistic --epsilon 1 --seed 1 --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json out = parse(r.out);
  EXPECT_EQ(out["report"]["query"]["delta"].get<double>(), 1e-5);
  // With a target the plan chooses (docs/training.md): records scaled to R = 2 (the bias
  // weighs half a record: L = sqrt(5)), 216 records at eps = 1 -> T = 5 full batches (l = 1),
  // stored in the model file.
  EXPECT_EQ(out["report"]["run"]["batch_size"].get<std::int64_t>(), 216);
  EXPECT_EQ(out["report"]["run"]["steps"].get<std::int64_t>(), 5);
  EXPECT_EQ(out["model"]["record_norm"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(out["report"]["run"]["lipschitz"].get<double>(), std::sqrt(5.0));
  EXPECT_EQ(out["configuration"]["plan"]["chosen"].size(), 6u);
  EXPECT_NE(out["configuration"]["plan"]["summary"].get<std::string>().find(
                "T = round(sqrt(2) n mu / (2 L eta X)) = 5; R = 2"),
            std::string::npos);
  EXPECT_GT(out["test_accuracy"].get<double>(), 0.6);
  // A stated record norm is kept.
  const auto stated = run_cli("train --data " + heart + " --format libsvm --model logistic --epsilon 1 --seed 1 "
                              "--record-norm 1 --json");
  ASSERT_EQ(stated.status, 0) << stated.err;
  EXPECT_EQ(parse(stated.out)["model"]["record_norm"].get<double>(), 1.0);
  EXPECT_EQ(parse(stated.out)["report"]["run"]["steps"].get<std::int64_t>(), 5);
  // Without a target nothing is planned; the default batch never exceeds a quarter of n.
  const auto fixed = run_cli("train --data " + heart + " --format libsvm --model logistic --sigma 1 --seed 1 --json");
  ASSERT_EQ(fixed.status, 0) << fixed.err;
  const json f = parse(fixed.out);
  EXPECT_LE(f["report"]["run"]["batch_size"].get<std::int64_t>(), 216 / 4);
  EXPECT_FALSE(f["configuration"].contains("plan"));
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
  ASSERT_TRUE(std::filesystem::exists(kBreastCancer)) << "run scripts/install-deps.sh (python3-sklearn)";
  const auto raw = run_cli("train --data " + kBreastCancer + " --format csv --model logistic --epsilon 1 --seed 1 --json");
  ASSERT_EQ(raw.status, 0) << raw.err;
  EXPECT_NE(raw.err.find("--feature-scale"), std::string::npos) << raw.err;
  EXPECT_EQ(raw.out.find("largest features"), std::string::npos);  // not in the document
}

namespace {

// A small IDX pair (uint8 images n x 8 x 8, labels 0..k-1) whose classes differ in where the
// bright pixels are, so training learns something.
void write_idx(const std::string& images, const std::string& labels, std::size_t n, std::size_t classes) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int> level(0, 255);
  std::vector<unsigned char> img{0, 0, 0x08, 3, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 8};
  std::vector<unsigned char> lab{0, 0, 0x08, 1, 0, 0, 0, 0};
  for (int b = 0; b < 4; ++b) {
    img[4 + b] = static_cast<unsigned char>(n >> (8 * (3 - b)));
    lab[4 + b] = static_cast<unsigned char>(n >> (8 * (3 - b)));
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = i % classes;
    lab.push_back(static_cast<unsigned char>(c));
    for (std::size_t p = 0; p < 64; ++p) {
      const int v = level(rng);
      img.push_back(static_cast<unsigned char>(p % classes == c ? v : v / 4));
    }
  }
  std::ofstream(images, std::ios::binary).write(reinterpret_cast<const char*>(img.data()), static_cast<std::streamsize>(img.size()));
  std::ofstream(labels, std::ios::binary).write(reinterpret_cast<const char*>(lab.data()), static_cast<std::streamsize>(lab.size()));
}

std::vector<double> flat_weights(const json& w) {
  std::vector<double> out;
  if (w.is_number()) {
    out.push_back(w.get<double>());
  } else {
    for (const auto& v : w) {
      const auto inner = flat_weights(v);
      out.insert(out.end(), inner.begin(), inner.end());
    }
  }
  return out;
}

}  // namespace

// The storage changes how the features are held, never what is accounted: the privacy
// report is byte-identical between float64 and uint8 on the same IDX data, the model agrees
// within the stated tolerance (1e-9 relative over a whole run) and the accuracies are equal.
TEST(TrainCli, FeatureStorageKeepsTheReportAndTheModel) {
  const std::string images = temp_path("storage-images-idx3-ubyte");
  const std::string labels = temp_path("storage-labels-idx1-ubyte");
  struct Case {
    std::size_t classes;
    std::string flags;
  };
  for (const Case& k : {Case{2, "--model logistic --algorithm noisy-gd --steps 40 --sigma 0.05 --eta 2"},
                        Case{4, "--model softmax --algorithm noisy-sgd --sampling poisson --batch-size 64 "
                                "--steps 60 --sigma 0.05 --eta 2 --clip 0.5"}}) {
    SCOPED_TRACE(k.flags);
    write_idx(images, labels, 600, k.classes);
    const std::string base = "train --data " + images + " --labels " + labels +
                             " --format idx --feature-scale 0.00392156862745098 --seed 5 --json " + k.flags;
    std::map<std::string, json> out;
    for (const std::string storage : {"float64", "uint8", "float32", "auto"}) {
      const auto r = run_cli(base + " --feature-storage " + storage);
      ASSERT_EQ(r.status, 0) << r.err;
      out[storage] = parse(r.out);
    }
    EXPECT_EQ(out["float64"]["configuration"]["feature_storage"], "float64");
    EXPECT_EQ(out["uint8"]["configuration"]["feature_storage"], "uint8");
    EXPECT_EQ(out["auto"]["configuration"]["feature_storage"], "uint8") << "auto: uint8 for IDX bytes";
    ASSERT_FALSE(out["float64"]["report"].is_null());
    for (const std::string storage : {"uint8", "float32"}) {
      SCOPED_TRACE(storage);
      EXPECT_EQ(out[storage]["report"].dump(), out["float64"]["report"].dump());
      EXPECT_EQ(out[storage]["train_accuracy"], out["float64"]["train_accuracy"]);
      EXPECT_EQ(out[storage]["test_accuracy"], out["float64"]["test_accuracy"]);
      const auto a = flat_weights(out[storage]["model"]["weights"]);
      const auto b = flat_weights(out["float64"]["model"]["weights"]);
      ASSERT_EQ(a.size(), b.size());
      double scale = 0, worst = 0;
      for (std::size_t j = 0; j < a.size(); ++j) {
        scale = std::max(scale, std::abs(b[j]));
        worst = std::max(worst, std::abs(a[j] - b[j]));
      }
      EXPECT_GT(scale, 0.0);
      EXPECT_LE(worst, 1e-9 * scale);
    }
    EXPECT_GT(out["uint8"]["train_accuracy"].get<double>(), 1.0 / static_cast<double>(k.classes) + 0.1);
  }
  std::filesystem::remove(images);
  std::filesystem::remove(labels);
}

TEST(TrainCli, FeatureStorageFlagErrors) {
  const auto bad = run_cli("train --data " + kBreastCancer + " --model logistic --feature-storage int4 --no-noise --steps 5");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--feature-storage"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("auto, float64, float32, uint8"), std::string::npos) << bad.err;
  const auto text = run_cli("train --data " + kBreastCancer + " --model logistic --feature-storage uint8 --no-noise --steps 5");
  EXPECT_EQ(text.status, 2);
  EXPECT_NE(text.err.find("--feature-storage"), std::string::npos) << text.err;
  EXPECT_NE(text.err.find("uint8 is for IDX images"), std::string::npos) << text.err;
  // float32 on a CSV file trains, and the configuration says so.
  const auto f32 = run_cli("train --data " + kBreastCancer +
                           " --model logistic --feature-storage float32 --no-noise --steps 5 --radius 100 --json");
  ASSERT_EQ(f32.status, 0) << f32.err;
  EXPECT_EQ(parse(f32.out)["configuration"]["feature_storage"], "float32");
  const auto predict = run_cli("predict --model nowhere.json --data " + kBreastCancer + " --feature-storage x");
  EXPECT_EQ(predict.status, 2);
}
