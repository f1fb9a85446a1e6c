// `hsdp plan`: propose (sigma, steps, eta) minimising a paper's utility bound under a
// privacy target, and print the predicted excess risk / regret next to the privacy report
// (include/hsdp/plan.hpp, docs/plan.md).
#include "hsdp/plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::cli {

namespace {


std::function<int()> add_plan(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "plan",
      "Propose noise, steps and step sizes that minimise a paper's utility bound under a privacy "
      "target (langevin Lemma 6 / Thm 4, federated Cor. 1, online journal Prop. 3), or the "
      "trainer's plan for noisy SGD (noisy-sgd: the batch policy needing the least noise)");
  struct Options {
    std::string setting;
    std::optional<double> epsilon, delta;
    std::optional<std::int64_t> n, dimension, batch_size;
    std::string adjacency = "replace";
    std::optional<double> lipschitz, smoothness, r0, gradient_bound, gradient_variance;
    double strong_convexity = 0.0;
    double diameter = std::numeric_limits<double>::infinity();
    bool json = false;
  };
  auto opt = std::make_shared<Options>();
  sub->add_option("--setting", opt->setting, "langevin | federated | online | noisy-sgd")->required();
  sub->add_option("--epsilon", opt->epsilon, "Target epsilon (> 0)")->required();
  sub->add_option("--delta", opt->delta, "Target delta, in (0, 1)")->required();
  sub->add_option("--n", opt->n, "Dataset size n (users for federated, cost functions for online)")
      ->required();
  sub->add_option("--lipschitz", opt->lipschitz,
                  "Lipschitz constant L of the per-example loss (M for online)");
  sub->add_option("--smoothness", opt->smoothness, "Smoothness beta of the loss");
  sub->add_option("--strong-convexity", opt->strong_convexity,
                  "Strong convexity lambda of the loss")
      ->capture_default_str();
  sub->add_option("--diameter", opt->diameter, "Diameter of the constraint set (default inf)");
  sub->add_option("--dimension", opt->dimension, "Model dimension d");
  sub->add_option("--r0", opt->r0,
                  "langevin: E||th_0 - th*||^2 if known (default: diameter^2 + 2 d sigma^2/lambda, "
                  "which assumes 0 is in the constraint set)");
  sub->add_option("--gradient-bound", opt->gradient_bound,
                  "federated Cor. 1: D with ||grad F||^2 <= D^2 (default L)");
  sub->add_option("--gradient-variance", opt->gradient_variance,
                  "federated Cor. 1: G^2 >= Var(grad l) (default L^2)");
  sub->add_option("--batch-size", opt->batch_size,
                  "federated: fix the users per round m (default: searched); noisy-sgd: fix b (default: planned)");
  sub->add_option("--adjacency", opt->adjacency,
                  "Neighbouring datasets of the target: replace (one record replaced) | remove (one added or "
                  "removed, as Opacus and dp_accounting; noisy-sgd only)")
      ->capture_default_str();
  sub->add_flag("--json", opt->json, "Print JSON (the privacy report under \"report\")");
  return [sub, opt]() -> int {
    if (!sub->parsed()) return -1;
    PlanProblem p;
    p.setting = parse_plan_setting(opt->setting);
    p.epsilon = *opt->epsilon;
    p.delta = *opt->delta;
    p.n = *opt->n;
    p.lipschitz = opt->lipschitz;
    p.smoothness = opt->smoothness;
    p.strong_convexity = opt->strong_convexity;
    p.diameter = opt->diameter;
    p.dimension = opt->dimension;
    p.r0 = opt->r0;
    p.gradient_bound = opt->gradient_bound;
    p.gradient_variance = opt->gradient_variance;
    p.batch_size = opt->batch_size;
    p.adjacency = parse_name<Adjacency>(opt->adjacency, hsdp::opt("adjacency"));
    check_plan_request(p);
    const Plan result = plan(p);
    if (!result.feasible) {
      std::cerr << fmt::format(
          "hsdp: error: infeasible target (epsilon = {}, delta = {}) for --setting {}: {}\n",
          show(p.epsilon), show(p.delta), to_string(p.setting), result.reason);
      return 2;
    }
    // The whole output is formatted before anything is written.
    const std::string text = opt->json ? to_json(result).dump(2) + "\n" : to_text(result);
    std::cout << text;
    return 0;
  };
}

const Register kPlan{"plan", add_plan};

}  // namespace
}  // namespace hsdp::cli
