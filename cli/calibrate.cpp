// `hsdp calibrate`: the smallest noise, the largest number of steps or the largest batch
// (sampling rate) that meets a target (epsilon, delta), on the tightest valid analysis.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "hsdp/calibrate.hpp"
#include "hsdp/errors.hpp"
#include "progress.hpp"
#include "run_flags.hpp"

namespace hsdp::cli {

namespace {

// The adjacency a number holds for, as the output says it.
std::string adjacency_words(Adjacency a) {
  return a == Adjacency::replace ? "replace-one" : "add/remove-one";
}

}  // namespace

namespace {

std::string show_up(double v) { return fmt::format("{:.10g}", v); }

std::string describe_unit(const CalibrationResult& r) {
  if (r.name == "noise_std") return "noise std in parameter space";
  if (r.name == "sigma") return fmt::format("the {} paper's sigma (--convention {})", r.convention, r.convention);
  if (r.name == "noise_multiplier") return "DP-SGD noise multiplier (noise std eta z C / b)";
  return r.name;
}

std::function<int()> add_calibrate(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "calibrate",
      "Smallest noise, largest number of steps or largest batch meeting a target (epsilon, delta)");
  struct Options {
    RunFlags run;
    std::string which;
    std::optional<std::string> unit;
    std::optional<std::int64_t> max_steps;
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  opt->run.add_to(*sub);
  // The target needs both --epsilon and --delta (account takes one of them).
  sub->get_option("--epsilon")->remove_excludes(sub->get_option("--delta"));
  sub->get_option("--delta")->remove_excludes(sub->get_option("--epsilon"));
  sub->get_option("--epsilon")->description("Target epsilon (>= 0)");
  sub->get_option("--delta")->description("Target delta (0 < delta < 1)");
  sub->add_option("--for", opt->which, "The free parameter: noise|steps|sampling-rate")->required();
  sub->add_option("--noise-unit", opt->unit,
                  "Units of the calibrated noise: std|sigma|multiplier (default: those of the noise "
                  "flag given -- --noise-std, --sigma with --convention, --noise-multiplier with "
                  "--clip -- whose value is then only the starting point; std when none is given)");
  sub->add_option("--max-steps", opt->max_steps, "Search limit for --for steps (default 2^40)")
      ->default_str(std::to_string(CalibrationOptions{}.max_steps));
  sub->add_flag("--json", opt->json, "Print JSON instead of text");
  return [sub, opt]() -> int {
    if (!sub->parsed()) return -1;
    const RunFlags& f = opt->run;
    if (!f.epsilon) fail("--epsilon", "(missing)", "given: the target epsilon >= 0");
    if (!f.delta) fail("--delta", "(missing)", "given: the target delta in (0, 1)");
    CalibrationProblem p = calibration_problem(f, opt->which, *f.epsilon, *f.delta, opt->unit, opt->max_steps);
    const CalibrationParameter which = p.which;
    const double epsilon = p.epsilon, delta = p.delta;
    // A search that runs longer than a few seconds shows where it is (stderr, a terminal only).
    ProgressLine progress;
    if (progress.possible())
      p.options.progress = [&progress, which](int evaluations, double value) {
        progress.show([&] {
          return fmt::format("calibrate --for {}: evaluation {}{}", to_string(which), evaluations + 1,
                             std::isnan(value) ? std::string() : fmt::format(" at {}", show(value)));
        });
      };
    const CalibrationResult r = calibrate(p.base, which, epsilon, delta, p.options);
    progress.end();
    if (opt->json) std::cout << to_json(r).dump(2) << "\n";
    if (!r.feasible) {
      std::cerr << fmt::format("hsdp: error: infeasible target (epsilon = {}, delta = {}) for --for {}: {}\n",
                               show(epsilon), show(delta), to_string(which), r.reason);
      return 2;
    }
    if (!opt->json) {
      std::cout << fmt::format("run: {}\n", r.run.summary());
      std::cout << fmt::format("target: epsilon <= {} at delta = {}\n\n", show(epsilon), show(delta));
      switch (which) {
        case CalibrationParameter::noise:
          // Without a step size the std is known per unit of eta (Run::eta_known).
          std::cout << fmt::format("smallest {} = {}  ({}, {}; parameter-space std {}{})\n", r.name,
                                   show_up(r.value), adjacency_words(r.adjacency), describe_unit(r),
                                   r.run.noise_std.is_constant()
                                       ? show_up(r.run.noise_std.at(1))
                                       : fmt::format("{}..{}", show_up(r.run.noise_std.min()),
                                                     show_up(r.run.noise_std.max())),
                                   r.run.eta_known ? "" : " x eta");
          break;
        case CalibrationParameter::steps:
          std::cout << fmt::format("largest steps = {}  ({}{})\n", static_cast<std::int64_t>(r.value),
                                   adjacency_words(r.adjacency), r.unbounded ? "; unbounded: the search limit" : "");
          break;
        case CalibrationParameter::sampling_rate:
          std::cout << fmt::format("largest batch size = {}  ({}; sampling rate b/n = {})\n",
                                   static_cast<std::int64_t>(r.value), adjacency_words(r.adjacency),
                                   show(*r.sampling_rate));
          break;
      }
      std::cout << fmt::format("achieved: {} epsilon = {} at delta = {} ({})\n", r.achieved_name,
                               show_up(r.achieved_epsilon), show(r.achieved_delta), adjacency_words(r.adjacency));
      if (r.add_remove && r.add_remove->feasible)
        std::cout << fmt::format("under add/remove-one (one record added or removed; Opacus, dp_accounting): {} = {}, "
                                 "{} epsilon = {}\n",
                                 r.add_remove->name, r.add_remove->parameter == CalibrationParameter::noise
                                                         ? show_up(r.add_remove->value)
                                                         : std::to_string(static_cast<std::int64_t>(r.add_remove->value)),
                                 r.add_remove->achieved_name, show_up(r.add_remove->achieved_epsilon));
      else if (r.add_remove)
        std::cout << fmt::format("under add/remove-one: infeasible ({})\n", r.add_remove->reason);
      else if (!r.add_remove_reason.empty())
        std::cout << fmt::format("under add/remove-one: not applicable: {}\n", r.add_remove_reason);
      if (!r.note.empty()) std::cout << "note: " << r.note << "\n";
      std::cout << fmt::format("search: {} envelope evaluations\n", r.evaluations);
    }
    return 0;
  };
}

const Register kCalibrate{"calibrate", add_calibrate};

}  // namespace
}  // namespace hsdp::cli
