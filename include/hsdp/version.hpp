// The version of hsdp: CMake's project version (CMakeLists.txt), the one source of
// `hsdp --version`, hsdp.__version__ and the Python package's version.
#pragma once

#include <string_view>

namespace hsdp {

/// "MAJOR.MINOR.PATCH".
std::string_view version();

}  // namespace hsdp
