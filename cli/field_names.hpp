// How the command line spells the library's field names: one table, field -> flag
// (DESIGN.md, "Layers": the library never names a flag; an error carries the field).
#pragma once

#include <string>
#include <string_view>

#include "hsdp/errors.hpp"
#include "hsdp/run.hpp"

namespace hsdp::cli {

/// The flag of a library field: "batch_size" -> "--batch-size", "alphas" -> "--alpha".
std::string flag(std::string_view field);

/// The command line's spelling: fields as flags, a field with a value as "--flag value",
/// library parameters (a Run being validated) as the library names them.
FieldNames flag_names();

/// "hsdp <command> --flag value ..." for a request stated field by field.
std::string command_line(std::string_view command, const FieldValues& request);

}  // namespace hsdp::cli
