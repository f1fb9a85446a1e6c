// The malformed-input catalogue (docs/data.md "Limits", "Errors"): every reader (CSV, LIBSVM,
// IDX, gzip, users files, model files) and every subcommand's parameters, tried as an
// adversarial user would. Each case runs `hsdp` in a directory of its own holding valid inputs
// (tests/cli/bad_inputs.hpp), the case's bad files (generated here, never kept in git) and an
// earlier output of the user (existing.out), and asserts:
//   - the exit status (2 for bad input, never 1 "internal error", never killed);
//   - that stderr names what the user typed: the flag (`--seed`) or file:line:column;
//   - that no output file is left or changed (the directory is byte for byte as before);
//   - a time limit (a hang fails the case instead of the suite).
// A few controls (status 0) show that the valid inputs and base commands are valid, so that
// each bad case differs from a good one in the one thing it breaks. The Python keywords have
// their catalogue in python/tests/test_malformed_catalogue.py.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bad_inputs.hpp"

namespace {

namespace fs = std::filesystem;
namespace bad = hsdp::testing::bad;
using nlohmann::json;

// Seconds a case may take. Every case but a few finishes in well under a second; the limit
// only separates "answers" from "hangs". The sanitizers make the large cases ~10x slower.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kScale = 8;
#else
constexpr int kScale = 1;
#endif
constexpr int kLimit = 10;

struct Case {
  std::string name;
  std::string args;                  ///< hsdp's arguments, run by /bin/sh in the case directory
  std::vector<std::string> expect;   ///< substrings of stderr (status 2) or stdout (status 0)
  std::function<void(const fs::path&)> make = nullptr;  ///< writes the case's own input files
  int status = 2;
  int limit = kLimit;
  /// Checks after the command (the case directory): a device still a device, a mode kept.
  std::function<void(const fs::path&)> check = nullptr;
  std::string env = {};              ///< environment assignments before the command (VAR=value ...)
};

// ---- generators of a case's files

std::function<void(const fs::path&)> text(std::string name, std::string content) {
  return [name, content](const fs::path& dir) { bad::write(dir / name, content); };
}
std::function<void(const fs::path&)> bytes(std::string name, bad::Bytes content) {
  return [name, content](const fs::path& dir) { bad::write(dir / name, content); };
}
std::function<void(const fs::path&)> both(std::function<void(const fs::path&)> a,
                                          std::function<void(const fs::path&)> b) {
  return [a, b](const fs::path& dir) {
    a(dir);
    b(dir);
  };
}
// bad.json: the valid model file changed by `edit`.
std::function<void(const fs::path&)> model(std::function<void(json&)> edit, json base = bad::good_model()) {
  return [edit, base](const fs::path& dir) {
    json doc = base;
    edit(doc);
    bad::write(dir / "bad.json", doc.dump(2) + "\n");
  };
}
std::function<void(const fs::path&)> subdir(std::string name) {
  return [name](const fs::path& dir) { fs::create_directory(dir / name); };
}

const std::string kTrain = "train --data good.csv --model logistic --sigma 1 --seed 1";
const std::string kPredict = "predict --model-file model.json --data good.csv";
const std::string kAccount = "account --example";
const std::string kCalibrate = "calibrate --example --for noise --epsilon 1 --delta 1e-5";
const std::string kPlan = "plan --setting noisy-sgd --epsilon 1 --delta 1e-5 --n 1000 --lipschitz 1 --smoothness 1";
const std::string kCompare = "compare --example --x steps --from 1 --to 20 --points 3";
const std::string kExact = "audit exact --example --steps 5 --grid 129";
// `hsdp audit exact` with `flags` (a coarse grid unless they state one).
std::string exact_args(const std::string& flags) {
  return "audit exact --example --steps 5 " + flags + (flags.find("--grid") == std::string::npos ? " --grid 129" : "");
}
const std::string kMia = "audit mia --data good.csv --model logistic --sigma 1 --trials 4 --seed 1";
const std::string kIdx = "train --format idx --data images.idx --labels labels.idx --model logistic --sigma 1 --seed 1";

// 4 rows x 10^6 columns (about 11 MB), written when the case runs.
void write_wide_csv(const fs::path& dir) {
  std::string wide;
  for (int r = 0; r < 4; ++r) {
    std::string row;
    row.reserve(3'000'002);
    for (int j = 0; j < 1'000'000; ++j) row += (j + r) % 3 == 0 ? "0.5," : "-1,";
    wide += row + std::to_string(r % 2) + "\n";
  }
  bad::write(dir / "wide.csv", wide);
}

// `hsdp train` on good.csv with `flags`, completed with a model, a noise and a seed unless
// the flags state their own; the model goes to existing.out (which must survive an error).
std::string train_args(const std::string& flags, const std::string& data = "good.csv") {
  std::string args = "train --data " + data + " --output existing.out " + flags;
  if (flags.find("--model ") == std::string::npos) args += " --model logistic";
  if (flags.find("--sigma") == std::string::npos && flags.find("--noise-std") == std::string::npos &&
      flags.find("--epsilon") == std::string::npos && flags.find("--no-noise") == std::string::npos)
    args += " --sigma 1";
  if (flags.find("--seed") == std::string::npos) args += " --seed 1";
  return args;
}
std::string csv_train(const std::string& file, const std::string& more = "") { return train_args(more, file); }

// `hsdp audit mia` on good.csv with `flags`, completed likewise (4 trials).
std::string mia_args(const std::string& flags) {
  std::string args = "audit mia --data good.csv --model logistic " + flags;
  if (flags.find("--trials") == std::string::npos) args += " --trials 4";
  if (flags.find("--sigma") == std::string::npos) args += " --sigma 1";
  if (flags.find("--seed") == std::string::npos) args += " --seed 1";
  return args;
}

std::string svm_train(const std::string& file) {
  return "train --format libsvm --data " + file + " --model logistic --sigma 1 --seed 1 --output new.out";
}
std::string idx_train(const std::string& images, const std::string& labels = "labels.idx") {
  return "train --format idx --data " + images + " --labels " + labels +
         " --model logistic --sigma 1 --seed 1 --output existing.out";
}
std::string predict_model(const std::string& file = "bad.json") {
  return "predict --model-file " + file + " --data good.csv --output existing.out";
}

// 16 bytes of the good IDX images with one header byte changed.
bad::Bytes images_with(std::size_t at, std::uint8_t value) {
  bad::Bytes b = bad::good_images();
  b.at(at) = value;
  return b;
}
bad::Bytes floats_idx(std::uint8_t type, const bad::Bytes& last_value) {
  // 2 records x 1 value of `type` (0x0D float, 0x0E double), the second one given.
  const std::size_t size = type == 0x0D ? 4 : 8;
  bad::Bytes payload(size, 0);
  payload.insert(payload.end(), last_value.begin(), last_value.end());
  return bad::idx(type, {2, 1}, payload);
}

std::vector<Case> controls() {
  return {
      {"control_train_csv", kTrain + " --output new.json", {"train / "}, nullptr, 0},
      {"control_train_libsvm", "train --format libsvm --data good.libsvm --model logistic --sigma 1 --seed 1",
       {"train / "}, nullptr, 0},
      {"control_train_idx", kIdx, {"train / "}, nullptr, 0},
      {"control_train_users", "train --data good.csv --model logistic --algorithm federated --users users.txt "
                              "--batch-size 2 --sigma 1 --seed 1",
       {"user"}, nullptr, 0},
      {"control_predict", kPredict, {"40 records of good.csv"}, nullptr, 0},
      {"control_predict_softmax", "predict --model-file softmax.json --data good.csv", {"40 records"}, nullptr, 0},
      {"control_account", kAccount, {"best:"}, nullptr, 0},
      {"control_calibrate", kCalibrate, {"noise"}, nullptr, 0},
      {"control_plan", kPlan, {"noise"}, nullptr, 0},
      {"control_compare", kCompare, {"steps"}, nullptr, 0},
      {"control_audit_exact", kExact, {"exact"}, nullptr, 0},
      {"control_audit_mia", kMia, {"empirical"}, nullptr, 0},
      {"control_gzip_members", "train --data two.csv.gz --model logistic --sigma 1 --seed 1", {"train / "},
       bytes("two.csv.gz", [] {
         bad::Bytes a = bad::gzip(bad::good_csv().substr(0, 200));
         const bad::Bytes b = bad::gzip(bad::good_csv().substr(200));
         a.insert(a.end(), b.begin(), b.end());
         return a;
       }()),
       0},
  };
}

// ---- the list: hangs, silent wrong results, accepted-but-invalid, internal errors,
// files left behind, messages naming what the user did not type.
std::vector<Case> reported() {
  const std::string bom = "\xef\xbb\xbf";
  return {
      // 4 rows x 10^6 columns: the record-norm loop was quadratic in d (it never ended).
      {"wide_csv_trains", "train --data wide.csv --model logistic --sigma 1 --seed 1 --test-fraction 0.25",
       {"3 train / 1 test records"}, write_wide_csv, 0, 30},
      {"epochs_1e15_hang", train_args("--epochs 1e15"), {"--epochs"}},
      {"epochs_1e30_one_step", train_args("--epochs 1e30"), {"--epochs"}},
      {"epochs_4e18_one_step", train_args("--epochs 4e18"), {"--epochs"}},
      {"epochs_noisy_gd_1e30", train_args("--algorithm noisy-gd --epochs 1e30"), {"--epochs"}},
      {"bom_headerless_csv_train", "train --data bom.csv --model logistic --sigma 1 --seed 1 --test-fraction 0.2",
       {"4 train / 1 test records"}, text("bom.csv", bom + "1,2,0\n3,4,1\n5,6,0\n7,8,1\n9,9,0\n"), 0},
      {"bom_headerless_csv_predict", "predict --model-file model.json --data bom.csv",
       {"5 records of bom.csv"}, text("bom.csv", bom + "1,2,3,0\n3,4,5,1\n5,6,7,0\n7,8,9,1\n9,9,9,0\n"), 0},
      {"bom_header_csv", "train --data bom.csv --model logistic --sigma 1 --seed 1",
       {"4 train / 1 test records"}, text("bom.csv", bom + "a,b,y\n1,2,0\n3,4,1\n5,6,0\n7,8,1\n9,9,0\n"), 0},
      {"bom_libsvm", "train --format libsvm --data bom.svm --model logistic --sigma 1 --seed 1",
       {"4 train / 1 test records"}, text("bom.svm", bom + "0 1:1\n1 1:2\n0 1:3\n1 2:1\n0 1:5\n"), 0},
      {"bom_users", "train --data good.csv --model logistic --algorithm federated --users bom.txt --batch-size 2 "
                    "--sigma 1 --seed 1 --json",
       {"\"users\": 10"},
       text("bom.txt", bom + bad::good_users()), 0},
      {"seed_negative", train_args("--seed -1"), {"--seed", "-1"}},
      {"seed_2_64", train_args("--seed 18446744073709551616"), {"--seed", "18446744073709551616"}},
      {"split_seed_negative", train_args("--split-seed -1"), {"--split-seed", "-1"}},
      {"split_seed_2_64", train_args("--split-seed 18446744073709551616"), {"--split-seed"}},
      {"label_column_negative", train_args("--label-column -1"), {"--label-column", "-1"}},
      {"convention_bogus_with_example", "account --example --convention bogus", {"--convention", "bogus"}},
      {"model_version_99", predict_model(), {"bad.json", "version", "99"}, model([](json& d) { d["version"] = 99; })},
      {"model_label_kind_unknown", predict_model(), {"bad.json", "labels.kind", "bogus"},
       model([](json& d) { d["model"]["labels"]["kind"] = "bogus"; })},
      {"model_mapping_duplicate", predict_model(), {"bad.json", "labels.mapped"},
       model([](json& d) { d["model"]["labels"]["mapped"] = {1.0, 1.0}; })},
      {"model_features_1e15", predict_model(), {"bad.json", "features", "1000000000000000"},
       model([](json& d) { d["model"]["features"] = 1000000000000000LL; })},
      {"model_classes_1e12", predict_model("bad.json"), {"bad.json", "classes", "1000000000000"},
       model([](json& d) { d["model"]["classes"] = 1000000000000LL; }, bad::good_softmax_model())},
      {"gzip_records_bomb", csv_train("bomb.csv.gz"), {"bomb.csv.gz:16777217", "16777216 records"},
       [](const fs::path& dir) {
         bad::write(dir / "bomb.csv.gz", bad::gzip_repeated("0,1\n", (std::uint64_t{1} << 24) + 1));
       },
       2, 60},
      {"dev_zero", csv_train("/dev/zero"), {"/dev/zero:1:1"}},
      {"compare_svg_is_directory", kCompare + " --csv new.csv --svg svgdir", {"--svg", "svgdir"}, subdir("svgdir")},
      {"compare_svg_is_directory_existing_csv", kCompare + " --csv existing.out --svg svgdir", {"--svg"},
       subdir("svgdir")},
      {"audit_plot_is_directory", exact_args("--csv new.csv --plot plotdir"), {"--plot", "plotdir"}, subdir("plotdir")},
      {"audit_plot_is_directory_existing_csv", exact_args("--csv existing.out --plot plotdir --points 2"), {"--plot"},
       subdir("plotdir")},
      {"record_norm_1e200", train_args("--record-norm 1e200"), {"--record-norm", "1e+200"}},
      {"record_norm_1e200_target", "train --data good.csv --model logistic --record-norm 1e200 --epsilon 1 --delta 1e-5",
       {"--record-norm"}},
      {"sigma_1e308", "train --data good.csv --model logistic --sigma 1e308", {"--sigma", "1e+308"}},
      // Past what the noise grid draws (stds up to 2^960: noisy values and their sums must stay
      // doubles; issue 37): refused naming the flag, never an internal parameter ("sigma = inf"),
      // never a model of non-finite weights.
      {"noise_std_1e308_eta", "train --data good.csv --model logistic --noise-std 1e308 --eta 1e10 --seed 1 "
       "--output existing.out",
       {"--noise-std", "1e+308", "noise grid"}},
      {"feature_scale_nan", train_args("--feature-scale nan"), {"--feature-scale", "nan"}},
      {"feature_scale_inf_second", train_args("--feature-scale 1,inf,1"), {"--feature-scale", "inf"}},
      {"classes_absent", train_args("--classes 7 8"), {"--classes", "7"}},
      {"model_record_norm_negative", predict_model(), {"bad.json", "record_norm", "-1"},
       model([](json& d) { d["model"]["record_norm"] = -1; })},
      {"model_features_negative", predict_model(), {"bad.json", "features", "-1"},
       model([](json& d) { d["model"]["features"] = -1; })},
      {"cr_only_csv", csv_train("cr.csv"), {"cr.csv:1:6", "carriage return"}, text("cr.csv", "1,2,0\r3,4,1\r5,6,0\r")},
      {"predict_features_only_csv", "predict --model-file model.json --data x.csv --output existing.out",
       {"--data", "no label column", "--no-labels"}, text("x.csv", "1,2,3\n4,5,6\n")},
  };
}

std::vector<Case> csv_cases() {
  auto c = [](std::string name, std::string content, std::vector<std::string> expect, std::string more = "") {
    return Case{"csv_" + name, csv_train("bad.csv", more), std::move(expect), text("bad.csv", std::move(content))};
  };
  return {
      c("empty_file", "", {"bad.csv:1:1", "no records"}),
      c("header_only", "a,b,y\n", {"bad.csv:2:1", "no records"}),
      c("blank_line", "1,2,0\n\n3,4,1\n", {"bad.csv:2:1", "empty line"}),
      c("spaces_line", "1,2,0\n   \t\n3,4,1\n", {"bad.csv:2:1", "empty line"}),
      c("trailing_blank_lines", "1,2,0\n3,4,1\n\n\n", {"bad.csv:3:1", "empty line"}),
      c("short_row", "1,2,0\n3,1\n", {"bad.csv:2:4", "2 fields, expected 3"}),
      c("long_row", "1,2,0\n3,4,5,1\n", {"bad.csv:2:7", "4 fields, expected 3"}),
      c("not_a_number", "1,2,0\n3,x4,1\n", {"bad.csv:2:3", "'x4'"}),
      c("nan", "1,2,0\n3,nan,1\n", {"bad.csv:2:3", "not finite"}),
      c("inf", "1,2,0\n3,inf,1\n", {"bad.csv:2:3", "not finite"}),
      c("minus_inf", "1,2,0\n-inf,4,1\n", {"bad.csv:2:1", "not finite"}),
      c("out_of_range", "1,2,0\n1e400,4,1\n", {"bad.csv:2:1", "out of the float64 range"}),
      c("hex_number", "1,2,0\n0x10,4,1\n", {"bad.csv:2:1", "'0x10'"}),
      c("comma_decimal", "1;2;0\n3,5;4;1\n", {"bad.csv:1:1"}),
      c("quoted_feature", "1,2,0\n\"3\",4,1\n", {"bad.csv:2:1", "quoted"}),
      c("unterminated_quote", "1,2,0\n\"3,4,1\n", {"bad.csv:2:1", "unterminated"}),
      c("quote_inside_field", "1,2,0\n3a\"b,4,1\n", {"bad.csv:2:3", "quote inside"}),
      c("text_after_quote", "1,2,0\n\"3\"x,4,1\n", {"bad.csv:2:4", "after a closing quote"}),
      c("empty_feature", "1,2,0\n,4,1\n", {"bad.csv:2:1", "empty"}),
      c("empty_label", "1,2,0\n3,4,\n", {"bad.csv:2:5", "empty label"}),
      c("trailing_delimiter", "1,2,0,\n3,4,1,\n", {"bad.csv:1:7", "empty label"}),
      c("one_column", "0\n1\n0\n", {"bad.csv:1:1", "1 field(s)"}),
      c("tab_separated", "1\t2\t0\n3\t4\t1\n", {"bad.csv:1:1", "1 field(s)"}),
      c("nul_byte", std::string("1,2,0\n3,\0,1\n", 12), {"bad.csv:2:3", "NUL"}),
      c("binary_garbage", std::string("\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0", 16), {"bad.csv:1:8", "NUL"}),
      c("sklearn_header_fewer_rows", "3,2,a,b\n1,2,0\n3,4,1\n", {"bad.csv:1:1", "declares 3 records but the file has 2"}),
      c("sklearn_header_more_rows", "1,2,a,b\n1,2,0\n3,4,1\n", {"bad.csv:3:1", "more records than the 1 declared"}),
      c("sklearn_header_wrong_width", "2,3,a,b\n1,2,0\n3,4,1\n", {"bad.csv:2:", "expected 4"}),
      c("cr_crlf_mixed", "1,2,0\r\n3,4,1\r5,6,0\n", {"bad.csv:2:6", "carriage return"}),
      c("float32_overflow", "1,2,0\n4e38,4,1\n", {"bad.csv:2:1", "float32"}, " --feature-storage float32"),
      c("uint8_storage", bad::good_csv(), {"--feature-storage", "uint8"}, " --feature-storage uint8"),
      c("label_column_too_large", bad::good_csv(), {"--label-column", "7"}, " --label-column 7"),
      c("label_column_not_integer", bad::good_csv(), {"--label-column"}, " --label-column 1.5"),
      c("label_column_huge", bad::good_csv(), {"--label-column"}, " --label-column 99999999999999999999"),
      c("one_label_only", "1,2,0\n3,4,0\n5,6,0\n7,8,0\n", {"labels", "exactly 2", "bad.csv"}),
      c("three_labels_logistic", "1,2,0\n3,4,1\n5,6,2\n7,8,0\n", {"labels", "exactly 2", "bad.csv"}),
      c("text_labels_squared", "1,2,a\n3,4,b\n5,6,a\n7,8,b\n", {"bad.csv:1", "'a'"}, " --model squared"),
      {"csv_missing_file", csv_train("missing.csv"), {"--data", "missing.csv"}},
      {"csv_directory", csv_train("adir"), {"adir"}, subdir("adir")},
      {"csv_format_bogus", train_args("--format bogus"), {"--format", "bogus"}},
      {"csv_feature_storage_bogus", train_args("--feature-storage bogus"), {"--feature-storage", "bogus"}},
      {"csv_idx_file_as_csv", csv_train("images.idx"), {"images.idx:1:1", "NUL"}},
      {"csv_labels_flag_for_csv", train_args("--labels labels.idx"), {"--labels"}},
  };
}

std::vector<Case> libsvm_cases() {
  auto c = [](std::string name, std::string content, std::vector<std::string> expect) {
    return Case{"libsvm_" + name, svm_train("bad.svm"), std::move(expect), text("bad.svm", std::move(content))};
  };
  return {
      c("index_zero", "1 1:1\n0 0:1\n", {"bad.svm:2:3", "1-based"}),
      c("duplicate_index", "1 1:1 1:2\n0 2:1\n", {"bad.svm:1:7", "duplicate"}),
      c("decreasing_index", "1 3:1 2:2\n0 2:1\n", {"bad.svm:1:7", "strictly increasing"}),
      c("negative_index", "1 -1:1\n0 2:1\n", {"bad.svm:1:3", "'-1'"}),
      c("text_index", "1 a:1\n0 2:1\n", {"bad.svm:1:3", "'a'"}),
      c("fractional_index", "1 1.5:1\n0 2:1\n", {"bad.svm:1:3", "'1.5'"}),
      c("no_colon", "1 3\n0 2:1\n", {"bad.svm:1:3", "<index>:<value>"}),
      c("empty_value", "1 1:\n0 2:1\n", {"bad.svm:1:5", "empty"}),
      c("nan_value", "1 1:nan\n0 2:1\n", {"bad.svm:1:5", "not finite"}),
      c("huge_value", "1 1:1e999\n0 2:1\n", {"bad.svm:1:5", "out of the float64 range"}),
      c("qid", "1 qid:3 1:1\n0 2:1\n", {"bad.svm:1:3", "qid"}),
      c("label_missing", " 1:2\n0 2:1\n", {"bad.svm:1:2", "expected a label"}),
      c("index_beyond_values_limit", "1 4000000000:1\n0 1:1\n", {"bad.svm", "4000000000"}),
      c("index_2_64", "1 18446744073709551616:1\n0 1:1\n", {"bad.svm:1:3", "out of range"}),
      c("comments_only", "# a comment\n# another\n", {"bad.svm:3:1", "no records"}),
      c("empty_file", "", {"bad.svm:1:1", "no records"}),
      c("blank_line", "1 1:1\n\n0 2:1\n", {"bad.svm:2:1", "empty line"}),
      c("no_features_anywhere", "1\n0\n", {"bad.svm", "no feature index"}),
      c("cr_only", "1 1:1\r0 2:1\r", {"bad.svm:1:6", "carriage return"}),
      c("nul_byte", std::string("1 1:1\n0 2:\0\n", 12), {"bad.svm:2:5", "NUL"}),
      {"libsvm_csv_given_as_libsvm", svm_train("good.csv"), {"good.csv:41:1", "no feature index"}},
      {"libsvm_predict_index_beyond_model", "predict --model-file model.json --format libsvm --data bad.svm",
       {"bad.svm:1:3", "4"}, text("bad.svm", "1 4:1\n0 1:1\n")},
  };
}

std::vector<Case> idx_cases() {
  auto c = [](std::string name, std::string args, std::vector<std::string> expect, bad::Bytes content,
              std::string file = "bad.idx") {
    return Case{"idx_" + name, std::move(args), std::move(expect), bytes(file, std::move(content))};
  };
  bad::Bytes truncated = bad::good_images();
  truncated.resize(truncated.size() - 5);
  bad::Bytes trailing = bad::good_images();
  trailing.push_back(7);
  const bad::Bytes nan_f = {0x7f, 0xc0, 0, 0};
  const bad::Bytes inf_d = {0x7f, 0xf0, 0, 0, 0, 0, 0, 0};
  const bad::Bytes labels2 = bad::idx(0x08, {2}, {0, 1});
  return {
      c("wrong_magic", idx_train("bad.idx"), {"bad.idx: byte 0", "magic"}, images_with(0, 1)),
      c("unknown_type", idx_train("bad.idx"), {"bad.idx: byte 2", "0x0a"}, images_with(2, 0x0A)),
      c("zero_dimensions", idx_train("bad.idx"), {"bad.idx: byte 3", "zero dimensions"}, images_with(3, 0)),
      c("one_dimension_images", idx_train("bad.idx"), {"bad.idx: byte 3", "1 dimension"},
        bad::idx(0x08, {40}, bad::Bytes(40, 1))),
      c("labels_two_dimensions", idx_train("images.idx", "bad.idx"), {"bad.idx: byte 3", "exactly 1"},
        bad::idx(0x08, {40, 1}, bad::Bytes(40, 1))),
      c("dimension_size_zero", idx_train("bad.idx"), {"bad.idx: byte 8", "size 0"}, bad::idx(0x08, {40, 0, 2}, {})),
      c("truncated_header", idx_train("bad.idx"), {"bad.idx: byte", "truncated"}, bad::Bytes{0, 0, 8, 3, 0, 0}),
      c("truncated_data", idx_train("bad.idx"), {"bad.idx: byte", "truncated"}, truncated),
      c("trailing_bytes", idx_train("bad.idx"), {"bad.idx: byte 176", "unexpected data"}, trailing),
      c("label_count_mismatch", idx_train("images.idx", "bad.idx"), {"bad.idx: byte 4", "2 labels"}, labels2),
      c("empty_file", idx_train("bad.idx"), {"bad.idx: byte 0", "truncated"}, bad::Bytes{}),
      {"idx_nan_float", "train --format idx --data bad.idx --labels two.idx --model logistic --sigma 1",
       {"bad.idx: byte 16", "not finite"}, both(bytes("bad.idx", floats_idx(0x0D, nan_f)), bytes("two.idx", labels2))},
      {"idx_inf_double", "train --format idx --data bad.idx --labels two.idx --model logistic --sigma 1",
       {"bad.idx: byte 20", "not finite"}, both(bytes("bad.idx", floats_idx(0x0E, inf_d)), bytes("two.idx", labels2))},
      c("records_beyond_limit", idx_train("bad.idx"), {"bad.idx", "16777217 records", "16777216"},
        bad::idx(0x08, {(1u << 24) + 1, 1}, {})),
      c("features_beyond_limit", idx_train("bad.idx"), {"bad.idx", "16777217", "features"},
        bad::idx(0x08, {1, (1u << 24) + 1}, {})),
      c("values_beyond_limit", idx_train("bad.idx"), {"bad.idx", "268435456"}, bad::idx(0x08, {65536, 4097}, {})),
      c("header_promises_4g", idx_train("bad.idx"), {"bad.idx"}, bad::idx(0x08, {0xffffffffu, 0xffffffffu}, {})),
      c("uint8_storage_float_images", idx_train("bad.idx") + " --feature-storage uint8", {"--feature-storage"},
        bad::idx(0x0D, {40, 1}, bad::Bytes(160, 0))),
      {"idx_labels_missing", "train --format idx --data images.idx --model logistic --sigma 1", {"--labels"}},
      {"idx_labels_file_missing", idx_train("images.idx", "nothere.idx"), {"nothere.idx"}},
      {"idx_labels_are_images", idx_train("images.idx", "images.idx"), {"images.idx: byte 3"}},
      {"idx_csv_as_idx", idx_train("good.csv"), {"good.csv: byte 0", "magic"}},
      {"idx_test_labels_missing",
       idx_train("images.idx") + " --test-data images.idx", {"--test-labels"}},
  };
}

std::vector<Case> gzip_cases() {
  const bad::Bytes good = bad::gzip(bad::good_csv());
  bad::Bytes truncated = good;
  truncated.resize(truncated.size() / 2);
  bad::Bytes trailing = good;
  for (char ch : std::string("garbage")) trailing.push_back(static_cast<std::uint8_t>(ch));
  bad::Bytes corrupt = good;
  for (std::size_t i = 20; i < 40 && i < corrupt.size(); ++i) corrupt[i] ^= 0x5a;
  bad::Bytes bad_crc = good;
  bad_crc[bad_crc.size() - 6] ^= 0xff;
  bad::Bytes header_only(good.begin(), good.begin() + 10);
  const bad::Bytes images = bad::good_images();
  const bad::Bytes images_truncated = bad::gzip(std::string(images.begin(), images.end() - 9));
  auto c = [](std::string name, std::string args, std::vector<std::string> expect, bad::Bytes content,
              std::string file = "bad.gz") {
    return Case{"gzip_" + name, std::move(args), std::move(expect), bytes(file, std::move(content))};
  };
  return {
      c("truncated", csv_train("bad.gz"), {"bad.gz", "truncated gzip"}, truncated),
      c("trailing_garbage", csv_train("bad.gz"), {"bad.gz: byte", "after the end of the gzip stream"}, trailing),
      c("corrupt_deflate", csv_train("bad.gz"), {"bad.gz", "gzip"}, corrupt),
      c("bad_crc", csv_train("bad.gz"), {"bad.gz", "gzip"}, bad_crc),
      c("header_only", csv_train("bad.gz"), {"bad.gz", "truncated gzip"}, header_only),
      c("empty_content", csv_train("bad.gz"), {"bad.gz:1:1", "no records"}, bad::gzip("")),
      c("bad_csv_inside", csv_train("bad.gz"), {"bad.gz:3:3", "'oops'"}, bad::gzip("1,2,0\n3,4,1\n5,oops,0\n")),
      c("bad_libsvm_inside", svm_train("bad.gz"), {"bad.gz:2:3", "1-based"}, bad::gzip("1 1:1\n0 0:1\n")),
      c("idx_truncated_inside", idx_train("bad.gz"), {"bad.gz: byte", "truncated"}, images_truncated),
      c("users_truncated", "train --data good.csv --model logistic --algorithm federated --users bad.gz --sigma 1",
        {"bad.gz", "truncated gzip"}, [&] {
          bad::Bytes u = bad::gzip(bad::good_users());
          u.resize(u.size() - 12);
          return u;
        }()),
      c("gzip_of_gzip", csv_train("bad.gz"), {"bad.gz:1:"}, bad::gzip(std::string(good.begin(), good.end()))),
      c("libsvm_index_beyond_features", svm_train("bad.gz"), {"bad.gz:1:3", "268435457"},
        bad::gzip(std::string("1 268435457:1\n") + "0 1:1\n")),
  };
}

std::vector<Case> users_cases() {
  const std::string fed =
      "train --data good.csv --model logistic --algorithm federated --batch-size 2 --sigma 1 --seed 1 --output "
      "existing.out --users ";
  auto c = [&](std::string name, std::string content, std::vector<std::string> expect) {
    return Case{"users_" + name, fed + "bad.txt", std::move(expect), text("bad.txt", std::move(content))};
  };
  std::string fewer, more, blank = bad::good_users(), cr;
  for (int i = 0; i < 39; ++i) fewer += "u" + std::to_string(i) + "\n";
  more = bad::good_users() + "extra\n";
  blank.replace(blank.find("user1\n"), 6, "   \n");
  for (int i = 0; i < 40; ++i) cr += "u" + std::to_string(i) + "\r";
  return {
      c("fewer_ids", fewer, {"--users", "39 ids"}),
      c("more_ids", more, {"--users", "bad.txt:41"}),
      c("blank_id", blank, {"--users", "bad.txt:5"}),
      c("empty_file", "", {"--users", "0 ids"}),
      c("cr_only", cr, {"bad.txt:1:3", "carriage return"}),
      c("nul_byte", std::string("u1\n\0\n", 5), {"bad.txt:2:1", "NUL"}),
      {"users_missing_file", fed + "nothere.txt", {"--users", "nothere.txt"}},
      {"users_directory", fed + "udir", {"--users", "udir"}, subdir("udir")},
      {"users_without_federated", train_args("--users users.txt"), {"--users"}},
  };
}

// --feature-ranges: the public ranges file ('min max' per line, one line or one per feature;
// good.csv has 3 features).
std::vector<Case> feature_ranges_cases() {
  auto c = [](std::string name, std::string content, std::vector<std::string> expect) {
    return Case{"feature_ranges_" + name, train_args("--feature-ranges r.txt"), std::move(expect),
                text("r.txt", std::move(content))};
  };
  return {
      c("three_values", "0 1 2\n", {"--feature-ranges", "r.txt:1", "3 values"}),
      c("one_value", "0\n", {"--feature-ranges", "r.txt:1", "1 values"}),
      c("min_above_max", "1 0\n", {"--feature-ranges", "r.txt:1", "min < max"}),
      c("min_equals_max", "1 1\n", {"--feature-ranges", "r.txt:1", "min < max"}),
      c("nan", "nan 1\n", {"--feature-ranges", "r.txt:1", "'nan'"}),
      c("infinite", "0 inf\n", {"--feature-ranges", "r.txt:1", "'inf'"}),
      c("text", "a b\n", {"--feature-ranges", "r.txt:1", "'a'"}),
      c("two_of_three", "0 1\n0 1\n", {"--feature-ranges", "2 ranges", "d = 3"}),
      c("empty", "", {"--feature-ranges", "no ranges"}),
      c("width_overflows", "-1e308 1e308\n", {"--feature-ranges", "feature 1"}),
      c("width_subnormal", "0 1e-320\n", {"--feature-ranges", "feature 1", "2 / (max - min)"}),
      c("nul_byte", std::string("0 1\0\n", 5), {"r.txt:1:4", "NUL"}),
      {"feature_ranges_missing_file", train_args("--feature-ranges nothere.txt"), {"--feature-ranges", "nothere.txt"}},
      {"feature_ranges_directory", train_args("--feature-ranges rdir"), {"--feature-ranges", "rdir"}, subdir("rdir")},
      {"feature_ranges_with_feature_scale", train_args("--feature-ranges r.txt --feature-scale 2"),
       {"--feature-ranges", "--feature-scale"}, text("r.txt", "0 1\n")},
  };
}

std::vector<Case> model_cases() {
  auto c = [](std::string name, std::function<void(json&)> edit, std::vector<std::string> expect,
              json base = bad::good_model()) {
    return Case{"model_" + name, predict_model(), std::move(expect), model(std::move(edit), std::move(base))};
  };
  auto m = [](const char* key, json value) { return [key, value](json& d) { d["model"][key] = value; }; };
  auto labels = [](const char* key, json value) { return [key, value](json& d) { d["model"]["labels"][key] = value; }; };
  return {
      {"model_missing_file", predict_model("nothere.json"), {"--model-file", "nothere.json"}},
      {"model_directory", predict_model("mdir"), {"--model-file", "mdir"}, subdir("mdir")},
      {"model_empty_file", predict_model(), {"--model-file", "bad.json"}, text("bad.json", "")},
      {"model_not_json", predict_model(), {"--model-file", "bad.json"}, text("bad.json", "loss = logistic\n")},
      {"model_truncated_json", predict_model(), {"--model-file", "bad.json"},
       text("bad.json", bad::good_model().dump().substr(0, 60))},
      {"model_json_array", predict_model(), {"bad.json", "hsdp-model"}, text("bad.json", "[1, 2, 3]\n")},
      {"model_nan_token", predict_model(), {"--model-file", "bad.json"},
       text("bad.json", "{\"format\": \"hsdp-model\", \"version\": 1, \"model\": {\"record_norm\": NaN}}")},
      {"model_csv_given", predict_model("good.csv"), {"--model-file", "good.csv"}},
      c("format_other", [](json& d) { d["format"] = "other"; }, {"bad.json", "hsdp-model"}),
      c("model_missing", [](json& d) { d.erase("model"); }, {"bad.json", "model"}),
      c("version_missing", [](json& d) { d.erase("version"); }, {"bad.json", "version"}),
      c("version_string", [](json& d) { d["version"] = "1"; }, {"bad.json", "version"}),
      c("version_zero", [](json& d) { d["version"] = 0; }, {"bad.json", "version", "0"}),
      c("version_fraction", [](json& d) { d["version"] = 1.5; }, {"bad.json", "version"}),
      c("loss_unknown", m("loss", "hinge"), {"bad.json", "loss", "hinge"}),
      c("loss_number", m("loss", 3), {"bad.json", "loss"}),
      c("features_missing", [](json& d) { d["model"].erase("features"); }, {"bad.json", "features"}),
      c("features_zero", m("features", 0), {"bad.json", "features", "0"}),
      c("features_fraction", m("features", 2.5), {"bad.json", "features"}),
      c("features_string", m("features", "3"), {"bad.json", "features"}),
      c("features_beyond_limit", m("features", 16777217), {"bad.json", "features", "16777217"}),
      c("bias_not_bool", m("bias", "yes"), {"bad.json", "bias"}),
      c("outputs_wrong", m("outputs", 2), {"bad.json", "outputs", "2"}),
      c("weights_missing", [](json& d) { d["model"].erase("weights"); }, {"bad.json", "weights"}),
      c("weights_rows", m("weights", json::array({json::array({1, 2, 3}), json::array({1, 2, 3})})),
        {"bad.json", "weights"}),
      c("weights_row_length", m("weights", json::array({json::array({1, 2})})), {"bad.json", "weights"}),
      c("weights_null", m("weights", json::array({json::array({1, nullptr, 3})})), {"bad.json", "weights"}),
      c("weights_not_array", m("weights", 5), {"bad.json", "weights"}),
      c("intercept_length", m("intercept", json::array({0.1, 0.2})), {"bad.json", "intercept"}),
      c("intercept_string", m("intercept", json::array({"a"})), {"bad.json", "intercept"}),
      c("record_norm_zero", m("record_norm", 0), {"bad.json", "record_norm", "0"}),
      c("record_norm_string", m("record_norm", "1"), {"bad.json", "record_norm"}),
      c("record_norm_missing", [](json& d) { d["model"].erase("record_norm"); }, {"bad.json", "record_norm"}),
      c("feature_scale_length", m("feature_scale", json::array({1, 1})), {"bad.json", "feature_scale"}),
      c("feature_scale_null", m("feature_scale", json::array({1, nullptr, 1})), {"bad.json", "feature_scale"}),
      c("l2_negative", m("l2", -1), {"bad.json", "l2", "-1"}),
      c("labels_missing", [](json& d) { d["model"].erase("labels"); }, {"bad.json", "labels"}),
      c("labels_raw_mapped_lengths", labels("mapped", {-1.0}), {"bad.json", "labels"}),
      c("labels_raw_duplicate", labels("raw", {"0", "0"}), {"bad.json", "labels.raw"}),
      c("labels_raw_numbers", labels("raw", {0, 1}), {"bad.json", "labels.raw"}),
      c("labels_mapped_not_pm1", labels("mapped", {0.0, 2.0}), {"bad.json", "labels.mapped"}),
      c("labels_kind_real_for_logistic", labels("kind", "real"), {"bad.json", "labels.kind"}),
      c("labels_one_label", [](json& d) { d["model"]["labels"]["raw"] = {"1"}; d["model"]["labels"]["mapped"] = {1.0}; },
        {"bad.json", "labels"}),
      c("softmax_classes_missing", [](json& d) { d["model"].erase("classes"); }, {"bad.json", "classes"},
        bad::good_softmax_model()),
      c("softmax_classes_one", m("classes", 1), {"bad.json", "classes", "1"}, bad::good_softmax_model()),
      c("softmax_classes_beyond_limit", m("classes", 65537), {"bad.json", "classes", "65537"},
        bad::good_softmax_model()),
      c("softmax_mapped_not_ids", labels("mapped", {0.0, 1.0, 5.0}), {"bad.json", "labels.mapped"},
        bad::good_softmax_model()),
      c("softmax_parameters_beyond_limit",
        [](json& d) {
          d["model"]["features"] = 16777216;
          d["model"]["classes"] = 100;
          d["model"]["outputs"] = 100;
        },
        {"bad.json", "parameters"}, bad::good_softmax_model()),
      {"model_file_beyond_size_limit", predict_model("huge.json"), {"huge.json", "bytes"},
       [](const fs::path& dir) {
         // A sparse file: 4 GiB + 1 of size on disk costs no space.
         bad::write(dir / "huge.json", std::string("{"));
         fs::resize_file(dir / "huge.json", (std::uintmax_t{1} << 32) + 1);
       }},
      {"model_predict_labels_unseen", "predict --model-file model.json --data bad.csv --output existing.out",
       {"bad.csv:2", "= 7"}, text("bad.csv", "1,2,3,0\n1,2,3,7\n")},
      {"model_predict_wrong_width", "predict --model-file model.json --data bad.csv", {"--data", "bad.csv", "3"},
       text("bad.csv", "1,2,3,4,0\n1,2,3,4,1\n")},
  };
}

std::vector<Case> run_flag_cases() {
  auto a = [](std::string name, std::string flags, std::vector<std::string> expect) {
    return Case{"account_" + name, "account " + std::move(flags), std::move(expect)};
  };
  return {
      a("n_zero", "--example --n 0", {"--n", "0"}),
      a("n_negative", "--example --n -5", {"--n", "-5"}),
      a("n_fraction", "--example --n 1.5", {"--n", "1.5"}),
      a("n_exponent", "--example --n 1e3", {"--n", "1e3"}),
      a("n_overflow", "--example --n 99999999999999999999", {"--n", "99999999999999999999"}),
      a("n_beyond_2_53", "--example --n 9007199254740993", {"--n", "9007199254740993"}),
      a("n_missing", "--eta 0.1 --noise-std 1", {"--n", "missing"}),
      a("n_text", "--example --n ten", {"--n", "ten"}),
      a("steps_zero", "--example --steps 0", {"--steps", "0"}),
      a("steps_negative", "--example --steps -3", {"--steps"}),
      a("batch_zero", "--example --batch-size 0", {"--batch-size", "0"}),
      a("batch_beyond_n", "--example --batch-size 101", {"--batch-size", "101"}),
      a("sampling_bogus", "--example --sampling bogus", {"--sampling", "bogus"}),
      a("eta_zero", "--example --eta 0", {"--eta", "0"}),
      a("eta_negative", "--example --eta -1", {"--eta", "-1"}),
      a("eta_nan", "--example --eta nan", {"--eta", "nan"}),
      a("eta_inf", "--example --eta inf", {"--eta", "inf"}),
      a("eta_text", "--example --eta fast", {"--eta", "fast"}),
      a("eta_schedule_bogus", "--example --eta-schedule bogus", {"--eta-schedule", "bogus"}),
      a("noise_bogus", "--example --noise bogus", {"--noise", "bogus"}),
      a("sigma_no_convention", "--n 10 --eta 0.1 --sigma 1", {"--convention"}),
      a("convention_bogus", "--n 10 --eta 0.1 --sigma 1 --convention bogus", {"--convention", "bogus"}),
      a("noise_std_zero", "--example --noise-std 0", {"--noise-std", "0"}),
      a("noise_std_and_sigma", "--example --noise-std 1 --sigma 1 --convention journal", {"--sigma"}),
      a("multiplier_no_clip", "--n 10 --eta 0.1 --noise-multiplier 1", {"--clip"}),
      a("clip_negative", "--example --clip -1", {"--clip", "-1"}),
      a("lipschitz_nan", "--example --lipschitz nan", {"--lipschitz", "nan"}),
      a("smoothness_negative", "--example --smoothness -1", {"--smoothness", "-1"}),
      a("strong_convexity_negative", "--example --strong-convexity -1", {"--strong-convexity"}),
      a("diameter_zero", "--example --diameter 0", {"--diameter", "0"}),
      a("lsi_negative", "--example --lsi -1", {"--lsi", "-1"}),
      a("dimension_zero", "--example --dimension 0", {"--dimension", "0"}),
      a("index_zero", "--example --index 0", {"--index", "0"}),
      a("index_beyond_n", "--example --index 101", {"--index", "101"}),
      a("release_bogus", "--example --release bogus", {"--release", "bogus"}),
      a("adjacency_bogus", "--example --adjacency bogus", {"--adjacency", "bogus"}),
      a("drop_last_bogus", "--example --sampling shuffle --drop-last maybe", {"--drop-last", "maybe", "true or false"}),
      a("drop_last_empty", "--example --sampling shuffle --drop-last ''", {"--drop-last", "true or false"}),
      a("drop_last_cyclic", "--example --drop-last false", {"--drop-last", "false", "--sampling shuffle"}),
      a("order_known_bogus", "--example --order-known 1", {"--order-known", "1", "true or false"}),
      a("pld_interval_zero", "--example --pld-interval 0", {"--pld-interval", "0"}),
      a("pld_cells_huge", "--example --pld-cells 1e9", {"--pld-cells"}),
      a("delta_zero", "--example --delta 0", {"--delta", "0"}),
      a("delta_one", "--example --delta 1", {"--delta", "1"}),
      a("epsilon_negative", "--example --epsilon -1", {"--epsilon", "-1"}),
      a("epsilon_and_delta", "--example --epsilon 1 --delta 1e-5", {"--epsilon", "--delta"}),
      a("alpha_one", "--example --alpha 1", {"--alpha", "1"}),
      a("alpha_half", "--example --alpha 0.5", {"--alpha", "0.5"}),
      a("analysis_bogus", "--example --analysis bogus", {"--analysis", "bogus"}),
      a("per_index_points_small", "--example --per-index --per-index-points 3", {"--per-index-points", "3"}),
      a("unknown_flag", "--example --bogus 1", {"--bogus"}),
      a("steps_text", "--example --steps many", {"--steps", "many"}),
      a("example_convention_without_sigma", "--example --noise-std 1 --convention isit", {"--convention"}),
  };
}

std::vector<Case> command_cases() {
  auto k = [](std::string name, std::string args, std::vector<std::string> expect,
              std::function<void(const fs::path&)> make = nullptr) {
    return Case{std::move(name), std::move(args), std::move(expect), std::move(make)};
  };
  return {
      // calibrate
      k("calibrate_for_bogus", "calibrate --example --for bogus --epsilon 1 --delta 1e-5", {"--for", "bogus"}),
      k("calibrate_for_missing", "calibrate --example --epsilon 1 --delta 1e-5", {"--for"}),
      k("calibrate_noise_unit_bogus", kCalibrate + " --noise-unit bogus", {"--noise-unit", "bogus"}),
      k("calibrate_max_steps_zero", "calibrate --example --for steps --epsilon 1 --delta 1e-5 --max-steps 0",
        {"--max-steps", "0"}),
      k("calibrate_max_steps_negative", "calibrate --example --for steps --epsilon 1 --delta 1e-5 --max-steps -1",
        {"--max-steps"}),
      k("calibrate_delta_missing", "calibrate --example --for noise --epsilon 1", {"--delta"}),
      k("calibrate_epsilon_negative", "calibrate --example --for noise --epsilon -1 --delta 1e-5", {"--epsilon"}),
      k("calibrate_delta_two", "calibrate --example --for noise --epsilon 1 --delta 2", {"--delta", "2"}),
      // plan
      k("plan_setting_bogus", "plan --setting bogus --epsilon 1 --delta 1e-5 --n 1000", {"--setting", "bogus"}),
      k("plan_epsilon_zero", "plan --setting noisy-sgd --epsilon 0 --delta 1e-5 --n 1000 --lipschitz 1 --smoothness 1",
        {"--epsilon", "0"}),
      k("plan_delta_two", "plan --setting noisy-sgd --epsilon 1 --delta 2 --n 1000 --lipschitz 1 --smoothness 1",
        {"--delta", "2"}),
      k("plan_n_zero", "plan --setting noisy-sgd --epsilon 1 --delta 1e-5 --n 0 --lipschitz 1 --smoothness 1",
        {"--n", "0"}),
      k("plan_n_negative", "plan --setting noisy-sgd --epsilon 1 --delta 1e-5 --n -4 --lipschitz 1 --smoothness 1",
        {"--n"}),
      k("plan_lipschitz_negative", "plan --setting noisy-sgd --epsilon 1 --delta 1e-5 --n 1000 --lipschitz -1 "
                                   "--smoothness 1",
        {"--lipschitz", "-1"}),
      k("plan_batch_zero", kPlan + " --batch-size 0", {"--batch-size", "0"}),
      k("plan_dimension_negative", "plan --setting langevin --epsilon 1 --delta 1e-5 --n 1000 --lipschitz 1 "
                                   "--smoothness 1 --strong-convexity 0.1 --dimension -1",
        {"--dimension"}),
      k("plan_n_missing", "plan --setting noisy-sgd --epsilon 1 --delta 1e-5", {"--n"}),
      // compare
      k("compare_x_bogus", "compare --example --x bogus --from 1 --to 10", {"--x", "bogus"}),
      k("compare_points_one", "compare --example --x steps --from 1 --to 10 --points 1", {"--points", "1"}),
      k("compare_points_huge", "compare --example --x steps --from 1 --to 10 --points 100001", {"--points"}),
      k("compare_figure_bogus", "compare --figure bogus", {"--figure", "bogus"}),
      k("compare_y_scale_bogus", kCompare + " --y-scale bogus", {"--y-scale", "bogus"}),
      k("compare_rdp_half", kCompare + " --rdp 0.5", {"--rdp"}),
      k("compare_analysis_bogus", kCompare + " --analysis bogus", {"--analysis", "bogus"}),
      k("compare_from_nan", "compare --example --x steps --from nan --to 10", {"--from"}),
      k("compare_csv_is_directory", kCompare + " --csv cdir --svg new.svg", {"--csv", "cdir"}, subdir("cdir")),
      k("compare_svg_missing_dir", kCompare + " --csv new.csv --svg nodir/plot.svg", {"--svg", "nodir/plot.svg"}),
      k("compare_csv_empty_path", kCompare + " --csv ''", {"--csv"}),
      // audit exact
      k("audit_grid_small", exact_args("--grid 10"), {"--grid", "10"}),
      k("audit_grid_huge", exact_args("--grid 99999999"), {"--grid"}),
      k("audit_pair_bogus", exact_args("--pair bogus"), {"--pair", "bogus"}),
      k("audit_points_zero", exact_args("--csv new.csv --points 0"), {"--points", "0"}),
      k("audit_points_huge", exact_args("--csv new.csv --points 1001"), {"--points", "1001"}),
      k("audit_csv_is_directory", exact_args("--csv cdir --plot new.svg --points 2"), {"--csv", "cdir"}, subdir("cdir")),
      k("audit_csv_missing_dir", exact_args("--csv nodir/a.csv --points 2"), {"--csv", "nodir/a.csv"}),
      k("audit_kind_missing", "audit --example", {"subcommand"}),
      // audit mia
      k("mia_trials_small", mia_args("--trials 2"), {"--trials", "2"}),
      k("mia_trials_negative", mia_args("--trials -1"), {"--trials"}),
      k("mia_confidence_one", mia_args("--confidence 1"), {"--confidence", "1"}),
      k("mia_confidence_zero", mia_args("--confidence 0"), {"--confidence", "0"}),
      k("mia_seed_negative", mia_args("--seed -1"), {"--seed", "-1"}),
      k("mia_seed_2_64", mia_args("--seed 18446744073709551616"), {"--seed"}),
      k("mia_canary_zero", mia_args("--canary-index 0"), {"--canary-index", "0"}),
      k("mia_canary_beyond_n", mia_args("--canary-index 41"), {"--canary-index", "41"}),
      k("mia_threads_negative", mia_args("--threads -1"), {"--threads", "-1"}),
      k("mia_delta_zero", mia_args("--delta 0"), {"--delta", "0"}),
      k("mia_data_missing", "audit mia --data nothere.csv --model logistic --sigma 1 --trials 4", {"--data", "nothere.csv"}),
      k("mia_label_column_negative", mia_args("--label-column -1"), {"--label-column", "-1"}),
      k("mia_classes_absent", mia_args("--classes 5"), {"--classes", "5"}),
      k("mia_feature_scale_nan", mia_args("--feature-scale nan"), {"--feature-scale", "nan"}),
      k("mia_record_norm_huge", mia_args("--record-norm 1e200"), {"--record-norm"}),
      k("mia_sigma_huge", mia_args("--sigma 1e308"), {"--sigma"}),
      k("mia_epochs_huge", mia_args("--epochs 1e30"), {"--epochs"}),
      // subcommands
      k("no_subcommand", "", {"subcommand"}),
      k("unknown_subcommand", "frobnicate", {"frobnicate"}),
  };
}

std::vector<Case> train_cases() {
  auto t = [](std::string name, std::string flags, std::vector<std::string> expect,
              std::function<void(const fs::path&)> make = nullptr) {
    return Case{"train_" + name, train_args(flags), std::move(expect), std::move(make)};
  };
  return {
      t("model_bogus", "--model bogus", {"--model", "bogus"}),
      {"train_model_missing", "train --data good.csv --sigma 1", {"--model"}},
      t("algorithm_bogus", "--algorithm bogus", {"--algorithm", "bogus"}),
      t("constraint_bogus", "--constraint bogus", {"--constraint", "bogus"}),
      t("radius_zero", "--radius 0", {"--radius", "0"}),
      t("radius_negative", "--radius -1", {"--radius", "-1"}),
      t("radius_nan", "--radius nan", {"--radius", "nan"}),
      t("l2_negative", "--l2 -1", {"--l2", "-1"}),
      t("l2_inf", "--l2 inf", {"--l2", "inf"}),
      t("huber_smoothing_zero", "--model huber --huber-smoothing 0", {"--huber-smoothing", "0"}),
      t("label_bound_zero", "--model squared --label-bound 0", {"--label-bound", "0"}),
      t("label_bound_exceeded", "--model squared --label-bound 0.5", {"--label-bound", "0.5"}),
      t("record_norm_zero", "--record-norm 0", {"--record-norm", "0"}),
      t("record_norm_negative", "--record-norm -1", {"--record-norm", "-1"}),
      t("record_norm_nan", "--record-norm nan", {"--record-norm", "nan"}),
      t("record_norm_inf", "--record-norm inf", {"--record-norm", "inf"}),
      t("sampling_bogus", "--sampling bogus", {"--sampling", "bogus"}),
      t("sampling_with_noisy_gd", "--algorithm noisy-gd --sampling poisson", {"--sampling", "--algorithm noisy-gd"}),
      t("batch_zero", "--batch-size 0", {"--batch-size", "0"}),
      t("batch_beyond_n", "--batch-size 33", {"--batch-size", "33"}),
      t("batch_negative", "--batch-size -4", {"--batch-size"}),
      t("steps_zero", "--steps 0", {"--steps", "0"}),
      t("steps_negative", "--steps -2", {"--steps"}),
      t("steps_beyond_limit", "--steps 1099511627777", {"--steps", "1099511627777"}),
      t("steps_fraction", "--steps 2.5", {"--steps"}),
      t("steps_pnsgd_beyond_pass", "--algorithm pnsgd --steps 33", {"--steps", "33"}),
      t("epochs_zero", "--epochs 0", {"--epochs", "0"}),
      t("epochs_negative", "--epochs -1", {"--epochs", "-1"}),
      t("epochs_nan", "--epochs nan", {"--epochs", "nan"}),
      t("epochs_inf", "--epochs inf", {"--epochs", "inf"}),
      t("epochs_beyond_step_limit", "--epochs 1e12 --batch-size 1", {"--epochs"}),
      t("eta_zero", "--eta 0", {"--eta", "0"}),
      t("eta_nan", "--eta nan", {"--eta", "nan"}),
      t("eta_schedule_bogus", "--eta-schedule bogus", {"--eta-schedule", "bogus"}),
      t("noise_bogus", "--noise bogus", {"--noise", "bogus"}),
      t("release_bogus", "--release bogus", {"--release", "bogus"}),
      t("clip_zero", "--clip 0", {"--clip", "0"}),
      t("clip_nan", "--clip nan", {"--clip", "nan"}),
      {"train_sigma_zero", "train --data good.csv --model logistic --sigma 0", {"--sigma", "0"}},
      {"train_sigma_negative", "train --data good.csv --model logistic --sigma -1", {"--sigma", "-1"}},
      {"train_sigma_nan", "train --data good.csv --model logistic --sigma nan", {"--sigma", "nan"}},
      {"train_noise_std_inf", "train --data good.csv --model logistic --noise-std inf", {"--noise-std", "inf"}},
      {"train_no_noise_spec", "train --data good.csv --model logistic", {"--epsilon", "--sigma"}},
      {"train_sigma_and_noise_std", "train --data good.csv --model logistic --sigma 1 --noise-std 1", {"--sigma"}},
      {"train_epsilon_negative", "train --data good.csv --model logistic --epsilon -1 --delta 1e-5", {"--epsilon"}},
      {"train_epsilon_nan", "train --data good.csv --model logistic --epsilon nan --delta 1e-5", {"--epsilon"}},
      t("delta_two", "--delta 2", {"--delta", "2"}),
      t("seed_text", "--seed abc", {"--seed", "abc"}),
      t("seed_fraction", "--seed 1.5", {"--seed", "1.5"}),
      t("seed_plus_sign_overflow", "--seed +18446744073709551616", {"--seed"}),
      t("test_fraction_zero", "--test-fraction 0", {"--test-fraction", "0"}),
      t("test_fraction_one", "--test-fraction 1", {"--test-fraction", "1"}),
      t("test_fraction_tiny", "--test-fraction 0.001", {"--test-fraction", "0.001"}),
      t("feature_scale_count", "--feature-scale 1,2", {"--feature-scale", "2 values"}),
      t("feature_scale_text", "--feature-scale abc", {"--feature-scale"}),
      t("classes_repeated", "--classes 0 0", {"--classes", "0"}),
      t("positive_absent", "--positive 7", {"--positive", "7"}),
      t("positive_with_softmax", "--model softmax --positive 1", {"--positive"}),
      t("test_data_missing", "--test-data nothere.csv", {"--test-data", "nothere.csv"}),
      t("test_data_other_width", "--test-data w.csv", {"--test-data", "w.csv"}, text("w.csv", "1,2,0\n3,4,1\n")),
      t("test_data_unseen_label", "--test-data t.csv", {"t.csv:2", "= 5"}, text("t.csv", "1,2,3,0\n1,2,3,5\n")),
      {"train_output_is_directory", kTrain + " --output odir", {"--output", "odir"}, subdir("odir")},
      {"train_output_missing_dir", kTrain + " --output nodir/model.json", {"--output", "nodir/model.json"}},
      {"train_softmax_too_many_classes", train_args("--model softmax", "many.csv"), {"classes", "65536"},
       [](const fs::path& dir) {
         std::string s;
         for (int i = 0; i < 70000; ++i) s += "1," + std::to_string(i) + "\n";
         bad::write(dir / "many.csv", s);
       }},
      {"train_softmax_one_class", train_args("--model softmax", "bad.csv"), {"labels", "bad.csv"},
       text("bad.csv", "1,0\n2,0\n3,0\n")},
      t("federated_batch_beyond_users", "--algorithm federated --batch-size 33", {"--batch-size", "33"}),
      t("online_steps_beyond_n", "--algorithm online --steps 33", {"--steps", "33"}),
      t("feature_storage_uint8_csv", "--feature-storage uint8", {"--feature-storage"}),
  };
}

std::vector<Case> predict_cases() {
  auto p = [](std::string name, std::string flags, std::vector<std::string> expect,
              std::function<void(const fs::path&)> make = nullptr) {
    return Case{"predict_" + name, kPredict + " --output existing.out " + flags, std::move(expect), std::move(make)};
  };
  return {
      p("classes_absent", "--classes 9", {"--classes", "9"}),
      p("label_column_negative", "--label-column -1", {"--label-column", "-1"}),
      p("label_column_beyond", "--label-column 9", {"--label-column", "9"}),
      p("format_bogus", "--format bogus", {"--format", "bogus"}),
      p("feature_storage_bogus", "--feature-storage bogus", {"--feature-storage", "bogus"}),
      p("idx_without_labels", "--format idx", {"--labels"}),
      {"predict_output_is_directory", kPredict + " --output odir", {"--output", "odir"}, subdir("odir")},
      {"predict_output_missing_dir", kPredict + " --output nodir/p.csv", {"--output", "nodir/p.csv"}},
      {"predict_data_missing", "predict --model-file model.json --data nothere.csv", {"--data", "nothere.csv"}},
      {"predict_model_file_missing_flag", "predict --data good.csv", {"--model-file"}},
      {"predict_softmax_unseen_class", "predict --model-file softmax.json --data good.csv --classes 2",
       {"--classes", "2"}},
      {"predict_real_labels_text", "predict --model-file sq.json --data t.csv", {"t.csv:1", "= a"},
       both(text("t.csv", "1,2,3,a\n"), [](const fs::path& dir) {
         json doc = bad::good_model();
         doc["model"]["loss"] = "squared";
         doc["model"]["label_bound"] = 1.0;
         doc["model"]["labels"] = {{"kind", "real"}, {"raw", json::array()}, {"mapped", json::array()}};
         bad::write(dir / "sq.json", doc.dump(2));
       })},
  };
}

// ---- the second round (issue 31): cases the first catalogue did not hold, by cause. Names
// start with r2_ (`--gtest_filter='*r2_*'` runs the round; HSDP_CATALOGUE_CLI runs it against
// another build).

// A character device `name` in the case directory, the device (major, minor) of `system` (1,3
// is /dev/null, 1,7 /dev/full): made with mknod where allowed, else a symbolic link to the
// system's device (as an unprivileged user), so no case ever writes to /dev itself.
std::function<void(const fs::path&)> device(std::string name, unsigned major, unsigned minor, std::string system) {
  return [=](const fs::path& dir) {
    const fs::path at = dir / name;
    if (::mknod(at.c_str(), S_IFCHR | 0666, makedev(major, minor)) != 0) fs::create_symlink(system, at);
  };
}
std::function<void(const fs::path&)> fifo(std::string name) {
  return [name](const fs::path& dir) {
    if (::mkfifo((dir / name).c_str(), 0644) != 0) throw std::runtime_error("mkfifo");
  };
}
void still_a_device(const fs::path& dir, const std::string& name) {
  struct stat st {};
  ASSERT_EQ(::stat((dir / name).c_str(), &st), 0) << name;
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << name << " is no longer a character device";
}
std::uint32_t mode_of(const fs::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  return st.st_mode & 07777;
}

std::vector<Case> second_round() {
  std::vector<Case> out;
  // A flag as part of a case name ("--batch-size" -> "batch_size").
  auto named = [](const std::string& flag) {
    std::string n = flag.substr(2);
    for (char& c : n)
      if (c == '-') c = '_';
    return n;
  };
  auto add = [&](std::string name, std::string args, std::vector<std::string> expect,
                 std::function<void(const fs::path&)> make = nullptr, int status = 2, int limit = kLimit) {
    out.push_back(Case{"r2_" + std::move(name), std::move(args), std::move(expect), std::move(make), status, limit});
  };
  const auto test_csv = text("t.csv", "1,2,3,0\n4,5,6,1\n1,1,1,0\n2,2,2,1\n");
  const std::string gd = "--algorithm noisy-gd";

  // -- typed values the run does not use: each refused naming it (never exit 0 with it ignored)
  add("train_full_batch_size", train_args("--sampling full --batch-size 5"), {"--batch-size", "5", "full"});
  add("train_noisy_gd_batch_size", train_args(gd + " --batch-size 5"), {"--batch-size", "noisy-gd"});
  add("train_pnsgd_epochs", train_args("--algorithm pnsgd --epochs 3"), {"--epochs", "pnsgd"});
  add("train_federated_epochs", train_args("--algorithm federated --epochs 3"), {"--epochs", "federated"});
  add("train_online_epochs", train_args("--algorithm online --epochs 3"), {"--epochs", "online"});
  add("train_online_batch_size", train_args("--algorithm online --batch-size 4"), {"--batch-size", "online"});
  add("train_steps_and_epochs", train_args("--steps 3 --epochs 5"), {"--epochs", "--steps"});
  add("train_noisy_gd_steps_and_epochs", train_args(gd + " --steps 3 --epochs 5"), {"--epochs", "--steps"});
  add("train_constraint_none_radius", train_args("--constraint none --radius 5"), {"--radius", "--constraint none"});
  add("train_huber_smoothing_logistic", train_args("--huber-smoothing 3"), {"--huber-smoothing", "huber"});
  add("train_huber_smoothing_softmax", train_args("--model softmax --huber-smoothing 3"), {"--huber-smoothing"});
  add("train_label_bound_logistic", train_args("--label-bound 2"), {"--label-bound", "squared"});
  add("train_test_data_and_fraction", train_args("--test-data t.csv --test-fraction 0.3"), {"--test-fraction", "--test-data"},
      test_csv);
  add("train_test_data_and_split_seed", train_args("--test-data t.csv --split-seed 5"), {"--split-seed", "--test-data"},
      test_csv);
  add("train_no_noise_laplace", "train --data good.csv --model logistic --no-noise --noise laplace --output existing.out",
      {"--noise", "--no-noise"});
  add("train_no_noise_delta", "train --data good.csv --model logistic --no-noise --delta 1e-6 --output existing.out",
      {"--delta", "--no-noise"});
  add("train_test_labels_without_test_data", train_args("--test-labels labels.idx"), {"--test-labels", "--test-data"});
  add("train_label_column_libsvm", "train --format libsvm --data good.libsvm --model logistic --sigma 1 --label-column 0",
      {"--label-column", "--format csv"});
  add("train_positive_squared", train_args("--model squared --positive 1"), {"--positive", "squared"});
  add("train_full_batch_size_target", "train --data good.csv --model logistic --epsilon 1 --sampling full --batch-size 5",
      {"--batch-size", "full"});
  add("train_noise_std_with_no_noise", "train --data good.csv --model logistic --no-noise --noise-std 1", {"--noise-std"});
  add("mia_full_batch_size", mia_args("--sampling full --batch-size 5"), {"--batch-size", "full"});
  add("mia_huber_smoothing_logistic", mia_args("--huber-smoothing 2"), {"--huber-smoothing"});
  add("mia_constraint_none_radius", mia_args("--constraint none --radius 3"), {"--radius"});
  add("mia_steps_and_epochs", mia_args("--steps 3 --epochs 2"), {"--epochs", "--steps"});
  add("mia_pnsgd_epochs", mia_args("--algorithm pnsgd --epochs 2"), {"--epochs"});
  add("account_per_index_points_alone", "account --example --per-index-points 50", {"--per-index-points", "--per-index"});
  add("account_duplicate_analysis", "account --example --analysis composition-rdp --analysis composition-rdp",
      {"--analysis", "composition-rdp"});
  add("account_duplicate_alpha", "account --example --alpha 2 --alpha 2", {"--alpha", "2"});
  // A stated value is the user's: --example fills only what is not stated (it replaced inf by 1).
  add("account_example_diameter_inf", "account --example --diameter inf", {"D=inf"}, nullptr, 0);
  add("calibrate_noise_max_steps", kCalibrate + " --max-steps 100", {"--max-steps", "--for steps"});
  add("calibrate_steps_noise_unit", "calibrate --example --for steps --epsilon 1 --delta 1e-5 --noise-unit sigma",
      {"--noise-unit", "--for noise"});
  add("calibrate_rate_max_steps", "calibrate --example --for sampling-rate --epsilon 1 --delta 1e-5 --max-steps 10",
      {"--max-steps"});
  add("audit_points_without_outputs", exact_args("--points 5"), {"--points", "--csv"});
  add("audit_grid_closed_form", "audit exact --n 10 --eta 0.1 --noise-std 1 --lipschitz 1 --steps 3 --grid 129",
      {"--grid", "closed form"});
  add("plan_online_r0", "plan --setting online --epsilon 1 --delta 1e-5 --n 100 --lipschitz 1 --diameter 1 --r0 5",
      {"--r0", "langevin"});
  add("compare_steps_swept", kCompare + " --steps 10", {"--steps", "--x steps"});
  add("compare_index_swept", "compare --example --x index --from 1 --to 10 --points 3 --index 5", {"--index", "--x index"});
  add("compare_title_without_svg", kCompare + " --title hello", {"--title", "--svg"});
  add("compare_y_scale_without_svg", kCompare + " --y-scale log", {"--y-scale", "--svg"});
  add("predict_labels_csv", kPredict + " --output existing.out --labels labels.idx", {"--labels", "idx"});
  add("predict_label_column_libsvm", "predict --model-file model.json --format libsvm --data good.libsvm --label-column 0",
      {"--label-column", "--format csv"});
  add("predict_no_labels_classes", "predict --model-file model.json --data x.csv --no-labels --classes 0 --output new.csv",
      {"--classes", "--no-labels"}, text("x.csv", "1,2,3\n4,5,6\n"));
  add("predict_no_labels_label_column",
      "predict --model-file model.json --data x.csv --no-labels --label-column 2 --output new.csv",
      {"--label-column", "--no-labels"}, text("x.csv", "1,2,3\n4,5,6\n"));

  // -- empty values: an error naming the flag, never the default
  for (const std::string flag : {"--eta", "--delta", "--batch-size", "--epochs", "--l2", "--feature-scale", "--sigma",
                                 "--model", "--format", "--output", "--seed", "--split-seed", "--label-column",
                                 "--test-fraction", "--record-norm", "--radius", "--huber-smoothing", "--clip", "--steps",
                                 "--noise-std", "--classes", "--positive", "--feature-storage", "--epsilon",
                                 "--algorithm", "--sampling", "--release", "--eta-schedule", "--constraint", "--noise"})
    add("train_empty_" + named(flag), train_args(flag + " ''"), {flag, "empty"});
  add("train_empty_data", "train --data '' --model logistic --sigma 1", {"--data", "empty"});
  for (const std::string flag : {"--eta", "--delta", "--epsilon", "--n", "--alpha", "--analysis", "--steps", "--noise-std",
                                 "--sampling", "--per-index-points", "--pld-cells", "--release"})
    add("account_empty_" + named(flag), "account --example " + flag + " ''", {flag, "empty"});
  add("calibrate_empty_max_steps", "calibrate --example --for steps --epsilon 1 --delta 1e-5 --max-steps ''",
      {"--max-steps", "empty"});
  add("calibrate_empty_for", "calibrate --example --for '' --epsilon 1 --delta 1e-5", {"--for", "empty"});
  add("calibrate_empty_noise_unit", kCalibrate + " --noise-unit ''", {"--noise-unit", "empty"});
  add("plan_empty_n", "plan --setting noisy-sgd --epsilon 1 --delta 1e-5 --n '' --lipschitz 1 --smoothness 1",
      {"--n", "empty"});
  add("plan_empty_r0", "plan --setting langevin --epsilon 1 --delta 1e-5 --n 1000 --lipschitz 1 --smoothness 1 "
                       "--strong-convexity 0.1 --dimension 2 --r0 ''",
      {"--r0", "empty"});
  add("compare_empty_from", "compare --example --x steps --from '' --to 10", {"--from", "empty"});
  add("compare_empty_points", kCompare + " --points ''", {"--points", "empty"});
  add("compare_empty_csv", kCompare + " --csv ''", {"--csv", "empty"});
  add("audit_empty_grid", exact_args("--grid ''"), {"--grid", "empty"});
  add("audit_empty_pair", exact_args("--pair ''"), {"--pair", "empty"});
  add("audit_empty_points", exact_args("--csv new.csv --points ''"), {"--points", "empty"});
  add("mia_empty_trials", mia_args("--trials ''"), {"--trials", "empty"});
  add("mia_empty_threads", mia_args("--threads ''"), {"--threads", "empty"});
  add("mia_empty_confidence", mia_args("--confidence ''"), {"--confidence", "empty"});
  add("mia_empty_canary_index", mia_args("--canary-index ''"), {"--canary-index", "empty"});
  add("predict_empty_model_file", "predict --model-file '' --data good.csv", {"--model-file", "empty"});
  add("predict_empty_output", kPredict + " --output ''", {"--output", "empty"});

  // -- outputs: a device or FIFO is never replaced; an overwritten file keeps its mode; names up to
  // NAME_MAX; symbolic links followed (docs/data.md "Output files")
  auto device_kept = [](std::string name) { return [name](const fs::path& dir) { still_a_device(dir, name); }; };
  out.push_back({"r2_train_output_null_device", kTrain + " --output null.dev", {"written to null.dev"},
                 device("null.dev", 1, 3, "/dev/null"), 0, kLimit, device_kept("null.dev")});
  out.push_back({"r2_predict_output_null_device", kPredict + " --output null.dev", {"predictions written to null.dev"},
                 device("null.dev", 1, 3, "/dev/null"), 0, kLimit, device_kept("null.dev")});
  out.push_back({"r2_compare_csv_null_device", kCompare + " --csv null.dev --svg new.svg", {"3 points"},
                 device("null.dev", 1, 3, "/dev/null"), 0, kLimit, device_kept("null.dev")});
  out.push_back({"r2_train_output_full_device", kTrain + " --output full.dev", {"--output", "full.dev", "No space"},
                 device("full.dev", 1, 7, "/dev/full"), 2, kLimit, device_kept("full.dev")});
  out.push_back({"r2_compare_svg_full_device", kCompare + " --csv existing.out --svg full.dev", {"--svg", "No space"},
                 device("full.dev", 1, 7, "/dev/full"), 2, kLimit, device_kept("full.dev")});
  add("train_output_fifo_without_reader", kTrain + " --output pipe", {"--output", "pipe", "FIFO"}, fifo("pipe"));
  out.push_back({"r2_train_output_keeps_mode", kTrain + " --output mine.json", {"written to mine.json"},
                 [](const fs::path& dir) {
                   bad::write(dir / "mine.json", std::string("old\n"));
                   fs::permissions(dir / "mine.json", fs::perms::owner_read | fs::perms::owner_write);
                 },
                 0, kLimit, [](const fs::path& dir) {
                   EXPECT_EQ(mode_of(dir / "mine.json"), 0600u);
                   EXPECT_EQ(bad::read(dir / "mine.json").rfind("{", 0), 0u);
                 }});
  out.push_back({"r2_predict_output_keeps_mode", kPredict + " --output mine.csv", {"written to mine.csv"},
                 [](const fs::path& dir) {
                   bad::write(dir / "mine.csv", std::string("old\n"));
                   fs::permissions(dir / "mine.csv", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
                 },
                 0, kLimit, [](const fs::path& dir) { EXPECT_EQ(mode_of(dir / "mine.csv"), 0640u); }});
  const std::string name250 = std::string(245, 'a') + ".json", name255 = std::string(250, 'b') + ".json";
  const std::string name256 = std::string(251, 'c') + ".json";
  out.push_back({"r2_train_output_name_250", kTrain + " --output " + name250, {"written to"}, nullptr, 0, kLimit,
                 [name250](const fs::path& dir) { EXPECT_TRUE(fs::exists(dir / name250)); }});
  out.push_back({"r2_predict_output_name_255", kPredict + " --output " + name255, {"written to"}, nullptr, 0, kLimit,
                 [name255](const fs::path& dir) { EXPECT_TRUE(fs::exists(dir / name255)); }});
  add("train_output_name_256", kTrain + " --output " + name256, {"--output", "too long"});
  out.push_back({"r2_train_output_symlink_followed", kTrain + " --output link.json", {"written to link.json"},
                 [](const fs::path& dir) {
                   bad::write(dir / "target.json", std::string("old\n"));
                   fs::create_symlink("target.json", dir / "link.json");
                 },
                 0, kLimit, [](const fs::path& dir) {
                   EXPECT_TRUE(fs::is_symlink(fs::symlink_status(dir / "link.json")));
                   EXPECT_EQ(bad::read(dir / "target.json").rfind("{", 0), 0u);
                 }});
  add("train_output_symlink_to_directory", kTrain + " --output link", {"--output", "link", "directory"},
      [](const fs::path& dir) {
        fs::create_directory(dir / "sub");
        fs::create_symlink("sub", dir / "link");
      });

  // -- internal errors: a number outside an analysis' range is "not applicable: <why>"
  for (const std::string sampling : {"cyclic", "shuffle", "fixed", "full"}) {
    const std::string batch = sampling == "full" ? "100" : "10";
    add("account_noise_1e300_" + sampling, "account --example --noise-std 1e300 --sampling " + sampling + " --batch-size " + batch,
        {"not applicable"}, nullptr, 0);
    add("calibrate_steps_noise_1e300_" + sampling, "calibrate --example --for steps --epsilon 1 --delta 1e-5 --noise-std 1e300 "
        "--sampling " + sampling + " --batch-size " + batch, {"largest steps"}, nullptr, 0,
        // ~8 s on an idle core (43 envelope evaluations up to T = 2^40): the limit guards against
        // a hang, not a speed (speed is bench/'s), so it leaves room for a loaded CI machine.
        60);
  }
  add("audit_noise_1e300_cyclic", exact_args("--noise-std 1e300 --sampling cyclic --batch-size 10"), {"exact"}, nullptr, 0);
  // Training draws its noise on a grid (random::GridNoise): stds in [2^-990, 2^960] (docs/input.md
  // "Numbers the computation can represent"); outside, exit 2 naming the flag the noise came from.
  // (A std of 1e300 once trained to a model of -0 weights: the ball's norm overflowed.)
  add("train_noise_1e300_cyclic", "train --data good.csv --model logistic --noise-std 1e300 --sampling cyclic --batch-size 4 "
      "--seed 1 --output existing.out", {"--noise-std", "1e+300", "noise grid"});
  add("mia_noise_1e300_shuffle", "audit mia --data good.csv --model logistic --noise-std 1e300 --sampling shuffle "
      "--batch-size 4 --trials 4 --seed 1", {"--noise-std", "noise grid"});

  // -- issue 37: numbers past what the computation represents, each a range error or handled
  add("train_sigma_1e_minus_300", train_args("--sigma 1e-300"), {"--sigma", "1e-300", "noise grid"});
  add("train_noise_std_1e_minus_300", train_args("--noise-std 1e-300"), {"--noise-std", "1e-300", "noise grid"});
  add("train_eta_1e_minus_300", train_args("--eta 1e-300"), {"--sigma", "eta = 1e-300", "noise grid"});
  add("train_l2_1e300", train_args("--l2 1e300"), {"--sigma", "noise grid"});
  add("train_laplace_sigma_1e_minus_300", train_args("--noise laplace --sigma 1e-300"), {"--sigma", "noise grid"});
  add("train_noise_std_4e307", train_args("--noise-std 4e307"), {"--noise-std", "4e+307", "noise grid"});
  add("train_iterates_overflow", train_args("--eta 100 --l2 1 --constraint none --steps 2000"),
      {"--eta", "stay finite"});
  // A target so loose that its noise is below the grid's smallest: the smallest drawable noise
  // meets it (exit 0, noted); the plan rule's bracket grows instead of "does not straddle".
  add("train_epsilon_1e300", "train --data good.csv --model logistic --epsilon 1e300 --seed 1", {"train / "}, nullptr, 0);
  add("mia_epsilon_1e300", "audit mia --data good.csv --model logistic --epsilon 1e300 --trials 4 --seed 1",
      {"empirical"}, nullptr, 0);

  // -- work before limits: a cost that grows with a typed number is bounded or refused first
  add("account_heuristic_2_40_steps", "account --example --sampling poisson --batch-size 10 --steps 1099511627776",
      {"last-iterate-heuristic"}, nullptr, 0);
  add("calibrate_steps_poisson_heuristic", "calibrate --example --for steps --epsilon 10 --delta 1e-5 --sampling poisson "
      "--batch-size 10", {"largest steps"}, nullptr, 0, 60);  // 45 evaluations up to T = 2^40: ~12 s of CPU
  add("audit_grid_2_24_one_step", "audit exact --example --steps 1 --grid 16777216", {"--grid"});
  add("audit_steps_times_grid", "audit exact --example --steps 100000 --grid 65537", {"--steps", "--grid"});
  add("audit_shuffle_mixture_size", "audit exact --n 64 --steps 3200 --batch-size 1 --sampling shuffle --eta 0.1 "
      "--noise-std 1 --lipschitz 1 --eta-schedule inv-sqrt", {"--steps"});
  add("feature_ranges_gzip_bomb", train_args("--feature-ranges r.txt.gz"), {"--feature-ranges", "16777216"},
      [](const fs::path& dir) { bad::write(dir / "r.txt.gz", bad::gzip_repeated("0 1\n", (std::uint64_t{1} << 24) + 1)); },
      2, 30);
  add("model_huge_unknown_key", predict_model(), {"bad.json", "junk"},
      [](const fs::path& dir) {
        std::string doc = bad::good_model().dump();
        doc.insert(1, "\"junk\": \"" + std::string(std::size_t{40} << 20, 'x') + "\", ");
        bad::write(dir / "bad.json", doc);
      });
  add("model_huge_unknown_key_in_model", predict_model(), {"bad.json", "model.junk"},
      [](const fs::path& dir) {
        std::string doc = bad::good_model().dump();
        doc.insert(doc.find("\"model\":{") + 9, "\"junk\": [" + std::string(std::size_t{20} << 20, '1') + "], ");
        bad::write(dir / "bad.json", doc);
      });
  out.push_back({"r2_mia_omp_threads_huge", kMia, {"empirical"}, nullptr, 0, kLimit, nullptr, "OMP_NUM_THREADS=1000000"});
  out.push_back({"r2_train_omp_threads_huge", kTrain, {"train / "}, nullptr, 0, kLimit, nullptr, "OMP_NUM_THREADS=1000000"});

  // -- model files: overflow, consistency, labels
  auto m = [](const char* key, json value) { return model([key, value](json& d) { d["model"][key] = value; }); };
  add("model_feature_center_overflows", predict_model(), {"bad.json", "feature_center"},
      model([](json& d) {
        d["model"]["feature_center"] = {1e308, 0, 0};
        d["model"]["feature_scale"] = {1e308, 1, 1};
      }));
  add("model_feature_scale_overflows_data", predict_model(), {"feature_scale"},
      m("feature_scale", json::array({1.7e308, 1, 1})));
  add("model_weights_overflow", predict_model(), {"bad.json", "weights"},
      m("weights", json::array({json::array({1e308, 1e308, 1e308})})));
  add("model_intercept_without_bias", predict_model(), {"bad.json", "intercept", "bias"},
      model([](json& d) {
        d["model"]["bias"] = false;
        d["model"]["intercept"] = {0.5};
      }));
  add("model_labels_raw_empty_text", predict_model(), {"bad.json", "labels.raw"},
      model([](json& d) { d["model"]["labels"]["raw"] = {"", "1"}; }));
  add("model_labels_raw_nul", predict_model(), {"bad.json", "labels.raw", "\\u0000"},
      model([](json& d) { d["model"]["labels"]["raw"] = {std::string("a\0b", 3), "1"}; }));
  add("model_labels_raw_control", predict_model(), {"bad.json", "labels.raw", "\\u001b"},
      model([](json& d) { d["model"]["labels"]["raw"] = {"a\x1b[31mb", "1"}; }));

  // -- messages: control characters escaped, values echoed as typed
  add("data_name_newline", "train --data 'a\nb.csv' --model logistic --sigma 1", {"--data", "a\\nb.csv"});
  add("data_name_escape", "train --data \"$(printf 'a\\033[31mb.csv')\" --model logistic --sigma 1", {"--data", "\\x1b"});
  add("classes_control", train_args("--classes \"$(printf 'x\\033y')\""), {"--classes", "\\x1b"});
  add("max_steps_2_63", "calibrate --example --for steps --epsilon 1 --delta 1e-5 --max-steps 9223372036854775808",
      {"--max-steps", "9223372036854775808"});
  add("per_index_points_2_63", "account --example --per-index --per-index-points 9223372036854775808",
      {"--per-index-points", "9223372036854775808"});
  add("grid_2_63", exact_args("--grid 9223372036854775808"), {"--grid", "9223372036854775808"});
  add("trials_2_63", mia_args("--trials 9223372036854775808"), {"--trials", "9223372036854775808"});
  add("points_2_31", exact_args("--csv new.csv --points 2147483648"), {"--points", "2147483648"});
  add("compare_points_2_31", "compare --example --x steps --from 1 --to 20 --points 2147483648", {"--points", "2147483648"});
  add("threads_2_31", mia_args("--threads 2147483648"), {"--threads", "2147483648"});
  add("batch_size_2_63", train_args("--batch-size 9223372036854775808"), {"--batch-size", "9223372036854775808"});
  add("steps_hex", train_args("--steps 0x10"), {"--steps", "0x10"});
  add("l2_text", train_args("--l2 abc"), {"--l2", "abc"});
  add("eta_1e400", train_args("--eta 1e400"), {"--eta", "1e400"});

  // -- audit mia reads its data through the library's data request (like train and predict)
  add("mia_libsvm_bad", "audit mia --format libsvm --data bad.svm --model logistic --sigma 1 --trials 4 --seed 1",
      {"bad.svm:2:3", "1-based"}, text("bad.svm", "1 1:1\n0 0:1\n"));
  add("mia_idx_labels_missing", "audit mia --format idx --data images.idx --model logistic --sigma 1 --trials 4", {"--labels"});
  add("mia_labels_for_csv", mia_args("--labels labels.idx"), {"--labels"});
  add("mia_gzip_bomb", "audit mia --data bomb.csv.gz --model logistic --sigma 1 --trials 4 --seed 1",
      {"bomb.csv.gz:16777217", "16777216 records"},
      [](const fs::path& dir) { bad::write(dir / "bomb.csv.gz", bad::gzip_repeated("0,1\n", (std::uint64_t{1} << 24) + 1)); },
      2, 60);
  add("mia_feature_ranges_bad", mia_args("--feature-ranges r.txt"), {"--feature-ranges", "r.txt:1"}, text("r.txt", "1 0\n"));
  add("mia_classes_control", mia_args("--classes \"$(printf 'x\\033y')\""), {"--classes", "\\x1b"});
  add("mia_data_directory", "audit mia --data adir --model logistic --sigma 1 --trials 4", {"adir"}, subdir("adir"));
  add("mia_positive_absent", mia_args("--positive 7"), {"--positive", "7"});

  return out;
}

// ---- third round (issue 37): outputs that are inputs, file names that are bytes, the rest.
// The alias cases check, as every case does, that nothing in the directory changed (the input
// an output would have replaced is intact).
std::function<void(const fs::path&)> symlink(std::string name, std::string target) {
  return [name, target](const fs::path& dir) { fs::create_symlink(target, dir / name); };
}
std::function<void(const fs::path&)> hard_link(std::string name, std::string target) {
  return [name, target](const fs::path& dir) { fs::create_hard_link(dir / target, dir / name); };
}
// A file named by bytes that are not UTF-8 ("d\xff.csv"), holding good.csv.
std::function<void(const fs::path&)> non_utf8_data() {
  return [](const fs::path& dir) { bad::write(dir / "d\xff.csv", bad::good_csv()); };
}
// The file `name` in the case directory holds `content` (an input that must not be replaced).
std::function<void(const fs::path&)> holds(std::string name, std::string content) {
  return [name, content](const fs::path& dir) { EXPECT_EQ(bad::read(dir / name), content) << name; };
}
std::function<void(const fs::path&)> absent_pattern(std::string part) {
  return [part](const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir))
      EXPECT_EQ(e.path().filename().string().find(part), std::string::npos) << e.path();
  };
}

