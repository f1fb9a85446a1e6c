// `hsdp calibrate`: the smallest noise, the largest number of steps or the largest batch
// (sampling rate) that meets a target (epsilon, delta), on the tightest valid analysis.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "hsdp/calibrate.hpp"
#include "hsdp/errors.hpp"
#include "run_flags.hpp"

namespace hsdp::cli {

namespace {

ScheduleShape shape_of(const std::string& text) {
  if (text == "constant") return ScheduleShape::constant;
  if (text == "inv-sqrt") return ScheduleShape::inv_sqrt;
  if (text == "inv-t") return ScheduleShape::inv_t;
  fail("--eta-schedule", text, "one of constant, inv-sqrt, inv-t");
}

NoiseUnit unit_of(const std::string& text) {
  if (text == "std") return NoiseUnit::std;
  if (text == "sigma") return NoiseUnit::sigma;
  if (text == "multiplier") return NoiseUnit::multiplier;
  fail("--noise-unit", text, "one of std, sigma, multiplier");
}

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
    std::int64_t max_steps = std::int64_t{1} << 40;
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
  sub->add_option("--max-steps", opt->max_steps, "Search limit for --for steps")->capture_default_str();
  sub->add_flag("--json", opt->json, "Print JSON instead of text");
  return [sub, opt]() -> int {
    if (!sub->parsed()) return -1;
    const CalibrationParameter which = parse_calibration_parameter(opt->which, "--for");
    RunFlags f = opt->run;
    if (!f.epsilon) fail("--epsilon", "(missing)", "given: the target epsilon >= 0");
    if (!f.delta) fail("--delta", "(missing)", "given: the target delta in (0, 1)");
    const double epsilon = require_nonnegative("--epsilon", *f.epsilon);
    const double delta = require_open("--delta", *f.delta, 0.0, 1.0);
    // to_run() takes one of --epsilon/--delta for an account query; the target is ours.
    f.epsilon.reset();

    CalibrationOptions options;
    options.eta_shape = shape_of(f.eta_schedule);
    options.max_steps = require_range("--max-steps", opt->max_steps, 1, std::int64_t{1} << 53);
    NoiseParameter noise;
    if (which == CalibrationParameter::noise) {
      // The units: --noise-unit, else those of the noise flag given; the flag's value (or
      // 1) is only the starting point of the search.
      NoiseUnit unit = NoiseUnit::std;
      if (opt->unit) {
        unit = unit_of(*opt->unit);
      } else if (f.noise_multiplier) {
        unit = NoiseUnit::multiplier;
      } else if (f.sigma || f.convention) {
        unit = NoiseUnit::sigma;
      }
      const double start = f.noise_multiplier ? *f.noise_multiplier
                           : f.sigma          ? *f.sigma
                           : f.noise_std      ? *f.noise_std
                                              : 1.0;
      f.noise_multiplier.reset();
      f.sigma.reset();
      f.noise_std.reset();
      if (unit == NoiseUnit::sigma) {
        if (!f.convention)
          fail("--convention", "(missing)",
               "given when calibrating a paper's sigma: journal|isit|federated|chourasia|altschuler");
        f.sigma = start;
      } else if (unit == NoiseUnit::multiplier) {
        f.noise_multiplier = start;
      } else {
        if (f.convention) fail("--convention", *f.convention, "used with --noise-unit sigma");
        f.noise_std = start;
      }
      noise.unit = unit;
      noise.value = start;
      if (f.convention) noise.convention = parse_convention(*f.convention, "--convention");
    } else {
      if (which == CalibrationParameter::sampling_rate && !f.steps)
        fail("--steps", "(missing)",
             "given with --for sampling-rate: the number of steps stays fixed while b changes");
      if (opt->unit) fail("--noise-unit", *opt->unit, "used with --for noise");
      if (f.noise_multiplier) {
        noise = {NoiseUnit::multiplier, Convention::journal, *f.noise_multiplier};
      } else if (f.sigma) {
        noise.unit = NoiseUnit::sigma;
        noise.value = *f.sigma;
        if (f.convention) noise.convention = parse_convention(*f.convention, "--convention");
      } else if (f.noise_std) {
        noise = {NoiseUnit::std, Convention::journal, *f.noise_std};
      }
    }
    f.delta = delta;
    const Run base = f.to_run();
    options.noise = noise;

    const CalibrationResult r = calibrate(base, which, epsilon, delta, options);
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
          std::cout << fmt::format("smallest {} = {}  ({}; parameter-space std {})\n", r.name,
                                   show_up(r.value), describe_unit(r),
                                   r.run.noise_std.is_constant()
                                       ? show_up(r.run.noise_std.at(1))
                                       : fmt::format("{}..{}", show_up(r.run.noise_std.min()),
                                                     show_up(r.run.noise_std.max())));
          break;
        case CalibrationParameter::steps:
          std::cout << fmt::format("largest steps = {}{}\n", static_cast<std::int64_t>(r.value),
                                   r.unbounded ? "  (unbounded: the search limit)" : "");
          break;
        case CalibrationParameter::sampling_rate:
          std::cout << fmt::format("largest batch size = {}  (sampling rate b/n = {})\n",
                                   static_cast<std::int64_t>(r.value), show(*r.sampling_rate));
          break;
      }
      std::cout << fmt::format("achieved: {} epsilon = {} at delta = {}\n", r.achieved_name,
                               show_up(r.achieved_epsilon), show(r.achieved_delta));
      if (!r.note.empty()) std::cout << "note: " << r.note << "\n";
      std::cout << fmt::format("search: {} envelope evaluations\n", r.evaluations);
    }
    return 0;
  };
}

const Register kCalibrate{"calibrate", add_calibrate};

}  // namespace
}  // namespace hsdp::cli
