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
    bool per_index = false;
    std::optional<std::int64_t> per_index_points;
  };
  auto opt = std::make_shared<Options>();
  opt->run.add_to(*sub);
  sub->add_flag("--json", opt->json, "Print JSON instead of the table");
  sub->add_option("--analysis", opt->only, "Restrict to the named analysis (repeatable)");
  sub->add_flag("--per-index", opt->per_index,
                "Also show, for the per-index analyses, the guarantee of the record at every "
                "position i = 1..n (a stated subsample when n exceeds --per-index-points)");
  sub->add_option("--per-index-points", opt->per_index_points,
                  "Most positions shown by --per-index (16..65536)")
      ->default_str("1000");
  return [sub, opt]() -> int {
    if (!sub->parsed()) return -1;
    const Run run = opt->run.to_run();
    const Query query = opt->run.to_query();
    std::vector<AnalysisPtr> chosen;
    for (const auto& name : opt->only) chosen.push_back(find_analysis(name));
    const Report report =
        account_request(run, query, chosen, opt->per_index, opt->per_index_points);
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
