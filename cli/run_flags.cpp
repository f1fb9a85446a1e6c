#include "run_flags.hpp"

#include <fmt/format.h>

#include <cmath>

#include "field_names.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::cli {

void RunFlags::add_to(CLI::App& app) {
  // One flag per field of the run statement, with the field's help; the library parses
  // each value (RunSpec::set), so the CLI and Python read a run the same way.
  for (const RunField& field : RunSpec::fields()) {
    const std::string name(field.name);
    if (field.is_switch())
      app.add_flag_callback(flag(name), [this, name] { set(name, ""); }, std::string(field.help));
    else
      app.add_option_function<std::string>(
          flag(name), [this, name](const std::string& text) { set(name, text); },
          std::string(field.help));
  }
  app.add_option("--alpha", alphas,
                 "Report the RDP curve of every RDP analysis at this order (> 1; repeatable)")
      ->allow_extra_args(false);
  auto* e = app.add_option("--epsilon", epsilon, "Report delta at this epsilon");
  auto* d = app.add_option("--delta", delta, "Report epsilon at this delta (default 1e-5)");
  e->excludes(d);
}

Query RunFlags::to_query() const { return stated_query(epsilon, delta, alphas); }

}  // namespace hsdp::cli