std::vector<Case> third_round() {
  std::vector<Case> out;
  auto add = [&](std::string name, std::string args, std::vector<std::string> expect,
                 std::function<void(const fs::path&)> make = nullptr, int status = 2) {
    out.push_back(Case{"r3_" + std::move(name), std::move(args), std::move(expect), std::move(make), status});
  };
  const std::string t = "train --model logistic --sigma 1 --seed 1 ";
  const std::string fed = "train --model logistic --algorithm federated --batch-size 2 --sigma 1 --seed 1 ";
  // -- an output is never an input, however it is spelled (refused before any work, exit 2)
  add("output_is_data", t + "--data good.csv --output good.csv", {"--output = good.csv", "--data (good.csv)"});
  add("output_is_data_dot", t + "--data good.csv --output ./good.csv", {"--output = ./good.csv", "--data"});
  add("output_is_data_absolute", t + "--data good.csv --output \"$PWD/good.csv\"", {"--output", "--data"});
  add("output_is_data_via_symlink", t + "--data link.csv --output good.csv", {"--output", "--data (link.csv)"},
      symlink("link.csv", "good.csv"));
  add("output_symlink_to_data", t + "--data good.csv --output link.csv", {"--output = link.csv", "--data"},
      symlink("link.csv", "good.csv"));
  add("output_is_data_in_other_dir_spelling", t + "--data sub/../good.csv --output good.csv", {"--output", "--data"},
      subdir("sub"));
  add("output_is_gz_data", t + "--data good.csv.gz --output good.csv.gz", {"--output", "--data"},
      bytes("good.csv.gz", bad::gzip(bad::good_csv())));
  add("output_is_test_data", t + "--data good.csv --test-data t.csv --output t.csv", {"--output", "--test-data"},
      text("t.csv", bad::good_csv()));
  add("output_is_feature_ranges", t + "--data good.csv --feature-ranges r.txt --output r.txt",
      {"--output", "--feature-ranges"}, text("r.txt", "-2 2\n"));
  add("output_is_users", fed + "--data good.csv --users users.txt --output users.txt", {"--output", "--users"});
  add("output_is_idx_labels", kIdx + " --output labels.idx", {"--output", "--labels"});
  add("output_is_idx_images", kIdx + " --output images.idx", {"--output", "--data"});
  add("output_is_new_and_named_twice", t + "--data new.csv --output new.csv", {"--output = new.csv", "--data"});
  add("predict_output_is_model", kPredict + " --output model.json", {"--output", "--model-file"});
  add("predict_output_is_data", kPredict + " --output good.csv", {"--output", "--data"});
  add("predict_output_is_data_symlink", kPredict + " --output link.csv", {"--output", "--data"},
      symlink("link.csv", "good.csv"));
  // The file standard output or standard error goes to (the catalogue redirects both to files).
  add("output_is_stdout_fd", t + "--data good.csv --output /proc/self/fd/1", {"--output", "standard output"});
  add("output_is_dev_stdout", t + "--data good.csv --output /dev/stdout", {"--output", "standard output"});
  add("output_is_dev_stderr", t + "--data good.csv --output /dev/stderr", {"--output", "standard error"});
  add("compare_csv_is_stdout", kCompare + " --csv /dev/stdout", {"--csv", "standard output"});
  add("compare_svg_is_stdout", kCompare + " --svg /proc/self/fd/1", {"--svg", "standard output"});
  add("exact_plot_is_stdout", exact_args("--plot /dev/stdout"), {"--plot", "standard output"});
  add("exact_csv_is_stderr", exact_args("--csv /dev/stderr"), {"--csv", "standard error"});
  // A hard link is another name: only that name is replaced, the data stay.
  out.push_back({"r3_control_output_hard_link_of_data", t + "--data good.csv --output hard.csv", {"model written to"},
                 hard_link("hard.csv", "good.csv"), 0, kLimit, holds("good.csv", bad::good_csv())});

  // -- file names are bytes: a name that is not UTF-8 works, shown escaped (\xff in text,
  // %FF in JSON: docs/input.md), and a refused one is named escaped
  out.push_back({"r3_control_data_name_not_utf8", t + "--data \"$(printf 'd\\377.csv')\"", {"data: d\\xff.csv"},
                 non_utf8_data(), 0});
  out.push_back({"r3_control_data_name_not_utf8_json", t + "--data \"$(printf 'd\\377.csv')\" --json",
                 {"\"data\": \"d%FF.csv\""}, non_utf8_data(), 0});
  out.push_back({"r3_control_output_name_not_utf8", t + "--data good.csv --output \"$(printf 'm\\377.json')\"",
                 {"model written to m\\xff.json"}, nullptr, 0});
  out.push_back({"r3_control_predict_json_names_not_utf8",
                 "predict --model-file model.json --data \"$(printf 'd\\377.csv')\" --json --output \"$(printf 'p\\377.csv')\"",
                 {"\"data\": \"d%FF.csv\"", "\"model_file\": \"model.json\""}, non_utf8_data(), 0});
  out.push_back({"r3_control_data_name_percent_json", t + "--data 'd%41.csv' --json", {"\"data\": \"d%2541.csv\""},
                 text("d%41.csv", bad::good_csv()), 0});
  add("data_name_not_utf8_missing", t + "--data \"$(printf 'x\\377.csv')\"", {"--data", "x\\xff.csv"});
  add("output_name_not_utf8_missing_dir", t + "--data good.csv --output \"$(printf 'no\\377dir/m.json')\"",
      {"--output", "no\\xffdir"});
  // -- a newline in an output's name is shown escaped, never raw
  out.push_back({"r3_control_output_name_newline", t + "--data good.csv --output 'm\nx.json'",
                 {"model written to m\\nx.json"}, nullptr, 0});
  out.push_back({"r3_control_predict_output_name_newline", kPredict + " --output 'p\nx.csv'",
                 {"predictions written to p\\nx.csv"}, nullptr, 0});

  // -- a model file's randomness: not text is refused (never a dropped "seeded" warning)
  add("model_randomness_list", predict_model(), {"bad.json: randomness", "[1,2]"},
      model([](json& d) { d["randomness"] = {1, 2}; }));
  add("model_randomness_number", predict_model(), {"bad.json: randomness", "7"},
      model([](json& d) { d["randomness"] = 7; }));
  add("model_randomness_object", predict_model(), {"bad.json: randomness"},
      model([](json& d) { d["randomness"] = {{"seeded", true}}; }));

  // -- a users file's id with white space around it (another user by a byte): refused, naming
  // the line and column
  {
    std::string trailing = bad::good_users(), leading = bad::good_users();
    trailing.replace(trailing.find("user3\n"), 6, "user3 \n");
    leading.replace(leading.find("user3\n"), 6, "\tuser3\n");
    add("users_trailing_space", fed + "--data good.csv --output existing.out --users bad.txt",
        {"--users", "bad.txt:13 column 6", "white space"}, text("bad.txt", trailing));
    add("users_leading_tab", fed + "--data good.csv --output existing.out --users bad.txt",
        {"--users", "bad.txt:13 column 1"}, text("bad.txt", leading));
  }

  // -- numbers written faithfully
  out.push_back({"r3_control_account_alpha_inf_json", kAccount + " --alpha inf --json", {"\"alpha\": \"inf\""},
                 nullptr, 0});
  out.push_back({"r3_control_calibrate_max_steps_1", "calibrate --example --for steps --epsilon 100 --delta 1e-5 "
                                                     "--max-steps 1",
                 {"search limit T = 1 (the only T searched)"}, nullptr, 0, kLimit,
                 [](const fs::path&) {}});
  // --help states what happens by default: the automatic PLD grid (16 cells per std), no fixed spacing
  out.push_back({"r3_control_account_help_pld_defaults", "account --help",
                 {"default: none, the automatic grid", "default 16"}, nullptr, 0});
  // No staged file is left by a refused output (the write's temporaries, the backup links).
  add("output_in_missing_dir_leaves_nothing", t + "--data good.csv --output nodir/m.json", {"--output", "nodir"},
      nullptr);
  out.back().check = absent_pattern(".tmp.");
  return out;
}

