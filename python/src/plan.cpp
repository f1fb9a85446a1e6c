// hsdp.plan (include/hsdp/plan.hpp): noise, steps and step sizes that minimise a paper's
// utility bound under a privacy target, validated like `hsdp plan` (cli/plan.cpp).
#include "hsdp/plan.hpp"

#include <algorithm>
#include <limits>

#include "common.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::python {

namespace {


Plan plan_like_cli(const std::string& setting, double epsilon, double delta, std::int64_t n,
                   std::optional<double> lipschitz, std::optional<double> smoothness, double strong_convexity,
                   double diameter, std::optional<std::int64_t> dimension, std::optional<double> r0,
                   std::optional<double> gradient_bound, std::optional<double> gradient_variance,
                   std::optional<std::int64_t> batch_size, const std::string& adjacency) {
  PlanProblem p;
  p.setting = parse_plan_setting(setting);
  p.epsilon = epsilon;
  p.delta = delta;
  p.n = n;
  p.lipschitz = lipschitz;
  p.smoothness = smoothness;
  p.strong_convexity = strong_convexity;
  p.diameter = diameter;
  p.dimension = dimension;
  p.r0 = r0;
  p.gradient_bound = gradient_bound;
  p.gradient_variance = gradient_variance;
  p.batch_size = batch_size;
  p.adjacency = parse_name<Adjacency>(adjacency, opt("adjacency"));
  check_plan_request(p);
  return plan(p);
}

}  // namespace

void bind_plan(py::module_& m) {
  py::class_<Plan>(m, "Plan", "A proposal of hsdp.plan: the run, its predicted utility and its privacy report.")
      .def_property_readonly("setting", [](const Plan& p) { return std::string(to_string(p.setting)); }, "langevin, federated, online or noisy-sgd.")
      .def_readonly("target_epsilon", &Plan::target_epsilon, "The privacy target's epsilon.")
      .def_readonly("target_delta", &Plan::target_delta, "The privacy target's delta.")
      .def_readonly("feasible", &Plan::feasible, "False when the target cannot be met (see reason; nothing else is set).")
      .def_readonly("reason", &Plan::reason, "Why the target cannot be met ('' when feasible).")
      .def_readonly("utility_name", &Plan::utility_name, "\"excess_risk\" or \"stochastic_regret\".")
      .def_readonly("utility_citation", &Plan::utility_citation, "The paper, result and equation of the utility bound.")
      .def_readonly("utility", &Plan::utility, "The paper's utility bound at the proposal (rounded up).")
      .def_readonly("privacy_analysis", &Plan::privacy_analysis, "The analysis that constrained the search.")
      .def_readonly("convention", &Plan::convention, "The paper convention of sigma.")
      .def_readonly("sigma", &Plan::sigma, "The paper's sigma at the proposal.")
      .def_readonly("eta_schedule", &Plan::eta_schedule, "\"constant\", \"inv-sqrt\" or \"inv-t\".")
      .def_readonly("eta", &Plan::eta, "eta (constant) or the schedule's base eta_1.")
      .def_readonly("choice", &Plan::choice, "How the free parameters were set (online: example_3, example_4 or sigma_t_power).")
      .def_property_readonly("run", [](const Plan& p) { return PyRun{p.run, std::nullopt}; }, "The proposed run (steps, batch, eta, noise).")
      .def_readonly("paper_privacy", &Plan::paper_privacy, "privacy_analysis at run: an AnalysisResult (epsilon at the target delta).")
      .def_readonly("report", &Plan::report, "The full accountant at run (a Report, epsilon at the target delta).")
      .def_property_readonly("details", [](const Plan& p) {
        py::dict d;
        for (const auto& x : p.details) d[py::str(x.name)] = x.value;
        return d;
      }, "Named side values: the paper's own prescription, the search's size, the inputs the bound used.")
      .def_readonly("notes", &Plan::notes, "Assumptions of the bound the user must check.")
      .def("to_json", [](const Plan& p, int indent) { return to_json(p).dump(indent); }, py::arg("indent") = 2,
           "The JSON `hsdp plan --json` prints (without the final newline).")
      .def("to_dict", [](const Plan& p) { return to_python(to_json(p)); }, "to_json() as a dict.")
      .def("text", [](const Plan& p) { return to_text(p); }, "The text `hsdp plan` prints.")
      .def("__str__", [](const Plan& p) { return to_text(p); })
      .def("__repr__", [](const Plan& p) {
        if (!p.feasible) return "<hsdp.Plan infeasible under " + adjacency_words(p.target_adjacency) + ": " + p.reason + ">";
        return "<hsdp.Plan " + std::string(to_string(p.setting)) + " sigma=" + show(p.sigma) + " " +
               p.utility_name + "=" + show(p.utility) + " under " + adjacency_words(p.target_adjacency) + ">";
      });

  m.def("plan", &plan_like_cli, py::arg("setting"), py::kw_only(), py::arg("epsilon"), py::arg("delta"),
        py::arg("n"), py::arg("lipschitz") = py::none(), py::arg("smoothness") = py::none(),
        py::arg("strong_convexity") = 0.0, py::arg("diameter") = std::numeric_limits<double>::infinity(),
        py::arg("dimension") = py::none(), py::arg("r0") = py::none(), py::arg("gradient_bound") = py::none(),
        py::arg("gradient_variance") = py::none(), py::arg("batch_size") = py::none(),
        py::arg("adjacency") = "replace",
        R"doc(Propose noise, steps and step sizes minimising a paper's utility bound under the target
(`hsdp plan`). setting: "langevin" | "federated" | "online" | "noisy-sgd" (the trainer's plan:
T, b, eta and the batch policy needing the least noise under every upper-bound analysis,
docs/plan.md). adjacency: "replace" (one record replaced, the default) or "remove" (one added or
removed: Opacus' and dp_accounting's; noisy-sgd only). An unreachable target is a Plan with
feasible == False and a reason.)doc");
}

}  // namespace hsdp::python
