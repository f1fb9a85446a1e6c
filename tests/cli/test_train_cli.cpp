// `hsdp train` and `hsdp predict` end to end on scikit-learn's copies of breast_cancer and
// iris (installed by scripts/install-deps.sh as python3-sklearn).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"
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
  EXPECT_EQ(out["randomness"], "seeded: for experiments");
  const json& report = out["report"];
  EXPECT_LE(report["best"]["epsilon"].get<double>(), 5.0);
  EXPECT_EQ(report["query"]["delta"].get<double>(), 1e-5);
  EXPECT_EQ(report["run"]["n"], 455);
  EXPECT_EQ(report["run"]["steps"], 200);
  EXPECT_EQ(report["run"]["sampling"], "full");
  // The model file holds the same document.
  std::ifstream in(model);
  ASSERT_TRUE(in.good());
  EXPECT_EQ(json::parse(in), out);
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
  EXPECT_NE(r.out.find("privacy report of the run performed (noise: seeded: for experiments)"), std::string::npos);
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
  EXPECT_EQ(out["randomness"], "operating-system entropy");  // no --seed
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
  // With a target the plan chooses (docs/training.md): 216 records at eps = 1 -> T = 5 full
  // batches (l = 1), stored in the model file.
  EXPECT_EQ(out["report"]["run"]["batch_size"].get<std::int64_t>(), 216);
  EXPECT_EQ(out["report"]["run"]["steps"].get<std::int64_t>(), 5);
  EXPECT_EQ(out["configuration"]["plan"]["chosen"].size(), 5u);
  EXPECT_NE(out["configuration"]["plan"]["summary"].get<std::string>().find("T = round(n mu / (2 L eta)) = 5"),
            std::string::npos);
  EXPECT_GT(out["test_accuracy"].get<double>(), 0.6);
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
