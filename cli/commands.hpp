// Subcommands of `hsdp`. Each cli/<command>.cpp registers itself with a static
// `Register` object; main() adds them to the app in name order, parses, and runs the one
// that was chosen.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace hsdp::cli {

/// Adds a subcommand to the app; the returned function runs it after parsing and returns
/// its exit status, or -1 when that subcommand was not the one chosen.
using AddCommand = std::function<std::function<int()>(CLI::App&)>;

struct Command {
  std::string name;
  AddCommand add;
};

/// The registered subcommands (unordered).
std::vector<Command>& commands();

/// `static Register r{"account", add_account};` in a cli/*.cpp registers a subcommand.
struct Register {
  Register(std::string name, AddCommand add) {
    commands().push_back({std::move(name), std::move(add)});
  }
};

}  // namespace hsdp::cli
