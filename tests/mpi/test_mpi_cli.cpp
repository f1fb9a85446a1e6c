// `hsdp train` data-parallel under mpirun (docs/distributed.md) against the same command as
// one process: the same document (configuration, report, account command, accuracies) byte
// for byte, the model within the stated tolerance (the gradient sums are added in another
// order), and a failing rank stops the job naming it. Built only with HSDP_WITH_MPI.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <algorithm>

#include "mpi_runner.hpp"

namespace {

using nlohmann::json;
using namespace hsdp::testing::mpi;

using Result = hsdp::testing::CliResult;

// Runs `args` as one process and under mpirun -np k; the documents must agree.
void expect_same_as_one_process(const std::string& args, int k) {
  ASSERT_TRUE(std::filesystem::exists(kHeart)) << "run scripts/install-deps.sh (liblinear-tools)";
  const Result one = run(0, args);
  ASSERT_EQ(one.status, 0) << one.err;
  const Result many = run(k, args);
  ASSERT_EQ(many.status, 0) << many.err;
  const json a = json::parse(one.out), b = json::parse(many.out);  // one document: rank 0 only
  ASSERT_TRUE(a["report"].is_object());
  EXPECT_EQ(a["report"].dump(), b["report"].dump());
  EXPECT_EQ(a["account_command"], b["account_command"]);
  EXPECT_EQ(a["configuration"].dump(), b["configuration"].dump());
  EXPECT_EQ(a["randomness"], b["randomness"]);
  EXPECT_EQ(a["train_accuracy"].get<double>(), b["train_accuracy"].get<double>());
  EXPECT_EQ(a["test_accuracy"].get<double>(), b["test_accuracy"].get<double>());
  EXPECT_NEAR(a["test_loss"].get<double>(), b["test_loss"].get<double>(), 1e-12);
  const double diff = max_difference(a["model"], b["model"]);
  EXPECT_LE(diff, kTolerance) << "max |theta difference| " << diff;
  // The theta differ at most by reduction order: not by a different noise draw.
  std::ostringstream shown;
  shown << std::setprecision(3) << diff;
  ::testing::Test::RecordProperty("max_theta_difference", shown.str());
}

const std::string kDoneWhen = "train --data " + kHeart +
                              " --format libsvm --model logistic --algorithm noisy-gd --steps 50"
                              " --sigma 0.5 --seed 3 --json";

TEST(MpiTrain, NoisyGdTwoProcessesEqualsOne) { expect_same_as_one_process(kDoneWhen, 2); }

TEST(MpiTrain, NoisyGdThreeProcessesEqualsOne) { expect_same_as_one_process(kDoneWhen, 3); }

TEST(MpiTrain, NoisyGdFourProcessesEqualsOne) { expect_same_as_one_process(kDoneWhen, 4); }

// ---- each process reads only its part of the file (docs/distributed.md, "Reading the parts")

const std::string kBreastCancer = "/usr/lib/python3/dist-packages/sklearn/datasets/data/breast_cancer.csv";

TEST(MpiTrain, ScikitLearnCsvInPartsEqualsOne) {
  // A header line ("569,30,malignant,benign") only the first part holds; every process
  // needs its layout. Per-feature public constants and the split computed part by part.
  if (!std::filesystem::exists(kBreastCancer)) GTEST_SKIP() << kBreastCancer << " is not installed";
  for (int k : {2, 3, 4})
    expect_same_as_one_process("train --data " + kBreastCancer +
                                   " --model logistic --algorithm noisy-gd --steps 30 --sigma 1"
                                   " --feature-scale 0.01 --test-fraction 0.25 --split-seed 4 --seed 5 --json",
                               k);
}

TEST(MpiTrain, SeparateTestFileInPartsEqualsOne) {
  // --test-data read in parts too; the evaluation sums every part.
  const std::string test_file = ::testing::TempDir() + "hsdp_mpi_test_" + std::to_string(::getpid()) + ".libsvm";
  {
    std::ifstream in(kHeart);
    std::ofstream out(test_file);
    std::string line;
    for (int i = 0; std::getline(in, line); ++i)
      if (i % 3 == 0) out << line << "\n";
  }
  for (int k : {2, 4})
    expect_same_as_one_process("train --data " + kHeart + " --format libsvm --test-data " + test_file +
                                   " --model logistic --algorithm noisy-sgd --sampling shuffle"
                                   " --batch-size 25 --steps 30 --sigma 1 --seed 6 --json",
                               k);
  std::filesystem::remove(test_file);
}

// A small IDX pair (plain or gzipped): 90 records of 4 x 5 pixels, labels 0, 1, 2.
std::pair<std::string, std::string> write_idx(bool gz) {
  const std::string base = ::testing::TempDir() + "hsdp_mpi_idx_" + std::to_string(::getpid()) + (gz ? "_gz" : "");
  auto header = [](std::uint8_t dims, std::initializer_list<std::uint32_t> sizes) {
    std::string h = {0, 0, 0x08, static_cast<char>(dims)};
    for (auto v : sizes)
      for (int shift = 24; shift >= 0; shift -= 8) h.push_back(static_cast<char>((v >> shift) & 0xff));
    return h;
  };
  std::string images = header(3, {90, 4, 5}), labels = header(1, {90});
  std::uint32_t state = 12345;
  for (int i = 0; i < 90; ++i) {
    const int label = (i * 7) % 3;
    labels.push_back(static_cast<char>(label));
    for (int j = 0; j < 20; ++j) {
      state = state * 1103515245u + 12345u;
      const int noise = static_cast<int>((state >> 16) % 100);
      images.push_back(static_cast<char>(std::min(255, noise + (j % 3 == label ? 120 : 0))));
    }
  }
  auto write = [gz](const std::string& path, const std::string& bytes) {
    if (gz) {
      gzFile f = gzopen(path.c_str(), "wb");
      gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
      gzclose(f);
    } else {
      std::ofstream(path, std::ios::binary) << bytes;
    }
  };
  const std::string ip = base + "-images.idx" + (gz ? ".gz" : ""), lp = base + "-labels.idx" + (gz ? ".gz" : "");
  write(ip, images);
  write(lp, labels);
  return {ip, lp};
}

TEST(MpiTrain, IdxPlainAndGzipInPartsEqualOne) {
  for (const bool gz : {false, true}) {
    const auto [images, labels] = write_idx(gz);
    // softmax over the three classes, and two of them with --classes (offsets recomputed).
    for (int k : {2, 3})
      expect_same_as_one_process("train --data " + images + " --labels " + labels +
                                     " --format idx --model softmax --algorithm noisy-gd --steps 20"
                                     " --sigma 0.5 --feature-scale 0.00392156862745098 --seed 8 --json",
                                 k);
    expect_same_as_one_process("train --data " + images + " --labels " + labels +
                                   " --format idx --classes 2 0 --model logistic --algorithm noisy-sgd"
                                   " --sampling poisson --batch-size 15 --steps 25 --sigma 1"
                                   " --feature-scale 0.00392156862745098 --seed 9 --json",
                               4);
    std::filesystem::remove(images);
    std::filesystem::remove(labels);
  }
}

TEST(MpiTrain, Float32AndUint8StorageInPartsEqualOne) {
  // Each part is read straight into its stored precision (docs/data.md, "Feature storage"):
  // float32 for the text formats, uint8 (the IDX default) and float32 for IDX; the split in
  // place moves the stored values and the --classes selection copies them.
  expect_same_as_one_process("train --data " + kHeart +
                                 " --format libsvm --feature-storage float32 --model logistic"
                                 " --algorithm noisy-gd --steps 20 --sigma 0.5 --seed 3 --json",
                             3);
  if (std::filesystem::exists(kBreastCancer))
    expect_same_as_one_process("train --data " + kBreastCancer +
                                   " --feature-storage float32 --model logistic --algorithm noisy-gd"
                                   " --steps 20 --sigma 1 --feature-scale 0.01 --seed 5 --json",
                               4);
  const auto [images, labels] = write_idx(true);
  for (const char* storage : {"uint8", "float32"})
    expect_same_as_one_process("train --data " + images + " --labels " + labels +
                                   " --format idx --feature-storage " + storage +
                                   " --classes 2 0 --model logistic --algorithm noisy-gd --steps 15"
                                   " --sigma 1 --feature-scale 0.00392156862745098 --seed 9 --json",
                               3);
  std::filesystem::remove(images);
  std::filesystem::remove(labels);
}

TEST(MpiTrain, ClassesOnLibsvmInPartsEqualOne) {
  // --classes on heart_scale's two labels written "+1" / "-1": selected by value.
  expect_same_as_one_process("train --data " + kHeart +
                                 " --format libsvm --classes 1 -1 --positive -1 --model logistic"
                                 " --algorithm noisy-gd --steps 10 --sigma 1 --seed 3 --json",
                             3);
}

TEST(MpiTrain, MalformedLineInTheMiddleIsNamedByItsHolder) {
  // 300 lines; line 173 is malformed. The process whose byte range holds the line's first
  // byte reports it with the file's line number.
  const std::string bad = ::testing::TempDir() + "hsdp_mpi_middle_" + std::to_string(::getpid()) + ".libsvm";
  std::string text;
  std::size_t start = 0;
  for (int i = 1; i <= 300; ++i) {
    if (i == 173) start = text.size();
    text += i == 173 ? "+1 1:0.5 2:x\n" : std::string(i % 2 ? "+1" : "-1") + " 1:0." + std::to_string(i % 10) + " 3:0.25\n";
  }
  std::ofstream(bad) << text;
  for (int k : {2, 3, 4}) {
    const Result r = run(k, "train --data " + bad + " --format libsvm --model logistic --algorithm noisy-gd"
                            " --steps 5 --sigma 1 --seed 1 --json");
    EXPECT_NE(r.status, 0);
    const auto K = static_cast<std::size_t>(k);
    const std::size_t holder = ((start + 1) * K + text.size() - 1) / text.size() - 1;
    EXPECT_NE(r.err.find("hsdp: error: rank " + std::to_string(holder) + ": " + bad + ":173:12: value 'x' of feature 2"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "");
  }
  std::filesystem::remove(bad);
}

TEST(MpiTrain, NoisySgdPoissonWithClippingEqualsOne) {
  // Poisson batches drawn by every process from the shared generator; each sums the records
  // of the batch it holds; clipping acts (C < L), so the clipped counts are summed too.
  expect_same_as_one_process("train --data " + kHeart +
                                 " --format libsvm --model logistic --algorithm noisy-sgd"
                                 " --sampling poisson --batch-size 40 --steps 60 --sigma 1 --clip 0.5"
                                 " --seed 11 --json",
                             3);
}

TEST(MpiTrain, PlannedTargetEpsilonEqualsOne) {
  // The plan and the calibration are computed identically on every process.
  expect_same_as_one_process("train --data " + kHeart +
                                 " --format libsvm --model logistic --algorithm noisy-sgd --epsilon 2"
                                 " --delta 1e-5 --seed 2 --json",
                             2);
}

TEST(MpiTrain, OnlyRankZeroWritesTheModelFile) {
  const std::string model = ::testing::TempDir() + "hsdp_mpi_model_" + std::to_string(::getpid()) + ".json";
  std::filesystem::remove(model);
  const Result r = run(2, kDoneWhen + " --output " + model);
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(model);
  ASSERT_TRUE(in) << model;
  const json file = json::parse(in);
  const json out = json::parse(r.out);
  EXPECT_EQ(file["model"].dump(), out["model"].dump());
  EXPECT_EQ(file["report"].dump(), out["report"].dump());
  std::filesystem::remove(model);
}

TEST(MpiTrain, MalformedFileStopsTheJobNamingTheRank) {
  expect_job_stops_at_line(2, "bad", "+1 1:0.5 2:0.25\n-1 1:0.1 oops\n+1 2:0.3\n",
                           "--format libsvm --model logistic --algorithm noisy-gd --steps 5 --sigma 1 --seed 1 --json",
                           2);
}

TEST(MpiTrain, BadHeaderLineIsReportedByRankZero) {
  // Line 1 gives every process its layout; only the one holding it reports what is wrong.
  const std::string bad = ::testing::TempDir() + "hsdp_mpi_blank_" + std::to_string(::getpid()) + ".csv";
  std::ofstream(bad) << "\n1,2,a\n3,4,b\n5,6,a\n7,8,b\n";
  const Result r = run(3, "train --data " + bad + " --model logistic --sigma 1 --seed 1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("hsdp: error: rank 0: " + bad + ":1:1: empty line (every line must be a record)"),
            std::string::npos) << r.err;
  std::filesystem::remove(bad);
}

TEST(MpiTrain, OtherCommandsRefuseSeveralProcesses) {
  const Result r = run(2, "account --n 100 --steps 10 --batch-size 10 --sigma 1 --eta 0.1 "
                          "--lipschitz 1 --smoothness 1 --diameter 1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("only `hsdp train` runs"), std::string::npos) << r.err;
}

TEST(MpiTrain, OneProcessUnderMpirunIsThePlainRun) {
  const Result one = run(0, kDoneWhen);
  const Result single = run(1, kDoneWhen);
  ASSERT_EQ(single.status, 0) << single.err;
  EXPECT_EQ(one.out, single.out);  // byte for byte: no data-parallel path for one process
}

}  // namespace
