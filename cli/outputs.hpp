// The rule every command with an output applies before any work (docs/input.md "Outputs never
// replace inputs"): no output is a file the command reads, nor the file its standard output or
// standard error goes to (`--output /proc/self/fd/1 > log.txt`).
#pragma once

#include <vector>

#include "hsdp/output_files.hpp"

namespace hsdp::cli {

/// refuse_outputs_over_inputs with the command's standard streams among the inputs.
inline void refuse_outputs_over(const std::vector<FileUse>& outputs, std::vector<FileUse> inputs) {
  for (FileUse& stream : standard_streams()) inputs.push_back(std::move(stream));
  refuse_outputs_over_inputs(outputs, inputs);
}

}  // namespace hsdp::cli
