// `hsdp account`: every analysis on one run, as a table or JSON.
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "hsdp/accountant.hpp"
#include "hsdp/errors.hpp"
#include "run_flags.hpp"

namespace hsdp::cli {

namespace {

std::function<int()> add_account(CLI::App& app) {
  auto* sub = app.add_subcommand("account", "Privacy of one run under every analysis");
  struct Options {
    RunFlags run;
    bool json = false;
    std::vector<std::string> only;
  };
  auto opt = std::make_shared<Options>();
  opt->run.add_to(*sub);
  sub->add_flag("--json", opt->json, "Print JSON instead of the table");
  sub->add_option("--analysis", opt->only, "Restrict to the named analysis (repeatable)");
  return [sub, opt]() -> int {
    if (!sub->parsed()) return -1;
    const Run run = opt->run.to_run();
    const Query query = opt->run.to_query();
    std::vector<AnalysisPtr> chosen;
    for (const auto& name : opt->only) chosen.push_back(find_analysis(name));
    const Report report = chosen.empty() ? account(run, query) : account(run, query, chosen);
    // An analysis the user asked for by name that does not apply is an input error:
    // its reason names the violated assumption (e.g. eta above 2/beta).
    for (const auto& r : report.analyses)
      if (!chosen.empty() && !r.applicable)
        throw InvalidArgument(fmt::format("--analysis {}: not applicable: {}", r.name, r.reason));
    if (opt->json) {
      std::cout << to_json(report).dump(2) << "\n";
    } else {
      std::cout << to_table(report);
    }
    return 0;
  };
}

const Register kAccount{"account", add_account};

}  // namespace
}  // namespace hsdp::cli
