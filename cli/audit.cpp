// `hsdp audit <kind>`: evidence that the numbers are right. Each kind is a nested
// subcommand added by one function in kAuditKinds below (add_exact, add_mia).
//
//   hsdp audit exact [run flags] [--delta D | --epsilon E] [--json] [--plot F.svg] [--csv F.csv]
//
// exact: the true eps(delta) of the one-dimensional worst-case instance of the run
// (altschuler-talwar Sec. 4, plus the regulariser (lambda/2) w^2 with --strong-convexity;
// include/hsdp/audit/exact.hpp) with its error: on a grid with projection or a random stop,
// in closed form (a Gaussian mixture, include/hsdp/audit/gaussian_mixture.hpp) for the
// unprojected last iterate; next to every applicable upper bound and the ratio bound / exact.
//
//   hsdp audit mia --data FILE --model M [trainer flags] --trials N [--delta D] [--seed S]
//                  [--canary-index I] [--threads K] [--json]
//
// mia: N models trained on the data and N on the data with one canary record in place of
// another (include/hsdp/audit/mia.hpp); an empirical lower bound on epsilon at delta with
// 95% confidence, next to the certified epsilon of the same run.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "train_flags.hpp"
#include "unsigned_flags.hpp"
#include "hsdp/audit/exact.hpp"
#include "hsdp/audit/mia.hpp"
#include "hsdp/data/readers.hpp"
#include "hsdp/train/prepare.hpp"
#include "hsdp/train/trainer.hpp"
#include "hsdp/output_files.hpp"
#include "hsdp/errors.hpp"
#include "outputs.hpp"
#include "progress.hpp"
#include "run_flags.hpp"

