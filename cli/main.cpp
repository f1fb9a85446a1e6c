// The `hsdp` command. Exit status: 0 success, 2 invalid input (the message names the
// parameter and its allowed range), 1 internal error.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "field_names.hpp"
#include "hsdp/errors.hpp"

namespace hsdp::cli {
std::vector<Command>& commands() {
  static std::vector<Command> registered;
  return registered;
}
}  // namespace hsdp::cli

int main(int argc, char** argv) {
  // Messages and reports name the library's fields as this command's flags.
  hsdp::use_field_names(hsdp::cli::flag_names(), hsdp::cli::flag_names());
  CLI::App app{"hsdp: differential privacy of the last iterate of noisy gradient descent"};
  app.require_subcommand(1);
  auto& registered = hsdp::cli::commands();
  std::sort(registered.begin(), registered.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  std::vector<std::function<int()>> commands;
  for (const auto& c : registered) commands.push_back(c.add(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const hsdp::InvalidArgument& e) {  // a flag's value, read by the library
    std::cerr << "hsdp: error: " << e.what() << "\n";
    return 2;
  }
  try {
    for (auto& run : commands) {
      const int status = run();
      if (status >= 0) return status;
    }
    return 0;
  } catch (const hsdp::InvalidArgument& e) {
    std::cerr << "hsdp: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "hsdp: internal error: " << e.what() << "\n";
    return 1;
  }
}
