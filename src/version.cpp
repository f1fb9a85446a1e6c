#include "hsdp/version.hpp"

// HSDP_VERSION is defined for this file only (CMakeLists.txt), so that a new version
// recompiles one file.
#ifndef HSDP_VERSION
#error "HSDP_VERSION must be defined by the build (CMakeLists.txt: PROJECT_VERSION)"
#endif

namespace hsdp {

std::string_view version() { return HSDP_VERSION; }

}  // namespace hsdp