namespace hsdp::cli {

namespace {

using AddAuditKind = std::function<std::function<int()>(CLI::App& parent)>;

std::function<int()> add_exact(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "exact",
      "Exact privacy loss of the 1-D worst-case instance of the run (linear losses plus "
      "(lambda/2) w^2; projected onto [-D/2, D/2] on a grid, unprojected last iterate in closed "
      "form) next to every applicable upper bound");
  struct Options {
    RunFlags run;
    bool json = false;
    audit::ExactOptions options;
    std::optional<std::string> pair;
    std::optional<std::string> plot, csv;
    std::optional<std::int64_t> points;
  };
  auto opt = std::make_shared<Options>();
  opt->run.add_to(*sub);
  sub->add_flag("--json", opt->json, "Print JSON instead of the table");
  sub->add_option("--grid", opt->options.grid,
                  "Points of the fine grid (>= 65; the coarse grid has half as many, and the "
                  "difference of the two results is the stated error); refused with the closed form")
      ->default_str(std::to_string(audit::kDefaultGrid));
  sub->add_option("--pair", opt->pair,
                  "Linear losses of the differing record: sec4 (0 vs L(D - w), altschuler-talwar "
                  "Sec. 4) or opposite (L w vs -L w, the full sensitivity 2 eta L / b)")
      ->default_str(std::string(audit::to_string(audit::ExactOptions{}.pair)));
  sub->add_option("--plot", opt->plot,
                  "Write an SVG of the exact value and every bound against steps (audits at "
                  "--points step counts from 1 to --steps)");
  sub->add_option("--csv", opt->csv, "Write the same sweep as CSV");
  sub->add_option("--points", opt->points, "Step counts in the --plot/--csv sweep (1..1000)")->default_str("12");
  return [sub, opt]() -> int {
    if (!sub->parsed()) return -1;
    {
      std::vector<FileUse> outputs;
      if (opt->csv) outputs.push_back({*opt->csv, "csv"});
      if (opt->plot) outputs.push_back({*opt->plot, "plot"});
      refuse_outputs_over(outputs, {});
    }
    const Run run = opt->run.to_run();
    const Query query = opt->run.to_query();
    audit::ExactOptions options = opt->options;
    if (opt->pair) options.pair = audit::parse_pair(*opt->pair, hsdp::opt("pair"));
    // The sweep's step counts when a sweep is written (--points is read by it only).
    const auto steps = audit::stated_sweep(run.steps, opt->points, opt->plot || opt->csv);
    audit::Tightness result;
    if (!steps.empty()) {
      auto points = audit::sweep(run, query, options, steps);
      // Both files are written, or neither (write_files_atomically).
      std::vector<OutputFile> outputs;
      if (opt->csv) outputs.push_back({*opt->csv, audit::sweep_csv(points), "csv"});
      if (opt->plot) {
        const std::string title =
            fmt::format("exact audit ({} pair): {} vs steps", audit::to_string(options.pair),
                        query.delta ? fmt::format("epsilon at delta = {}", show(*query.delta))
                                    : fmt::format("delta at epsilon = {}", show(*query.epsilon)));
        outputs.push_back({*opt->plot, audit::sweep_svg(points, title), "plot"});
      }
      write_files_atomically(outputs);
      result = std::move(points.back());  // the sweep ends at the run's own step count
    } else {
      result = audit::tightness(run, query, options);
    }
    if (opt->json) {
      std::cout << audit::to_json(result).dump(2) << "\n";
    } else {
      std::cout << audit::to_table(result);
    }
    return 0;
  };
}

// ---- audit mia: the library's request (audit::MiaRequest: the trainer's fields, the data
// statement of the training request, the audit's options) as flags (no test split and no
// model file: every model is trained on all of --data and only scored).
struct MiaFlags : audit::MiaRequest {
  bool json = false;
};

int run_mia(MiaFlags& o) {
  o.progress = o.json ? nullptr : progress_bar("training");
  // The request: its fields checked, its data read and prepared as hsdp train prepares them.
  const audit::MiaAudit done = audit::mia_request(o);
  const audit::MiaResult& r = done.result;
  const std::string& prep = done.preparation.description;
  const std::string algorithm(train::to_string(train::parse_algorithm(o.algorithm.value_or("noisy-sgd"))));
  if (o.json) {
    nlohmann::json j = audit::to_json(r);
    j["data"] = {{"file", json_file_name(o.data.data)}, {"records", done.records}, {"features", done.features}, {"preprocessing", prep},
                 {"labels", done.labels}};
    j["algorithm"] = algorithm;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("data: {} ({} records, {} features); labels {}\n", escape_controls(o.data.data), done.records,
                           done.features, done.labels);
  std::cout << fmt::format("preprocessing: {}\n", prep);
  std::cout << fmt::format("algorithm: {}{}\n", algorithm, r.sigma ? fmt::format(", sigma = {}", show(*r.sigma)) : "");
  std::cout << audit::to_table(r);
  return 0;
}

std::function<int()> add_mia(CLI::App& parent) {
  auto* sub = parent.add_subcommand(
      "mia",
      "Membership inference against the real trainer: N models with and N without a canary record, an "
      "empirical lower bound on epsilon (95% confidence) next to the certified epsilon");
  auto o = std::make_shared<MiaFlags>();
  train::DataSpec& d = o->data;
  sub->add_option("--data", d.data, "Training data file (plain or gzipped)")->required();
  sub->add_option("--format", d.format, "Data format: csv|libsvm|idx")->default_str("csv");
  sub->add_option("--labels", d.labels, "IDX labels file (--format idx)");
  add_unsigned_flag(*sub, "label_column", d.label_column, "CSV: 0-based label column (default: last)");
  sub->add_option("--positive", d.positive, "Binary losses: the raw label that becomes +1 (default: the larger)");
  sub->add_option("--classes", d.classes, "Keep only records with these raw labels");
  sub->add_option("--feature-scale", d.feature_scale, "Public constants to multiply the features by first")
      ->delimiter(',');
  sub->add_option("--feature-ranges", d.feature_ranges,
                  "File of public feature ranges, 'min max' per line: each feature is mapped onto [-1, 1] first "
                  "(as hsdp train --feature-ranges)");
  add_train_flags(*sub, *o);
  sub->get_option("--record-norm")->description("R: every record is scaled to ||x|| <= R; the canary has norm R");
  sub->add_option("--epsilon", o->epsilon, "Target epsilon: sigma calibrated once, used by every trial");
  sub->add_option("--trials", o->trials, "Models per dataset N (2N trainings)")->capture_default_str();
  sub->add_option("--delta", o->delta, "delta of the empirical bound and of the certified report")->capture_default_str();
  sub->add_option("--confidence", o->confidence, "Confidence of the empirical lower bound")->capture_default_str();
  add_unsigned_flag(*sub, "seed", o->seed, "Master seed of the trials (default: OS entropy, recorded in the output)");
  sub->add_option("--canary-index", o->canary_index,
                  "1-based position of the record the canary replaces (default n; 1 with --release random-stop)");
  sub->add_option("--threads", o->threads, "Trainings run in parallel (0: all cores)")->capture_default_str();
  sub->add_flag("--json", o->json, "Print JSON instead of the table");
  return [sub, o]() -> int {
    if (!sub->parsed()) return -1;
    return run_mia(*o);
  };
}

// The audit kinds, each a nested subcommand of `audit`.
const std::vector<AddAuditKind> kAuditKinds{add_exact, add_mia};

std::function<int()> add_audit(CLI::App& app) {
  auto* group = app.add_subcommand("audit", "Audits: exact privacy loss of worst-case instances; membership inference against the trainer");
  group->require_subcommand(1);
  std::vector<std::function<int()>> kinds;
  for (const auto& add : kAuditKinds) kinds.push_back(add(*group));
  return [group, kinds]() -> int {
    if (!group->parsed()) return -1;
    for (const auto& run : kinds) {
      const int status = run();
      if (status >= 0) return status;
    }
    return 2;  // unreachable: require_subcommand(1)
  };
}

const Register kAudit{"audit", add_audit};

}  // namespace
}  // namespace hsdp::cli
