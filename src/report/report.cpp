#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "hsdp/accountant.hpp"
#include "hsdp/errors.hpp"
#include "format.hpp"

namespace hsdp {

namespace {

nlohmann::json schedule_json(const Schedule& s) {
  if (s.is_constant()) return s.at(1);
  return s.values();
}

// The per-index view: one row per position, one column per per-index analysis.
std::string per_index_table(const Report& report) {
  const auto& v = *report.per_index;
  const bool by_delta = report.query.delta.has_value();
  std::string out = fmt::format("\nper-index {} ({}):\n", by_delta ? "epsilon" : "delta",
                                v.subsampled
                                    ? fmt::format("{} of the n = {} positions: a linear grid plus "
                                                  "positions dense near i = n",
                                                  v.indices.size(), report.run.n)
                                    : fmt::format("every position i = 1..{}", report.run.n));
  if (v.curves.empty()) return out + "  no per-index analysis applies to this run\n";
  std::string header = fmt::format("{:>12}", "index");
  for (const auto& c : v.curves) header += fmt::format("  {:>{}}", c.name, std::max<std::size_t>(16, c.name.size()));
  out += header + "\n";
  for (std::size_t k = 0; k < v.indices.size(); ++k) {
    std::string row = fmt::format("{:>12}", v.indices[k]);
    for (const auto& c : v.curves) {
      const auto& p = c.points[k];
      row += fmt::format("  {:>{}}", report::show10(by_delta ? p.epsilon : p.delta),
                         std::max<std::size_t>(16, c.name.size()));
    }
    out += row + "\n";
  }
  for (const auto& c : v.curves)
    if (c.worst_index) out += fmt::format("worst index ({}): {}\n", c.name, *c.worst_index);
  return out;
}

nlohmann::json best_json(const std::vector<AnalysisResult>& results, const std::optional<std::size_t>& best) {
  if (!best) return nullptr;
  const auto& b = results[*best];
  return {{"name", b.name}, {"epsilon", report::json_number(*b.epsilon)}, {"delta", report::json_number(*b.delta)}};
}

const AnalysisResult* find_result(const std::vector<AnalysisResult>& results, std::string_view name) {
  for (const auto& r : results)
    if (r.name == name) return &r;
  return nullptr;
}

// The line that names the adjacency of the report, and what the add/remove column is.
std::string adjacency_line(const Report& report) {
  if (report.run.adjacency == Adjacency::remove)
    return "adjacency: add/remove-one (neighbouring datasets differ by one record added or removed; "
           "as Opacus and dp_accounting)\n";
  std::string out = "adjacency: replace-one (neighbouring datasets differ in one record's value)";
  if (!report.add_remove.empty())
    return out + "; add/remove: the same run under add/remove-one (one record added or removed), "
                 "the adjacency of Opacus and dp_accounting\n";
  return out + "\n";
}

}  // namespace

nlohmann::json to_json(const Run& run) {
  nlohmann::json j;
  j["n"] = run.n;
  j["steps"] = run.steps;
  j["batch_size"] = run.batch_size;
  j["sampling"] = to_string(run.sampling);
  j["noise"] = to_string(run.noise);
  if (run.eta_known) {
    j["eta"] = schedule_json(run.eta);
    j["noise_std"] = schedule_json(run.noise_std);
  } else {
    // The step size unknown: the noise is known relative to the step only.
    j["eta"] = nullptr;
    j["noise_std_per_eta"] = schedule_json(run.noise_std);
  }
  if (run.loss.lipschitz) j["lipschitz"] = *run.loss.lipschitz;
  if (run.loss.smoothness) j["smoothness"] = *run.loss.smoothness;
  j["strong_convexity"] = run.loss.strong_convexity;
  j["convex"] = run.loss.convex;
  j["diameter"] = report::json_number(run.diameter);
  j["release"] = to_string(run.release);
  j["adjacency"] = to_string(run.adjacency);
  j["drop_last"] = run.drop_last;
  j["order_known"] = run.order_known;
  if (run.index) j["index"] = *run.index;
  if (run.dimension) j["dimension"] = *run.dimension;
  if (run.clip) j["clip"] = *run.clip;
  if (run.lsi_constant) j["lsi_constant"] = *run.lsi_constant;
  if (run.pld_interval) j["pld_interval"] = *run.pld_interval;
  if (run.pld_cells) j["pld_cells"] = *run.pld_cells;
  if (run.grid) {
    j["noise_grid"] = {{"slack", run.grid->slack}, {"epsilon", run.grid->epsilon}, {"log_beta", report::json_number(run.grid->log_beta)}};
  }
  return j;
}

nlohmann::json to_json(const Report& report) {
  nlohmann::json j;
  j["run"] = to_json(report.run);
  nlohmann::json q;
  if (report.query.epsilon) q["epsilon"] = *report.query.epsilon;
  if (report.query.delta) q["delta"] = *report.query.delta;
  j["query"] = q;
  j["analyses"] = nlohmann::json::array();
  for (const auto& r : report.analyses) {
    nlohmann::json a;
    a["name"] = r.name;
    a["citation"] = r.citation;
    a["applicable"] = r.applicable;
    a["reason"] = r.reason;
    a["kind"] = std::string(to_string(r.kind));
    if (r.applicable) {
      a["epsilon"] = report::json_number(*r.epsilon);
      a["delta"] = report::json_number(*r.delta);
      if (r.index) a["index"] = *r.index;
      if (!r.details.empty()) {
        nlohmann::json d = nlohmann::json::object();
        for (const auto& x : r.details) d[x.name] = report::json_number(x.value);
        a["details"] = d;
      }
      if (!r.note.empty()) a["note"] = r.note;
      if (!r.rdp.empty()) {
        nlohmann::json c = nlohmann::json::array();
        for (const auto& p : r.rdp) c.push_back({{"alpha", report::json_number(p.alpha)}, {"epsilon", report::json_number(p.epsilon)}});  // alpha = inf: "inf", never null
        a["rdp"] = c;
      }
    }
    j["analyses"].push_back(a);
  }
  j["best"] = best_json(report.analyses, report.best);
  j["adjacency"] = to_string(report.run.adjacency);
  if (!report.add_remove.empty()) {
    for (auto& a : j["analyses"])
      if (const AnalysisResult* r = find_result(report.add_remove, a["name"].get<std::string>()))
        a["add_remove"] = {{"epsilon", report::json_number(*r->epsilon)}, {"delta", report::json_number(*r->delta)}};
    j["best_add_remove"] = best_json(report.add_remove, report.add_remove_best);
  }
  if (!report.add_remove_reason.empty()) {
    j["best_add_remove"] = nullptr;
    j["add_remove_reason"] = report.add_remove_reason;
  }
  if (report.per_index) {
    const auto& v = *report.per_index;
    nlohmann::json p;
    p["indices_evaluated"] = v.indices.size();
    p["subsampled"] = v.subsampled;
    p["analyses"] = nlohmann::json::array();
    for (const auto& c : v.curves) {
      nlohmann::json a;
      a["name"] = c.name;
      if (c.worst_index) a["worst_index"] = *c.worst_index;
      a["points"] = nlohmann::json::array();
      for (const auto& pt : c.points)
        a["points"].push_back(
            {{"index", pt.index}, {"epsilon", report::json_number(pt.epsilon)}, {"delta", report::json_number(pt.delta)}});
      p["analyses"].push_back(a);
    }
    j["per_index"] = p;
  }
  return j;
}

std::string to_table(const Report& report) {
  std::string out = fmt::format("run: {}\n", report.run.summary());
  out += adjacency_line(report);
  const bool by_delta = report.query.delta.has_value();
  out += by_delta ? fmt::format("query: epsilon at delta = {}\n\n", show(*report.query.delta))
                  : fmt::format("query: delta at epsilon = {}\n\n", show(*report.query.epsilon));
  std::size_t width = 8;
  for (const auto& r : report.analyses) width = std::max(width, r.name.size());
  // With add/remove values, a second column beside the run's own (replace-one) values.
  const bool both = !report.add_remove.empty();
  auto value_of = [&](const AnalysisResult& r) { return report::show10(by_delta ? *r.epsilon : *r.delta); };
  auto add_remove_cell = [&](std::string_view name) -> std::string {
    if (!both) return "";
    const AnalysisResult* other = find_result(report.add_remove, name);
    return fmt::format("{:>16}  ", other ? value_of(*other) : "-");
  };
  out += fmt::format("{:<{}}  {:>16}  {}{}\n", "analysis", width, by_delta ? "epsilon" : "delta",
                     both ? fmt::format("{:>16}  ", "add/remove") : "", "details");
  for (std::size_t i = 0; i < report.analyses.size(); ++i) {
    const auto& r = report.analyses[i];
    std::string value, rest;
    if (!r.applicable) {
      value = "-";
      rest = "not applicable: " + r.reason;
    } else {
      value = value_of(r);
      if (r.kind == BoundKind::lower) rest += "[lower bound] ";
      if (r.kind == BoundKind::heuristic) rest += "[heuristic, not a guarantee] ";
      if (r.kind == BoundKind::comparison) rest += "[comparison, never best] ";
      if (report.best && *report.best == i) rest += "[best] ";
      if (r.index) rest += fmt::format("index {} ", *r.index);
      for (const auto& d : r.details) rest += fmt::format("{}={} ", d.name, report::show10(d.value));
      if (!r.note.empty()) rest += r.note;
    }
    out += fmt::format("{:<{}}  {:>16}  {}{}\n", r.name, width, value, add_remove_cell(r.name), rest);
    if (r.applicable && !r.rdp.empty()) {
      std::string curve;
      for (const auto& p : r.rdp)
        curve += fmt::format(" eps({})={}", show(p.alpha), report::show10(p.epsilon));
      out += fmt::format("{:<{}}  {:>16}  {}RDP:{}\n", "", width, "", both ? fmt::format("{:>16}  ", "") : "", curve);
    }
  }
  out += "\n";
  for (const auto& r : report.analyses)
    out += fmt::format("  {}: {}\n", r.name, r.citation);
  if (report.best) {
    const auto& b = report.analyses[*report.best];
    out += fmt::format("\nbest: {} (epsilon = {}, delta = {})\n", b.name, report::show10(*b.epsilon),
                       report::show10(*b.delta));
  } else {
    out += "\nbest: none (no analysis applies to this run)\n";
  }
  if (report.add_remove_best) {
    const auto& b = report.add_remove[*report.add_remove_best];
    out += fmt::format("best under add/remove-one: {} (epsilon = {}, delta = {})\n", b.name,
                       report::show10(*b.epsilon), report::show10(*b.delta));
  } else if (!report.add_remove_reason.empty()) {
    out += fmt::format("best under add/remove-one: none (not applicable: {})\n", report.add_remove_reason);
  }
  if (report.per_index) out += per_index_table(report);
  return out;
}

}  // namespace hsdp