std::vector<Case> all_cases() {
  std::vector<Case> all;
  for (auto part : {controls(), reported(), csv_cases(), libsvm_cases(), idx_cases(), gzip_cases(), users_cases(),
                    feature_ranges_cases(), model_cases(), run_flag_cases(), command_cases(), train_cases(), predict_cases(),
                    second_round(), third_round()})
    all.insert(all.end(), part.begin(), part.end());
  return all;
}

// ---- running a case

struct Outcome {
  int status = -1;
  std::string out, err;
  double seconds = 0;
};

// Every regular file under `dir` (relative path -> content) and every directory (-> "<dir>").
// Symbolic links, devices and FIFOs by what they are (a FIFO is never opened).
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir)) {
    const std::string name = fs::relative(entry.path(), dir).string();
    const fs::file_status st = entry.symlink_status();
    if (fs::is_symlink(st)) files[name] = "<link to " + fs::read_symlink(entry.path()).string() + ">";
    else if (fs::is_directory(st)) files[name] = "<dir>";
    else if (fs::is_character_file(st)) files[name] = "<character device>";
    else if (fs::is_fifo(st)) files[name] = "<fifo>";
    else if (!fs::is_regular_file(st)) files[name] = "<special>";
    else if (fs::file_size(entry.path()) > (std::uintmax_t{1} << 30)) files[name] = "<sparse>";  // not read
    else files[name] = bad::read(entry.path());
  }
  return files;
}

