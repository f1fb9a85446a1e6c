#pragma once

#include <CLI/CLI.hpp>

namespace hsdp::cli {

/// Adds `hsdp account` to the app; the returned function runs it after parsing.
std::function<int()> add_account(CLI::App& app);

}  // namespace hsdp::cli