// The command under test: the one built with the tests, or HSDP_CATALOGUE_CLI (to run the
// catalogue against another build, e.g. an earlier version).
std::string cli_binary() {
  const char* other = std::getenv("HSDP_CATALOGUE_CLI");
  return other != nullptr && *other != '\0' ? other : HSDP_CLI_PATH;
}

Outcome run_in(const fs::path& dir, const fs::path& logs, const std::string& args, int limit,
               const std::string& env = {}) {
  const std::string command = "cd '" + dir.string() + "' && exec " + (env.empty() ? "" : "env " + env + " ") +
                              "timeout -s KILL " + std::to_string(limit) + " " + cli_binary() + " " + args + " >'" +
                              (logs / "out").string() + "' 2>'" + (logs / "err").string() + "'";
  const auto start = std::chrono::steady_clock::now();
  const int raw = std::system(command.c_str());
  Outcome o;
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  o.out = bad::read(logs / "out");
  o.err = bad::read(logs / "err");
  return o;
}

// gtest prints a case by its name.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class Catalogue : public ::testing::TestWithParam<Case> {};

TEST_P(Catalogue, AnswersClearlyAndLeavesNothing) {
  const Case& c = GetParam();
  const fs::path root = fs::path(::testing::TempDir()) / ("hsdp_catalogue_" + std::to_string(::getpid()) + "_" + c.name);
  const fs::path dir = root / "work", logs = root / "logs";
  fs::remove_all(root);
  fs::create_directories(dir);
  fs::create_directories(logs);
  bad::write_good_inputs(dir);
  if (c.make) c.make(dir);
  const auto before = c.status == 0 ? std::map<std::string, std::string>{} : snapshot(dir);

  const int limit = c.limit * kScale;
  const Outcome o = run_in(dir, logs, c.args, limit + 5, c.env);
  SCOPED_TRACE("hsdp " + c.args + "\nstdout: " + o.out.substr(0, 2000) + "\nstderr: " + o.err.substr(0, 2000));

  EXPECT_LT(o.seconds, limit) << "no answer within the time limit";
  EXPECT_EQ(o.status, c.status);
  EXPECT_EQ(o.err.find("internal error"), std::string::npos);
  const std::string& shown = c.status == 0 ? o.out : o.err;
  for (const auto& part : c.expect) EXPECT_NE(shown.find(part), std::string::npos) << "missing: " << part;
  if (c.check) c.check(dir);
  if (c.status != 0) {
    EXPECT_EQ(o.err.rfind("hsdp: error: ", 0), 0u) << "not a clear error message";
    // Nothing written, nothing changed, no temporary left behind.
    const auto after = snapshot(dir);
    EXPECT_EQ(after.size(), before.size()) << "a file was created or removed";
    for (const auto& [name, content] : before) {
      const auto it = after.find(name);
      if (it == after.end()) ADD_FAILURE() << name << " was removed";
      else EXPECT_TRUE(it->second == content) << name << " was changed";
    }
  }
  if (!::testing::Test::HasFailure()) fs::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Malformed, Catalogue, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

// The catalogue is as large as it claims: at least 250 malformed inputs besides the controls.
TEST(CatalogueSize, AtLeast250MalformedInputs) {
  std::size_t bad_cases = 0;
  for (const auto& c : all_cases()) bad_cases += c.name.rfind("control_", 0) == 0 ? 0 : 1;
  EXPECT_GE(bad_cases, 250u);
}

}  // namespace

// The last resort of cli/main.cpp: an exception that is not an InvalidArgument (a bug: no input
// reaches it, so the test raises one through HSDP_TEST_INTERNAL_ERROR) names the command typed,
// says it is a bug in hsdp, escapes the text's control characters and exits 1.
TEST(LastResort, NamesTheCommandAndSaysItIsABug) {
  const fs::path root = fs::path(::testing::TempDir()) / ("hsdp_last_resort_" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "work");
  fs::create_directories(root / "logs");
  const Outcome o = run_in(root / "work", root / "logs", "account --example", kLimit,
                           "HSDP_TEST_INTERNAL_ERROR='boom\033[31m'");
  EXPECT_EQ(o.status, 1);
  EXPECT_EQ(o.out, "");
  EXPECT_NE(o.err.find("hsdp: internal error: hsdp account: boom\\x1b[31m"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("a bug in hsdp, not in your input"), std::string::npos) << o.err;
  fs::remove_all(root);
}
